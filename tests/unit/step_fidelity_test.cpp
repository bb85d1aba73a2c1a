// Issue 17's step-model pieces: a step needs no token budget, FP8 recipes and attention kernels as scenario keys, and
// what each does to a step (FP8 is faster than BF16 but never by the full 2x of its peak; FlashAttention-2-class
// kernels are slower than fused ones on Hopper).
#include "sim/base/errors.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sim {
namespace {

std::string llama8b(const std::string& training) {
  return R"({"schema": "trainsim.scenario/1", "name": "t", "model": "llama3-8b", "hardware": "h100-sxm5-80gb",
             "cluster": {"gpus": 8},
             "parallel": {"tp": 1, "pp": 1, "cp": 1, "zero_stage": 1, "recompute": "none", "micro_batch": 1,
                          "global_batch": 64},
             "training": )" +
         training + "}";
}

double step_seconds(const scenario::Scenario& s) {
  const auto setup = scenario::step_setup(s);
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(setup));
  execution::StepOptions o;
  o.fidelity = execution::Fidelity::Replica;
  return execution::simulate_step(plan, o).step_time.seconds();
}

TEST(StepModel, AStepNeedsNoTokenBudgetButARunDoes) {
  const auto s = scenario::load_scenario_text(llama8b(R"({"seq_len": 8192})"), "t.json");
  EXPECT_GT(step_seconds(s), 0);
  const auto setup = scenario::step_setup(s);
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(setup));
  try {
    (void)scenario::run_inputs(s, plan, base::Time{1'000'000'000});
    FAIL() << "a run without tokens or duration must be refused";
  } catch (const base::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("t.json"), std::string::npos) << what;
    EXPECT_NE(what.find("/training"), std::string::npos) << what;
    EXPECT_NE(what.find("\"tokens\""), std::string::npos) << what;
  }
}

TEST(StepModel, AnFp8RecipeNeedsAnFp8Dtype) {
  try {
    (void)scenario::load_scenario_text(llama8b(R"({"seq_len": 8192, "dtype": "bf16", "fp8_recipe": "tensorwise"})"),
                                       "t.json");
    FAIL() << "fp8_recipe with bf16 must be refused";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("fp8_recipe"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)scenario::load_scenario_text(
                   llama8b(R"({"seq_len": 8192, "dtype": "fp8", "fp8_recipe": "sometimes"})"), "t.json"),
               base::ConfigError);
}

TEST(StepModel, Fp8IsFasterThanBf16ButFarFromTwiceAndCurrentScalingCostsMore) {
  const double bf16 = step_seconds(scenario::load_scenario_text(llama8b(R"({"seq_len": 8192})"), "t.json"));
  const double delayed =
      step_seconds(scenario::load_scenario_text(llama8b(R"({"seq_len": 8192, "dtype": "fp8"})"), "t.json"));
  const double current = step_seconds(scenario::load_scenario_text(
      llama8b(R"({"seq_len": 8192, "dtype": "fp8", "fp8_recipe": "tensorwise"})"), "t.json"));
  // Published: Llama 3.1 8B on 8 H100, 12.27 s BF16 against 9.33 s FP8 (NVIDIA dgxc-benchmarking 25.04): 1.32x.
  EXPECT_GT(bf16 / delayed, 1.15);
  EXPECT_LT(bf16 / delayed, 1.6) << "casts, 16-bit attention and the 16-bit output layer keep FP8 far from 2x";
  EXPECT_GT(current, delayed) << "current scaling reads every tensor once more for its amax";
}

