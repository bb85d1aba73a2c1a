// An out-of-sample check on Blackwell, MXFP8 and fine-grained MoE (issue 17's "too fast" classes): NVIDIA's DeepSeek-V3
// on 256 GB200 NVL72 write-up (scenarios/validation/deepseek_v3_256_gb200_mxfp8.json cites it). Not in the development
// set and not fitted: nothing here feeds trainsim-validation-fit. Its 970.01 TFLOPS/GPU are Megatron-LM's model
// FLOPs (megatron/training/training.py, num_floating_point_operations, MLA branch with the causal mask halving the
// core attention; at 1d9edcf8's time), converted here to the step time they imply.
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace {

/// Megatron-LM's model FLOPs of DeepSeek-V3 (no MTP layer) per token: 3 x 2 (forward and backward, FMA) x per layer
/// [q LoRA + kv LoRA + rope key + output projection + causal core attention] + the MLPs (3 dense layers of 18432,
/// 58 MoE layers of top-8 + 1 shared expert of 2048, SwiGLU: 3 matrices) + the logits.
double megatron_flops_per_token(double seq) {
  const double h = 7168, heads = 128, q_lora = 1536, kv_lora = 512, nope = 128, rope = 64, v = 128, vocab = 129280;
  const double q_term = q_lora * (h + heads * (nope + rope) + 1);
  const double attn = q_term + kv_lora * (h + heads * (nope + v) + 1) + h * rope + heads * v * h +
                      seq * heads * (nope + rope) / 2 + seq * heads * v / 2;
  const double mlp = 3 * (3 * h * 18432) + 58 * (3 * h * 2048 * (8 + 1));
  return 6 * (61 * attn + mlp + h * vocab);
}

TEST(OutOfSample, DeepSeekV3OnGb200WithinTwentyPercentOfNvidiasWriteUp) {
  const auto s = support::load_step("scenarios/validation/deepseek_v3_256_gb200_mxfp8.json");
  const auto r = support::run_step(s, sim::execution::Fidelity::Replica);
  const double tokens = 2048.0 * 4096.0, published_tflops = 970.01;
  const double published_step = megatron_flops_per_token(4096) * tokens / (published_tflops * 1e12 * 256);
  const double err = r.step_time.seconds() / published_step - 1;
  std::printf(
      "DeepSeek-V3, 256 GB200, MXFP8: Megatron-LM counts %.1f GFLOP per token; 970.01 TFLOPS/GPU is a "
      "%.3f s step; trainsim %.3f s (%+.1f%%)\n",
      megatron_flops_per_token(4096) / 1e9, published_step, r.step_time.seconds(), 100 * err);
  // Measured 2026-12-04: 8.46 s published, 7.10 s predicted (-16%). The write-up names what trainsim does not model:
  // host overhead left in the routed experts (a device-host sync per MoE layer it expects to be worth at least 10%
  // once removed) and HybridEP's copy beside the permute.
  EXPECT_LT(std::fabs(err), 0.20);
}

}  // namespace
