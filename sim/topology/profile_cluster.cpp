// sim/topology/profile_cluster.cpp: a hardware profile's cluster as a TopologyConfig.
#include "sim/topology/profile_cluster.hpp"

#include <algorithm>

namespace sim::topology {

ClusterShape profile_cluster_shape(const hardware::HardwareProfile& hw, int gpus) {
  return {.gpus = gpus, .gpus_per_node = hw.node.gpus, .nic_bandwidth = hw.network.nic_bandwidth};
}

TopologyConfig profile_cluster(const hardware::HardwareProfile& hw, const ClusterShape& shape) {
  TopologyConfig t;
  t.gpus = shape.gpus;
  t.gpus_per_node = shape.gpus_per_node;
  t.nvlink_domain = std::max(hw.nvlink.domain, shape.gpus_per_node);
  t.nvlink_bw = base::Bandwidth{hw.nvlink.bandwidth.bytes_per_s * hw.efficiency.nvlink};
  if (hw.nvlink.sharp) t.nvls_bw = base::Bandwidth{hw.nvlink.bandwidth.bytes_per_s * hw.efficiency.nvls};
  t.nics_per_gpu = hw.network.nics_per_gpu;
  t.nic_bw = base::Bandwidth{shape.nic_bandwidth.bytes_per_s * hw.efficiency.network};
  t.kind = shape.kind;
  t.oversubscription = shape.oversubscription;
  if (hw.latency.nvlink) t.nvlink_latency = *hw.latency.nvlink;  // else the compiled-in defaults (topology.hpp)
  if (hw.latency.network_hop) t.nic_latency = *hw.latency.network_hop;
  return t;
}

}  // namespace sim::topology
