// training.moe_imbalance: the busiest expert-parallel rank's routed tokens over the mean set each MoE layer's time
// and its expert activations (issue 17, "MoE as it runs": load imbalance as a scenario key).
#include "sim/app/step.hpp"
#include "sim/base/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace sim {
namespace {

const std::string kMixtral = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/mixtral-8x7b-32-h100-ep.json";

results::StepResult step_with(const std::vector<scenario::Override>& overrides) {
  const auto s = scenario::load_scenario(kMixtral, overrides);
  auto evaluated = app::evaluate_step(s, execution::StepOptions{});
  EXPECT_TRUE(std::holds_alternative<app::StepOutcome>(evaluated));
  return std::get<app::StepOutcome>(std::move(evaluated)).result;
}

/// The error loading `path` with the overrides gives ("" when it loads).
std::string error_of(const std::string& path, const std::vector<scenario::Override>& o) {
  try {
    (void)scenario::load_scenario(path, o);
  } catch (const base::ConfigError& e) {
    return std::string(e.what());
  }
  return std::string();
}

TEST(MoeImbalance, OneIsBalancedRoutingAndChangesNothing) {
  const auto plain = step_with({});
  const auto one = step_with({{"training.moe_imbalance", "1"}});
  EXPECT_EQ(plain.step_time, one.step_time);
  EXPECT_EQ(plain.memory.total, one.memory.total);
}

TEST(MoeImbalance, TheBusiestRankSetsTheLayerTimeAndItsExpertActivations) {
  const auto one = step_with({});
  const auto more = step_with({{"training.moe_imbalance", "1.5"}});
  EXPECT_GT(more.step_time, one.step_time);
  EXPECT_GT(more.memory.activations, one.memory.activations) << "the busiest rank stores more expert activations";
  EXPECT_EQ(more.memory.params, one.memory.params);
  // No more than the MoE share can grow: the step is not 1.5x.
  EXPECT_LT(static_cast<double>(more.step_time.ns), 1.5 * static_cast<double>(one.step_time.ns));

  // Per layer: the expert GEMMs and the all-to-all volume scale by the factor; attention does not.
  const auto m = scenario::load_model("mixtral-8x7b");
  workload::LayerShape s;
  s.ep = 4;
  s.seq_len = 4096;
  auto sums = [&](double f) {
    s.moe_imbalance = f;
    const auto w = workload::layer_work(m, s, workload::RecomputeMode::None);
    double expert = 0, qkv = 0, a2a = 0;
    for (const auto& seg : w.forward.segments) {
      if (seg.is_comm && seg.comm == workload::CommKind::EpAllToAll) a2a += seg.comm_bytes;
      for (const auto& k : seg.kernels) {
        if (std::string(k.name).rfind("expert", 0) == 0) expert += k.flops;
        if (std::string(k.name) == "qkv") qkv += k.flops;
      }
    }
    return std::tuple{expert, qkv, a2a};
  };
  const auto [e1, q1, a1] = sums(1.0);
  const auto [e2, q2, a2] = sums(1.5);
  EXPECT_DOUBLE_EQ(e2, 1.5 * e1);
  EXPECT_DOUBLE_EQ(a2, 1.5 * a1);
  EXPECT_DOUBLE_EQ(q2, q1);
}

TEST(MoeImbalance, BadValuesAndDenseModelsAreOneClearError) {
  const std::string low = error_of(kMixtral, {{"training.moe_imbalance", "0.8"}});
  EXPECT_NE(low.find("/training/moe_imbalance"), std::string::npos) << low;
  const std::string dense = error_of(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json",
                                     {{"training.moe_imbalance", "1.2"}});
  EXPECT_NE(dense.find("applies to models with experts"), std::string::npos) << dense;
}

// The busiest of ep ranks holds experts / ep experts and meets at most min(top_k, experts / ep) of a token's top_k
// copies: at most min(ep, experts / top_k) times the mean (a tester's trial: top_k = experts took 64, 8x slower).
TEST(MoeImbalance, NoMoreThanRoutingAllows) {
  const auto s = scenario::load_scenario(kMixtral, {{"training.moe_imbalance", "4"}});  // ep 4, 8 experts, top 2
  EXPECT_TRUE(std::holds_alternative<app::StepOutcome>(app::evaluate_step(s, execution::StepOptions{})))
      << "min(4, 8 / 2) = 4 is reachable";
  const auto over = scenario::load_scenario(kMixtral, {{"training.moe_imbalance", "4.5"}});
  const auto refused = app::evaluate_step(over, execution::StepOptions{});
  ASSERT_TRUE(std::holds_alternative<std::vector<parallel::Infeasible>>(refused));
  const auto& why = std::get<std::vector<parallel::Infeasible>>(refused).front();
  EXPECT_EQ(why.rule, "moe-imbalance");
  EXPECT_NE(why.reason.find("at most min(ep, experts / top_k) = 4 times the mean"), std::string::npos) << why.reason;
}

/// training.moe_capacity_factor / moe_pad_to_capacity (Megatron-LM's --moe-expert-capacity-factor and
/// --moe-pad-expert-input-to-capacity): each expert keeps at most factor x its mean share, so the busiest rank's load
/// is the imbalance capped at the factor; padded, it is the factor whatever the routing.
TEST(MoeCapacity, DroppingCapsTheBusiestRankAndPaddingFixesItAtTheFactor) {
  auto same = [](const results::StepResult& a, const results::StepResult& b) {
    EXPECT_EQ(a.step_time, b.step_time);
    EXPECT_EQ(a.memory.total, b.memory.total);
  };
  // Dropping: min(imbalance, factor).
  same(step_with({{"training.moe_imbalance", "1.5"}, {"training.moe_capacity_factor", "1.25"}}),
       step_with({{"training.moe_imbalance", "1.25"}}));
  same(step_with({{"training.moe_imbalance", "1.1"}, {"training.moe_capacity_factor", "1.25"}}),
       step_with({{"training.moe_imbalance", "1.1"}}));
  // Padding: the factor, balanced routing or not.
  const auto padded = step_with({{"training.moe_capacity_factor", "1.25"}, {"training.moe_pad_to_capacity", "true"}});
  same(padded, step_with({{"training.moe_imbalance", "1.25"}}));
  same(padded, step_with({{"training.moe_imbalance", "2"},
                          {"training.moe_capacity_factor", "1.25"},
                          {"training.moe_pad_to_capacity", "true"}}));
  // A factor below 1 drops tokens even under balanced routing: less work than dropless.
  EXPECT_LT(step_with({{"training.moe_capacity_factor", "0.8"}}).step_time, step_with({}).step_time);
}

TEST(MoeCapacity, PaddingWithoutAFactorAndDenseModelsAreOneClearError) {
  const std::string pad = error_of(kMixtral, {{"training.moe_pad_to_capacity", "true"}});
  EXPECT_NE(pad.find("/training/moe_pad_to_capacity"), std::string::npos) << pad;
  EXPECT_NE(pad.find("moe_capacity_factor"), std::string::npos) << "names what it needs: " << pad;
  const std::string zero = error_of(kMixtral, {{"training.moe_capacity_factor", "0"}});
  EXPECT_NE(zero.find("/training/moe_capacity_factor"), std::string::npos) << zero;
  const std::string dense = error_of(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json",
                                     {{"training.moe_capacity_factor", "1.25"}});
  EXPECT_NE(dense.find("applies to models with experts"), std::string::npos) << dense;
  EXPECT_EQ(error_of(kMixtral, {{"training.moe_pad_to_capacity", "false"}}), "") << "false needs no factor";
}

}  // namespace
}  // namespace sim
