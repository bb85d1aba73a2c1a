// sim/execution/moe_dispatch.cpp: DeepEP's once-per-node dispatch (moe_dispatch.hpp).
#include "sim/execution/moe_dispatch.hpp"

#include <algorithm>

namespace sim::execution {

double deepep_network_share(const workload::ModelSpec& model, const topology::Topology& topo,
                            const std::vector<int>& group) {
  if (!model.moe) return 1.0;
  std::vector<int> nodes;
  for (int g : group)
    nodes.push_back(topo.node_of(topology::GpuId{g}));
  std::sort(nodes.begin(), nodes.end());
  const double n = static_cast<double>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  if (n < 2) return 1.0;
  const double e = model.moe->experts, k = model.moe->top_k;
  double none = 1.0;  // P(no chosen expert on a given node): k draws without replacement
  for (int i = 0; i < model.moe->top_k; ++i)
    none *= std::max(0.0, (e - e / n - i) / (e - i));
  return std::min(1.0, n * (1.0 - none) / k);
}

}  // namespace sim::execution
