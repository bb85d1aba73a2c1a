// tests/validation/attention_kernels_test.cpp: the attention kernel model against measured kernels (issue 17, item 1).
// The Hopper profiles carry the fit of tests/validation/attention_microbenchmarks.json (FlashAttention-3 paper, H100),
// and the model reproduces each measured point.
#include "tests/validation/attention_fit.hpp"

#include "sim/hardware/compute_model.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

namespace {

TEST(AttentionKernels, FitReproducesTheMeasuredPoints) {
  for (const char* kernel : {"flash2", "cudnn", "fa3"})
    for (const char* pass : {"forward", "backward", "forward_noncausal", "backward_noncausal"}) {
      const auto f = validation::fit_attention("sm_90", kernel, pass);
      SCOPED_TRACE(std::string(kernel) + " " + pass);
      EXPECT_EQ(f.points, 6);
      EXPECT_LT(f.rms, 0.04);  // 512 to 16k tokens: e x s / (s + s_half) within 4% rms
    }
}

// Every profile of the GH100 chip carries the fitted numbers: a refit that moves them fails here until the profiles
// follow (trainsim-validation-fit prints them).
TEST(AttentionKernels, HopperProfilesCarryTheFit) {
  const auto flash2_fwd = validation::fit_attention("sm_90", "flash2", "forward");
  const auto flash2_bwd = validation::fit_attention("sm_90", "flash2", "backward");
  const auto fused_fwd = validation::fit_attention("sm_90", "cudnn", "forward");
  const auto fused_bwd = validation::fit_attention("sm_90", "cudnn", "backward");
  for (const char* name : {"h100-sxm5-80gb", "h100-sxm5-96gb-500w", "h200-sxm-141gb", "h800-sxm5-80gb"}) {
    SCOPED_TRACE(name);
    const auto e = sim::scenario::load_hardware(name).efficiency;
    EXPECT_NEAR(e.attention, fused_fwd.efficiency, 5e-4);
    EXPECT_NEAR(e.attention_seq_half, fused_fwd.seq_half, 0.5);
    EXPECT_NEAR(e.attention_backward.value_or(-1), fused_bwd.efficiency, 5e-4);
    EXPECT_NEAR(e.attention_backward_seq_half.value_or(-1), fused_bwd.seq_half, 0.5);
    EXPECT_NEAR(e.flash2.forward.value_or(-1), flash2_fwd.efficiency, 5e-4);
    EXPECT_NEAR(e.flash2.seq_half.value_or(-1), flash2_fwd.seq_half, 0.5);
    EXPECT_NEAR(e.flash2.backward.value_or(-1), flash2_bwd.efficiency, 5e-4);
    EXPECT_NEAR(e.flash2.backward_seq_half.value_or(-1), flash2_bwd.seq_half, 0.5);
    // Without a causal mask (context parallelism's calls off the diagonal).
    const auto nc = [](const char* kernel, const char* pass) {
      return validation::fit_attention("sm_90", kernel, pass);
    };
    EXPECT_NEAR(e.noncausal.forward.value_or(-1), nc("cudnn", "forward_noncausal").efficiency, 5e-4);
    EXPECT_NEAR(e.noncausal.seq_half.value_or(-1), nc("cudnn", "forward_noncausal").seq_half, 0.5);
    EXPECT_NEAR(e.noncausal.backward.value_or(-1), nc("cudnn", "backward_noncausal").efficiency, 5e-4);
    EXPECT_NEAR(e.noncausal.backward_seq_half.value_or(-1), nc("cudnn", "backward_noncausal").seq_half, 0.5);
    EXPECT_NEAR(e.flash2_noncausal.forward.value_or(-1), nc("flash2", "forward_noncausal").efficiency, 5e-4);
    EXPECT_NEAR(e.flash2_noncausal.seq_half.value_or(-1), nc("flash2", "forward_noncausal").seq_half, 0.5);
    EXPECT_NEAR(e.flash2_noncausal.backward.value_or(-1), nc("flash2", "backward_noncausal").efficiency, 5e-4);
    EXPECT_NEAR(e.flash2_noncausal.backward_seq_half.value_or(-1), nc("flash2", "backward_noncausal").seq_half, 0.5);
  }
}

// The attention rates above are isolated kernels; a training loop runs them at gemm / gemm_isolated of that, and
// gemm_isolated is the isolated BF16 GEMM efficiency trainsim-validation-fit fits to OpenXLA's measured H100 GEMMs
// (fit_result.json). A refit that moves it fails here until the profiles follow.
TEST(AttentionKernels, HopperProfilesCarryTheIsolatedGemmFit) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/fit_result.json");
  const auto fit = nlohmann::json::parse(in);
  const double isolated = fit.at("microbenchmarks").at("sm_90_bf16").at("isolated_efficiency").get<double>();
  for (const char* name : {"h100-sxm5-80gb", "h100-sxm5-96gb-500w", "h200-sxm-141gb", "h800-sxm5-80gb"}) {
    SCOPED_TRACE(name);
    const auto e = sim::scenario::load_hardware(name).efficiency;
    ASSERT_TRUE(e.gemm_isolated.has_value());
    EXPECT_NEAR(*e.gemm_isolated, isolated, 5e-4);
  }
  // Blackwell's attention rates are the documented defaults, not measured kernels: nothing to derate.
  for (const char* name : {"b200-sxm-180gb", "gb200-nvl72", "gb300-nvl72"})
    EXPECT_FALSE(sim::scenario::load_hardware(name).efficiency.gemm_isolated.has_value()) << name;
}

// The model's shape: the backward is slower per FLOP than the forward, and short calls slower than long ones.
TEST(AttentionKernels, BackwardAndShortSequencesRunSlowerPerFlop) {
  const auto hw = sim::scenario::load_hardware("h100-sxm5-80gb");
  const auto bf16 = *sim::hardware::dtype_from_string("bf16");
  const double flops = 1e12;
  auto t = [&](bool flash2, bool backward, double seq) {
    return sim::hardware::attention_time(
               hw.gpu, bf16, hw.efficiency, flops,
               {flash2 ? sim::hardware::AttentionKernel::Flash2 : sim::hardware::AttentionKernel::Fused, backward, seq})
        .seconds();
  };
  for (bool flash2 : {false, true}) {
    EXPECT_GT(t(flash2, true, 8192), t(flash2, false, 8192) * 1.1);
    EXPECT_GT(t(flash2, false, 1024), t(flash2, false, 8192) * 1.2);
    EXPECT_GT(t(flash2, true, 2048), t(flash2, true, 16384) * 1.2);
  }
  // FlashAttention-2 class kernels are slower than the fused (cuDNN) ones on Hopper, both passes.
  EXPECT_GT(t(true, false, 8192), t(false, false, 8192) * 1.4);
  EXPECT_GT(t(true, true, 8192), t(false, true, 8192) * 1.4);
}

}  // namespace
