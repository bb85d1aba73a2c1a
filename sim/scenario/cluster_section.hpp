// sim/scenario/cluster_section.hpp: the scenario's `cluster` section (internal to sim/scenario; scenario.cpp calls it).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sim::scenario::detail {

/// The `cluster` section (keys: README "Scenario file"): GPUs, GPUs per node (default: the profile's node), and
/// `network` (NIC bandwidth, topology, oversubscription, NVLS, failed elements). `have_hardware`: the profile
/// loaded, so its missing NIC bandwidth is this section's error.
void parse_cluster(base::JsonReader& c, ClusterConfig& cluster, const hardware::HardwareProfile& hw,
                   bool have_hardware);

}  // namespace sim::scenario::detail
