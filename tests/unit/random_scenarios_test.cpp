// tests/unit/random_scenarios_test.cpp: the step's three fidelities on scenarios drawn at random (a fixed seed) over
// every built-in model and GPU, the layouts, schedules, ZeRO stages, recomputation, FP8 recipes and overlap keys.
// Such sweeps found eight disagreements between the closed form and the replay (ZB-H1's W order, ZeRO-3 under split
// backwards, interleaved and ZeRO-2 data-parallel queues, then ZB-H1's and GPipe's ZeRO >= 2 queues, ZB-H1's halves
// under ZeRO-3, interleaving with m = p) and three between the replay and the full replay (each pipeline rank's own
// data-parallel group, groups spread unevenly over NVLink domains, sibling groups sharing uplinks); this test keeps the
// fidelities together on points no hand-written test names. Scenarios the loader or the layout rules refuse are skipped
// (refusals have their own tests); at least a quarter must be simulated, so the test cannot pass on an empty sweep.
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include "sim/base/errors.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

namespace sim {
namespace {

using execution::Fidelity;

struct Drawn {
  std::string text;
  int gpus = 0;
};

/// One scenario drawn from `rng`: a model and GPU, a layout, and the keys that change how the step is replayed.
Drawn draw(std::mt19937_64& rng, int index) {
  auto pick = [&rng](const auto& options) { return options[rng() % options.size()]; };
  auto chance = [&rng](double p) { return static_cast<double>(rng() % 1000) < p * 1000; };
  const std::vector<std::pair<std::string, int>> models = {
      {"llama3-8b", 32},    {"llama3-70b", 80},   {"llama2-70b", 80},      {"gpt3-175b", 96},
      {"qwen3-32b", 64},    {"mixtral-8x7b", 32}, {"mixtral-8x22b", 56},   {"deepseek-v2", 60},
      {"llama3-405b", 126}, {"deepseek-v3", 61},  {"qwen3-235b-a22b", 94}, {"llama4-maverick", 48}};
  const std::vector<std::string> gpus = {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200-sxm-180gb",
                                         "gb200-nvl72",    "gb300-nvl72",    "h800-sxm5-80gb", "h100-sxm5-96gb-500w"};
  const auto [model, layers] = pick(models);
  const bool moe = model.rfind("mixtral", 0) == 0 || model.rfind("deepseek", 0) == 0 ||
                   model.rfind("qwen3-235b", 0) == 0 || model.rfind("llama4", 0) == 0;
  const std::string hw = pick(gpus);
  const int tp = pick(std::vector<int>{1, 2, 4, 8});
  const int pp = pick(std::vector<int>{1, 1, 2, 4, 8});
  const int dp = pick(std::vector<int>{1, 2, 4, 8, 16, 32});
  const int cp = pick(std::vector<int>{1, 1, 1, 2});
  const int ep = moe ? pick(std::vector<int>{1, 2, 4, 8}) : 1;
  const int vpp = pp > 1 && chance(0.4) ? pick(std::vector<int>{2, 4}) : 1;
  std::string schedule = vpp > 1  ? "interleaved"
                         : pp > 1 ? pick(std::vector<std::string>{"1f1b", "gpipe", "zb-h1"})
                                  : "1f1b";
  if (vpp == 2 && moe && chance(0.4)) schedule = "dualpipev";
  const int mb = pick(std::vector<int>{1, 1, 2});
  nlohmann::json s;
  s["schema"] = "trainsim.scenario/1";
  s["name"] = "random-" + std::to_string(index);
  s["model"] = model;
  s["hardware"] = hw;
  const int n = tp * pp * dp * cp;
  const int per_node = hw.rfind("gb", 0) == 0 ? 4 : 8;
  s["cluster"] = {{"gpus", n}, {"gpus_per_node", n % per_node == 0 ? per_node : std::min(n, per_node)}};
  nlohmann::json& p = s["parallel"];
  p = {{"tp", tp},
       {"pp", pp},
       {"dp", dp},
       {"cp", cp},
       {"ep", ep},
       {"vpp", vpp},
       {"sequence_parallel", tp > 1},
       {"zero_stage", pick(std::vector<int>{0, 1, 1, 2, 3})},
       {"recompute", pick(std::vector<std::string>{"none", "selective", "full"})},
       {"micro_batch", mb},
       {"global_batch", mb * dp * pick(std::vector<int>{1, 2, 4}) * pp},
       {"schedule", schedule}};
  if (layers % (pp * vpp) != 0) {
    p["account_for_embedding_in_pipeline_split"] = true;
    p["account_for_loss_in_pipeline_split"] = true;
  }
  if (tp > 1 && chance(0.5)) p["tp_comm_overlap"] = true;
  if (chance(0.4)) p["overlap_param_gather"] = true;
  if (ep > 1 && chance(0.4)) p["moe_dispatcher"] = "deepep";
  if (ep > 1 && tp > 1 && chance(0.5)) p["expert_tp"] = 1;
  if (cp > 1 && chance(0.4)) p["cp_comm_type"] = "all_gather";
  nlohmann::json& t = s["training"];
  const bool fp8 = hw.rfind("a100", 0) != 0 && chance(0.35);
  t = {{"seq_len", pick(std::vector<int>{2048, 4096, 8192})}, {"dtype", fp8 ? "fp8" : "bf16"}};
  if (fp8) t["fp8_recipe"] = pick(std::vector<std::string>{"delayed", "tensorwise", "rowwise", "blockwise"});
  if (moe && chance(0.3)) t["moe_imbalance"] = 1.5;
  return {s.dump(), n};
}

TEST(RandomScenarios, TheFidelitiesAgree) {
  std::mt19937_64 rng(20261204);
  const int drawn = 160;
  int simulated = 0, full_checked = 0;
  for (int i = 0; i < drawn; ++i) {
    const Drawn d = draw(rng, i);
    std::optional<scenario::Scenario> s;
    try {
      s = scenario::load_scenario_text(d.text, "random.json");
    } catch (const base::ConfigError&) {
      continue;  // a combination the loader refuses (its messages have their own tests)
    }
    auto setup = scenario::step_setup(*s);
    if (std::holds_alternative<std::vector<parallel::Infeasible>>(setup)) continue;
    const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(setup));
    auto at = [&plan](Fidelity f) {
      execution::StepOptions o;
      o.fidelity = f;
      return execution::simulate_step(plan, o);
    };
    ++simulated;
    const auto replica = at(Fidelity::Replica);
    const double r = replica.step_time.seconds();
    ASSERT_GT(r, 0) << d.text;
    EXPECT_EQ(replica.breakdown.sum(), replica.step_time) << d.text;
    EXPECT_LT(replica.mfu, 0.9) << d.text;
    // The closed form screens the planner's search: within 12% of the replay (the sweep's two widest, a 32k-token
    // ZB-H1 with a heavy loss stage and an interleaved ZeRO-3 run on 32k GPUs, are 8-9% apart).
    EXPECT_NEAR(at(Fidelity::Analytic).step_time.seconds() / r, 1.0, 0.12) << d.text;
    if (d.gpus <= 256) {
      ++full_checked;
      EXPECT_NEAR(at(Fidelity::Full).step_time.seconds() / r, 1.0, 0.03) << d.text;
    }
  }
  std::printf("%d of %d drawn scenarios simulated, %d of them also replayed in full\n", simulated, drawn, full_checked);
  EXPECT_GE(simulated, drawn / 4);
  EXPECT_GE(full_checked, 10);
}

// Points of wider draws (900 scenarios, other seeds, the newer models) where the closed form left the replay, each
// fixed: ZB-H1 under ZeRO-2 (its deferred W passes bring their buckets back to back at the end; 15% fast), ZB-H1 under
// ZeRO-3 (the W half gathers its weights again, so the halves hold more than the whole backward; 15% fast), GPipe
// under ZeRO-2 (every backward at the end; 12% fast), and interleaving with as many micro-batches as stages (a rank's
// end came before its own work: 13% fast, a negative pipeline bubble). Full fidelity for the 256-GPU ones as well.
// The ZB-H1 / ZeRO-3 point is Mixtral 8x22B with EP 8: since its routed experts are gathered and reduced over their
// expert-data-parallel group (one GPU per node, 2026-12-05) data parallelism is 60% of its step, six times what it
// was, and the closed form's account of the W halves' gathers leaves the replay by 6.4%, 7.3% since each pass's first
// W carries the pass's last reduce-scatter rather than a bucket (2026-12-07): held to 8% there.
TEST(RandomScenarios, TheWiderDrawsDisagreementsStayFixed) {
  const std::vector<std::string> points = {
      R"({"cluster":{"gpus":1024,"gpus_per_node":4},"hardware":"gb300-nvl72","model":"gpt3-175b","parallel":{"cp":2,"dp":16,"global_batch":256,"micro_batch":2,"pp":8,"recompute":"full","schedule":"zb-h1","sequence_parallel":true,"tp":4,"tp_comm_overlap":true,"zero_stage":2},"training":{"dtype":"fp8","fp8_recipe":"delayed","seq_len":2048}})",
      R"({"cluster":{"gpus":128,"gpus_per_node":8},"hardware":"a100-sxm4-80gb","model":"mixtral-8x22b","parallel":{"dp":16,"ep":8,"expert_tp":1,"global_batch":128,"micro_batch":1,"moe_dispatcher":"deepep","pp":4,"recompute":"full","schedule":"zb-h1","sequence_parallel":true,"tp":2,"tp_comm_overlap":true,"zero_stage":3},"training":{"dtype":"bf16","seq_len":2048}})",
      R"({"cluster":{"gpus":512,"gpus_per_node":8},"hardware":"h100-sxm5-80gb","model":"qwen3-32b","parallel":{"cp":2,"dp":16,"global_batch":512,"micro_batch":2,"overlap_param_gather":true,"pp":4,"recompute":"none","schedule":"gpipe","sequence_parallel":true,"tp":4,"zero_stage":2},"training":{"dtype":"bf16","seq_len":2048}})",
      R"({"cluster":{"gpus":128,"gpus_per_node":4},"hardware":"gb300-nvl72","model":"llama3-405b","parallel":{"account_for_embedding_in_pipeline_split":true,"account_for_loss_in_pipeline_split":true,"dp":16,"global_batch":32,"micro_batch":1,"overlap_param_gather":true,"pp":2,"recompute":"none","schedule":"interleaved","sequence_parallel":true,"tp":4,"tp_comm_overlap":true,"vpp":4,"zero_stage":1},"training":{"dtype":"bf16","seq_len":2048}})"};
  for (const std::string& text : points) {
    const double closed_form_tolerance = text.find("mixtral-8x22b") != std::string::npos ? 0.08 : 0.05;
    nlohmann::json j = nlohmann::json::parse(text);
    j["schema"] = "trainsim.scenario/1";
    j["name"] = "drawn";
    const auto s = scenario::load_scenario_text(j.dump(), "drawn.json");
    const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(scenario::step_setup(s)));
    auto at = [&plan](Fidelity f) {
      execution::StepOptions o;
      o.fidelity = f;
      return execution::simulate_step(plan, o);
    };
    const auto replica = at(Fidelity::Replica);
    const auto analytic = at(Fidelity::Analytic);
    EXPECT_NEAR(analytic.step_time.seconds() / replica.step_time.seconds(), 1.0, closed_form_tolerance) << text;
    EXPECT_GE(analytic.breakdown.pp_bubble, base::Time::zero()) << text;
    if (plan.gpus <= 256) {
      EXPECT_NEAR(at(Fidelity::Full).step_time.seconds() / replica.step_time.seconds(), 1.0, 0.03) << text;
    }
  }
}

}  // namespace
}  // namespace sim
