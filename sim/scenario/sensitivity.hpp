// sim/scenario/sensitivity.hpp: a scenario's cost inputs, and the tornado reruns of its Monte Carlo (inputs +-20%).
#pragma once
#include "sim/base/task_farm.hpp"
#include "sim/cost/cost.hpp"
#include "sim/cost/sensitivity.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/scenario/scenario.hpp"

#include <cstdint>
#include <vector>

namespace sim::scenario {

/// The cost model's inputs for a scenario: its `cost` section, the job's GPUs and nodes, and the size of one
/// checkpoint (14 bytes per parameter, as run_setup.cpp: Rajbhandari et al. 2020, Sec. 3.1).
cost::CostInputs cost_inputs(const Scenario& s);

struct SensitivityOptions {
  int trials = 200;  // per rerun; see sensitivity_trials
  std::uint64_t seed = 42;
  int threads = 1;
  double delta = 0.2;  // relative move of each input, down (low) and up (high)
  /// Called with the trials done over all reruns and their total; may throw to cancel (Ctrl-C). Not called when
  /// `farm` is set (the farm reports its own progress).
  reliability::ProgressCallback progress;
  /// Empty: the nine reruns run here, one after another, each on `threads` threads. Set (MPI): every process calls
  /// run_sensitivity with the same inputs and the farm shares the reruns out; every process gets the same rows.
  base::TaskFarm farm;
};

/// Trials per sensitivity rerun: min(trials, 200), so that the nine reruns cost about two main runs of 1,000 trials.
int sensitivity_trials(int trials);

/// Tornado data: the p50 cost and p50 time to train when one input moves by -delta (low) and +delta (high):
///  - "failure rates": every component's MTBF divided by 1 -/+ delta;
///  - "checkpoint write time": the durable write and the blocking snapshot times 1 -/+ delta (an automatic interval
///    re-optimises for them);
///  - "restart time": scheduling/initialisation and the checkpoint load times 1 -/+ delta;
///  - "price": the compute price (rented GPU-hour or owned node price) times 1 -/+ delta (no rerun: time is unchanged);
///  - "achieved MFU": MFU times 1 -/+ delta, i.e. every step time divided by 1 -/+ delta.
/// One baseline and eight reruns of the Monte Carlo of `base`, all with o.trials trials and o.seed (common random
/// numbers: trial i draws the same uniforms in every rerun, so the differences come from the input). Sorted by swing.
std::vector<cost::SensitivityRow> run_sensitivity(const reliability::RunInputs& base, const cost::CostInputs& ci,
                                                  const SensitivityOptions& o);

}  // namespace sim::scenario
