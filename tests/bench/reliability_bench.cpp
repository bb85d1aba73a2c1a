// Run-level speed: Monte Carlo trials of Llama 3's 54-day window on 16,384 H100 GPUs with the default failure
// components (419 interruptions per trial). Target (issue 4): 1,000 trials in <= 2 s on two threads.
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/scenario/scenario.hpp"

#include <benchmark/benchmark.h>

namespace {

using sim::reliability::ClusterState;
using sim::reliability::RunInputs;

RunInputs llama3_window(int gpus) {
  RunInputs in;
  in.job = sim::reliability::JobShape::make(gpus, 8, gpus / 128);
  in.components = sim::scenario::load_hardware("h100-sxm5-80gb").failures;
  in.spares = 64;
  in.window = sim::base::Time::from_seconds(54 * 86400.0);
  // A fixed healthy step of 10 s, as a cached step level would answer.
  in.step_time = [](const ClusterState& s) { return sim::base::Time::from_seconds(10.0 * s.straggler_factor); };
  return in;
}

void BM_RunMonteCarlo54d16k(benchmark::State& state) {
  const RunInputs in = llama3_window(16384);
  const int trials = 1000;
  double interruptions = 0;
  for (auto _ : state) {
    const auto s = sim::reliability::run_monte_carlo(in, trials, 42, /*threads=*/2);
    interruptions = s.interruptions_mean;
    benchmark::DoNotOptimize(s.goodput.mean);
  }
  state.counters["trials_per_s"] = benchmark::Counter(trials, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["interruptions_per_trial"] = interruptions;
}
BENCHMARK(BM_RunMonteCarlo54d16k)->Unit(benchmark::kMillisecond)->UseRealTime();

// Scaling with job size: interruptions (and events) per trial grow linearly with the GPUs (200 trials, 2 threads).
void BM_RunMonteCarlo54dScaling(benchmark::State& state) {
  const RunInputs in = llama3_window(static_cast<int>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(sim::reliability::run_monte_carlo(in, 200, 42, 2).goodput.mean);
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_RunMonteCarlo54dScaling)
    ->RangeMultiplier(4)
    ->Range(1024, 65536)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Complexity(benchmark::oN);

}  // namespace
