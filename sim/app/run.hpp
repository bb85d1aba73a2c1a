// sim/app/run.hpp: "evaluate this scenario's run": the Monte Carlo over the whole training run on top of its step,
// its cost, the optional sensitivity reruns and the `trainsim.run/1` JSON.
#pragma once
#include "sim/app/step.hpp"
#include "sim/base/task_farm.hpp"
#include "sim/cost/cost.hpp"
#include "sim/cost/sensitivity.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/results/run_result.hpp"

#include <cstdint>
#include <vector>

namespace sim::app {

/// A whole run: the Monte Carlo summary, its cost and the `trainsim.run/1` JSON.
struct RunOutcome {
  results::RunSummary run;
  cost::CostSummary cost;
  results::Json json;
  std::vector<cost::SensitivityRow> sensitivity;  // tornado data, sorted by swing; empty unless asked for
  /// The scenario as the run used it (json's "resolved_scenario"): scenario_json plus the run level's settings.
  results::Json resolved_scenario;
};

/// The run level's inputs for `s` on `step` (its carried plan; healthy step time from its result). Throws
/// ConfigError naming the scenario file when they are unusable.
reliability::RunInputs run_inputs(const scenario::Scenario& s, const StepOutcome& step);

/// Refuses, naming reliability.trials (or `trials_from`, the option that gave them), a command whose trials would
/// simulate more than reliability::kMaxRunInterruptions interruptions: `trials` split over `shards` commands, and with
/// `report` the report's nine what-if reruns of sensitivity_trials(trials) trials at up to 1.2x the failure rates.
void check_run_work(const scenario::Scenario& s, const reliability::RunInputs& in, base::Time step, int trials,
                    const std::string& trials_from, bool report, int shards = 1);

/// The run: `trials` Monte Carlo trials from `seed` on `threads` threads. With `sensitivity`, also reruns the Monte
/// Carlo with each input moved +-20% (scenario::run_sensitivity, min(trials, 200) trials) and adds "sensitivity" to
/// the JSON. `progress` hears of finished trials and reruns and may cancel (see Progress).
RunOutcome evaluate_run(const scenario::Scenario& s, const StepOutcome& step, int trials, std::uint64_t seed,
                        int threads, const Progress& progress, bool sensitivity = false);

/// evaluate_run's second half, for runs whose trials were computed elsewhere (shards, MPI processes): a whole run
/// from its Monte Carlo summary (cost, JSON, and the sensitivity reruns on `threads` threads). With `farm` set (MPI)
/// the reruns are farmed over the group's processes, each of which must call share_sensitivity meanwhile; the rows
/// are the same bytes either way.
RunOutcome finish_run(const scenario::Scenario& s, const StepOutcome& step, const reliability::RunInputs& in,
                      results::RunSummary run, int threads, const Progress& progress, bool sensitivity,
                      const base::TaskFarm& farm = {});

/// An MPI process other than the root: computes its share of the sensitivity reruns that the root's finish_run
/// farms (same inputs, trials and seed), and nothing else.
void share_sensitivity(const scenario::Scenario& s, const reliability::RunInputs& in, int trials, std::uint64_t seed,
                       int threads, const base::TaskFarm& farm);

}  // namespace sim::app
