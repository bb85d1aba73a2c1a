// tests/unit/import_deepspeed_test.cpp: DeepSpeed JSON configs into a scenario, or a refusal naming the JSON path.
#include "tests/unit/import_test_support.hpp"
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sim::cli::import_tests {
namespace {

TEST(ImportDeepSpeed, ZeroStageBatchesAndCheckpointing) {
  auto o = trainsim({"import", "deepspeed", kData + "deepspeed-zero2.json", "--model", "llama3-8b", "--hardware",
                     "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B", "--set", "training.seq_len=4096"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"zero_stage\": 2")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"micro_batch\": 2")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"global_batch\": 256")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"recompute\": \"full\"")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"overlap_grad_reduce\": true")) << "overlap_comm is read: " << o.out;
  EXPECT_FALSE(contains(o.err, "/zero_optimization/overlap_comm")) << "read, not listed as ignored: " << o.err;
  EXPECT_TRUE(contains(o.err, "/zero_optimization/reduce_bucket_size"))
      << "ignored keys are listed by JSON path: " << o.err;
}

// MiCS shards ZeRO-3's states within groups of mics_shard_size ranks, hybrid sharding (parallel.dp_shard); DeepSpeed-
// Ulysses' sequence_parallel_size is refused, not modelled (a tester's trial: both were "ignored", 13 GiB a GPU apart).
TEST(ImportDeepSpeed, MicsIsHybridShardingAndUlyssesIsRefused) {
  support::TempDir dir;
  auto import = [&](const std::string& extra_zero, const std::string& extra_top) {
    return trainsim({"import", "deepspeed",
                     dir.write("ds.json",
                               "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, \"bf16\": "
                               "{\"enabled\": true}" +
                                   extra_top + ", \"zero_optimization\": {\"stage\": 3" + extra_zero + "}}"),
                     "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "64", "--tokens", "10B", "--set",
                     "training.seq_len=4096"});
  };
  auto o = import(", \"mics_shard_size\": 8", "");
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"dp_shard\": 8")) << o.out;
  EXPECT_FALSE(contains(o.err, "mics_shard_size")) << "read, not listed as ignored: " << o.err;
  o = import(", \"mics_shard_size\": -1", "");
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_FALSE(contains(o.out, "dp_shard")) << "-1: MiCS off";
  o = import("", ", \"sequence_parallel_size\": 4");
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_TRUE(
      contains(o.err, "/sequence_parallel_size: DeepSpeed-Ulysses sequence parallelism (4 ranks) is not modelled"))
      << o.err;
}

TEST(ImportDeepSpeed, Stage3LiveParametersBoundTheGatheredWeights) {
  support::TempDir dir;
  auto o = trainsim({"import", "deepspeed",
                     dir.write("z3.json",
                               "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, \"bf16\": "
                               "{\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
                               "\"stage3_max_live_parameters\": 1e9}}"),
                     "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B", "--set",
                     "training.seq_len=4096"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"zero3_live_params\": 1e+09")) << o.out;
  EXPECT_FALSE(contains(o.err, "/zero_optimization/stage3_max_live_parameters")) << "read, not listed as ignored";
  // A stage-2 config carrying stage-3 keys (Hugging Face's example configs do): DeepSpeed reads them with stage 3
  // only, so they are listed as ignored, not written (the scenario would refuse zero3_live_params without ZeRO-3).
  auto z2 = trainsim({"import", "deepspeed",
                      dir.write("z2.json",
                                "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, \"bf16\": "
                                "{\"enabled\": true}, \"zero_optimization\": {\"stage3_max_live_parameters\": 1e9, "
                                "\"stage\": 2}}"),
                      "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B",
                      "--set", "training.seq_len=4096"});
  ASSERT_EQ(z2.code, kExitOk) << z2.err;
  EXPECT_FALSE(contains(z2.out, "zero3_live_params")) << z2.out;
  EXPECT_TRUE(contains(z2.err, "/zero_optimization/stage3_max_live_parameters")) << z2.err;
}

