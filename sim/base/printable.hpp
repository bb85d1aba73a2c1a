// sim/base/printable.hpp: the one escaping function for text that came from inputs (names, paths, values) and goes
// to a terminal, a CI log or a CSV cell.
#pragma once
#include <string>
#include <string_view>

namespace sim::base {

/// `text` made inert for a terminal or a CI log: C0 controls (including tab, carriage return and newline), DEL,
/// invalid UTF-8 bytes become \xNN; C1 controls and the bidirectional overrides (U+202A-U+202E, U+2066-U+2069)
/// become \uNNNN; a leading "::" (a GitHub Actions workflow command such as ::add-mask:: when printed at the start
/// of a line) becomes "\x3a:". Everything else, printable UTF-8 included, is unchanged.
std::string printable(std::string_view text);

}  // namespace sim::base
