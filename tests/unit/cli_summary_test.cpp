// tests/unit/cli_summary_test.cpp: what the command line's summaries say, where a user trial found them wrong: the
// pricing a run's cost line names, a run without failures, `validate` with --set, and the GPU a step's breakdown
// describes.
#include "tests/support/cli.hpp"

#include "sim/base/exit_code.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using sim::base::kExitOk;
using support::trainsim;

const std::string kSource = TRAINSIM_SOURCE_DIR;

TEST(RunSummaryText, OwnedPricingIsNotCalledRented) {
  const auto o = trainsim({"run", support::kDefaultScenario, "--trials", "5", "--set", "cost.pricing=owned", "--set",
                           "cost.owned.node_price=300K USD"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("(owned, amortised at "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("rented"), std::string::npos) << o.out;
  const auto rented = trainsim({"run", support::kDefaultScenario, "--trials", "5"});
  EXPECT_NE(rented.out.find("(rented at "), std::string::npos) << rented.out;
}

TEST(RunSummaryText, ARunWithoutFailuresNeedsNoCheckpointAndHasNoMtbf) {
  // Daly's interval for an unbounded MTBF was printed as "every 47336400.0 min" beside "job MTBF inf h".
  const auto o = trainsim({"run", support::kDefaultScenario, "--trials", "5", "--set", "reliability.failures=none"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("job MTBF none (no failures modelled)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("checkpoint      none needed (no failures modelled), overhead 0.0%"), std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("inf h"), std::string::npos) << o.out;
  // A fixed interval is still taken, failures or not.
  const auto fixed = trainsim({"run", support::kDefaultScenario, "--trials", "5", "--set", "reliability.failures=none",
                               "--set", "reliability.checkpoint.interval=100 steps"});
  ASSERT_EQ(fixed.code, kExitOk) << fixed.err;
  EXPECT_NE(fixed.out.find("(fixed, 100 steps)"), std::string::npos) << fixed.out;
}

TEST(ValidateCommand, SetOverridesApplyToTheFileAsRunAppliesThem) {
  // A scenario with an `owned` section under rented pricing is refused as written; with --set cost.pricing=owned
  // run takes it, and so must validate (it ignored --set in its first check).
  const std::string file = kSource + "/tests/data/owned_section_rented.json";
  EXPECT_NE(trainsim({"validate", file}).code, kExitOk);
  const auto o = trainsim({"validate", file, "--set", "cost.pricing=owned"});
  EXPECT_EQ(o.code, kExitOk) << o.err;
}

TEST(StepJson, NamesTheCriticalGpuAndASlowGpuIsTheOneDescribed) {
  // The breakdown describes the GPU the others wait for: a slowed GPU with no pipeline, not GPU 0 waiting for it in
  // its gradient reduction (which showed half the step as exposed data-parallel time).
  const std::string scenario = kSource + "/scenarios/ci/llama3-8b-16-h100.json";
  for (const char* slow : {"0", "3"}) {
    const auto o = trainsim({"step", scenario, "--fidelity", "full", "--slowdown", std::string(slow) + "=2", "--json"});
    ASSERT_EQ(o.code, kExitOk) << o.err;
    const auto j = nlohmann::json::parse(o.out);
    ASSERT_TRUE(j.contains("critical_gpu")) << "documented in the README";
    EXPECT_EQ(j.at("critical_gpu").get<int>(), std::stoi(slow));
    EXPECT_GT(j.at("breakdown_s").at("compute").get<double>(), 0.9 * j.at("step_time_s").get<double>() -
                                                                   j.at("breakdown_s").at("optimizer").get<double>() -
                                                                   j.at("breakdown_s").at("tp_exposed").get<double>())
        << "slow GPU " << slow << ": " << j.at("breakdown_s").dump();
  }
}

}  // namespace
