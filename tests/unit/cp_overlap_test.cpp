// Context parallelism's key/value ring beside the attention it feeds (sim/execution/cp_overlap.hpp): the exposed time
// by hand, and what the two exchange types do to a step.
#include "sim/execution/cp_overlap.hpp"
#include "sim/execution/layer_timing.hpp"
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

namespace sim::execution {
namespace {

using base::Time;
using support::load_step;
using support::run_step;

Time ms(double v) {
  return Time{static_cast<std::int64_t>(v * 1e6)};
}

/// The exchange, then the segment it feeds: the QKV GEMM (5 ms) and the attention kernel (8 ms under `timed`).
workload::PassWork exchange_then_attention() {
  workload::PassWork pass;
  workload::Segment exchange;
  exchange.is_comm = true;
  exchange.comm = workload::CommKind::CpExchange;
  workload::Segment attn;
  workload::Kernel gemm;
  gemm.kind = workload::KernelKind::Gemm;
  workload::Kernel core;
  core.kind = workload::KernelKind::Attention;
  attn.kernels = {gemm, core};
  pass.segments = {exchange, attn};
  return pass;
}

Time timed(const workload::Kernel& k) {
  return k.kind == workload::KernelKind::Attention ? ms(8) : ms(5);
}

TEST(CpRingOracle, EachTransferHidesBesideOneStepsAttention) {
  const auto pass = exchange_then_attention();
  // cp 4: three transfers of 3 ms beside steps of 8 / 4 = 2 ms of attention: 3 x (3 - 2) = 3 ms exposed. The QKV GEMM
  // before the attention hides nothing (the keys and values it produces are what moves).
  EXPECT_EQ(cp_ring_exposed(pass, 0, ms(9), 4, timed), ms(3));
  // cp 2: one transfer of 9 ms beside a step of 4 ms: 5 ms.
  EXPECT_EQ(cp_ring_exposed(pass, 0, ms(9), 2, timed), ms(5));
  // Transfers shorter than a step hide entirely.
  EXPECT_EQ(cp_ring_exposed(pass, 0, ms(1.5), 4, timed), Time::zero());
  // No compute segment after it, or cp 1: the exchange as it is.
  workload::PassWork alone;
  alone.segments = {pass.segments.front()};
  EXPECT_EQ(cp_ring_exposed(alone, 0, ms(9), 4, timed), ms(9));
  EXPECT_EQ(cp_ring_exposed(pass, 0, ms(9), 1, timed), ms(9));
}

// Step 0 runs the causal call on the rank's own keys, the other steps the unmasked calls (layer_costs'
// flash_attention_calls): each transfer hides beside its own step's attention, not beside an average step.
TEST(CpRingOracle, TheFirstTransferRunsBesideTheCausalCall) {
  auto pass = exchange_then_attention();
  workload::Kernel off = pass.segments[1].kernels.back();
  off.causal = false;
  pass.segments[1].kernels.push_back(off);
  // Causal call 1 ms, unmasked calls 9 ms over cp - 1 = 3 steps (3 ms each), transfers of 3 ms: 2 ms exposed beside
  // step 0, none beside the others. As one call of 10 ms (2.5 ms a step) it would read 3 x 0.5 = 1.5 ms.
  auto split = [](const workload::Kernel& k) {
    if (k.kind != workload::KernelKind::Attention) return ms(5);
    return k.causal ? ms(1) : ms(9);
  };
  EXPECT_EQ(cp_ring_exposed(pass, 0, ms(9), 4, split), ms(2));
  // cp 2: one transfer, beside the causal call only.
  EXPECT_EQ(cp_ring_exposed(pass, 0, ms(9), 2, split), ms(8));
}

// The step's kernel timing passes the call's mask to the kernel model: an unmasked call runs at the profile's
// non-causal rate (faster per FLOP on Hopper), and alike once the profile has none.
TEST(CpRingStep, UnmaskedCallsAreTimedAtTheNonCausalRates) {
  const auto s = load_step("scenarios/examples/llama3-8b-64-h100.json", {{"parallel.cp", "2"}});
  workload::Kernel masked;
  masked.kind = workload::KernelKind::Attention;
  masked.m = masked.n = 8192;
  masked.flops = 1e12;
  workload::Kernel unmasked = masked;
  unmasked.causal = false;
  for (bool backward : {false, true}) {
    masked.backward = unmasked.backward = backward;
    EXPECT_LT(kernel_time(s.inputs, unmasked), kernel_time(s.inputs, masked)) << backward;
    hardware::HardwareProfile hw = *s.inputs.hardware;
    auto& e = hw.efficiency;
    e.noncausal.forward.reset();
    e.noncausal.backward.reset();
    e.noncausal.seq_half.reset();
    e.noncausal.backward_seq_half.reset();
    StepInputs in = s.inputs;
    in.hardware = &hw;
    EXPECT_EQ(kernel_time(in, unmasked), kernel_time(in, masked)) << backward;
  }
}

TEST(CpRingStep, TheRingHidesWhatTheAllGatherExposes) {
  // parallel.cp_comm_type: "p2p" (default) and "all_gather"; Transformer Engine's all-to-all types are refused with the
  // key's path and what is accepted. The same bytes move either way; the ring posts each transfer before the attention
  // step it runs beside, the all-gather (not modelled as overlapped) exposes all of it.
  auto step = [](const char* type) {
    return load_step("scenarios/examples/llama3-8b-64-h100.json",
                     {{"parallel.cp", "2"}, {"parallel.cp_comm_type", type}});
  };
  try {
    step("\"a2a\"");
    ADD_FAILURE() << "a2a was accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/parallel/cp_comm_type"), std::string::npos) << what;
    EXPECT_NE(what.find("all_gather"), std::string::npos) << "lists what is accepted: " << what;
  }
  const auto p2p = step("\"p2p\"");
  const auto gather = step("\"all_gather\"");
  EXPECT_EQ(gather.scenario.parallel.cp_comm_type, parallel::CpCommType::AllGather);
  EXPECT_EQ(p2p.scenario.parallel.cp_comm_type, parallel::CpCommType::P2p);
  const auto& g = gather.plan.stage(0, 0);
  const auto& r = p2p.plan.stage(0, 0);
  EXPECT_GT(g.forward.total(SegKind::Cp), Time::zero());
  EXPECT_GT(g.backward.total(SegKind::Cp), Time::zero());
  EXPECT_LT(r.forward.total(SegKind::Cp), g.forward.total(SegKind::Cp));
  EXPECT_LT(r.backward.total(SegKind::Cp), g.backward.total(SegKind::Cp));
  EXPECT_EQ(r.forward.total(SegKind::Compute), g.forward.total(SegKind::Compute)) << "the kernels are alike";
  for (auto f : {Fidelity::Analytic, Fidelity::Replica}) {
    const auto a = run_step(gather, f), b = run_step(p2p, f);
    EXPECT_LT(b.step_time, a.step_time) << to_string(f);
    EXPECT_LT(b.breakdown.cp_exposed, a.breakdown.cp_exposed) << to_string(f);
    EXPECT_EQ(b.breakdown.sum(), b.step_time) << to_string(f);
  }
}

}  // namespace
}  // namespace sim::execution