TEST(StepModel, FlashAttention2ClassKernelsAreSlowerOnHopperAtLongSequences) {
  const double fused = step_seconds(scenario::load_scenario_text(llama8b(R"({"seq_len": 32768})"), "t.json"));
  const double flash2 = step_seconds(
      scenario::load_scenario_text(llama8b(R"({"seq_len": 32768, "attention_kernel": "flash2"})"), "t.json"));
  EXPECT_GT(flash2 / fused, 1.2) << "35% against 55% of the BF16 peak on the attention share of the step";
  EXPECT_THROW(
      (void)scenario::load_scenario_text(llama8b(R"({"seq_len": 8192, "attention_kernel": "flash9"})"), "t.json"),
      base::ConfigError);
  // Tri Dao's Triton FlashAttention (MPT's attn_impl "triton") at half the FlashAttention-2 rate: slower again, by
  // the attention share of the step.
  const double triton = step_seconds(
      scenario::load_scenario_text(llama8b(R"({"seq_len": 32768, "attention_kernel": "triton"})"), "t.json"));
  EXPECT_GT(triton / flash2, 1.2);
  EXPECT_LT(triton / flash2, 2.0) << "only the attention kernels slow down";
}

/// Llama 3 8B on 8 GPUs under TP 8 with sequence parallelism, `micro_batch` sequences per micro-batch.
std::string llama8b_tp8(int micro_batch, const std::string& training, bool overlap = false) {
  return R"({"schema": "trainsim.scenario/1", "name": "t", "model": "llama3-8b", "hardware": "h100-sxm5-80gb",
             "cluster": {"gpus": 8},
             "parallel": {"tp": 8, "pp": 1, "cp": 1, "sequence_parallel": true, "recompute": "none", "micro_batch": )" +
         std::to_string(micro_batch) + R"(, "global_batch": )" + std::to_string(4 * micro_batch) +
         (overlap ? R"(, "tp_comm_overlap": true, "tp_comm_overlap_method": "async_tp")" : "") + R"(},
             "training": )" +
         training + "}";
}

TEST(StepModel, BatchFirstSequenceParallelismCopiesEachGatherAndScatter) {
  // training.sp_layout "batch_first" (PyTorch DTensor's Shard(1), TorchTitan): with more than one sequence per
  // micro-batch each all-gather's output and reduce-scatter's input is rearranged by a copy of the whole tensor.
  auto step = [](int mb, const char* layout, bool overlap = false) {
    const std::string training = std::string(R"({"seq_len": 8192, "sp_layout": ")") + layout + R"("})";
    return step_seconds(scenario::load_scenario_text(llama8b_tp8(mb, training, overlap), "t.json"));
  };
  // Four sequences per micro-batch: 256 MiB gathered per collective, four collectives per layer forward and backward.
  const double seq_first = step(4, "seq_first"), batch_first = step(4, "batch_first");
  EXPECT_GT(batch_first / seq_first, 1.02);
  EXPECT_LT(batch_first / seq_first, 1.25) << "one read and one write of the gathered tensor per collective";
  // One sequence per micro-batch: the sequence is the outermost sharded dimension, nothing to rearrange.
  EXPECT_DOUBLE_EQ(step(1, "batch_first"), step(1, "seq_first"));
  // Async TP still overlaps its pairs with the copies beside them: faster than the same layout without overlap.
  EXPECT_LT(step(4, "batch_first", true), batch_first);
  EXPECT_THROW((void)scenario::load_scenario_text(llama8b(R"({"seq_len": 8192, "sp_layout": "bsh"})"), "t.json"),
               base::ConfigError);
}

TEST(StepModel, EagerKernelsAreSlowerThanFusedOnes) {
  // training.kernels "eager": PyTorch's separate RMSNorm / RoPE / SwiGLU ops (TorchTitan without torch.compile).
  const double fused = step_seconds(scenario::load_scenario_text(llama8b(R"({"seq_len": 8192})"), "t.json"));
  const double eager =
      step_seconds(scenario::load_scenario_text(llama8b(R"({"seq_len": 8192, "kernels": "eager"})"), "t.json"));
  EXPECT_GT(eager / fused, 1.03);
  EXPECT_LT(eager / fused, 1.30) << "memory-bound kernels, not the GEMMs";
  EXPECT_THROW((void)scenario::load_scenario_text(llama8b(R"({"seq_len": 8192, "kernels": "compiled"})"), "t.json"),
               base::ConfigError);
}

}  // namespace
}  // namespace sim
