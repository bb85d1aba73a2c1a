// sim/scenario/cost_section.hpp: the scenario's `cost` section (internal to sim/scenario; scenario.cpp calls it).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sim::scenario::detail {

/// The `cost` section (keys: README "Cost model"; defaults and their sources: sim/cost/cost.hpp).
void parse_cost(base::JsonReader& c, CostConfig& cost);
/// Where the compute price comes from, in words, for the report.
void finish_cost(CostConfig& cost, const hardware::HardwareProfile& hw);

}  // namespace sim::scenario::detail
