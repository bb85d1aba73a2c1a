// sim/execution/moe_dispatch.cpp: DeepEP's once-per-node dispatch (moe_dispatch.hpp).
#include "sim/execution/moe_dispatch.hpp"

#include <algorithm>

namespace sim::execution {
namespace {

/// P(none of k draws without replacement from `pool` items hits the `marked` ones).
double misses(double pool, double marked, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i)
    p *= std::max(0.0, (pool - marked - i) / (pool - i));
  return p;
}

/// C(n, k) as a double (small arguments: groups per node, groups chosen).
double choose(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  double c = 1.0;
  for (int i = 1; i <= k; ++i)
    c = c * (n - k + i) / i;
  return c;
}

}  // namespace

double deepep_network_share(const workload::ModelSpec& model, const topology::Topology& topo,
                            const std::vector<int>& group) {
  if (!model.moe) return 1.0;
  std::vector<int> nodes;
  for (int g : group)
    nodes.push_back(topo.node_of(topology::GpuId{g}));
  std::sort(nodes.begin(), nodes.end());
  const int n = static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  if (n < 2) return 1.0;
  const auto& moe = *model.moe;
  const double e = moe.experts, k = moe.top_k, per_node = e / n;
  // P(the token reaches a given node); the node's experts are a contiguous 1/n of all (expert-parallel ranks in order).
  double reach = 1.0 - misses(e, per_node, moe.top_k);
  const int groups = moe.router_groups, chosen = moe.router_group_topk;
  if (groups > 0 && chosen < groups) {
    // Group-limited routing: the token's k experts are drawn from its `chosen` groups of e / groups experts each.
    const double pool = chosen * (e / groups);
    if (groups % n == 0) {
      // Whole groups per node (DeepSeek-V3: 8 groups on 8 nodes, 4 chosen): j of the node's groups among the chosen
      // ones, hypergeometrically; then the draws miss its j groups' experts.
      const int own = groups / n;
      double p_none = 0;
      for (int j = 0; j <= std::min(own, chosen); ++j)
        p_none += choose(own, j) * choose(groups - own, chosen - j) / choose(groups, chosen) *
                  misses(pool, j * (e / groups), moe.top_k);
      reach = 1.0 - p_none;
    } else if (n % groups == 0) {
      // A group spans n / groups nodes (device-limited routing over more nodes than groups): the node is reachable
      // only when its group is chosen.
      reach = static_cast<double>(chosen) / groups * (1.0 - misses(pool, per_node, moe.top_k));
    }
  }
  return std::min(1.0, n * reach / k);
}

}  // namespace sim::execution
