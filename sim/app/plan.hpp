// sim/app/plan.hpp: "evaluate this scenario's plan": the planner's search over the scenario's free parallel fields
// and its `trainsim.plan/1` JSON.
#pragma once
#include "sim/planner/planner.hpp"
#include "sim/results/json.hpp"
#include "sim/scenario/scenario.hpp"

namespace sim::app {

/// The plan of `s` under `opt` (scenario::plan_problem, then planner::plan); `opt.progress` and `opt.farm` are the
/// progress (and cancellation, see Progress in step.hpp) and the task farm. Throws ConfigError for unusable options.
planner::PlanResult evaluate_plan(const scenario::Scenario& s, const planner::PlanOptions& opt);

/// `trainsim plan --json`: the best `top` candidates as trainsim.plan/1 with the scenario's name.
results::Json plan_json(const planner::PlanResult& r, int top, const scenario::Scenario& s);

}  // namespace sim::app
