// Pipeline schedules: every micro-batch passes every chunk once each way, in a valid order, with the published
// warm-up counts.
#include "sim/parallel/schedule.hpp"

#include <gtest/gtest.h>

#include <map>

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

}  // namespace
}  // namespace sim::parallel
