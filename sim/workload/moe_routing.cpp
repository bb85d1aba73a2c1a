// sim/workload/moe_routing.cpp: distinct destinations of a routed token (moe_routing.hpp).
#include "sim/workload/moe_routing.hpp"

#include <algorithm>

namespace sim::workload {
namespace {

/// P(none of k draws without replacement from `pool` items hits the `marked` ones).
double misses(double pool, double marked, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i)
    p *= std::max(0.0, (pool - marked - i) / (pool - i));
  return p;
}

/// C(n, k) as a double (small arguments: groups per unit, groups chosen).
double choose(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  double c = 1.0;
  for (int i = 1; i <= k; ++i)
    c = c * (n - k + i) / i;
  return c;
}

}  // namespace

double distinct_unit_share(const ModelSpec& model, int n) {
  if (!model.moe || n < 2) return 1.0;
  const auto& moe = *model.moe;
  const double e = moe.experts, k = moe.top_k, per_unit = e / n;
  // P(the token reaches a given unit); the unit's experts are a contiguous 1/n of all (expert-parallel ranks in order).
  double reach = 1.0 - misses(e, per_unit, moe.top_k);
  const int groups = moe.router_groups, chosen = moe.router_group_topk;
  if (groups > 0 && chosen < groups) {
    // Group-limited routing: the token's k experts are drawn from its `chosen` groups of e / groups experts each.
    const double pool = chosen * (e / groups);
    if (groups % n == 0) {
      // Whole groups per unit (DeepSeek-V3: 8 groups on 8 nodes, 4 chosen): j of the unit's groups among the chosen
      // ones, hypergeometrically; then the draws miss its j groups' experts.
      const int own = groups / n;
      double p_none = 0;
      for (int j = 0; j <= std::min(own, chosen); ++j)
        p_none += choose(own, j) * choose(groups - own, chosen - j) / choose(groups, chosen) *
                  misses(pool, j * (e / groups), moe.top_k);
      reach = 1.0 - p_none;
    } else if (n % groups == 0) {
      // A group spans n / groups units (device-limited routing over more units than groups): the unit is reachable
      // only when its group is chosen.
      reach = static_cast<double>(chosen) / groups * (1.0 - misses(pool, per_unit, moe.top_k));
    }
  }
  return std::min(1.0, n * reach / k);
}

}  // namespace sim::workload
