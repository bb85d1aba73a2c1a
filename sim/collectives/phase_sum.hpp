// sim/collectives/phase_sum.hpp: how the costs of a collective's phases add up, shared by the reference evaluation
// (collective.cpp) and CollectiveCostModel (cost_model.cpp) so that both sum bit for bit alike. Internal.
#pragma once
#include "sim/base/units.hpp"

#include <algorithm>

namespace sim::collectives::detail {

/// a + b, Time::max() when either is (an unreachable phase) or the sum overflows.
inline base::Time saturating_add(base::Time a, base::Time b) {
  if (a == base::Time::max() || b == base::Time::max()) return base::Time::max();
  if (a.ns > base::Time::max().ns - b.ns) return base::Time::max();
  return a + b;
}

/// Phases one after another: each adds its latency and its transfer time.
inline base::Time add_phase(base::Time total, base::Time latency, base::Time transfer) {
  return saturating_add(saturating_add(total, latency), transfer);
}

/// Two phases that run at the same time on disjoint links (the rings over rails): both latencies (their steps
/// interleave on one ring), the slower transfer.
inline base::Time add_concurrent(base::Time total, base::Time latency_a, base::Time transfer_a, base::Time latency_b,
                                 base::Time transfer_b) {
  return saturating_add(saturating_add(total, saturating_add(latency_a, latency_b)), std::max(transfer_a, transfer_b));
}

}  // namespace sim::collectives::detail
