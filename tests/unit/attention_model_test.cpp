// The attention kernel model of sim/hardware/compute_model.hpp: rates by pass and sequence length, their fallbacks
// (a profile without them times every call as before), the training-loop derate of isolated-kernel rates
// (gemm_isolated), and strict parsing of the profile keys.
#include "sim/base/json_reader.hpp"
#include "sim/hardware/compute_model.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using sim::hardware::AttentionCall;
using sim::hardware::Efficiency;
constexpr auto kFused = sim::hardware::AttentionKernel::Fused;
constexpr auto kFlash2 = sim::hardware::AttentionKernel::Flash2;
constexpr auto kTriton = sim::hardware::AttentionKernel::Triton;

std::vector<sim::base::Diagnostic> parse(const std::string& text, Efficiency* out) {
  auto doc = sim::base::JsonDocument::parse_text(text, "profile.json");
  sim::base::Diagnostics diag("profile.json");
  auto r = doc.root(diag);
  *out = Efficiency::parse(r);
  return diag.items();
}

/// A100's profile (one rate: no attention keys) with no launch cost, and the achieved fraction of its BF16 peak of one
/// attention call under efficiencies `e`.
struct Bench {
  sim::hardware::HardwareProfile hw = sim::scenario::load_hardware("a100-sxm4-80gb");
  sim::hardware::Dtype bf16 = *sim::hardware::dtype_from_string("bf16");
  Efficiency e = [this] {
    Efficiency x = hw.efficiency;
    x.kernel_overhead = sim::base::Time::zero();
    return x;
  }();
  /// The fused kernel's causal rates the tests start from: 0.5 forward, 0.4 backward, half of them at 1000 tokens.
  void fused_rates() {
    e.attention = 0.5;
    e.attention_backward = 0.4;
    e.attention_seq_half = 1000;
  }
  double rate(const AttentionCall& c) const {
    return 1e12 / sim::hardware::attention_time(hw.gpu, bf16, e, 1e12, c).seconds() /
           hw.gpu.peak_for(bf16)->flops_per_s;
  }
};

TEST(AttentionModel, RateFollowsPassAndLength) {
  Bench b;
  b.fused_rates();
  auto& e = b.e;
  auto rate = [&](const AttentionCall& c) { return b.rate(c); };
  EXPECT_NEAR(rate({kFused, false, 0}), 0.5, 1e-6);           // no length: the asymptote
  EXPECT_NEAR(rate({kFused, false, 1000}), 0.25, 1e-6);       // s = s_half: half of it
  EXPECT_NEAR(rate({kFused, false, 3000}), 0.375, 1e-6);      // 0.5 x 3000 / 4000
  EXPECT_NEAR(rate({kFused, true, 3000}), 0.4 * 0.75, 1e-6);  // the backward's half falls back to the forward's
  // FlashAttention-2 numbers fall back one by one to the fused ones.
  e.flash2.forward = 0.3;
  EXPECT_NEAR(rate({kFlash2, false, 1000}), 0.15, 1e-6);
  EXPECT_NEAR(rate({kFlash2, true, 1000}), 0.2, 1e-6);  // flash2 backward not given: the fused backward
  e.flash2.backward = 0.25;
  e.flash2.backward_seq_half = 3000;
  EXPECT_NEAR(rate({kFlash2, true, 1000}), 0.0625, 1e-6);
  // Tri Dao's Triton FlashAttention: half the FlashAttention-2 rate, both passes (kTritonOverFlash2, published).
  EXPECT_NEAR(rate({kTriton, false, 1000}), 0.15 * sim::hardware::kTritonOverFlash2, 1e-6);
  EXPECT_NEAR(rate({kTriton, true, 1000}), 0.0625 * sim::hardware::kTritonOverFlash2, 1e-6);
}

