// tests/unit/step_moe_test.cpp: a step's expert-parallel all-to-alls: MoE parallel folding and DeepEP's dispatch.
#include "tests/support/step.hpp"

#include "sim/execution/moe_dispatch.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace sim::execution {
namespace {

using support::load_step;
using support::run_step;

TEST(MoeParallelFolding, ExpertParallelAllToAllStaysInTheNodeAndTheFidelitiesAgree) {
  // Mixtral 8x7B on 256 H100s, TP2 EP8: without folding an EP group takes every other GPU of two nodes and its
  // all-to-all crosses the network; with expert_tp 1 it is the 8 GPUs of one node (NVLink), the experts are whole on
  // each rank and the MoE block needs no tensor-parallel collective.
  const auto plain = load_step("scenarios/examples/mixtral-8x7b-256-h100.json");
  const auto folded = load_step("scenarios/examples/mixtral-8x7b-256-h100.json", {{"parallel.expert_tp", "1"}});
  const auto p = run_step(plain, Fidelity::Replica);
  const auto f = run_step(folded, Fidelity::Replica);
  EXPECT_LT(f.breakdown.ep_exposed.seconds(), 0.5 * p.breakdown.ep_exposed.seconds());
  EXPECT_LT(f.breakdown.tp_exposed, p.breakdown.tp_exposed) << "no TP all-gather / reduce-scatter around the experts";
  EXPECT_LT(f.step_time, p.step_time);
  const double a = run_step(folded, Fidelity::Analytic).step_time.seconds();
  const double full = run_step(folded, Fidelity::Full).step_time.seconds();
  EXPECT_NEAR(a / f.step_time.seconds(), 1.0, 0.02);
  EXPECT_NEAR(full / f.step_time.seconds(), 1.0, 0.02);
}

TEST(MoeDispatcher, DeepEpSendsATokenOncePerNodeAcrossTheNetwork) {
  // Mixtral 8x7B, TP2 EP8 without folding: an EP group spans 2 nodes of 4 experts each. A token's top-2 experts lie
  // on 2 (1 - C(4,2)/C(8,2)) = 1.571 distinct nodes on average, so DeepEP moves 1.571 / 2 = 0.786 of the all-to-all
  // dispatcher's payload; inside one node (expert_tp 1) it changes nothing.
  const auto a2a = run_step(load_step("scenarios/examples/mixtral-8x7b-256-h100.json"), Fidelity::Replica);
  const auto deepep =
      run_step(load_step("scenarios/examples/mixtral-8x7b-256-h100.json", {{"parallel.moe_dispatcher", "\"deepep\""}}),
               Fidelity::Replica);
  EXPECT_LT(deepep.breakdown.ep_exposed, a2a.breakdown.ep_exposed);
  EXPECT_GT(deepep.breakdown.ep_exposed.seconds(), 0.6 * a2a.breakdown.ep_exposed.seconds());
  const auto folded = run_step(
      load_step("scenarios/examples/mixtral-8x7b-256-h100.json", {{"parallel.expert_tp", "1"}}), Fidelity::Replica);
  const auto folded_deepep =
      run_step(load_step("scenarios/examples/mixtral-8x7b-256-h100.json",
                         {{"parallel.expert_tp", "1"}, {"parallel.moe_dispatcher", "\"deepep\""}}),
               Fidelity::Replica);
  EXPECT_EQ(folded_deepep.step_time, folded.step_time);
}

TEST(ExpertDataParallel, TheExpertsGradientsAndStatesGoOverTheGpusHoldingThem) {
  // Mixtral 8x7B on 8 H100s, gradients reduced after the backward: with EP 8 every GPU holds experts no other GPU
  // holds, so only the dense parameters' gradients are reduced; with EP 1 all of them over the 8. The optimizer's
  // work per GPU is the same in both (the experts' states sharded over their own group, as memory has them).
  const std::vector<scenario::Override> common = {{"cluster.gpus", "8"},
                                                  {"parallel.tp", "1"},
                                                  {"parallel.pp", "1"},
                                                  {"parallel.recompute", "\"none\""},
                                                  {"parallel.overlap_grad_reduce", "false"},
                                                  {"parallel.global_batch", "64"}};
  auto with_ep = [&](int ep) {
    auto o = common;
    o.push_back({"parallel.ep", std::to_string(ep)});
    return load_step("scenarios/examples/mixtral-8x7b-256-h100.json", o);
  };
  const auto ep8 = run_step(with_ep(8), Fidelity::Replica);
  const auto ep1 = run_step(with_ep(1), Fidelity::Replica);
  EXPECT_NEAR(ep8.breakdown.optimizer.seconds() / ep1.breakdown.optimizer.seconds(), 1.0, 0.01);
  EXPECT_LT(ep8.breakdown.dp_exposed.seconds(), 0.1 * ep1.breakdown.dp_exposed.seconds());
  // TP2 EP4 on 32 GPUs: the experts' group is one GPU per node; its reduction runs as flows in the full replay.
  const auto ci = load_step("scenarios/ci/mixtral-8x7b-32-h100-ep.json");
  const double replica = run_step(ci, Fidelity::Replica).step_time.seconds();
  EXPECT_NEAR(run_step(ci, Fidelity::Full).step_time.seconds() / replica, 1.0, 0.03);
  EXPECT_NEAR(run_step(ci, Fidelity::Analytic).step_time.seconds() / replica, 1.0, 0.03);
}

TEST(MoeDispatcher, NodeLimitedRoutingCapsTheNodesATokenReaches) {
  // DeepSeek-V3 (256 experts, top-8) with expert parallelism 64 over 8 nodes of 32 experts. Unlimited, a token meets
  // 8 (1 - C(224,8)/C(256,8)) = 5.295 nodes; node-limited (8 groups, 4 chosen: report Sec. 2.1.2, 4.2), its own node's
  // group is chosen with probability 1/2 and then missed by all 8 draws from the chosen 128 experts with
  // C(96,8)/C(128,8): 8 (1 - 1/2 - 1/2 x 0.0938) = 3.629 nodes. DeepEP's share of the payload is that over k = 8.
  const auto s = load_step("scenarios/validation/deepseek_v3_2048_h800_dualpipev.json");
  std::vector<int> ep_group(64);
  for (int g = 0; g < 64; ++g)
    ep_group[static_cast<std::size_t>(g)] = g;  // tp 1, dp innermost: data-parallel ranks 0-63, GPUs 0-63
  workload::ModelSpec model = *s.inputs.model;
  EXPECT_NEAR(deepep_network_share(model, *s.inputs.topology, ep_group), 3.62901 / 8, 1e-4);
  model.moe->router_groups = model.moe->router_group_topk = 0;
  EXPECT_NEAR(deepep_network_share(model, *s.inputs.topology, ep_group), 5.29465 / 8, 1e-4);
  // Groups spanning nodes: 4 groups over the 8 nodes, 2 chosen: a node is reachable only when its group is chosen,
  // (2/4) (1 - C(96,8)/C(128,8)) per node, the same 3.629 by another path.
  model.moe->router_groups = 4;
  model.moe->router_group_topk = 2;
  EXPECT_NEAR(deepep_network_share(model, *s.inputs.topology, ep_group), 3.62901 / 8, 1e-4);
  // Inside one node DeepEP sends a token once per rank holding one of its experts: EP 8 on GPUs 0-7, 32 experts per
  // rank, unlimited routing: 8 (1 - C(224,8)/C(256,8)) = 5.295 ranks of 8; node-limited, 3.629 (8 groups, one per
  // rank). It was 1 (every routed copy sent), which made intranode DeepEP 1.5x the bytes it moves.
  const std::vector<int> one_node = {0, 1, 2, 3, 4, 5, 6, 7};
  model.moe->router_groups = model.moe->router_group_topk = 0;
  EXPECT_NEAR(deepep_network_share(model, *s.inputs.topology, one_node), 5.29465 / 8, 1e-4);
  model.moe->router_groups = 8;
  model.moe->router_group_topk = 4;
  EXPECT_NEAR(deepep_network_share(model, *s.inputs.topology, one_node), 3.62901 / 8, 1e-4);
  EXPECT_EQ(deepep_network_share(model, *s.inputs.topology, {0}), 1.0) << "one rank: nothing to deduplicate";
}

}  // namespace
}  // namespace sim::execution
