// Tensor-parallel communication overlap (--tp-comm-overlap) and the overlapped parameter gather
// (--overlap-param-gather): the pair-time oracles of sim/execution/tp_overlap.hpp by hand, and what they do to a step.
#include "sim/execution/tp_overlap.hpp"
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

namespace sim::execution {
namespace {

using base::Time;
using support::load_step;
using support::run_step;

Time us(double v) {
  return Time{static_cast<std::int64_t>(v * 1000.0)};
}

/// A collective segment of `kind`.
workload::Segment comm_segment(workload::CommKind kind) {
  workload::Segment s;
  s.is_comm = true;
  s.comm = kind;
  return s;
}

/// A compute segment holding one GEMM named `name` with m = 4096 rows (409.6 us under `gemm_us`).
workload::Segment gemm_segment(const char* name) {
  workload::Segment s;
  workload::Kernel k;
  k.kind = workload::KernelKind::Gemm;
  k.name = name;
  k.m = 4096;
  s.kernels.push_back(k);
  return s;
}

/// A GEMM's time: m / 10 us (409.6 us whole, 51.2 us per 1/8 chunk).
Time gemm_us(const workload::Kernel& k) {
  return us(k.m / 10.0);
}

TEST(TpOverlapOracle, RingExchangeHidesTheGatherUnderItsChunks) {
  // TP4, GEMM 400 us as 4 chunks of 110 us (smaller chunks run a little less efficiently), gather 240 us = 3 steps
  // of 80 us: every step hides under a chunk, pair = 110 + 3 x 110 = 440 us, 40 us beyond the GEMM (the chunking).
  EXPECT_EQ(ring_exchange_extra(us(400), us(110), us(240), 4), us(40));
  // Communication-bound: steps of 200 us against chunks of 110 us: pair = 110 + 3 x 200 = 710 us.
  EXPECT_EQ(ring_exchange_extra(us(400), us(110), us(600), 4), us(310));
  EXPECT_EQ(ring_exchange_extra(us(400), us(110), us(600), 1), Time::zero()) << "tp 1: no collective";
}

TEST(TpOverlapOracle, PipelineLeavesTheLastPieceAndPaysTheSmMargin) {
  // 132 SMs, 16 to the communication kernel: a 100 us chunk takes 100 x 132 / 116 = 113.79 us; reduce-scatter 200 us
  // in 4 pieces of 50 us: pair = 113.79 + 3 x 113.79 + 50 = 505.17 us against a 400 us GEMM.
  const Time extra = pipeline_extra(us(400), us(100), us(200), 132);
  EXPECT_NEAR(extra.seconds() * 1e6, 4 * 100.0 * 132 / 116 + 50 - 400, 0.01);
  // Communication-bound: pieces of 200 us: pair = 113.79 + 3 x 200 + 200.
  EXPECT_NEAR(pipeline_extra(us(400), us(100), us(800), 132).seconds() * 1e6, 100.0 * 132 / 116 + 800 - 400, 0.01);
}

TEST(TpOverlapPartner, AContextParallelExchangeDoesNotSeparateAGatherFromItsGemm) {
  // Forward attention block with CP: the all-gather, the key/value exchange on the CP group, then the QKV GEMM. The
  // gather still overlaps the GEMM (the exchange runs inside the attention, on another group).
  workload::PassWork pass;
  const auto gather = comm_segment(workload::CommKind::TpAllGather);
  const auto exchange = comm_segment(workload::CommKind::CpExchange);
  const auto compute = gemm_segment("qkv");
  pass.segments = {gather, exchange, compute};
  const auto time = gemm_us;
  const auto exposed = tp_overlap_exposed(pass, 0, /*backward=*/false, us(140), 8, 132, time);
  ASSERT_TRUE(exposed.has_value()) << "partner found past the exchange";
  EXPECT_EQ(*exposed, Time::zero()) << "steps of 20 us hide under chunks of 51.2 us";
  // Another collective in between (not a CP exchange) still breaks the pair.
  workload::Segment other = exchange;
  other.comm = workload::CommKind::EpAllToAll;
  pass.segments = {gather, other, compute};
  EXPECT_FALSE(tp_overlap_exposed(pass, 0, false, us(140), 8, 132, time).has_value());
}

TEST(TpOverlapOracle, BulkExposesOnlyWhatTheGemmCannotCover) {
  EXPECT_EQ(bulk_extra(us(300), us(200)), Time::zero());
  EXPECT_EQ(bulk_extra(us(300), us(500)), us(200));
}

TEST(TpOverlapStep, OverlapShrinksTheExposedTensorParallelTimeNotTheCompute) {
  // Llama 3 70B (the default scenario, TP8 with sequence parallelism, PP4) on one data-parallel replica: no gradient
  // reduction whose SM use would slow the compute by an amount that follows the pass's length.
  const std::vector<scenario::Override> one_replica{
      {"cluster.gpus", "32"}, {"parallel.dp", "1"}, {"parallel.global_batch", "64"}};
  auto with_overlap = one_replica;
  with_overlap.emplace_back("parallel.tp_comm_overlap", "true");
  const auto plain = load_step("scenarios/default.json", one_replica);
  const auto overlapped = load_step("scenarios/default.json", with_overlap);
  const auto p = run_step(plain, Fidelity::Replica);
  const auto o = run_step(overlapped, Fidelity::Replica);
  EXPECT_GT(p.breakdown.tp_exposed.seconds(), 0);
  EXPECT_LT(o.breakdown.tp_exposed.seconds(), 0.6 * p.breakdown.tp_exposed.seconds());
  EXPECT_EQ(o.breakdown.compute, p.breakdown.compute) << "the GEMMs' own time is unchanged; what overlap costs them "
                                                         "(chunking, SM margin) is counted as TP time";
  EXPECT_LT(o.step_time, p.step_time);
  // The three fidelities still agree.
  const double a = run_step(overlapped, Fidelity::Analytic).step_time.seconds();
  EXPECT_NEAR(a / o.step_time.seconds(), 1.0, 0.02);
}

TEST(DataParallelOverlap, GradientsReducedAfterTheBackwardLeaveTheirCollectivesExposed) {
  // parallel.overlap_grad_reduce false (Megatron-LM without --overlap-grad-reduce): every bucket waits for the end of
  // the last backward, so the data-parallel reduction is exposed whole; with the overlap only what the backward's
  // tail cannot cover is. The three fidelities agree on both.
  const auto s = load_step("scenarios/examples/llama3-8b-64-h100.json");
  const auto after =
      load_step("scenarios/examples/llama3-8b-64-h100.json", {{"parallel.overlap_grad_reduce", "false"}});
  const auto o = run_step(s, Fidelity::Replica);
  const auto a = run_step(after, Fidelity::Replica);
  EXPECT_GT(a.breakdown.dp_exposed.seconds(), o.breakdown.dp_exposed.seconds() + 0.01)
      << "overlapped " << o.breakdown.dp_exposed.seconds() << " s, after the backward "
      << a.breakdown.dp_exposed.seconds() << " s";
  EXPECT_GT(a.step_time, o.step_time);
  for (const auto* sc : {&s, &after}) {
    const double replica = run_step(*sc, Fidelity::Replica).step_time.seconds();
    EXPECT_NEAR(run_step(*sc, Fidelity::Analytic).step_time.seconds() / replica, 1.0, 0.02);
    EXPECT_NEAR(run_step(*sc, Fidelity::Full).step_time.seconds() / replica, 1.0, 0.03);
  }
  // ZeRO-3 reduces each unit's gradients as its backward ends: false is refused with the key named.
  try {
    load_step("scenarios/examples/llama3-8b-64-h100.json",
              {{"parallel.zero_stage", "3"}, {"parallel.overlap_grad_reduce", "false"}});
    ADD_FAILURE() << "ZeRO-3 with overlap_grad_reduce false loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("overlap_grad_reduce"), std::string::npos) << e.what();
  }
}

TEST(TpOverlapStep, OverlappedParameterGatherHidesUnderTheFirstForward) {
  // Llama 3 8B on 64 H100s (ZeRO-1: the updated parameters are all-gathered after the optimizer).
  const auto plain = run_step(load_step("scenarios/examples/llama3-8b-64-h100.json"), Fidelity::Replica);
  const auto overlapped =
      run_step(load_step("scenarios/examples/llama3-8b-64-h100.json", {{"parallel.overlap_param_gather", "true"}}),
               Fidelity::Replica);
  EXPECT_LT(overlapped.breakdown.dp_exposed, plain.breakdown.dp_exposed);
  EXPECT_LT(overlapped.step_time, plain.step_time);
  EXPECT_EQ(overlapped.breakdown.compute, plain.breakdown.compute);
}

TEST(TpOverlapPartner, AsyncTpLeavesTheBackwardReduceScatterExposed) {
  // A backward reduce-scatter of the input gradient after the QKV input-gradient GEMM: Transformer Engine overlaps it
  // with the weight-gradient GEMM (bulk); PyTorch's async TP fuses no reduce-scatter whose input is a sum of matmuls
  // (TorchTitan's separate wq / wk / wv), so it stays whole. Forward pairs overlap alike under both methods.
  workload::PassWork pass;
  pass.segments = {gemm_segment("qkv"), comm_segment(workload::CommKind::TpReduceScatter)};
  const auto time = gemm_us;
  const auto te = tp_overlap_exposed(pass, 1, /*backward=*/true, us(300), 8, 132, time);
  ASSERT_TRUE(te.has_value());
  EXPECT_EQ(*te, Time::zero()) << "300 us beside a 409.6 us GEMM";
  EXPECT_FALSE(tp_overlap_exposed(pass, 1, true, us(300), 8, 132, time, parallel::TpOverlapMethod::AsyncTp))
      << "no partner: the collective keeps its 300 us";
  // The forward reduce-scatter after the output projection: pipelined under it by both.
  pass.segments[0].kernels[0].name = "attn_out";
  const auto fwd = tp_overlap_exposed(pass, 1, /*backward=*/false, us(300), 8, 132, time);
  const auto fwd_async =
      tp_overlap_exposed(pass, 1, /*backward=*/false, us(300), 8, 132, time, parallel::TpOverlapMethod::AsyncTp);
  ASSERT_TRUE(fwd && fwd_async);
  EXPECT_EQ(*fwd, *fwd_async);
}

TEST(TpOverlapStep, AsyncTpHidesLessThanUserbuffersAndNeedsTheOverlapOn) {
  const std::vector<scenario::Override> one_replica{
      {"cluster.gpus", "32"}, {"parallel.dp", "1"}, {"parallel.global_batch", "64"}};
  auto ub = one_replica, async = one_replica;
  ub.emplace_back("parallel.tp_comm_overlap", "true");
  async.emplace_back("parallel.tp_comm_overlap", "true");
  async.emplace_back("parallel.tp_comm_overlap_method", "\"async_tp\"");
  const auto plain = run_step(load_step("scenarios/default.json", one_replica), Fidelity::Replica);
  const auto u = run_step(load_step("scenarios/default.json", ub), Fidelity::Replica);
  const auto a = run_step(load_step("scenarios/default.json", async), Fidelity::Replica);
  EXPECT_LT(u.breakdown.tp_exposed, a.breakdown.tp_exposed);
  EXPECT_LT(a.breakdown.tp_exposed, plain.breakdown.tp_exposed);
  EXPECT_EQ(a.breakdown.compute, plain.breakdown.compute);
  try {
    load_step("scenarios/default.json", {{"parallel.tp_comm_overlap_method", "\"async_tp\""}});
    FAIL() << "tp_comm_overlap_method without tp_comm_overlap was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("tp_comm_overlap_method"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"tp_comm_overlap\": true"), std::string::npos) << e.what();
  }
  try {
    load_step("scenarios/default.json",
              {{"parallel.tp_comm_overlap", "true"}, {"parallel.tp_comm_overlap_method", "\"nccl\""}});
    FAIL() << "an unknown method was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("async_tp"), std::string::npos) << e.what();
  }
}

TEST(TpOverlapStep, NeedsSequenceParallelismAsMegatronDoes) {
  try {
    load_step("scenarios/default.json",
              {{"parallel.tp_comm_overlap", "true"}, {"parallel.sequence_parallel", "false"}});
    FAIL() << "tp_comm_overlap without sequence parallelism was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("tp_comm_overlap"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sequence_parallel"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sim::execution
