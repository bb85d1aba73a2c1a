// Pipeline schedules: every micro-batch passes every chunk once each way, in a valid order, with the published
// warm-up counts.
#include "sim/parallel/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace sim::parallel {
namespace {

struct Case {
  Schedule schedule;
  int pp, vpp, m;
};

class EverySchedule : public ::testing::TestWithParam<Case> {};

TEST_P(EverySchedule, RunsEachPassExactlyOnceAndForwardBeforeBackward) {
  const auto c = GetParam();
  for (int r = 0; r < c.pp; ++r) {
    const auto ops = pipeline_ops(c.schedule, c.pp, c.vpp, c.m, r);
    std::map<std::tuple<int, int, int>, int> seen;
    std::map<std::pair<int, int>, std::size_t> fwd_at;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      ++seen[{static_cast<int>(op.kind), op.micro_batch, op.chunk}];
      if (op.kind == OpKind::Forward) fwd_at[{op.micro_batch, op.chunk}] = i;
      if (op.kind != OpKind::Forward) {
        ASSERT_TRUE(fwd_at.contains({op.micro_batch, op.chunk})) << "backward before forward on rank " << r;
      }
    }
    const int passes = c.schedule == Schedule::ZeroBubbleH1 ? 3 : 2;
    EXPECT_EQ(ops.size(), static_cast<std::size_t>(passes * c.m * c.vpp)) << "rank " << r;
    for (const auto& [key, n] : seen)
      EXPECT_EQ(n, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, EverySchedule,
                         ::testing::Values(Case{Schedule::GPipe, 4, 1, 8}, Case{Schedule::OneFOneB, 4, 1, 8},
                                           Case{Schedule::OneFOneB, 8, 1, 3}, Case{Schedule::Interleaved, 4, 2, 8},
                                           Case{Schedule::Interleaved, 8, 3, 16},
                                           Case{Schedule::ZeroBubbleH1, 4, 1, 8}));

TEST(OneFOneB, WarmUpIsPpMinusRankMinusOneForwards) {
  const auto ops = pipeline_ops(Schedule::OneFOneB, 4, 1, 8, 1);
  int warmup = 0;
  while (ops[static_cast<std::size_t>(warmup)].kind == OpKind::Forward)
    ++warmup;
  EXPECT_EQ(warmup, 4 - 1 - 1 + 1) << "pp - rank - 1 warm-up forwards, then the first forward of the steady state";
  const auto last = pipeline_ops(Schedule::OneFOneB, 4, 1, 8, 3);
  EXPECT_EQ(last[0].kind, OpKind::Forward);
  EXPECT_EQ(last[1].kind, OpKind::Backward) << "the last stage alternates from the start";
}

TEST(Interleaved, FollowsMegatronChunkOrder) {
  // pp = 2, v = 2, m = 4, rank 0: warm-up (2-0-1)*2 + (2-1)*2 = 4 forwards: mb0 c0, mb1 c0, mb0 c1, mb1 c1.
  const auto ops = pipeline_ops(Schedule::Interleaved, 2, 2, 4, 0);
  EXPECT_EQ(ops[0], (PipeOp{OpKind::Forward, 0, 0}));
  EXPECT_EQ(ops[1], (PipeOp{OpKind::Forward, 1, 0}));
  EXPECT_EQ(ops[2], (PipeOp{OpKind::Forward, 0, 1}));
  EXPECT_EQ(ops[3], (PipeOp{OpKind::Forward, 1, 1}));
  EXPECT_EQ(ops[5], (PipeOp{OpKind::Backward, 0, 1})) << "backwards start with the last chunk";
}

TEST(Interleaved, AsManyMicroBatchesAsStagesRunEveryForwardFirst) {
  // Megatron-LM's all_warmup_microbatches (num_microbatches == pipeline_parallel_size): every rank, the last included,
  // runs all m x v forwards before its first backward, as micro_batches_held counts the memory. The replay had the
  // last rank alternate while the memory model held every forward (found by a user trial: 72 GiB of activations beside
  // a trace with one micro-batch in flight).
  for (int r = 0; r < 4; ++r) {
    const auto ops = pipeline_ops(Schedule::Interleaved, 4, 2, 4, r);
    for (int k = 0; k < 8; ++k)
      EXPECT_EQ(ops[static_cast<std::size_t>(k)].kind, OpKind::Forward) << "rank " << r << " op " << k;
    EXPECT_EQ(ops[8], (PipeOp{OpKind::Backward, 0, 1})) << "rank " << r;
  }
  EXPECT_EQ(pipeline_ops(Schedule::Interleaved, 4, 2, 8, 3)[1].kind, OpKind::Forward)
      << "m = 2p: the last rank's warm-up (v - 1) p = 4 forwards";
}

TEST(ZeroBubbleH1, WeightGradientsFollowTheirInputGradients) {
  for (int r = 0; r < 4; ++r) {
    const auto ops = pipeline_ops(Schedule::ZeroBubbleH1, 4, 1, 8, r);
    std::map<int, std::size_t> b_at;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == OpKind::BackwardInput) b_at[ops[i].micro_batch] = i;
      if (ops[i].kind == OpKind::BackwardWeight) {
        ASSERT_TRUE(b_at.contains(ops[i].micro_batch));
      }
    }
  }
}

