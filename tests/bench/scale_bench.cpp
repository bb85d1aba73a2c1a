// Scale (issue 9): one full-fidelity step of a 405B-class model on 131,072 GPUs (TP8 PP16 DP1024) on one machine.
// Targets: <= 60 s and <= 16 GiB. Compared with the same model at 16,384 GPUs (DP128) to show linear growth: time
// and memory per simulated GPU should stay flat. Slow (minutes): not part of any CI run; run by hand with
//   build/release/bin/trainsim-bench --benchmark_filter=Scale
#include "tests/support/step.hpp"

#include <benchmark/benchmark.h>

#include <sys/resource.h>

namespace {

double peak_rss_gib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

/// Llama 3 405B's layout (TP8 PP16, 126 layers, uneven first and last stages) with `dp` replicas and 16 micro-batches
/// of one sequence per replica, as the Llama 3 run's 16M-token batch at 16K GPUs.
void full_step(benchmark::State& state, int dp) {
  const std::vector<sim::scenario::Override> o = {
      {"cluster.gpus", std::to_string(128 * dp)},
      {"parallel.dp", std::to_string(dp)},
      {"parallel.global_batch", std::to_string(16 * dp)},
      support::kLlama405bOneFOneB,  // the split this benchmark has timed since issue 9
  };
  const auto s = support::load_step("scenarios/examples/llama3-405b-16384-h100.json", o);
  const double rss_before = peak_rss_gib();
  std::int64_t events = 0;
  for (auto _ : state) {
    auto r = support::run_step(s, sim::execution::Fidelity::Full);
    events = r.events;
    benchmark::DoNotOptimize(r.step_time);
  }
  const double gpus = 128.0 * dp;
  state.counters["gpus"] = gpus;
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["peak_rss_gib"] = peak_rss_gib();
  // Peak growth during the step over the loaded scenario, per simulated GPU (an upper bound: peaks of earlier
  // benchmarks in the same process hide under it).
  state.counters["kib_per_gpu"] = (peak_rss_gib() - rss_before) * 1024.0 * 1024.0 / gpus;
}

void BM_ScaleFull405B16k(benchmark::State& state) {
  full_step(state, 128);
}
void BM_ScaleFull405B32k(benchmark::State& state) {  // the size tests/bench/callgrind.sh counts beside 16k
  full_step(state, 256);
}
void BM_ScaleFull405B131k(benchmark::State& state) {
  full_step(state, 1024);
}
BENCHMARK(BM_ScaleFull405B16k)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_ScaleFull405B32k)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_ScaleFull405B131k)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
