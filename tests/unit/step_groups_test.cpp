// tests/unit/step_groups_test.cpp: each pipeline rank's collectives run on its own groups, in a domain or across.
// Data-parallel and layer groups that cross an NVLink domain's boundary, and a job's own domain size that keeps them
// inside.
#include "tests/support/step.hpp"

#include "sim/base/errors.hpp"
#include "sim/execution/step_plan.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace sim::execution {
namespace {

using base::Time;
using support::load_step;
using support::run_step;

/// Each pipeline rank reduces over its own data-parallel group. 128 GB200s fill NVL72 domains as 72 + 56: with TP 4,
/// DP 8 and PP 4 (32 GPUs per pipeline rank), rank 2's group (GPUs 64-92, step 4) crosses the domain boundary and
/// reduces over the network, the others over NVLink. Every rank once took rank 0's group: the replica and the closed
/// form then missed what the full replay's flows saw (found by a random sweep of scenarios: full 18% slower).
TEST(DataParallelGroups, EachPipelineRankReducesOverItsOwnGroup) {
  const auto s = load_step("scenarios/default.json", {{"hardware", "\"gb200-nvl72\""},
                                                      {"cluster.gpus", "128"},
                                                      {"cluster.gpus_per_node", "4"},
                                                      {"parallel.tp", "4"},
                                                      {"parallel.pp", "4"},
                                                      {"parallel.dp", "8"},
                                                      {"parallel.global_batch", "256"}});
  const auto& inside = s.plan.stage(0, 1);  // GPUs 32-63, a middle stage as rank 2
  const auto& across = s.plan.stage(0, 2);
  ASSERT_FALSE(inside.buckets.empty());
  ASSERT_EQ(inside.buckets.size(), across.buckets.size());
  EXPECT_GT(across.buckets.front().duration.seconds(), 5 * inside.buckets.front().duration.seconds());
  EXPECT_GT(across.param_gather.seconds(), 5 * inside.param_gather.seconds());
  EXPECT_LT(s.plan.stage(0, 3).param_gather.seconds(), 2 * inside.param_gather.seconds())
      << "rank 3 (GPUs 96-127) is in one domain";
  const double r = run_step(s, Fidelity::Replica).step_time.seconds();
  EXPECT_NEAR(run_step(s, Fidelity::Analytic).step_time.seconds() / r, 1.0, 0.02);
  EXPECT_NEAR(run_step(s, Fidelity::Full).step_time.seconds() / r, 1.0, 0.02);
}

/// cluster.nvlink_domain: a job given 64 GPUs of each NVL72 rack keeps every data-parallel group of the case above
/// inside a domain; the key is a multiple of gpus_per_node and at most the profile's domain.
TEST(DataParallelGroups, AJobsOwnNvlinkDomainSizeKeepsTheGroupsInside) {
  const std::vector<scenario::Override> gb200 = {{"hardware", "\"gb200-nvl72\""},
                                                 {"cluster.gpus", "128"},
                                                 {"cluster.gpus_per_node", "4"},
                                                 {"parallel.tp", "4"},
                                                 {"parallel.pp", "4"},
                                                 {"parallel.dp", "8"},
                                                 {"parallel.global_batch", "256"}};
  auto with = [&gb200](const char* domain) {
    auto o = gb200;
    o.push_back({"cluster.nvlink_domain", domain});
    return o;
  };
  const auto racks72 = load_step("scenarios/default.json", gb200);
  const auto racks64 = load_step("scenarios/default.json", with("64"));
  EXPECT_EQ(racks64.plan.stage(0, 2).param_gather, racks64.plan.stage(0, 1).param_gather);
  EXPECT_LT(racks64.plan.stage(0, 2).param_gather.seconds(), 0.2 * racks72.plan.stage(0, 2).param_gather.seconds());
  EXPECT_LT(run_step(racks64, Fidelity::Replica).step_time, run_step(racks72, Fidelity::Replica).step_time);
  for (const char* bad : {"66", "144", "0"})
    EXPECT_THROW((void)load_step("scenarios/default.json", with(bad)), base::ConfigError) << bad;
}

/// Qwen3-32B on GB200 trays of 4 under TP 8, ZeRO-1, one micro-batch per replica: the step is mostly the data-parallel
/// reduce-scatter and all-gather. On 256 GPUs each group of 32 lies 9/9/9/5 over the 72-GPU domains; on 288, 9 in each
/// of 4. Two TP ranks share each rail (4 GPUs per tray), so the eight groups' rings meet on the leaf uplinks: with one
/// uplink per leaf (oversubscription 32; non-blocking, D-mod-K routes them apart) they share it. The replay of one
/// replica once costed a group alone and, uneven, through one NIC per domain: 0.16 s where every GPU's replay took 0.29
/// (1.8x); on 288 GPUs, 0.16 against 0.25.
TEST(DataParallelGroups, UnevenGroupsUseTheirRailsAndSiblingGroupsShareTheUplinks) {
  for (const char* gpus : {"256", "288"}) {
    const int n = std::atoi(gpus);
    const auto s = load_step("scenarios/default.json", {{"model", "\"qwen3-32b\""},
                                                        {"hardware", "\"gb200-nvl72\""},
                                                        {"cluster.gpus", gpus},
                                                        {"cluster.gpus_per_node", "4"},
                                                        {"parallel.tp", "8"},
                                                        {"parallel.pp", "1"},
                                                        {"parallel.dp", std::to_string(n / 8)},
                                                        {"parallel.zero_stage", "1"},
                                                        {"parallel.recompute", "\"full\""},
                                                        {"parallel.micro_batch", "1"},
                                                        {"parallel.global_batch", std::to_string(n / 8)},
                                                        {"training.seq_len", "2048"},
                                                        {"cluster.network.oversubscription", "32"}});
    const auto replica = run_step(s, Fidelity::Replica);
    const auto full = run_step(s, Fidelity::Full);
    EXPECT_GT(replica.breakdown.dp_exposed.seconds(), replica.breakdown.compute.seconds()) << gpus;
    EXPECT_NEAR(full.step_time.seconds() / replica.step_time.seconds(), 1.0, 0.04) << gpus;
    EXPECT_NEAR(run_step(s, Fidelity::Analytic).step_time.seconds() / replica.step_time.seconds(), 1.0, 0.01) << gpus;
  }
}

/// A stage's forward time in expert-parallel collectives (its all-to-alls, as exposed).
double forward_ep_seconds(const StageWork& st) {
  Time t;
  for (const auto& seg : st.forward.segments)
    if (seg.kind == SegKind::Ep) t += seg.duration;
  return t.seconds();
}

/// The layers' collectives run on each pipeline rank's own tensor-, context- and expert-parallel groups, as the
/// gradients on its own data-parallel group. Mixtral 8x7B on 128 GB200s, TP 2 EP 8 without folding, PP 4: an EP group
/// is every other GPU of 16, so rank 2's first group (GPUs 64-78) crosses the boundary of the first 72-GPU domain and
/// its all-to-all runs over the network; rank 1's stay inside. Every rank once took rank 0's groups (NVLink for all).
TEST(LayerGroups, EachPipelineRankRunsItsLayerCollectivesOnItsOwnGroups) {
  const std::vector<scenario::Override> gb200 = {{"hardware", "\"gb200-nvl72\""},
                                                 {"cluster.gpus", "128"},
                                                 {"cluster.gpus_per_node", "4"},
                                                 {"parallel.tp", "2"},
                                                 {"parallel.pp", "4"},
                                                 {"parallel.ep", "8"},
                                                 {"parallel.dp", "16"},
                                                 {"parallel.vpp", "1"},
                                                 {"parallel.global_batch", "256"}};
  const auto s = load_step("scenarios/examples/mixtral-8x7b-256-h100.json", gb200);
  const double inside = forward_ep_seconds(s.plan.stage(0, 1)), across = forward_ep_seconds(s.plan.stage(0, 2));
  ASSERT_GT(inside, 0);
  EXPECT_GT(across, 3 * inside);
  EXPECT_DOUBLE_EQ(forward_ep_seconds(s.plan.stage(0, 3)), inside) << "rank 3 (GPUs 96-127) is in one domain";
  const auto crossing = groups_across_nvlink_domains(s.inputs);
  ASSERT_EQ(crossing.size(), 1u);
  EXPECT_EQ(crossing[0].dim, parallel::Dim::Ep);
  EXPECT_EQ(crossing[0].pipeline_rank, 2);
  EXPECT_EQ(crossing[0].first_gpu, 64);
  EXPECT_EQ(crossing[0].last_gpu, 78);
  const double r = run_step(s, Fidelity::Replica).step_time.seconds();
  EXPECT_NEAR(run_step(s, Fidelity::Analytic).step_time.seconds() / r, 1.0, 0.03);
  EXPECT_NEAR(run_step(s, Fidelity::Full).step_time.seconds() / r, 1.0, 0.03);
  // 64 GPUs of each domain: every group inside one, rank 2 as rank 1, and a faster step.
  auto racks64 = gb200;
  racks64.push_back({"cluster.nvlink_domain", "64"});
  const auto a = load_step("scenarios/examples/mixtral-8x7b-256-h100.json", racks64);
  EXPECT_DOUBLE_EQ(forward_ep_seconds(a.plan.stage(0, 2)), forward_ep_seconds(a.plan.stage(0, 1)));
  EXPECT_TRUE(groups_across_nvlink_domains(a.inputs).empty());
  EXPECT_LT(run_step(a, Fidelity::Replica).step_time.seconds(), r);
}

/// A rank is timed on its slowest groups, wherever in the rank they lie: with PP 1 on 128 GB200s the EP group of GPU 0
/// (GPUs 0-14, every other one) is inside the first domain, but those of GPUs 65-79 cross its boundary at 72, and the
/// replicas holding them set the step.
TEST(LayerGroups, ARanksSlowestGroupsSetItsTimingsWhereverTheyLie) {
  std::vector<scenario::Override> o = {{"hardware", "\"gb200-nvl72\""},
                                       {"cluster.gpus", "128"},
                                       {"cluster.gpus_per_node", "4"},
                                       {"parallel.tp", "2"},
                                       {"parallel.pp", "1"},
                                       {"parallel.ep", "8"},
                                       {"parallel.dp", "64"},
                                       {"parallel.vpp", "1"},
                                       {"parallel.global_batch", "256"}};
  const auto s = load_step("scenarios/examples/mixtral-8x7b-256-h100.json", o);
  o.push_back({"cluster.nvlink_domain", "64"});
  const auto inside = load_step("scenarios/examples/mixtral-8x7b-256-h100.json", o);
  EXPECT_GT(forward_ep_seconds(s.plan.stage(0, 0)), 3 * forward_ep_seconds(inside.plan.stage(0, 0)));
  const auto crossing = groups_across_nvlink_domains(s.inputs);
  ASSERT_EQ(crossing.size(), 1u);
  EXPECT_EQ(crossing[0].dim, parallel::Dim::Ep);
  EXPECT_EQ(crossing[0].pipeline_rank, 0);
  EXPECT_EQ(crossing[0].first_gpu, 65);
  EXPECT_EQ(crossing[0].last_gpu, 79);
  EXPECT_EQ(crossing[0].domains, 2);
  EXPECT_TRUE(groups_across_nvlink_domains(inside.inputs).empty());
  const double r = run_step(s, Fidelity::Replica).step_time.seconds();
  EXPECT_NEAR(run_step(s, Fidelity::Analytic).step_time.seconds() / r, 1.0, 0.03);
  EXPECT_GT(r, run_step(inside, Fidelity::Replica).step_time.seconds());
}

/// Found by a user trial: on a plain fat tree, 1.5:1 oversubscription stepped 10% faster than 1:1 and 4:1 faster than
/// 3:1, because a hash of (source, destination) put the rings' flows on spine planes by chance. Fewer uplinks can
/// only keep the step as it is or slow it: D-mod-K routing, uplinks at the downlinks' rate. Both fabrics, the replay
/// and the closed form, data-parallel reduction not overlapped (8B on 1,024 H100s).
TEST(Oversubscription, NeverMakesTheStepFaster) {
  for (const char* fabric : {"\"fat-tree\"", "\"rail-fat-tree\""}) {
    for (const Fidelity f : {Fidelity::Analytic, Fidelity::Replica}) {
      double last = 0;
      for (const char* ratio : {"1", "1.25", "1.5", "1.75", "2", "3", "4", "8", "16"}) {
        const auto s =
            load_step("scenarios/examples/llama3-8b-64-h100.json", {{"cluster.gpus", "1024"},
                                                                    {"parallel.global_batch", "1024"},
                                                                    {"cluster.network.topology", fabric},
                                                                    {"cluster.network.oversubscription", ratio},
                                                                    {"parallel.overlap_grad_reduce", "false"}});
        const double t = run_step(s, f).step_time.seconds();
        EXPECT_GE(t, last) << fabric << " at " << ratio << ":1";
        last = t;
      }
    }
  }
}

}  // namespace
}  // namespace sim::execution
