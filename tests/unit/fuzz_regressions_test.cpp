// Inputs that broke an invariant of a fuzz target (tests/fuzz), kept inline so that the fixes stay fixed without
// clang or libFuzzer. Each names the target and what went wrong.
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/base/quantity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace sim::base {
namespace {

// fuzz_quantity: a finite number times its unit's factor overflowed to +infinity, and the infinity was accepted as
// a bandwidth, a duration, a count or an amount of money.
TEST(FuzzRegression, QuantityWhoseUnitOverflowsADoubleIsOutOfRange) {
  for (const char* text : {"1e308 TB/s", "1e300 Tbit/s", "1.7e308 TiB/s"}) {
    const auto p = parse_bandwidth(text);
    EXPECT_FALSE(p) << text;
    EXPECT_NE(p.error.find("out of range"), std::string::npos) << p.error;
  }
  EXPECT_FALSE(parse_duration("1e308 d")) << "a duration of infinite days";
  EXPECT_FALSE(parse_flop_rate("1e305 EFLOP/s"));
  EXPECT_FALSE(parse_flops("1e300 ZFLOP"));
  EXPECT_FALSE(parse_power("1e307 MW"));
  EXPECT_FALSE(parse_count("1e300T")) << "the SI multiplier overflows";
  EXPECT_FALSE(parse_money("1e305 M USD"));
  // The largest finite values still parse.
  EXPECT_TRUE(parse_count("1e290T"));
  EXPECT_TRUE(parse_duration("1e290 d"));
}

// fuzz_scenario: nlohmann reports "number overflow parsing '1e400'" without a position; the message now says where.
TEST(FuzzRegression, JsonNumberBeyondADoubleSaysItsLineAndColumn) {
  try {
    (void)JsonDocument::parse_text("{\n  \"a\": 1,\n  \"b\": -1e400\n}", "x.json");
    FAIL() << "1e400 is not a double";
  } catch (const ConfigError& e) {
    const std::string what = e.items().at(0).to_string();
    EXPECT_NE(what.find("line 3, column 8"), std::string::npos) << what;
  }
}

// fuzz_nccl_tests: a "#  Rank" line whose rank does not fit an int escaped as std::out_of_range from std::stoi
// ("internal error" in trainsim-calibrate) instead of being skipped like any other unreadable line.
TEST(FuzzRegression, NcclTestsRankBeyondAnIntIsNotACrash) {
  const std::string log =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: "
      "1 graph: 0\n"
      "#\n"
      "# Using devices\n"
      "#  Rank 9223372036854775808 Group  0 Pid   1210 on     node-b device  1 [0000:2a:00] NVIDIA H100 80GB HBM3\n";
  EXPECT_THROW((void)calibrate::fit::parse_nccl_tests_text(log, "crash.log", {}), ConfigError);
}

}  // namespace
}  // namespace sim::base
