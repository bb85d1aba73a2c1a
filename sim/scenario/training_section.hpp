// sim/scenario/training_section.hpp: the scenario's `training` section (internal to sim/scenario; scenario.cpp calls
// it).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sim::scenario::detail {

/// The `training` section (keys: README "Scenario file"): sequence length, tokens or duration, dtype and FP8 recipe,
/// the kernels and attention, the memory-relevant stack keys (into s.memory) and loss spikes; checked against the
/// model, hardware and parallel sections already read into `s`. `have_model` / `have_hardware`: those loaded, so
/// checks against them are this section's errors.
void parse_training(base::JsonReader& t, Scenario& s, bool have_model, bool have_hardware);

}  // namespace sim::scenario::detail
