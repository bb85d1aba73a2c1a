// sim/topology/profile_cluster.hpp: the TopologyConfig of a cluster of one hardware profile's nodes: NVLink and NIC
// rates scaled by the profile's achieved-versus-peak factors, its latencies where it gives them. The scenario's
// cluster (sim/scenario) and trainsim-calibrate's fitted and compared clusters are built here alike.
#pragma once
#include "sim/hardware/profile.hpp"
#include "sim/topology/topology.hpp"

namespace sim::topology {

/// What a cluster adds to its hardware: the scenario's `cluster` section.
struct ClusterShape {
  int gpus = 0;
  int gpus_per_node = 0;
  base::Bandwidth nic_bandwidth;  // per NIC, per direction, at peak
  TopologyConfig::Kind kind = TopologyConfig::Kind::RailFatTree;
  double oversubscription = 1.0;
};

/// The shape a scenario gives a cluster of `gpus` GPUs of `hw` when it names no gpus_per_node and no network: the
/// profile's node and NICs on a rail-optimised fat tree without oversubscription.
ClusterShape profile_cluster_shape(const hardware::HardwareProfile& hw, int gpus);

TopologyConfig profile_cluster(const hardware::HardwareProfile& hw, const ClusterShape& shape);

}  // namespace sim::topology
