// Out-of-sample checks of DeepSeek-V3 and -V2 (issue 17's "too fast" classes: FP8, fine-grained MoE, Blackwell),
// neither in the development set nor fitted (nothing here feeds trainsim-validation-fit):
// - NVIDIA's DeepSeek-V3 on 256 GB200 NVL72 write-up (scenarios/validation/deepseek_v3_256_gb200_mxfp8.json cites it).
//   Its 970.01 TFLOPS/GPU are Megatron-LM's model FLOPs (megatron/training/training.py, num_floating_point_operations,
//   MLA branch with the causal mask halving the core attention; at 1d9edcf8's time), converted here to the step time
//   they imply.
// - DeepSeek's own pre-training on 2048 H800 with DualPipe (scenarios/validation/deepseek_v3_2048_h800_dualpipev.json
//   cites the report's sections): 180K GPU hours per trillion tokens.
// - DeepSeek-V2's pre-training on H800 (scenarios/validation/deepseek_v2_2048_h800.json cites the paper's sections):
//   172.8K GPU hours per trillion tokens. Written and run once, then left as it came out.
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
  // Measured 2026-12-04: 8.44 s published, 7.10 s predicted (-15.9%). The write-up names what trainsim does not model:
  // host overhead left in the routed experts (a device-host sync per MoE layer it expects to be worth at least 10%
  // once removed) and HybridEP's copy beside the permute. The scenario places 64 GPUs in each NVL72 domain, as the
  // write-up's "all EP communication is within the NVLink domain" requires: filled 72 at a time, three pipeline ranks'
  // EP32 groups (and data-parallel groups) would cross a domain's boundary, 17.2 s since each rank's layer collectives
  // run on its own groups (7.34 s, -13.0%, when only the data-parallel groups were per rank). 2026-12-06: 7.17 s
  // (-15.1%), then 7.01 s (-16.9%) once MLA's values are multiplied at their own width (128, not the keys' 192).
  EXPECT_LT(std::fabs(err), 0.20);
}

TEST(OutOfSample, DeepSeekV3OnH800WithDualPipeWithinTwentyPercentOfItsReport) {
  // DeepSeek-V3 report (arXiv:2412.19437), Sec. 1: "each trillion tokens requires only 180K H800 GPU hours", i.e.
  // 3.7 days on its 2048 GPUs; at the final batch of 15360 x 4096 tokens that is a 19.9 s step. The figure is an
  // average over the whole pre-training, batch ramp-up and interruptions included, so the step itself is, if anything,
  // shorter.
  const auto s = support::load_step("scenarios/validation/deepseek_v3_2048_h800_dualpipev.json");
  const auto r = support::run_step(s, sim::execution::Fidelity::Replica);
  const double tokens_per_gpu_s = 1e12 / (180e3 * 3600.0);
  const double published_step = 15360.0 * 4096.0 / (tokens_per_gpu_s * 2048);
  const double err = r.step_time.seconds() / published_step - 1;
  std::printf(
      "DeepSeek-V3, 2048 H800, DualPipe(V), FP8: 180K GPU hours per trillion tokens is a %.2f s step; "
      "trainsim %.2f s (%+.1f%%)\n",
      published_step, r.step_time.seconds(), 100 * err);
  // Measured 2026-12-04: 19.91 s published, 20.32 s predicted with the dispatch in BF16 (+2.1%; 1F1B over the same
  // 16 stages: 29.4 s), 19.52 s with the report's FP8 dispatch (-2.0%). With routing not node-limited
  // (router_groups left out) 22.56 s, +13.3%. 3.1 s of the predicted step are all-to-alls the pairs do not hide.
  // 2026-12-06: 19.60 s (-1.6%), then 19.28 s (-3.1%) with MLA's values at their own width.
  EXPECT_LT(std::fabs(err), 0.20);
  // Without DualPipe (1F1B over the same 16 stages) the all-to-alls are exposed: far slower than the report.
  const auto one_f_one_b =
      support::load_step("scenarios/validation/deepseek_v3_2048_h800_dualpipev.json",
                         {{"parallel.schedule", "\"1f1b\""}, {"parallel.pipeline_layout", "\"Ettt|(tttt|)*14ttmL\""}});
  EXPECT_GT(support::run_step(one_f_one_b, sim::execution::Fidelity::Replica).step_time.seconds(),
            1.3 * r.step_time.seconds());
}

TEST(OutOfSample, DeepSeekV2OnH800WithinTwentyPercentOfItsPaper) {
  // DeepSeek-V2 (arXiv:2405.04434), Sec. 3.2.3: "training on each trillion tokens ... DeepSeek-V2 needs only 172.8K
  // GPU hours" on the H800 cluster, i.e. 1607 tokens per GPU-second, whatever the GPU count. The paper gives the
  // layout (16-way zero-bubble pipeline, 8-way expert parallelism, ZeRO-1, no tensor parallelism) and the batch
  // (9216 x 4096), not the GPU count: the scenario assumes DeepSeek-V3's 2048, and the count moves the answer through
  // the pipeline's micro-batches per step (below).
  const double published = 1e12 / (172.8e3 * 3600.0);  // tokens per GPU-second
  auto per_gpu = [](int gpus) {
    const auto s =
        support::load_step("scenarios/validation/deepseek_v2_2048_h800.json", {{"cluster.gpus", std::to_string(gpus)}});
    const auto r = support::run_step(s, sim::execution::Fidelity::Replica);
    return 9216.0 * 4096.0 / r.step_time.seconds() / gpus;
  };
  const double at_2048 = per_gpu(2048);
  // DeepSeek-V2 trained this way, so it fits: under ZB-H1 the last rank's micro-batches waiting for their deferred W
  // hold the logits' gradient, not the loss's fp32 softmax (81.2 GiB of 79.6 when they were counted with it).
  const auto v2 = support::run_step(support::load_step("scenarios/validation/deepseek_v2_2048_h800.json"),
                                    sim::execution::Fidelity::Analytic);
  EXPECT_TRUE(v2.fits) << v2.memory.total << " GiB";
  // Time per token against the published: the sign of a step-time error.
  const double err = published / at_2048 - 1;
  std::printf(
      "DeepSeek-V2, 2048 H800 (assumed), BF16: 172.8K GPU hours per trillion tokens is %.0f tokens per GPU-second; "
      "trainsim %.0f (time per token %+.1f%%; at 1024 GPUs %.0f, at 4096 %.0f)\n",
      published, at_2048, 100 * err, per_gpu(1024), per_gpu(4096));
  // Measured 2026-12-04, first run, nothing changed after it: 1607 published, 1693 predicted (-5.1%); 1841 at 1024
  // GPUs (144 micro-batches per pipeline, a smaller bubble) and 1459 at 4096 (36). Not modelled: the paper overlaps
  // the shared experts' computation with the all-to-alls (1.6 s of the 10.9 s step are exposed all-to-alls here).
  // Since ZB-H1's replay was fixed (its W order had replayed as 1F1B): 1757 (-8.5%), 1877 at 1024 and 1557 at 4096.
  // 2026-12-06: 1736 (-7.4%), then 1802 (-10.8%) with MLA's values at their own width.
  EXPECT_LT(std::fabs(err), 0.20);
}

}  // namespace
