// `trainsim run` end to end: the run JSON contract with cost and risk fields, thread-count independence, and an
// impossible run reported as never finishing, with its reason, in bounded time.
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace sim::cli {
namespace {

using support::trainsim;
using Outcome = support::CliOutcome;

const std::string& kDefault = support::kDefaultScenario;

TEST(RunCommand, JsonCarriesTheRunContract) {
  auto o = trainsim({"run", kDefault, "--trials", "20", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  for (const char* key : {"\"schema\": \"trainsim.run/1\"", "\"trials\": 20", "\"step\": {", "\"time_to_train_days\"",
                          "\"goodput\"", "\"interruptions\"", "\"by_cause\"", "\"job_mtbf_h\"", "\"lost_gpu_hours\"",
                          "\"checkpoint\"", "\"interval_s\"", "\"overhead_fraction\"", "\"cost_usd\"", "\"p50\"",
                          "\"cost_per_failure_usd\"", "\"p_deadline_miss\"", "\"p_budget_overrun\""})
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
}

TEST(RunCommand, SameResultOnOneOrTwoThreads) {
  auto one = trainsim({"run", kDefault, "--trials", "16", "--threads", "1", "--json"});
  auto two = trainsim({"run", kDefault, "--trials", "16", "--threads", "2", "--json"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  EXPECT_EQ(one.out, two.out);
}

TEST(RunCommand, ImpossibleRunIsReportedAsNeverFinishing) {
  auto o = trainsim(
      {"run", kDefault, "--trials", "4", "--set",
       R"(reliability.failures={"components":[{"name":"flaky","scope":"job","mtbf":"20 s","effect":"crash"}]})"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("NEVER FINISHED  4 of 4 trials"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("time to train   p50 never"), std::string::npos) << o.out;
}

TEST(RunCommand, AnOutDirectoryThatCannotBeCreatedIsBadInput) {
  const support::TempDir dir;
  const std::string inside_a_file = dir.write("file", "x") + "/report";
  auto o = trainsim({"run", kDefault, "--trials", "2", "--out", inside_a_file});
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find("error: " + inside_a_file + ": cannot create the report directory"), std::string::npos) << o.err;
}

TEST(RunCommand, BadTrialCountIsAUsageError) {
  EXPECT_EQ(trainsim({"run", kDefault, "--trials", "0"}).code, kExitBadInput);
}

}  // namespace
}  // namespace sim::cli
