// sim/app/plan.cpp: a scenario's plan searched and written as JSON.
#include "sim/app/plan.hpp"

#include "sim/scenario/plan_setup.hpp"

namespace sim::app {

planner::PlanResult evaluate_plan(const scenario::Scenario& s, const planner::PlanOptions& opt) {
  return planner::plan(scenario::plan_problem(s, opt), opt);
}

results::Json plan_json(const planner::PlanResult& r, int top, const scenario::Scenario& s) {
  auto j = planner::to_json(r, top);
  j["scenario"] = s.name;
  return j;
}

}  // namespace sim::app
