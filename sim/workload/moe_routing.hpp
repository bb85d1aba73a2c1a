// sim/workload/moe_routing.hpp: how many distinct places a routed token goes, the quantity behind deduplicating MoE
// dispatchers (DeepEP sends a token once per node across nodes, once per rank inside one).
#pragma once
#include "sim/workload/model_spec.hpp"

namespace sim::workload {

/// E[distinct units a token's top-k experts lie on] / k, with the E experts spread evenly and in order over `units`
/// units (ranks or nodes) and balanced random routing: units x (1 - C(E - E/units, k) / C(E, k)) / k. With
/// group-limited routing (MoeSpec::router_groups; DeepSeek-V3's node-limited routing, arXiv:2412.19437 Sec. 2.1.2) the
/// draws come from the token's chosen groups only, which caps the units it reaches; group counts that neither divide
/// nor are divided by the unit count keep the unlimited figure (an upper bound). 1 for fewer than 2 units or a dense
/// model.
double distinct_unit_share(const ModelSpec& model, int units);

}  // namespace sim::workload
