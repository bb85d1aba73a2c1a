// sim/scenario/expect_section.hpp: the scenario's `expect` section (internal to sim/scenario; scenario.cpp calls it).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/scenario/scenario.hpp"

#include <vector>

namespace sim::scenario::detail {

/// The `expect` section: bounds on result fields by their JSON path ("mfu", "memory_gib.total"), "fits" and
/// "within_best"; a path must be a field of the step or run result, whose by_cause groups are keyed by the failure
/// `components`' names (and "loss_spike" when `loss_spikes`).
std::vector<Expectation> parse_expect(base::JsonReader& in,
                                      const std::vector<hardware::FailureComponentSpec>& components, bool loss_spikes);

}  // namespace sim::scenario::detail
