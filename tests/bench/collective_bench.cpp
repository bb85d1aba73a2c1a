// tests/bench/collective_bench.cpp: `trainsim collective` end to end (scenario, cluster build, costing, printing) at
// 131,072 GPUs; issue 23 asks for an answer in under 50 ms.
#include "sim/cli/app.hpp"

#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

void run_collective(benchmark::State& state, const std::vector<std::string>& args) {
  for (auto _ : state) {
    std::ostringstream out, err;
    const int code = sim::cli::run(args, out, err);
    if (code != 0) state.SkipWithError(err.str().c_str());
    benchmark::DoNotOptimize(out.str().size());
  }
}

// One size, all-reduce over 131,072 GPUs (16,384 nodes, three tiers): auto tries ring, hierarchical and tree.
void BM_CollectiveCommand131kOneSize(benchmark::State& state) {
  run_collective(state, {"collective", "all_reduce", "--gpus", "131072", "--size", "1G"});
}
BENCHMARK(BM_CollectiveCommand131kOneSize)->Unit(benchmark::kMillisecond);

// nccl-tests' usual sweep, 8 B to 8 GiB (31 sizes), all-reduce over 131,072 GPUs.
void BM_CollectiveCommand131kSweep(benchmark::State& state) {
  run_collective(state, {"collective", "all_reduce", "--gpus", "131072", "--sizes", "8:8G"});
}
BENCHMARK(BM_CollectiveCommand131kSweep)->Unit(benchmark::kMillisecond);

// All-gather, one size, 131,072 GPUs (ring or hierarchical).
void BM_CollectiveCommand131kAllGather(benchmark::State& state) {
  run_collective(state, {"collective", "all_gather", "--gpus", "131072", "--size", "1G"});
}
BENCHMARK(BM_CollectiveCommand131kAllGather)->Unit(benchmark::kMillisecond);

}  // namespace