/// Plays every rank's program with the pass times given (no transfer time): a forward waits for the previous
/// stage's forward of its micro-batch, a backward (or B) for the next stage's backward (or B); ops run in program
/// order. Returns the makespan.
int play(Schedule schedule, int pp, int m, int f, int b, int w) {
  std::vector<std::vector<PipeOp>> prog;
  for (int r = 0; r < pp; ++r)
    prog.push_back(pipeline_ops(schedule, pp, 1, m, r));
  std::map<std::pair<int, int>, int> fwd_end, bwd_end;  // (rank, micro-batch) -> end time
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  std::vector<int> clock(static_cast<std::size_t>(pp), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < pp; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      while (next[ri] < prog[ri].size()) {
        const PipeOp& op = prog[ri][next[ri]];
        int ready = 0, length = w;
        if (op.kind == OpKind::Forward) {
          length = f;
          if (r > 0) {
            auto it = fwd_end.find({r - 1, op.micro_batch});
            if (it == fwd_end.end()) break;
            ready = it->second;
          }
        } else if (op.kind != OpKind::BackwardWeight) {
          length = op.kind == OpKind::Backward ? b + w : b;
          if (r + 1 < pp) {
            auto it = bwd_end.find({r + 1, op.micro_batch});
            if (it == bwd_end.end()) break;
            ready = it->second;
          }
        }
        clock[ri] = std::max(clock[ri], ready) + length;
        if (op.kind == OpKind::Forward) fwd_end[{r, op.micro_batch}] = clock[ri];
        if (op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput) bwd_end[{r, op.micro_batch}] = clock[ri];
        ++next[ri];
        moved = true;
      }
    }
  }
  for (int r = 0; r < pp; ++r)
    EXPECT_EQ(next[static_cast<std::size_t>(r)], prog[static_cast<std::size_t>(r)].size()) << "deadlock on rank " << r;
  return *std::max_element(clock.begin(), clock.end());
}

// The oracle: Qi et al. (ICLR 2024, Sec. 2.1 and Figure 3): with T_F = T_B = T_W, ZB-H1's bubble is a third of
// 1F1B's, (p - 1)(T_F + T_B - T_W) against (p - 1)(T_F + T_B + T_W). A W order that defers the first stage's W
// passes (rather than the last's) played exactly as 1F1B: the replica gave ZB-H1 no gain while the closed form did.
TEST(ZeroBubbleH1, BubbleIsAThirdOfOneFOneBsWithEqualPasses) {
  for (const auto& [pp, m] : {std::pair{4, 4}, {4, 16}, {8, 8}, {8, 32}}) {
    EXPECT_EQ(play(Schedule::OneFOneB, pp, m, 1, 1, 1), 3 * m + 3 * (pp - 1)) << "1F1B, p " << pp << " m " << m;
    EXPECT_EQ(play(Schedule::ZeroBubbleH1, pp, m, 1, 1, 1), 3 * m + (pp - 1)) << "ZB-H1, p " << pp << " m " << m;
  }
  // Unequal passes (F 2, B 2, W 1): (p - 1)(F + B - W) = 3(p - 1) against 5(p - 1).
  EXPECT_EQ(play(Schedule::OneFOneB, 8, 16, 2, 2, 1), 16 * 5 + 7 * 5);
  EXPECT_EQ(play(Schedule::ZeroBubbleH1, 8, 16, 2, 2, 1), 16 * 5 + 7 * 3);
}

}  // namespace
}  // namespace sim::parallel
