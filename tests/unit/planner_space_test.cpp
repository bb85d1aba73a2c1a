// tests/unit/planner_space_test.cpp: what the planner searches beyond even splits (layers that do not divide over
// the stages, ZeRO-3), and that a candidate's run level is the run of its own layout.
#include "sim/app/run.hpp"
#include "sim/app/step.hpp"
#include "sim/planner/planner.hpp"
#include "sim/scenario/plan_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace sim::planner {
namespace {

/// A 6-layer GPT on 8 GPUs: pp 4 and 8 do not divide its layers, pp 2 does.
scenario::Scenario six_layers(support::TempDir& dir) {
  return scenario::load_scenario(dir.write("s.json", R"({"schema": "trainsim.scenario/1", "name": "six",
    "model": {"name": "six", "layers": 6, "hidden": 256, "ffn_hidden": 1024, "heads": 4, "vocab": 1024,
              "activation": "gelu", "max_seq_len": 1024},
    "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 8},
    "parallel": {"global_batch": 64}, "training": {"seq_len": 1024, "tokens": "1B"}})"));
}

TEST(PlanSpace, LayersThatDoNotDivideAreSplitCountingTheEmbeddingAndTheLoss) {
  // Megatron-LM's --account-for-embedding/loss-in-pipeline-split, as Llama 3 405B split 126 layers over 16 stages:
  // 6 + 2 = 8 counted layers over pp 4 (vpp 1 or 2) and pp 8; pp 2 divides the 6 layers as they are.
  support::TempDir dir;
  const auto s = six_layers(dir);
  const auto p = scenario::plan_problem(s, {}, false);
  bool pp4 = false, pp4_vpp2 = false;
  for (const auto& c : enumerate(p, 8)) {
    const bool uneven = c.pp > 1 && 6 % c.pp != 0;
    EXPECT_EQ(c.account_for_embedding, uneven) << "pp " << c.pp;
    EXPECT_EQ(c.account_for_loss, uneven) << "pp " << c.pp;
    pp4 = pp4 || c.pp == 4;
    pp4_vpp2 = pp4_vpp2 || (c.pp == 4 && c.vpp == 2);
  }
  EXPECT_TRUE(pp4 && pp4_vpp2);
  const auto r = plan(p, {});
  bool feasible_pp4 = false;
  for (const auto& c : r.candidates)
    feasible_pp4 = feasible_pp4 || c.layout.pp == 4;
  EXPECT_TRUE(feasible_pp4) << "the uneven split is a layout Megatron-LM runs, not a pruned point";
  for (const auto& [rule, count] : r.infeasible)
    EXPECT_NE(rule, "layers-stages") << count << " points pruned for a split the search could have made";
}

TEST(PlanSpace, LayersThatDivideNeitherWayGetABalancedSplitOfTheirOwn) {
  // DeepSeek-V3's 61 layers and MTP layer: 61 and 63 divide over no power of two, so every pipeline was pruned
  // ("layers-stages"), NVIDIA's published PP 2-16 layouts included (a user trial). The search now writes a balanced
  // split counting the embedding, the loss and the MTP layer as a layer each; over PP 8 x VPP 4 it is NVIDIA's own
  // Megatron-Bridge layout, "Et|(tt|)*30mL".
  support::TempDir dir;
  const auto s = scenario::load_scenario(dir.write("dsv3.json", R"({"schema": "trainsim.scenario/1", "name": "dsv3",
    "model": "deepseek-v3", "hardware": "gb200-nvl72", "cluster": {"gpus": 256, "nvlink_domain": 64},
    "parallel": {"tp": 1, "pp": 8, "ep": 32, "micro_batch": 1, "global_batch": 4096, "moe_dispatcher": "deepep"},
    "training": {"seq_len": 4096, "dtype": "fp8", "fp8_recipe": "mxfp8", "main_grads": "bf16", "tokens": "1T"}})"));
  const auto p = scenario::plan_problem(s, {}, false);
  std::vector<int> nvidia(32, 2);
  nvidia.front() = 1;
  nvidia.back() = 0;
  // vpp is searched: 1, 2 and 4 (at least two slots a virtual stage: 64 slots over 8 x 8 stages would leave one).
  int seen = 0;
  for (const auto& c : enumerate(p, 256)) {
    EXPECT_LE(c.vpp, 4);
    EXPECT_EQ(c.layers_per_stage.size(), static_cast<std::size_t>(8 * c.vpp));
    if (c.vpp != 4) continue;
    ++seen;
    EXPECT_EQ(c.layers_per_stage, nvidia);
  }
  EXPECT_GT(seen, 0);
  const auto r = plan(p, {});
  for (const auto& [rule, count] : r.infeasible)
    EXPECT_NE(rule, "layers-stages") << count;
  EXPECT_FALSE(r.candidates.empty());
}

TEST(PlanSpace, ZeroThreeIsSearchedWithoutPipelines) {
  support::TempDir dir;
  const auto s = six_layers(dir);
  const auto p = scenario::plan_problem(s, {}, false);
  int zero3 = 0;
  for (const auto& c : enumerate(p, 8)) {
    if (c.zero_stage < 3) continue;
    ++zero3;
    EXPECT_EQ(c.pp, 1);
  }
  EXPECT_GT(zero3, 0);
}

TEST(PlanRunLevel, ACandidatesDaysAreTheRunOfItsOwnLayout) {
  // The run level of a candidate reads its checkpoint shards, its degraded states' steps and its batch rule from the
  // candidate's layout, not the scenario's: the plan's days for its best layout are what `run` gives that layout
  // (the plan's degraded states are timed at analytic fidelity, run's at replica: a small difference remains).
  // Llama 3 70B on 512 GPUs with only its batch given: the scenario's own parallel fields are all defaults, far
  // from the layout the search picks.
  support::TempDir dir;
  const auto s = scenario::load_scenario(dir.write("s.json", R"({"schema": "trainsim.scenario/1", "name": "p70",
    "model": "llama3-70b", "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 512}, "parallel": {"global_batch": 256},
    "training": {"seq_len": 8192, "tokens": "100B"}})"));
  PlanOptions opt;
  opt.run_trials = 20;
  opt.threads = 2;
  const auto r = scenario::plan_scenario(s, opt);
  ASSERT_FALSE(r.candidates.empty());
  const auto& best = r.candidates.front();
  ASSERT_TRUE(best.run.has_value());
  scenario::Scenario chosen = s;
  chosen.parallel = best.parallel;
  const auto stepped = app::evaluate_step(chosen, {});
  ASSERT_TRUE(std::holds_alternative<app::StepOutcome>(stepped));
  const auto run = app::evaluate_run(chosen, std::get<app::StepOutcome>(stepped), 20, s.reliability.seed, 1, {});
  EXPECT_NEAR(best.run->time_to_train_mean_days, run.run.time_to_train_days.mean,
              0.002 * run.run.time_to_train_days.mean);
  EXPECT_NEAR(best.run->goodput_mean, run.run.goodput.mean, 0.002);
}

}  // namespace
}  // namespace sim::planner
