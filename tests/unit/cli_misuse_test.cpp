// Issue 22, item 12's small ones: what the command line and the scenario loader once took silently and now refuse
// with a message (exit 2): a --seed past 2^63-1 (was clamped), a second positional (was ignored), an empty option
// value (--out '' was no option), one GPU slowed twice, an empty layers_per_stage (was "absent"), and numbers from
// 1e15 on printed with an exponent (a 1e300 USD price once printed 63 digits of a 301-digit number).
#include "sim/base/table.hpp"
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sim::cli {
namespace {

using support::trainsim;

const std::string kScenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json";

void refused(const std::vector<std::string>& args, const std::string& fragment) {
  const auto o = trainsim(args);
  EXPECT_EQ(o.code, kExitBadInput) << args[0] << ": " << o.out;
  EXPECT_NE(o.err.find(fragment), std::string::npos) << o.err;
}

TEST(CliMisuse, SeedsPastTheScenarioRangeAreRefusedNotClamped) {
  refused({"run", kScenario, "--trials", "2", "--seed", "9223372036854775808"},
          "--seed: \"9223372036854775808\" is not a seed: an integer from 0 to 9223372036854775807");
  refused({"compare", kScenario, kScenario, "--trials", "2", "--seed", "18446744073709551616"}, "is not a seed");
  const auto ok = trainsim({"run", kScenario, "--trials", "2", "--seed", "9223372036854775807", "--json"});
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_NE(ok.out.find("\"seed\": 9223372036854775807"), std::string::npos);
}

TEST(CliMisuse, ExtraPositionalsAndEmptyValuesAreRefused) {
  refused({"step", kScenario, kScenario}, "unexpected argument \"" + kScenario + "\": step takes");
  refused({"run", kScenario, "extra.json", "--trials", "2"}, "unexpected argument \"extra.json\": run takes");
  refused({"run", kScenario, "--trials", "2", "--out", ""}, "--out: an empty value; give a path");
  refused({"step", kScenario, "--trace", ""}, "--trace: an empty value");
  refused({"check", kScenario, "--baseline", ""}, "--baseline: an empty value");
}

TEST(CliMisuse, OneGpuSlowedTwiceAndAnEmptyStageListAreRefused) {
  refused({"step", kScenario, "--fidelity", "full", "--slowdown", "3=1.5", "--slowdown", "3=2"},
          "--slowdown: GPU 3 is slowed twice (\"3=2\" after an earlier factor for it)");
  refused({"validate", kScenario, "--set", "parallel.layers_per_stage=[]"},
          "/parallel/layers_per_stage: is empty; give one layer count per virtual stage");
}

TEST(CliMisuse, HugeNumbersArePrintedWithAnExponent) {
  EXPECT_EQ(base::fmt(1e300, 0), "1.000e+300");
  EXPECT_EQ(base::fmt(-2.5e15, 2), "-2.500e+15");
  EXPECT_EQ(base::fmt(999999999999999.0, 0), "999999999999999");
  EXPECT_EQ(base::fmt(12.345, 1), "12.3");
  const auto o = trainsim({"run", kScenario, "--trials", "2", "--set", "cost.gpu_hour=1e300 USD"});
  EXPECT_EQ(o.out.find("00000000000000000000"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace sim::cli
