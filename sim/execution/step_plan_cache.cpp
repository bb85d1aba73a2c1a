// sim/execution/step_plan_cache.cpp: the step-plan cache's lifetime (its entries: step_plan_cache_impl.hpp).
#include "sim/execution/step_plan_cache.hpp"

#include "sim/execution/step_plan_cache_impl.hpp"

namespace sim::execution {

StepPlanCache::StepPlanCache() : impl_(std::make_unique<Impl>()) {}
StepPlanCache::~StepPlanCache() = default;
StepPlanCache::StepPlanCache(StepPlanCache&&) noexcept = default;
StepPlanCache& StepPlanCache::operator=(StepPlanCache&&) noexcept = default;

}  // namespace sim::execution
