// sim/scenario/failure_trace_section.hpp: a failures object's "trace", a failure log to replay (internal to
// sim/scenario; scenario.cpp calls it).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/reliability/run_inputs.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sim::scenario::detail {

/// Reads `"trace": {"span": "54 d", "events": [{"at": "2.5 h", "component": "gpu"}, ...]}` from a failures object
/// (inline or a failure file), if present. Each event must name one of `components` (the failure model in effect:
/// the object's own, plus the hardware profile's unless it replaces them) and lie in [0, span); events are sorted by
/// time. `source` names where the trace came from, for the summary.
std::optional<reliability::FailureTrace> parse_failure_trace(
    base::JsonReader& failures, const std::vector<hardware::FailureComponentSpec>& components, std::string source);

}  // namespace sim::scenario::detail