TEST(ImportDeepSpeed, AMisspeltBatchKeyIsAWarningNotIgnored) {
  // DeepSpeed skips keys it does not read; a review's train_batch_sise was listed as "ignored" (no effect).
  support::TempDir dir;
  auto o = trainsim({"import", "deepspeed",
                     dir.write("typo.json",
                               "{\"train_batch_sise\": 3, \"train_micro_batch_size_per_gpu\": 1, \"steps_per_print\": "
                               "10, \"bf16\": {\"enabled\": true}}"),
                     "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B", "--set",
                     "training.seq_len=4096"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(contains(o.err, "warning: ") && contains(o.err, "/train_batch_sise") &&
              contains(o.err, "\"train_batch_size\" misspelt?"))
      << o.err;
  EXPECT_TRUE(contains(o.err, "/steps_per_print")) << "other unread keys stay listed as ignored: " << o.err;
}

TEST(ImportDeepSpeed, AutoValuesAreUnresolvedUntilGiven) {
  auto o = trainsim({"import", "deepspeed", kData + "deepspeed-auto.json", "--model", "llama3-8b", "--hardware",
                     "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_TRUE(contains(o.err, "deepspeed-auto.json /train_micro_batch_size_per_gpu: \"auto\" is filled in at run time"))
      << o.err;
  EXPECT_TRUE(contains(o.err, "/bf16/enabled")) << o.err;
  auto ok = trainsim({"--set", "parallel.micro_batch=1", "--set", "parallel.global_batch=64", "--set",
                      "training.seq_len=2048", "--set", "training.dtype=bf16", "import", "deepspeed",
                      kData + "deepspeed-auto.json", "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus",
                      "16", "--tokens", "10B"});
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_TRUE(contains(ok.err, "settled: ")) << ok.err;
  EXPECT_TRUE(contains(ok.out, "\"zero_stage\": 3")) << ok.out;
}

TEST(ImportDeepSpeed, MalformedInputsExitTwoNamingTheJsonPath) {
  support::TempDir dir;
  expect_bad(trainsim({"import", "deepspeed", dir.write("a.json", "{\"zero_optimization\": {\"stage\": 5}}")}),
             {"a.json: /zero_optimization/stage: ", "5"});
  expect_bad(trainsim({"import", "deepspeed", dir.write("b.json", "{\"train_micro_batch_size_per_gpu\": \"two\"}")}),
             {"b.json: /train_micro_batch_size_per_gpu: expected an integer or \"auto\", found \"two\""});
  expect_bad(trainsim({"import", "deepspeed",
                       dir.write("c.json", "{\"train_batch_size\": 8,\n \"bf16\": {\"enabled\": tru}}")}),
             {"c.json", "line 2"});
  expect_bad(trainsim({"import", "deepspeed", dir.write("d.json", "[1, 2]")}), {"d.json: /: expected an object"});
  expect_bad(trainsim({"import", "deepspeed",
                       dir.write("e.json",
                                 "{\"train_batch_size\": 100, \"train_micro_batch_size_per_gpu\": 2, "
                                 "\"gradient_accumulation_steps\": 4}"),
                       "--gpus", "16"}),
             {"e.json: /train_batch_size: 100 is not train_micro_batch_size_per_gpu x gradient_accumulation_steps x "
              "data-parallel size = 2 x 4 x 16 = 128"});
}

// Found by a user trial on public configs (FrankLeeeee/llama-deepspeed-benchmark ds_config.json @ 22410058,
// hiyouga/LLaMA-Factory examples/deepspeed/ds_z3_config.json @ 1d6e8b21): --set parallel.tp was left out of the
// data-parallel size behind the batch arithmetic (a valid file refused), and ZeRO-3's overlap_comm false was filed
// as "ignored" although DeepSpeed then gathers and reduces on the compute stream.
TEST(ImportDeepSpeed, SetLayoutCountsInTheBatchAndStage3OverlapOffIsAWarning) {
  support::TempDir dir;
  const auto cfg = dir.write("ds.json", R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}})");
  auto o = trainsim({"import", "deepspeed", cfg, "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "16",
                     "--tokens", "1B", "--set", "training.seq_len=4096", "--set", "parallel.tp=2"});
  ASSERT_EQ(o.code, kExitOk) << "4 x 1 x (16 / TP 2) = 32: " << o.err;
  EXPECT_TRUE(contains(o.out, "\"micro_batch\": 4")) << o.out;
  const auto z3 = dir.write("z3.json", R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
    "bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "overlap_comm": false}})");
  auto w = trainsim({"import", "deepspeed", z3, "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "8",
                     "--tokens", "1B", "--set", "training.seq_len=4096"});
  ASSERT_EQ(w.code, kExitOk) << w.err;
  EXPECT_TRUE(contains(w.err, "warning: " + z3 + " /zero_optimization/overlap_comm: false: not modelled")) << w.err;
}

