// tests/support/cli.hpp: run the trainsim command line in-process and capture its exit code, stdout and stderr.
#pragma once
#include "sim/cli/app.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace support {

struct CliOutcome {
  int code;
  std::string out;
  std::string err;
};

inline CliOutcome trainsim(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = sim::cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

/// The repository's default scenario file.
inline const std::string kDefaultScenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json";

}  // namespace support
