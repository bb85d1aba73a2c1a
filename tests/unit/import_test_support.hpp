// tests/unit/import_test_support.hpp: the inputs, file reading and refusal check the `trainsim import` tests share.
#pragma once
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

// The namespace of the `trainsim import` tests of import_test.cpp, import_megatron_test.cpp, import_deepspeed_test.cpp,
// import_torchtitan_test.cpp and import_hf_config_test.cpp (each in an anonymous namespace inside it): they see these
// helpers and trainsim() unqualified.
namespace sim::cli::import_tests {

using support::trainsim;

inline const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/import/";

inline std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// Exit 2 and one message naming the file and where in it, what was found and what is accepted.
inline void expect_bad(const support::CliOutcome& o, const std::vector<std::string>& fragments) {
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  for (const auto& f : fragments)
    EXPECT_TRUE(contains(o.err, f)) << "missing \"" << f << "\" in:\n" << o.err;
  EXPECT_TRUE(o.out.empty()) << "nothing is written on bad input: " << o.out;
}

}  // namespace sim::cli::import_tests
