// Pipeline schedules at the step level where the micro-batches are few: 1F1B with fewer micro-batches than stages,
// as Megatron-LM runs it (forward_backward_pipelining_without_interleaving: a warm-up of min(pp - rank - 1, m)).
#include "tests/support/step.hpp"

#include "sim/parallel/memory.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sim::execution {
namespace {

using support::load_step;
using support::run_step;

/// The default scenario (Llama 3 70B, tp 8, pp 4, dp 32) at a global batch of 64: 2 micro-batches per replica.
support::LoadedStep two_micro_batches(const char* schedule) {
  return load_step("scenarios/default.json",
                   {{"parallel.global_batch", "64"}, {"parallel.schedule", std::string("\"") + schedule + "\""}});
}

TEST(FewMicroBatches, OneFOneBRunsThemAsGPipeDoesWithLessMemory) {
  const auto f = two_micro_batches("1f1b"), g = two_micro_batches("gpipe");
  ASSERT_EQ(f.plan.micro_batches(), 2);
  const auto replica = run_step(f, Fidelity::Replica);
  EXPECT_NEAR(run_step(f, Fidelity::Analytic).step_time.seconds() / replica.step_time.seconds(), 1.0, 0.01);
  EXPECT_NEAR(run_step(f, Fidelity::Full).step_time.seconds() / replica.step_time.seconds(), 1.0, 0.01);
  // The critical path is (m + p - 1) passes either way: the steady state never starts.
  EXPECT_NEAR(replica.step_time.seconds() / run_step(g, Fidelity::Replica).step_time.seconds(), 1.0, 0.01);
  EXPECT_GT(replica.breakdown.pp_bubble.seconds(), 0.4 * replica.step_time.seconds()) << "3 of 5 pass slots idle";
  // The last stage starts its backward after one forward; GPipe's holds both micro-batches' activations.
  const int last = f.plan.pp() - 1;
  EXPECT_EQ(parallel::micro_batches_held(f.inputs.layout, parallel::Schedule::OneFOneB, last).front(), 1);
  EXPECT_EQ(parallel::micro_batches_held(g.inputs.layout, parallel::Schedule::GPipe, last).front(), 2);
}

/// Without --overlap-grad-reduce, Megatron-LM's finalize_model_grads reduces every chunk's gradient buckets after the
/// rank's last backward: interleaving does not hide them under later chunks' backwards (a review found the exposed
/// reduction 2.5x smaller at vpp 5 than at vpp 1 for the same bytes, and overlap true slower than false).
TEST(FewMicroBatches, WithoutGradReduceOverlapInterleavingHidesNoReduction) {
  auto load = [](int vpp, bool overlap) {
    return load_step("scenarios/default.json", {{"parallel.vpp", std::to_string(vpp)},
                                                {"parallel.schedule", vpp > 1 ? "\"interleaved\"" : "\"1f1b\""},
                                                {"parallel.overlap_grad_reduce", overlap ? "true" : "false"},
                                                {"cluster.network.nic_bandwidth", "\"50 Gbit/s\""}});
  };
  const auto base = load(1, false);
  base::Time reduction;  // the rank's buckets back to back
  for (const auto& b : base.plan.stage(0, 0).buckets)
    reduction += b.duration;
  for (int vpp : {1, 2, 4}) {
    const auto off = load(vpp, false), on = load(vpp, true);
    EXPECT_TRUE(off.plan.dp_after_backward);
    EXPECT_FALSE(on.plan.dp_after_backward);
    for (auto f : {Fidelity::Analytic, Fidelity::Replica}) {
      const auto r_off = run_step(off, f), r_on = run_step(on, f);
      EXPECT_GE(r_off.breakdown.dp_exposed.seconds(), 0.95 * reduction.seconds())
          << "vpp " << vpp << ", " << to_string(f) << ": the whole reduction after the last backward";
      EXPECT_LT(r_on.step_time, r_off.step_time) << "vpp " << vpp << ", " << to_string(f);
    }
    EXPECT_NEAR(
        run_step(off, Fidelity::Analytic).step_time.seconds() / run_step(off, Fidelity::Replica).step_time.seconds(),
        1.0, 0.02)
        << "vpp " << vpp;
  }
}

}  // namespace
}  // namespace sim::execution
