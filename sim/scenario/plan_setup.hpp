// sim/scenario/plan_setup.hpp: a loaded scenario wired into the planner (search space, step and run level).
#pragma once
#include "sim/planner/planner.hpp"
#include "sim/scenario/scenario.hpp"

namespace sim::scenario {

/// Plans the scenario: the parallel fields its file gives stay fixed (less `opt.free`), every other one is searched,
/// on the scenario's cluster or on each size of `opt.gpus`. The run level (for time to train, cost and risk) uses the
/// scenario's failures, checkpoints and price with `opt.run_trials` trials and the scenario's seed, the straggler's
/// step stretched rather than simulated (run_inputs' fast path). Throws base::ConfigError for unusable options (an
/// unknown --free field, a cluster size that is not whole nodes).
planner::PlanResult plan_scenario(const Scenario& s, const planner::PlanOptions& opt);

/// The problem plan_scenario solves (it points into `s`, which must outlive it). `with_run_level` false leaves the
/// run evaluator empty (only the time objective; for tests and benchmarks of the step-level search).
planner::PlanProblem plan_problem(const Scenario& s, const planner::PlanOptions& opt, bool with_run_level = true);

}  // namespace sim::scenario
