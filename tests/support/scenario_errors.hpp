// tests/support/scenario_errors.hpp: the error a scenario load gives, for tests of bad input.
#pragma once
#include "sim/base/errors.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>
#include <vector>

namespace support {

/// The error text of loading the built-in default scenario with `overrides`, or "" when it loads.
inline std::string load_error(const std::vector<sim::scenario::Override>& overrides) {
  try {
    sim::scenario::load_default_scenario(overrides);
  } catch (const sim::base::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace support
