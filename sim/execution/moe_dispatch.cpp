// sim/execution/moe_dispatch.cpp: DeepEP's deduplicated dispatch, once per node or rank (moe_dispatch.hpp).
#include "sim/execution/moe_dispatch.hpp"

#include "sim/workload/moe_routing.hpp"

#include <algorithm>

namespace sim::execution {

double deepep_network_share(const workload::ModelSpec& model, const topology::Topology& topo,
                            const std::vector<int>& group) {
  if (!model.moe) return 1.0;
  std::vector<int> nodes;
  for (int g : group)
    nodes.push_back(topo.node_of(topology::GpuId{g}));
  std::sort(nodes.begin(), nodes.end());
  const int node_count = static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  // Across nodes the network part bounds the all-to-all: tokens once per node. Inside one node DeepEP's intranode
  // kernels send a token once to each rank holding one of its experts (deepseek-ai/DeepEP README: the dispatch layout
  // of Buffer.get_dispatch_layout, num_tokens_per_rank and is_token_in_rank), so the units are the group's ranks.
  return workload::distinct_unit_share(model, node_count >= 2 ? node_count : static_cast<int>(group.size()));
}

}  // namespace sim::execution
