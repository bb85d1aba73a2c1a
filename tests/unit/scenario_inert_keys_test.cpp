// tests/unit/scenario_inert_keys_test.cpp: keys that would do nothing in their scenario are refused, naming why; a
// value from --set is blamed on --set; whole token counts may be written in exponent form; failure models by name.
#include "sim/scenario/scenario.hpp"
#include "tests/support/scenario_errors.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace sim::scenario {
namespace {

using support::load_error;

void expect_refused(const std::vector<Override>& overrides, const std::string& path, const std::string& why) {
  const std::string e = load_error(overrides);
  EXPECT_NE(e.find("--set " + overrides.back().key + ": " + path), std::string::npos)
      << "names --set and the JSON path: " << e;
  EXPECT_NE(e.find(why), std::string::npos) << "says why: " << e;
}

TEST(InertKeys, Fp8SettingsOfABf16RunAreRefused) {
  // The default scenario trains in bf16: no FP8 GEMMs, so no FP8 weight copies and no FP8-saved inputs.
  expect_refused({{"training.fp8_weight_copies", "true"}}, "/training/fp8_weight_copies", "training.dtype is \"bf16\"");
  expect_refused({{"training.fp8_activations", "true"}}, "/training/fp8_activations", "no FP8 GEMMs");
  EXPECT_EQ(load_error({{"training.fp8_weight_copies", "false"}}), "") << "false is what bf16 does anyway";
  EXPECT_EQ(load_error({{"training.dtype", "fp8"}, {"training.fp8_weight_copies", "true"}}), "");
}

TEST(InertKeys, MxFp8NeedsBlackwellsTensorCores) {
  expect_refused({{"training.dtype", "fp8"}, {"training.fp8_recipe", "\"mxfp8\""}}, "/training/fp8_recipe",
                 "has none (its profile has no FP4 peak)");
  EXPECT_EQ(
      load_error({{"hardware", "b200-sxm-180gb"}, {"training.dtype", "fp8"}, {"training.fp8_recipe", "\"mxfp8\""}}),
      "");
}

TEST(InertKeys, ZeroThreeSettingsNeedZeroThree) {
  expect_refused({{"memory.zero3_units", "4"}}, "/memory/zero3_units", "zero_stage is 1");
  expect_refused({{"memory.zero3_live_params", "1e9"}}, "/memory/zero3_live_params",
                 "applies to parallel.zero_stage 3");
  EXPECT_EQ(load_error({{"parallel.zero_stage", "3"}, {"memory.zero3_units", "4"}}), "");
}

TEST(InertKeys, ExpertSettingsOfADenseModelAreRefused) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"parallel.moe_dispatcher", "\"deepep\""},
                                                        {"parallel.expert_tp", "1"},
                                                        {"parallel.ep_comm_overlap", "true"},
                                                        {"parallel.moe_dispatch_dtype", "\"fp8\""}}) {
    SCOPED_TRACE(key);
    expect_refused({{key, value}}, "/" + std::string("parallel/") + key.substr(key.find('.') + 1),
                   "applies to models with experts (model.moe); llama3-70b has none");
  }
}

TEST(InertKeys, WholeTokenCountsInExponentFormLoad) {
  EXPECT_EQ(load_default_scenario({{"training.tokens", "15e12"}}).training.tokens->n, 15e12);
  EXPECT_EQ(load_default_scenario({{"training.tokens", "1.5e13"}}).training.tokens->n, 15e12);
  expect_refused({{"training.tokens", "15.5"}}, "/training/tokens", "an integer or a count such as \"15T\"");
}

TEST(InertKeys, FailureModelsByNameIncludeNone) {
  // "none": the failure-free run (no components); an unknown name lists what is built in.
  EXPECT_TRUE(load_default_scenario({{"reliability.failures", "\"none\""}}).reliability.components.empty());
  EXPECT_FALSE(load_default_scenario().reliability.components.empty());
  EXPECT_NE(load_error({{"reliability.failures", "\"foo\""}}).find("built-in: default, none;"), std::string::npos);
}

}  // namespace
}  // namespace sim::scenario