TEST(ImportDeepSpeed, Bf16WithoutZeroIsTheBf16OptimizersZeroOneSharding) {
  // DeepSpeed's BF16_Optimizer (bf16 with stage 0) shards the fp32 master weights and Adam states over data
  // parallelism and keeps fp32 gradients (deepspeed/runtime/bf16_optimizer.py); BLOOM-176B ran so. A user trial found
  // the optimizer counted whole.
  support::TempDir dir;
  auto run = [&](const std::string& json) {
    return trainsim({"import", "deepspeed", dir.write("ds.json", json), "--model", "llama3-8b", "--hardware",
                     "h100-sxm5-80gb", "--gpus", "8", "--tokens", "1B", "--set", "training.seq_len=4096"});
  };
  const auto bf16 = run(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
    "bf16": {"enabled": true}, "zero_optimization": {"stage": 0}})");
  ASSERT_EQ(bf16.code, kExitOk) << bf16.err;
  EXPECT_TRUE(contains(bf16.out, "\"zero_stage\": 1")) << bf16.out;
  EXPECT_TRUE(contains(bf16.out, "\"main_grads\": \"fp32\"")) << bf16.out;
  EXPECT_TRUE(contains(
      bf16.err, "note: " + (dir.path() / "ds.json").string() + ": bf16 without ZeRO runs DeepSpeed's BF16_Optimizer"))
      << "a note says why: " << bf16.err;
  // No zero_optimization section is stage 0 too.
  const auto bare = run(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}})");
  ASSERT_EQ(bare.code, kExitOk) << bare.err;
  EXPECT_TRUE(contains(bare.out, "\"zero_stage\": 1")) << bare.out;
  // fp16 without ZeRO keeps its whole fp32 master copy (FP16_Optimizer), and ZeRO stages are read as written.
  const auto fp16 = run(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
    "fp16": {"enabled": true}, "zero_optimization": {"stage": 0}})");
  ASSERT_EQ(fp16.code, kExitOk) << fp16.err;
  EXPECT_FALSE(contains(fp16.out, "\"zero_stage\": 1")) << fp16.out;
  const auto z2 = run(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
    "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}})");
  ASSERT_EQ(z2.code, kExitOk) << z2.err;
  EXPECT_TRUE(contains(z2.out, "\"zero_stage\": 2")) << z2.out;
  // An fp32 all-reduce under BF16_Optimizer moves twice what trainsim's reduce-scatter does: said, not hidden.
  const auto fp32 = run(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
    "bf16": {"enabled": true}, "communication_data_type": "fp32"})");
  ASSERT_EQ(fp32.code, kExitOk) << fp32.err;
  EXPECT_TRUE(contains(fp32.err, "half its bytes")) << fp32.err;
}

TEST(ImportDeepSpeed, Bf16WithFp32AccumulationAtStageOneIsTheBf16Optimizer) {
  // A user trial: data_types.grad_accum_dtype "fp32" (a Megatron-DeepSpeed launch script's config) was listed as
  // ignored and the gradients taken as bf16, so a layout that needs 90 GiB "fit" 80. DeepSpeed's engine picks its
  // BF16_Optimizer for bf16 with fp32 accumulation at stage 1 (engine.py, _do_optimizer_sanity_check).
  support::TempDir dir;
  auto run = [&](const std::string& extra, int stage) {
    return trainsim({"import", "deepspeed",
                     dir.write("ds.json", R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
      "bf16": {"enabled": true}, "zero_optimization": {"stage": )" +
                                              std::to_string(stage) + "}" + extra + "}"),
                     "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "8", "--tokens", "1B", "--set",
                     "training.seq_len=4096"});
  };
  const auto fp32 = run(R"(, "data_types": {"grad_accum_dtype": "torch.float32"})", 1);  // DtypeEnum's spellings
  ASSERT_EQ(fp32.code, kExitOk) << fp32.err;
  EXPECT_TRUE(contains(fp32.out, "\"main_grads\": \"fp32\"")) << fp32.out;
  EXPECT_TRUE(contains(fp32.err, "BF16_Optimizer")) << fp32.err;
  EXPECT_FALSE(contains(fp32.err, "/data_types: not modelled")) << "read, not ignored: " << fp32.err;
  const auto plain = run("", 1);  // the model's bf16 by default under ZeRO
  ASSERT_EQ(plain.code, kExitOk) << plain.err;
  EXPECT_TRUE(contains(plain.out, "\"main_grads\": \"bf16\"")) << plain.out;
  // bf16 accumulation at stage 0 is no BF16_Optimizer: said, not guessed; a bad spelling names its path.
  const auto bf16 = run(R"(, "data_types": {"grad_accum_dtype": "bf16"})", 0);
  ASSERT_EQ(bf16.code, kExitOk) << bf16.err;
  EXPECT_TRUE(contains(bf16.err, "plain optimizer")) << bf16.err;
  // ZeRO++'s keys change the traffic and memory: warned, not listed with the ignored ones (a user trial).
  const auto zpp = trainsim({"import", "deepspeed",
                             dir.write("zpp.json", R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
      "bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 8,
      "zero_quantized_weights": true}})"),
                             "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "8", "--tokens", "1B",
                             "--set", "training.seq_len=4096"});
  ASSERT_EQ(zpp.code, kExitOk) << zpp.err;
  EXPECT_TRUE(contains(zpp.err, "zero_hpz_partition_size: ZeRO++ is not modelled")) << zpp.err;
  EXPECT_TRUE(contains(zpp.err, "zero_quantized_weights: ZeRO++ is not modelled")) << zpp.err;
  const auto bad = run(R"(, "data_types": {"grad_accum_dtype": "int8"})", 1);
  EXPECT_EQ(bad.code, kExitBadInput) << bad.err;
  EXPECT_TRUE(contains(bad.err, "/data_types/grad_accum_dtype")) << bad.err;
}

}  // namespace
}  // namespace sim::cli::import_tests