// A call without a causal mask takes the non-causal rates where the profile has them, each falling back to its causal
// counterpart (a profile without them times both alike); a FlashAttention-2 call falls back to FlashAttention-2's.
TEST(AttentionModel, UnmaskedCallsTakeTheNonCausalRates) {
  Bench b;
  b.fused_rates();
  auto& e = b.e;
  e.flash2.forward = 0.3;
  auto rate = [&](const AttentionCall& c) { return b.rate(c); };
  EXPECT_NEAR(rate({kFused, false, 1000, false}), 0.25, 1e-6);  // none given: the causal rates
  EXPECT_NEAR(rate({kFlash2, false, 1000, false}), 0.15, 1e-6);
  e.noncausal.forward = 0.6;
  e.noncausal.seq_half = 200;
  EXPECT_NEAR(rate({kFused, false, 1000, false}), 0.5, 1e-6);  // 0.6 x 1000 / 1200
  EXPECT_NEAR(rate({kFused, false, 1000, true}), 0.25, 1e-6);  // a causal call is as before
  // backward: each number its causal counterpart, 0.4 x 1000 / 2000 (not the non-causal forward's)
  EXPECT_NEAR(rate({kFused, true, 1000, false}), 0.2, 1e-6);
  e.noncausal.backward = 0.45;
  e.noncausal.backward_seq_half = 500;
  EXPECT_NEAR(rate({kFused, true, 1000, false}), 0.3, 1e-6);
  EXPECT_NEAR(rate({kFlash2, false, 1000, false}), 0.15, 1e-6) << "flash2 falls back to its own causal rate";
  e.flash2_noncausal.forward = 0.36;
  e.flash2_noncausal.seq_half = 200;
  EXPECT_NEAR(rate({kFlash2, false, 1000, false}), 0.3, 1e-6);
  // The Hopper profiles: an unmasked call runs faster per FLOP than a causal one at every length measured.
  const auto h100 = sim::scenario::load_hardware("h100-sxm5-80gb");
  for (double seq : {512.0, 4096.0, 16384.0})
    for (bool backward : {false, true})
      for (auto kernel : {kFused, kFlash2}) {
        const auto nc =
            sim::hardware::attention_time(h100.gpu, b.bf16, h100.efficiency, 1e12, {kernel, backward, seq, false});
        const auto c = sim::hardware::attention_time(h100.gpu, b.bf16, h100.efficiency, 1e12, {kernel, backward, seq});
        EXPECT_LT(nc, c) << seq << " " << backward;
      }
}

TEST(AttentionModel, IsolatedRatesRunAtTheGemmsTrainingLoopFraction) {
  Bench b;
  auto& e = b.e;
  const auto& hw = b.hw;
  const auto bf16 = b.bf16;
  e.attention = 0.5;
  e.attention_seq_half = 1000;
  e.flash2.forward = 0.3;
  e.gemm = 0.70;
  auto rate = [&](const AttentionCall& c) { return b.rate(c); };
  EXPECT_NEAR(rate({kFused, false, 1000}), 0.25, 1e-6);  // unset: the profile's rate
  e.gemm_isolated = 0.875;                               // a GEMM in the loop runs at 0.70 / 0.875 = 0.8 of isolated
  EXPECT_NEAR(rate({kFused, false, 1000}), 0.25 * 0.8, 1e-6);
  EXPECT_NEAR(rate({kFlash2, false, 0}), 0.3 * 0.8, 1e-6);  // every class and pass alike
  EXPECT_NEAR(rate({kFlash2, true, 0}), 0.5 * 0.8, 1e-6);   // (flash2 backward falls back to the fused forward here)
  // GEMMs keep their own training-loop factor: gemm_isolated does not touch them.
  const auto with = sim::hardware::gemm_time(hw.gpu, bf16, e, 8192, 8192, 8192, 1);
  e.gemm_isolated.reset();
  EXPECT_EQ(sim::hardware::gemm_time(hw.gpu, bf16, e, 8192, 8192, 8192, 1), with);
  // The Hopper profiles carry it (their attention rates are the FlashAttention-3 paper's isolated kernels).
  const auto h100 = sim::scenario::load_hardware("h100-sxm5-80gb").efficiency;
  ASSERT_TRUE(h100.gemm_isolated.has_value());
  EXPECT_GT(*h100.gemm_isolated, h100.gemm);
}

