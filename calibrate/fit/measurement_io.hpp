// calibrate/fit/measurement_io.hpp: strict reading of measurement files (JSON lines; writing is in measurement.hpp).
#pragma once
#include "calibrate/fit/measurement.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace calibrate::fit {

/// Reads a JSON-lines file of trainsim.measurement/1 records. Blank lines are skipped. Every problem (invalid JSON,
/// missing or unknown fields, wrong types or units, derived rates that disagree with bytes and seconds) is reported
/// as "FILE:LINE: /field: what was found; what is accepted", all lines at once, in one sim::base::ConfigError.
std::vector<Measurement> read_measurements(const std::string& path);
/// The same for text already in memory; `origin` names it in messages.
std::vector<Measurement> parse_measurements(std::string_view text, const std::string& origin);

}  // namespace calibrate::fit
