// sim/execution/moe_dispatch.hpp: how MoE token dispatch shapes the expert-parallel all-to-all (split from
// step_plan.cpp along that seam).
#pragma once
#include "sim/topology/topology.hpp"
#include "sim/workload/model_spec.hpp"

#include <vector>

namespace sim::execution {

/// DeepEP's inter-node dispatch sends a token once to each node holding one of its top-k experts, then forwards it
/// over NVLink (parallel_config.hpp, MoeDispatcher). With the group's E experts spread evenly over its n nodes and
/// balanced random routing, a token meets E[distinct nodes] = n (1 - C(E - E/n, k) / C(E, k)) nodes instead of k
/// experts: the all-to-all's payload, whose network part bounds it across nodes, scales by that over k. With
/// group-limited routing (MoeSpec::router_groups; DeepSeek-V3's node-limited routing, arXiv:2412.19437 Sec. 2.1.2)
/// the draws come from the token's chosen groups only, which caps the nodes it reaches. Inside one node (NVLink only)
/// the same count over the group's ranks: DeepEP's intranode dispatch sends a token once per rank holding one of its
/// experts. 1 for a dense model. Group counts that neither divide nor are divided by the node (rank) count keep the
/// unlimited figure (an upper bound).
double deepep_network_share(const workload::ModelSpec& model, const topology::Topology& topo,
                            const std::vector<int>& group);

}  // namespace sim::execution