TEST(AttentionModel, ProfileWithoutTheKeysTimesBothPassesAlike) {
  const auto hw = sim::scenario::load_hardware("b200-sxm-180gb");
  const auto bf16 = *sim::hardware::dtype_from_string("bf16");
  for (double seq : {512.0, 8192.0}) {
    const auto f = sim::hardware::attention_time(hw.gpu, bf16, hw.efficiency, 1e12, {kFused, false, seq});
    const auto b = sim::hardware::attention_time(hw.gpu, bf16, hw.efficiency, 1e12, {kFused, true, seq});
    EXPECT_EQ(f, b);
  }
}

TEST(AttentionModel, ProfileKeysAreCheckedStrictly) {
  Efficiency e;
  auto d = parse(R"({"attention_backward": 1.5, "attention_seq_half": -3, "attention_flash2_seq_halfs": 10})", &e);
  ASSERT_EQ(d.size(), 3u);
  std::string all;
  for (const auto& x : d)
    all += x.path + ": " + x.message + "\n";
  EXPECT_NE(all.find("attention_backward"), std::string::npos) << all;
  EXPECT_NE(all.find("attention_seq_half"), std::string::npos) << all;
  EXPECT_NE(all.find("attention_flash2_seq_halfs"), std::string::npos) << all;

  d = parse(R"({"attention": 0.6, "attention_backward": 0.5, "attention_seq_half": 300,
               "attention_backward_seq_half": 700, "attention_flash2": 0.35, "attention_flash2_backward": 0.3,
               "attention_flash2_seq_half": 400, "attention_flash2_backward_seq_half": 650})",
            &e);
  EXPECT_TRUE(d.empty());
  EXPECT_DOUBLE_EQ(e.attention_backward.value_or(0), 0.5);
  EXPECT_DOUBLE_EQ(e.attention_seq_half, 300);
  EXPECT_DOUBLE_EQ(e.attention_backward_seq_half.value_or(0), 700);
  EXPECT_DOUBLE_EQ(e.flash2.backward_seq_half.value_or(0), 650);
  // The non-causal eight, held to the same ranges.
  d = parse(R"({"attention_noncausal": 0.63, "attention_noncausal_seq_half": 92, "attention_noncausal_backward": 0.55,
               "attention_noncausal_backward_seq_half": 370, "attention_flash2_noncausal": 0.38,
               "attention_flash2_noncausal_seq_half": 93, "attention_flash2_noncausal_backward": 0.33,
               "attention_flash2_noncausal_backward_seq_half": 271})",
            &e);
  EXPECT_TRUE(d.empty());
  EXPECT_DOUBLE_EQ(e.noncausal.forward.value_or(0), 0.63);
  EXPECT_DOUBLE_EQ(e.flash2_noncausal.backward_seq_half.value_or(0), 271);
  d = parse(R"({"attention_noncausal": 0, "attention_flash2_noncausal_seq_half": -1})", &e);
  EXPECT_EQ(d.size(), 2u);

  // gemm_isolated: a fraction, and never below the training-loop gemm (it is a derate, not a boost).
  d = parse(R"({"gemm": 0.7, "gemm_isolated": 0.6})", &e);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].path.find("gemm_isolated") != std::string::npos || d[0].message.find("gemm_isolated") != std::string::npos,
      true)
      << d[0].path << ": " << d[0].message;
  EXPECT_NE(d[0].message.find("below gemm (0.7)"), std::string::npos) << d[0].message;
  d = parse(R"({"gemm_isolated": 1.2})", &e);
  EXPECT_EQ(d.size(), 1u);
  d = parse(R"({"gemm_isolated": 0.87})", &e);
  EXPECT_TRUE(d.empty());
  EXPECT_DOUBLE_EQ(e.gemm_isolated.value_or(0), 0.87);
}

}  // namespace
