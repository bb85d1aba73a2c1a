// DualPipeV (DeepSeek-V3 report, arXiv:2412.19437, Sec. 3.2.1; its V form in deepseek-ai/DualPipe, dualpipev.py):
// the program of each rank, the V of its chunks, the activations it holds, and its step at every fidelity. Counts
// below are derived by hand from the eight steps of DualPipeV.step() (schedule.cpp cites them).
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/parallel/schedule.hpp"
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace {

using sim::parallel::OpKind;
using sim::parallel::PipeOp;
using sim::parallel::Schedule;

std::vector<PipeOp> program(int p, int m, int r) {
  return sim::parallel::pipeline_ops(Schedule::DualPipeV, p, 2, m, r);
}

TEST(DualPipeV, RunsEveryPassOnceAndEachWeightGradientAfterItsInputGradient) {
  for (const auto& [p, m] : {std::pair{2, 4}, {4, 8}, {4, 13}, {8, 16}, {16, 120}})
    for (int r = 0; r < p; ++r) {
      std::map<std::tuple<int, int, int>, int> seen;  // (kind, micro-batch, chunk)
      std::map<std::pair<int, int>, std::size_t> forward_at, input_grad_at;
      for (std::size_t i = 0; const PipeOp& op : program(p, m, r)) {
        ++seen[{static_cast<int>(op.kind), op.micro_batch, op.chunk}];
        const std::pair key{op.micro_batch, op.chunk};
        if (op.kind == OpKind::Forward) forward_at[key] = i;
        if (op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput) {
          ASSERT_TRUE(forward_at.contains(key)) << "backward before its forward, p " << p << " rank " << r;
          input_grad_at[key] = i;
        }
        if (op.kind == OpKind::BackwardWeight) {
          ASSERT_TRUE(input_grad_at.contains(key)) << "W before its input gradient, p " << p << " rank " << r;
        }
        ++i;
      }
      for (const auto& [key, n] : seen)
        EXPECT_EQ(n, 1);
      for (int c = 0; c < 2; ++c)
        for (int mb = 0; mb < m; ++mb) {
          EXPECT_TRUE(seen.contains({static_cast<int>(OpKind::Forward), mb, c}));
          const int full = seen.contains({static_cast<int>(OpKind::Backward), mb, c}) ? 1 : 0;
          const int split = seen.contains({static_cast<int>(OpKind::BackwardInput), mb, c}) ? 1 : 0;
          EXPECT_EQ(full + split, 1) << "one backward of micro-batch " << mb << " chunk " << c;
          EXPECT_EQ(split, seen.contains({static_cast<int>(OpKind::BackwardWeight), mb, c}) ? 1 : 0);
        }
    }
}

TEST(DualPipeV, PairsAndDeferredWeightGradientsFollowItsEightSteps) {
  // Pairs: step 4 runs m - 2p + r + 1 rounds of two (the last rank's first one apart), step 5 p - r - 1 more. Split
  // backwards: p - r - 1 in step 3, r + 1 in step 6, p - r - 1 in step 7.
  const int p = 4, m = 16;
  for (int r = 0; r < p; ++r) {
    int paired = 0, weights = 0;
    for (const PipeOp& op : program(p, m, r)) {
      paired += op.paired ? 1 : 0;
      weights += op.kind == OpKind::BackwardWeight ? 1 : 0;
    }
    EXPECT_EQ(paired / 2, 2 * (m - 2 * p + r + 1) - (r == p - 1 ? 1 : 0) + (p - r - 1)) << "rank " << r;
    EXPECT_EQ(weights, 2 * (p - r - 1) + r + 1) << "rank " << r;
  }
  // Rank 0 of 4 starts with 2 (p - 1) = 6 forwards of chunk 0, then one of each chunk.
  const auto first = program(p, m, 0);
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(first[static_cast<std::size_t>(i)], (PipeOp{OpKind::Forward, i, 0}));
  EXPECT_EQ(first[7], (PipeOp{OpKind::Forward, 0, 1}));
  EXPECT_EQ(first[8], (PipeOp{OpKind::BackwardInput, 0, 1})) << "rank 0 holds the loss: its backward starts at once";
}

TEST(DualPipeV, RankOneOfFourWithEightMicroBatchesRunsTheseOpsInThisOrder) {
  // Written out by hand from the eight steps (p 4, m 8, rank 1: p - r - 1 = 2): "F3.0" is micro-batch 3's forward of
  // chunk 0, "Bi" a split backward, "W" its weight gradients later, "*" a pair's half.
  const std::string expected =
      "F0.0 F1.0 F2.0 F3.0 "                              // 1: 2 (p - r - 1) forwards of chunk 0
      "F4.0 F0.1 F5.0 F1.1 "                              // 2: r + 1 of each chunk
      "Bi0.1 W0.1 F2.1 Bi1.1 W1.1 F3.1 "                  // 3: split backwards of chunk 1, their W at once
      "F6.0* B2.1* F4.1* B0.0* F7.0* B3.1* F5.1* B1.0* "  // 4: m - 2p + r + 1 = 2 rounds of two pairs
      "B4.1 F6.1* B2.0* B5.1 F7.1* B3.0* "                // 5
      "B6.1 B4.0 Bi7.1 Bi5.0 "                            // 6: split from the middle on (r odd: from chunk 1's)
      "W7.1 Bi6.0 W5.0 Bi7.0 "                            // 7: the oldest deferred W first
      "W6.0 W7.0 ";                                       // 8
  std::string got;
  for (const PipeOp& op : program(4, 8, 1)) {
    const char* kind = op.kind == OpKind::Forward         ? "F"
                       : op.kind == OpKind::Backward      ? "B"
                       : op.kind == OpKind::BackwardInput ? "Bi"
                                                          : "W";
    got += kind + std::to_string(op.micro_batch) + "." + std::to_string(op.chunk) + (op.paired ? "* " : " ");
  }
  EXPECT_EQ(got, expected);
}

TEST(DualPipeV, EveryRankPeaksAtTwoPPlusOneChunksInFlight) {
  // After steps 1-3 rank r holds 2p - r - 1 forwards of chunk 0 and r + 1 of chunk 1; step 4's first forward adds
  // one: 2p + 1 chunks of L / 2p layers, half a stage more than 1F1B's first rank holds.
  sim::parallel::Layout l;
  l.pp = 4;
  l.vpp = 2;
  l.v_shape = true;
  l.micro_batches = 16;
  l.layers_per_stage.assign(8, 4);
  for (int r = 0; r < l.pp; ++r)
    EXPECT_EQ(sim::parallel::micro_batches_held(l, Schedule::DualPipeV, r), (std::vector<int>{2 * 4 - r, r + 1}))
        << "rank " << r;
}

TEST(DualPipeV, TheVPutsTheFirstAndTheLastStageOnRankZero) {
  sim::parallel::Layout l;
  l.pp = 4;
  l.vpp = 2;
  l.v_shape = true;
  EXPECT_EQ(l.stage(0, 0), 0);
  EXPECT_EQ(l.stage(1, 0), 7);
  EXPECT_EQ(l.stage(0, 3), 3);
  EXPECT_EQ(l.stage(1, 3), 4) << "the fold: the last rank runs stages 3 and 4";
  EXPECT_EQ(l.rank_of(5), 2);
  EXPECT_EQ(l.chunk_of(5), 1);
}

// The Mixtral example (EP 8, PP 4) under DualPipeV: the replay, the closed form and the full replay agree, its pairs
// hide all-to-alls that 1F1B leaves exposed, and the output layer's memory is counted on rank 0.
TEST(DualPipeV, MixtralStepAgreesAcrossFidelitiesAndHidesAllToAlls) {
  using sim::execution::Fidelity;
  const char* path = "scenarios/examples/mixtral-8x7b-256-h100.json";
  for (const char* batch : {"512", "2048"}) {
    const auto dual =
        support::load_step(path, {{"parallel.schedule", "\"dualpipev\""}, {"parallel.global_batch", batch}});
    const auto replica = support::run_step(dual, Fidelity::Replica);
    const auto analytic = support::run_step(dual, Fidelity::Analytic);
    const auto full = support::run_step(dual, Fidelity::Full);
    EXPECT_NEAR(analytic.step_time.seconds() / replica.step_time.seconds(), 1.0, 0.02) << batch;
    EXPECT_NEAR(full.step_time.seconds() / replica.step_time.seconds(), 1.0, 0.01) << batch;
    const auto one_f_one_b = support::load_step(path, {{"parallel.global_batch", batch}});
    const auto base = support::run_step(one_f_one_b, Fidelity::Replica);
    EXPECT_LT(replica.breakdown.ep_exposed.seconds(), 0.8 * base.breakdown.ep_exposed.seconds()) << batch;
    EXPECT_LT(replica.step_time.seconds(), base.step_time.seconds()) << batch;
    // Bubble: the played-out fold stays under the DeepSeek-V3 report's (p - 1)(F&B + B - 3W) per chunk, F&B <= F + B.
    EXPECT_LE(replica.breakdown.pp_bubble.seconds() + replica.breakdown.pp_exposed.seconds(),
              base.breakdown.pp_bubble.seconds() + base.breakdown.pp_exposed.seconds())
        << batch;
    // The loss runs on rank 0 (the V's last stage), which holds one micro-batch of chunk 1 at its peak, as 1F1B's last
    // rank holds one: the logits' buffers are alike (counted on the middle rank, which holds p of its chunk 1, they
    // were p times larger).
    const auto dual_memory = sim::scenario::memory_gib(dual.scenario, dual.inputs.layout);
    const auto base_memory = sim::scenario::memory_gib(one_f_one_b.scenario, one_f_one_b.inputs.layout);
    EXPECT_NEAR(dual_memory.buffers, base_memory.buffers, 0.5) << batch;
  }
}

TEST(DualPipeV, TheClosedFormDescribesTheRankTheReplayDescribes) {
  // A user trial: DeepSeek-V3 on 1,024 B200s (PP 8 in a V of 16 stages, EP 64) timed 7.083 s at every fidelity, but
  // the closed form described rank 1 (EP exposed 3.34 s, busiest by compute and all-to-alls) and the replay rank 0
  // (1.32 s, busiest by compute, the embedding's and the loss's rank). Both now pick by compute first.
  using sim::execution::Fidelity;
  const auto dual = support::load_step("scenarios/validation/deepseek_v3_2048_h800_dualpipev.json",
                                       {{"hardware", "\"b200-sxm-180gb\""},
                                        {"cluster.gpus", "1024"},
                                        {"parallel.pp", "8"},
                                        {"parallel.pipeline_layout", "\"Ettt|(tttt|)*14ttmL\""},
                                        {"parallel.recompute_modules", "[\"mlp\", \"moe_act\"]"},
                                        {"parallel.global_batch", "4096"}});
  const auto replica = support::run_step(dual, Fidelity::Replica);
  const auto analytic = support::run_step(dual, Fidelity::Analytic);
  EXPECT_NEAR(analytic.step_time.seconds() / replica.step_time.seconds(), 1.0, 0.01);
  EXPECT_EQ(analytic.critical_gpu, 0);
  EXPECT_EQ(replica.critical_gpu, 0);
  EXPECT_NEAR(analytic.breakdown.compute.seconds() / replica.breakdown.compute.seconds(), 1.0, 0.05);
  EXPECT_NEAR(analytic.breakdown.ep_exposed.seconds() / replica.breakdown.ep_exposed.seconds(), 1.0, 0.10);
}

TEST(DualPipeV, ThePlanHoldsEachRanksTwoStagesAndItsDataParallelStreamReducesBoth) {
  // The plan's work is looked up by chunk * pp + rank: under the V, chunk 1 of rank 0 is the last stage (its forward
  // runs the output layer on top of the same 4 layers) and chunk 1 of the last rank is stage pp, a middle one.
  const auto dual =
      support::load_step("scenarios/examples/mixtral-8x7b-256-h100.json", {{"parallel.schedule", "\"dualpipev\""}});
  const auto& plan = dual.plan;
  const auto middle = plan.stage(0, 1).forward.total();
  EXPECT_GT(plan.stage(1, 0).forward.total(), middle) << "the loss's stage is on rank 0";
  EXPECT_EQ(plan.stage(1, 3).forward.total(), middle) << "stage 4 is a middle stage";
  EXPECT_EQ(plan.stage(1, 0).layers, 4);
  // Every gradient bucket of both chunks is reduced once, those of split backwards when their W op ends.
  const auto r = support::run_step(dual, sim::execution::Fidelity::Replica, /*timeline=*/true);
  std::map<std::int64_t, std::size_t> reduced;  // by GPU
  for (const auto& span : r.timeline)
    if (span.name == "grad reduce") ++reduced[span.gpu];
  ASSERT_EQ(reduced.size(), 4u) << "one GPU per pipeline rank";
  for (int rank = 0; rank < 4; ++rank) {
    const std::size_t buckets = plan.stage(0, rank).buckets.size() + plan.stage(1, rank).buckets.size();
    EXPECT_GT(buckets, 0u);
    EXPECT_EQ(std::next(reduced.begin(), rank)->second, buckets) << "rank " << rank;
  }
}

TEST(DualPipeV, ScenarioKeysAndRefusals) {
  const char* path = "scenarios/examples/mixtral-8x7b-256-h100.json";
  const auto dual = support::load_step(path, {{"parallel.schedule", "\"dualpipev\""}});
  EXPECT_EQ(dual.scenario.parallel.vpp, 2) << "dualpipev sets its two chunks per rank";
  EXPECT_TRUE(dual.plan.ep_comm_overlap) << "its pairs overlap the all-to-alls by design";
  try {
    support::load_step(path, {{"parallel.schedule", "\"dualpipev\""}, {"parallel.vpp", "3"}});
    ADD_FAILURE() << "dualpipev with vpp 3 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("\"dualpipev\" holds exactly 2 chunks per rank"), std::string::npos)
        << e.what();
  }
  try {
    support::load_step(path, {{"parallel.schedule", "\"dualpipev\""}, {"parallel.global_batch", "128"}});
    ADD_FAILURE() << "dualpipev with 4 micro-batches on 4 stages was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2 x pp micro-batches per replica; here pp = 4, vpp = 2, 4"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
