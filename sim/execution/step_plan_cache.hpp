// sim/execution/step_plan_cache.hpp: memoised per-layer timings for callers that build many step plans (the planner).
#pragma once
#include "sim/execution/step_plan.hpp"

#include <memory>

namespace sim::execution {

/// What build_step_plan derives before it lays out the stages, kept across plans: the timed segments of a layer's,
/// the embedding's and the output layer's passes (with the labels they name, in the order a fresh build names them)
/// and collective times on concrete groups. An entry is keyed by every input it is computed from (model, hardware,
/// topology, dtype and kernel options, the layer shape, recomputation and where the timed GPU's tp, cp and ep groups
/// sit in the topology: each member's NVLink domain and leaf relative to the first member's and its local rank, the
/// members themselves when a link is down; a collective by its op, exact members and bytes), so a plan built through
/// the cache equals, value for value, one built without it, and groups placed alike share an entry. Not thread-safe:
/// one cache per thread. Entries point at the model, hardware and topology of the inputs, which must outlive the cache.
class StepPlanCache {
 public:
  StepPlanCache();
  ~StepPlanCache();
  StepPlanCache(const StepPlanCache&) = delete;
  StepPlanCache& operator=(const StepPlanCache&) = delete;
  StepPlanCache(StepPlanCache&&) noexcept;
  StepPlanCache& operator=(StepPlanCache&&) noexcept;

  struct Impl;

 private:
  friend StepPlan build_step_plan(const StepInputs& in, StepPlanCache& cache);
  std::unique_ptr<Impl> impl_;
};

/// build_step_plan(in), reusing what `cache` holds from earlier plans.
StepPlan build_step_plan(const StepInputs& in, StepPlanCache& cache);

}  // namespace sim::execution
