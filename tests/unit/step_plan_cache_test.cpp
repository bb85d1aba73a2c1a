// The planner's step-plan cache (sim/execution/step_plan_cache.hpp): a plan built through a cache shared by many
// plans equals, field for field, the plan built without it, over samples of full searches (dense, MoE, and a
// dense/MoE mix with FP8 and block recomputation).
#include "sim/execution/step_plan_cache.hpp"
#include "sim/planner/planner.hpp"
#include "sim/scenario/plan_setup.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace sim::execution {
namespace {

void expect_same_work(const OpWork& a, const OpWork& b, const std::string& where) {
  ASSERT_EQ(a.segments.size(), b.segments.size()) << where;
  for (std::size_t i = 0; i < a.segments.size(); ++i) {
    EXPECT_EQ(a.segments[i].duration, b.segments[i].duration) << where << " segment " << i;
    EXPECT_EQ(a.segments[i].kind, b.segments[i].kind) << where << " segment " << i;
    EXPECT_EQ(a.segments[i].label, b.segments[i].label) << where << " segment " << i;
  }
}

void expect_same_plan(const StepPlan& a, const StepPlan& b, const std::string& what) {
  ASSERT_EQ(a.stages.size(), b.stages.size()) << what;
  for (std::size_t v = 0; v < a.stages.size(); ++v) {
    const StageWork& x = *a.stages[v];
    const StageWork& y = *b.stages[v];
    const std::string where = what + ", stage " + std::to_string(v);
    EXPECT_EQ(a.first_layers[v], b.first_layers[v]) << where;
    EXPECT_EQ(x.layers, y.layers) << where;
    expect_same_work(x.forward, y.forward, where + " forward");
    expect_same_work(x.backward, y.backward, where + " backward");
    expect_same_work(x.backward_input, y.backward_input, where + " backward_input");
    expect_same_work(x.backward_weight, y.backward_weight, where + " backward_weight");
    ASSERT_EQ(x.buckets.size(), y.buckets.size()) << where;
    for (std::size_t k = 0; k < x.buckets.size(); ++k) {
      EXPECT_EQ(x.buckets[k].bytes, y.buckets[k].bytes) << where;
      EXPECT_EQ(x.buckets[k].ready_after, y.buckets[k].ready_after) << where;
      EXPECT_EQ(x.buckets[k].ready_at, y.buckets[k].ready_at) << where;
      EXPECT_EQ(x.buckets[k].duration, y.buckets[k].duration) << where;
    }
    EXPECT_EQ(x.optimizer, y.optimizer) << where;
    EXPECT_EQ(x.param_gather, y.param_gather) << where;
    EXPECT_EQ(x.param_gather_bytes, y.param_gather_bytes) << where;
    EXPECT_EQ(x.params_local, y.params_local) << where;  // exact: the same additions in the same order
  }
  EXPECT_EQ(a.labels, b.labels) << what;
  EXPECT_EQ(a.p2p, b.p2p) << what;
  EXPECT_EQ(a.model_flops, b.model_flops) << what;
  EXPECT_EQ(a.hardware_flops, b.hardware_flops) << what;
  EXPECT_EQ(a.tokens, b.tokens) << what;
}

/// Every `stride`-th point of a full search of the scenario, built through one cache and without it.
/// `crossing`, where given, counts the points with a layer collective group across NVLink domains.
void check_search(const std::string& scenario, const std::vector<scenario::Override>& overrides, int stride,
                  int* crossing = nullptr) {
  const auto s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + scenario, overrides);
  planner::PlanOptions opt;
  opt.free = {"all"};
  const auto problem = scenario::plan_problem(s, opt, /*with_run_level=*/false);
  topology::TopologyConfig tc = problem.topology;
  tc.gpus = problem.gpus.front();
  const auto topo = std::make_shared<const topology::Topology>(tc);
  const parallel::ClusterShape shape{tc.gpus, tc.gpus_per_node, tc.nvlink_domain};
  StepPlanCache cache;
  int built = 0;
  const auto points = planner::enumerate(problem, tc.gpus);
  for (std::size_t i = 0; i < points.size(); i += static_cast<std::size_t>(stride)) {
    const auto resolved = parallel::resolve_layout(*problem.model, shape, points[i], problem.seq_len);
    const auto* layout = std::get_if<parallel::Layout>(&resolved);
    if (layout == nullptr) continue;
    StepInputs in;
    in.model = problem.model;
    in.hardware = problem.hardware;
    in.parallel = points[i];
    in.layout = *layout;
    in.seq_len = problem.seq_len;
    in.dtype = problem.dtype;
    in.fp8_scaling = problem.fp8_scaling;
    in.topology = topo;
    in.fp32_main_grads = problem.memory.fp32_main_grads;
    expect_same_plan(build_step_plan(in, cache), build_step_plan(in), scenario + " point " + std::to_string(i));
    if (crossing != nullptr && !groups_across_nvlink_domains(in).empty()) ++*crossing;
    if (testing::Test::HasFatalFailure()) return;
    ++built;
  }
  EXPECT_GT(built, 50) << "the sample should hold many feasible points";
}

TEST(StepPlanCache, PlansThroughTheCacheEqualPlansWithoutItOverADenseSearch) {
  check_search("scenarios/ci/llama2-70b-64-h100-pp.json", {}, 401);
}

TEST(StepPlanCache, PlansThroughTheCacheEqualPlansWithoutItOverAnMoeSearch) {
  check_search("scenarios/ci/mixtral-8x7b-32-h100-ep.json", {}, 397);
}

TEST(StepPlanCache, PlansEqualWithDenseAndMoeLayersMixedFp8AndBlockRecomputation) {
  check_search("scenarios/ci/mixtral-8x7b-32-h100-ep.json",
               {{"model", "deepseek-v3"},
                {"cluster.gpus", "256"},
                {"parallel.pp", "8"},
                {"parallel.ep", "8"},
                {"parallel.recompute", "full"},
                {"parallel.recompute_method", "block"},
                {"parallel.recompute_num_layers", "2"},
                {"parallel.global_batch", "256"},
                {"training.dtype", "fp8"}},
               401);
}

/// 128 GB200s fill 72-GPU NVLink domains as 72 + 56: many points give some pipeline rank tensor-, expert- or
/// data-parallel groups across the boundary, with layer timings of their own (taken from the cache, their labels
/// renumbered into the plan's).
TEST(StepPlanCache, PlansEqualWhenPipelineRanksHaveTheirOwnLayerTimings) {
  int crossing = 0;
  check_search("scenarios/ci/mixtral-8x7b-32-h100-ep.json",
               {{"hardware", "gb200-nvl72"},
                {"cluster.gpus", "128"},
                {"cluster.gpus_per_node", "4"},
                {"parallel.global_batch", "256"}},
               97, &crossing);
  EXPECT_GT(crossing, 10);
}

}  // namespace
}  // namespace sim::execution
