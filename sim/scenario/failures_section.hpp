// sim/scenario/failures_section.hpp: a failures object (inline in reliability.failures, or a failure file): its own
// components, "replace" and a "trace", a failure log to replay (internal to sim/scenario; scenario.cpp calls it).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/reliability/run_inputs.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sim::scenario::detail {

/// The failure model in effect: a failures object's components, after the hardware profile's unless they replace them.
std::vector<hardware::FailureComponentSpec> effective_components(const hardware::HardwareProfile& hw,
                                                                 const std::vector<hardware::FailureComponentSpec>& own,
                                                                 bool replace);

/// Reads a failures object: "components" (its own; they replace the profile's unless "replace": false, and then may
/// not reuse a profile component's name), "replace", and a "trace" (parse_failure_trace). At least one of components
/// and trace; a trace alone keeps the profile's components. `source` names it for the summary ("inline" or the file).
std::optional<reliability::FailureTrace> read_failures_object(base::JsonReader& f, const hardware::HardwareProfile& hw,
                                                              const std::string& source,
                                                              std::vector<hardware::FailureComponentSpec>& own,
                                                              bool& replace);

/// Reads `"trace": {"span": "54 d", "events": [{"at": "2.5 h", "component": "gpu"}, ...]}` from a failures object
/// (inline or a failure file), if present. Each event must name one of `components` (the failure model in effect:
/// the object's own, plus the hardware profile's unless it replaces them) and lie in [0, span); events are sorted by
/// time, then component. `source` names where the trace came from, for the summary.
std::optional<reliability::FailureTrace> parse_failure_trace(
    base::JsonReader& failures, const std::vector<hardware::FailureComponentSpec>& components, std::string source);

}  // namespace sim::scenario::detail
