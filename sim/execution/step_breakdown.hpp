// sim/execution/step_breakdown.hpp: (internal to sim/execution) the breakdown categories a step's time falls into and
// the step result built from them, shared by the replays (step_sim.cpp) and the closed forms (analytic_step.cpp).
#pragma once
#include "sim/execution/step_plan.hpp"
#include "sim/results/step_result.hpp"

#include <array>

namespace sim::execution::detail {

/// Where a GPU's time goes; each state's time lands in one breakdown category.
enum Category : int { kCompute, kTp, kCp, kEp, kPpWait, kDp, kOptimizer, kIdle, kCategories };

/// The idle time a schedule inherits even with free pipeline transfers, on pipeline rank `rank`.
base::Time ideal_bubble(const StepPlan& plan, int rank);

/// The step result of a step of `step` whose critical rank's time fell into `acc`: throughput, MFU/HFU (model and
/// hardware FLOPs), the breakdown (the pipeline wait split into the schedule's bubble and exposed transfers), and the
/// data pipeline's stall when it delivers an iteration's tokens slower than the step.
results::StepResult finish_result(const StepPlan& plan, base::Time step, const std::array<base::Time, kCategories>& acc,
                                  int critical_rank);

}  // namespace sim::execution::detail
