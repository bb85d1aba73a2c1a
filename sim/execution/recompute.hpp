// sim/execution/recompute.hpp: the parallel configuration's recomputation choice in the workload's terms (which
// forward work runs again before the backward).
#pragma once
#include "sim/parallel/parallel_config.hpp"
#include "sim/workload/layer_costs.hpp"

namespace sim::execution {

/// None, selective, full or per-operator recomputation (parallel::Recompute) as the workload's mode.
workload::RecomputeMode recompute_mode(parallel::Recompute r);

/// Megatron-Core's selective modules (parallel::RecomputeModule bits) as the workload's recompute set.
workload::RecomputeSet recompute_set(unsigned modules);

}  // namespace sim::execution
