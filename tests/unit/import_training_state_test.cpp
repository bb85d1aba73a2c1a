// trainsim import: what the launch files say about gradients and training state, which the step and memory models
// read: gradient reduction overlap (Megatron-LM's --overlap-grad-reduce, DeepSpeed's overlap_comm), Megatron-Core's
// local layers, and TorchTitan's FSDP2 (fp32 or pure bf16 parameters, the reduce dtype, HSDP, the optimizer in the
// backward, CPU offload refused). The inputs are written here from the frameworks' documented keys.
#include "sim/base/errors.hpp"
#include "sim/importers/importers.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace sim::cli {
namespace {

/// A boolean field of an import's draft, or nullopt when the import leaves it out.
std::optional<bool> boolean(const importers::Import& im, const char* path) {
  const auto* f = im.draft.find(path);
  if (!f) return std::nullopt;
  return std::get<bool>(f->value);
}

TEST(ImportMegatron, GradientsAreReducedDuringTheBackwardOnlyWithOverlapGradReduce) {
  // Megatron-LM's --overlap-grad-reduce is off by default: without it finalize_model_grads starts every bucket's
  // collective after the last backward. FSDP (ZeRO-3) says nothing; Megatron-DeepSpeed below ZeRO-3 takes DeepSpeed's
  // default overlap_comm, false (its config is not read; a user trial found the overlapped scenario default there).
  auto overlap = [](const std::string& flags) -> std::optional<bool> {
    const auto im = importers::import_megatron_text(
        "torchrun --nproc_per_node=8 --nnodes 4 train.py --tensor-model-parallel-size 4 " + flags +
            " --num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
        "launch.sh");
    return boolean(im, "parallel.overlap_grad_reduce");
  };
  EXPECT_EQ(overlap("--use-distributed-optimizer --overlap-grad-reduce"), true);
  EXPECT_EQ(overlap("--use-distributed-optimizer"), false);
  EXPECT_EQ(overlap(""), false);
  EXPECT_EQ(overlap("--use-torch-fsdp2"), std::nullopt);
  EXPECT_EQ(overlap("--deepspeed --zero-stage 1"), false);
  EXPECT_EQ(overlap("--deepspeed --zero-stage 3"), std::nullopt);
}

TEST(ImportMegatron, DistributedOptimizerInstancesAreHybridSharding) {
  // --num-distributed-optimizer-instances N: N groups of consecutive data-parallel ranks, each sharding a whole copy
  // of the optimizer states (Megatron-Core's partial distributed optimizer): dp_shard = dp / N. 32 GPUs under TP 2:
  // dp 16.
  auto import = [](const std::string& flags) {
    return importers::import_megatron_text(
        "torchrun --nproc_per_node=8 --nnodes 4 train.py "
        "--tensor-model-parallel-size 2 " +
            flags + " --num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
        "launch.sh");
  };
  auto shard = [](const importers::Import& im) -> std::optional<std::int64_t> {
    return im.draft.integer("parallel.dp_shard");
  };
  EXPECT_EQ(shard(import("--use-distributed-optimizer --num-distributed-optimizer-instances 2")), 8);
  EXPECT_EQ(shard(import("--use-distributed-optimizer --num-distributed-optimizer-instances 4")), 4);
  EXPECT_EQ(shard(import("--use-distributed-optimizer --num-distributed-optimizer-instances 1")), std::nullopt);
  EXPECT_EQ(shard(import("--use-distributed-optimizer")), std::nullopt);
  // Without the distributed optimizer (or Megatron-FSDP) Megatron-LM ignores it: a note, no key.
  const auto plain = import("--num-distributed-optimizer-instances 2");
  EXPECT_EQ(shard(plain), std::nullopt);
  EXPECT_FALSE(plain.notes.empty());
  // 3 instances do not divide 16 ranks: an error naming the flag and the counts.
  try {
    (void)import("--use-distributed-optimizer --num-distributed-optimizer-instances 3");
    FAIL() << "3 instances of 16 ranks were accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--num-distributed-optimizer-instances 3 does not divide the 16"),
              std::string::npos)
        << e.what();
  }
  // Without a GPU count the groups cannot be sized: unresolved, not guessed.
  const auto no_gpus = importers::import_megatron_text(
      "python train.py --use-distributed-optimizer --num-distributed-optimizer-instances 2 --num-layers 32\n",
      "launch.sh");
  EXPECT_EQ(shard(no_gpus), std::nullopt);
  EXPECT_TRUE(std::any_of(no_gpus.unresolved.begin(), no_gpus.unresolved.end(),
                          [](const auto& u) { return u.path == "parallel.dp_shard"; }));
}

TEST(ImportMegatron, TheLocalTransformerImplementationStoresTheAttentionScores) {
  // --transformer-impl local: Megatron-Core's own layers, whose core attention (DotProductAttention) is unfused
  // whatever --attention-backend says; the legacy models' --use-flash-attn keeps it fused.
  auto fused = [](const std::string& flags) -> std::optional<bool> {
    const auto im = importers::import_megatron_text("torchrun --nproc_per_node=8 train.py " + flags +
                                                        " --num-layers 32 --hidden-size 4096 "
                                                        "--num-attention-heads 32\n",
                                                    "launch.sh");
    return boolean(im, "training.fused_attention");
  };
  EXPECT_EQ(fused("--transformer-impl local"), false);
  EXPECT_EQ(fused("--transformer-impl local --attention-backend flash"), false);
  EXPECT_EQ(fused("--transformer-impl local --use-flash-attn"), true);
  EXPECT_EQ(fused("--transformer-impl transformer_engine"), std::nullopt) << "the scenario's default: fused";
  EXPECT_EQ(fused("--attention-backend unfused"), false);
}

TEST(ImportTorchTitan, Fsdp2KeepsFp32ParametersAndCanStepInTheBackward) {
  // FSDP2's fp32 sharded parameters are the master (training.master_weights "params"); [optimizer]
  // early_step_in_backward is read as training.optimizer_in_backward, and a value that is not a boolean is refused.
  support::TempDir dir;
  const std::string head =
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
      "[parallelism]\ndata_parallel_shard_degree = 8\n";
  const auto on =
      importers::import_torchtitan(dir.write("on.toml", head + "[optimizer]\nearly_step_in_backward = true\n"), {});
  ASSERT_NE(on.draft.find("training.optimizer_in_backward"), nullptr);
  EXPECT_TRUE(std::get<bool>(on.draft.find("training.optimizer_in_backward")->value));
  ASSERT_NE(on.draft.find("training.master_weights"), nullptr);
  EXPECT_EQ(std::get<std::string>(on.draft.find("training.master_weights")->value), "params");
  const auto bf16 = importers::import_torchtitan(
      dir.write("bf16.toml",
                "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
                "mixed_precision_reduce = \"bfloat16\"\n[parallelism]\ndata_parallel_shard_degree = 8\n"),
      {});
  ASSERT_NE(bf16.draft.find("training.main_grads"), nullptr) << "FSDP2's reduce_dtype";
  EXPECT_EQ(std::get<std::string>(bf16.draft.find("training.main_grads")->value), "bf16");
  // [training] dtype "bfloat16": pure bf16 training, no fp32 state (master_weights "none").
  const auto pure = importers::import_torchtitan(
      dir.write("pure.toml",
                "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
                "dtype = \"bfloat16\"\n[parallelism]\ndata_parallel_shard_degree = 8\n"),
      {});
  ASSERT_NE(pure.draft.find("training.master_weights"), nullptr);
  EXPECT_EQ(std::get<std::string>(pure.draft.find("training.master_weights")->value), "none");
  // HSDP: FSDP within groups of data_parallel_shard_degree ranks (parallel.dp_shard).
  const auto hsdp = importers::import_torchtitan(
      dir.write("hsdp.toml",
                "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\n"
                "seq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 8\n"
                "data_parallel_replicate_degree = 4\n"),
      {});
  EXPECT_EQ(hsdp.draft.integer("parallel.dp_shard"), 8);
  EXPECT_EQ(hsdp.draft.integer("cluster.gpus"), 32);
  // FSDP's CPU offload is refused, as DeepSpeed's is; false is read and leaves the run GPU-resident.
  try {
    importers::import_torchtitan(
        dir.write("offload.toml", "[training]\nenable_cpu_offload = true\nlocal_batch_size = 1\nseq_len = 8192\n"), {});
    ADD_FAILURE() << "CPU offload was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_TRUE(std::string(e.what()).find("enable_cpu_offload") != std::string::npos) << e.what();
    EXPECT_TRUE(std::string(e.what()).find("set it to false") != std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(importers::import_torchtitan(
      dir.write("resident.toml", "[training]\nenable_cpu_offload = false\nlocal_batch_size = 1\nseq_len = 8192\n"),
      {}));
  const auto off = importers::import_torchtitan(dir.write("off.toml", head), {});
  EXPECT_EQ(off.draft.find("training.optimizer_in_backward"), nullptr) << "TorchTitan's default: false";
  try {
    importers::import_torchtitan(dir.write("bad.toml", head + "[optimizer]\nearly_step_in_backward = 1\n"), {});
    ADD_FAILURE() << "an integer was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_TRUE(std::string(e.what()).find("early_step_in_backward") != std::string::npos) << e.what();
  }
}

TEST(ImportDeepSpeed, GradientReductionOverlapsOnlyWithOverlapComm) {
  // DeepSpeed's configuration reference: zero_optimization.overlap_comm defaults to false for stages 1-2 (true for
  // stage 3); without ZeRO the engine all-reduces the gradients after the backward.
  support::TempDir dir;
  auto overlap = [&](const std::string& zero) -> std::optional<bool> {
    const auto path =
        dir.write("ds.json", "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1" +
                                 (zero.empty() ? std::string() : ", \"zero_optimization\": " + zero) + "}");
    const auto im = importers::import_deepspeed(path, {});
    return boolean(im, "parallel.overlap_grad_reduce");
  };
  EXPECT_EQ(overlap(""), false) << "no ZeRO: reduced after the backward";
  EXPECT_EQ(overlap("{\"stage\": 1}"), false) << "overlap_comm's default";
  EXPECT_EQ(overlap("{\"stage\": 2, \"overlap_comm\": true}"), true);
  EXPECT_EQ(overlap("{\"stage\": 2, \"overlap_comm\": false}"), false);
  EXPECT_EQ(overlap("{\"stage\": 3}"), std::nullopt) << "ZeRO-3 overlaps its reduce-scatters";
}

TEST(ImportDeepSpeed, BatchSizesDerivedAsDeepSpeedDoesAndAutoTp) {
  // runtime/config.py, _set_batch_related_parameters: beside one batch size the accumulation steps default to 1 and
  // the other batch size follows (DeepSpeedExamples' cifar config gives train_batch_size 16 alone: 2 per GPU on 8).
  // tensor_parallel.autotp_size (LLaMA-Factory's ds_z2_autotp_config.json) is tensor parallelism, the data-parallel
  // size what is left.
  support::TempDir dir;
  importers::Draft gpus8;
  gpus8.put("cluster.gpus", std::int64_t{8}, "--gpus");
  auto run = [&](const std::string& body) { return importers::import_deepspeed(dir.write("ds.json", body), gpus8); };
  const auto tbs = run("{\"train_batch_size\": 16}");
  EXPECT_EQ(tbs.draft.integer("parallel.micro_batch"), 2);
  EXPECT_EQ(tbs.draft.integer("parallel.global_batch"), 16);
  EXPECT_EQ(run("{\"train_batch_size\": 64, \"gradient_accumulation_steps\": 4}").draft.integer("parallel.micro_batch"),
            2);
  EXPECT_EQ(run("{\"train_micro_batch_size_per_gpu\": 3}").draft.integer("parallel.global_batch"), 24);
  const auto tp = run("{\"train_batch_size\": 16, \"tensor_parallel\": {\"autotp_size\": 2}}");
  EXPECT_EQ(tp.draft.integer("parallel.tp"), 2);
  EXPECT_EQ(tp.draft.integer("parallel.micro_batch"), 4) << "16 over 4 data-parallel ranks";
  EXPECT_EQ(run("{\"train_batch_size\": 16}").draft.integer("parallel.tp"), 1);
  // Without the GPU count the micro-batch is asked for, not defaulted; a batch that does not divide is refused.
  const auto unknown = importers::import_deepspeed(dir.write("u.json", "{\"train_batch_size\": 16}"), {});
  EXPECT_EQ(unknown.draft.integer("parallel.micro_batch"), std::nullopt);
  EXPECT_TRUE(std::any_of(unknown.unresolved.begin(), unknown.unresolved.end(),
                          [](const auto& u) { return u.path == "parallel.micro_batch"; }));
  EXPECT_THROW((void)run("{\"train_batch_size\": 12, \"gradient_accumulation_steps\": 4}"), base::ConfigError);
}

TEST(ImportDeepSpeed, GradientsAreReducedInTheTrainingDtypeUnlessCommunicationDataTypeSaysOtherwise) {
  // DeepSpeed's engine.py communication_data_type: the fp16 / bf16 training dtype when none is configured. Found by a
  // user trial: every DeepSpeed import reduced in fp32, twice the data-parallel bytes.
  support::TempDir dir;
  auto grads = [&](const std::string& body) -> std::string {
    const auto im = importers::import_deepspeed(dir.write("ds.json", body), {});
    const auto* f = im.draft.find("training.main_grads");
    return f ? std::get<std::string>(f->value) : "absent";
  };
  EXPECT_EQ(grads(R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}})"), "bf16");
  EXPECT_EQ(grads(R"({"fp16": {"enabled": true}})"), "bf16") << "16-bit reductions";
  EXPECT_EQ(
      grads(R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 1}, "communication_data_type": "fp32"})"),
      "fp32");
  // bf16 without ZeRO is DeepSpeed's BF16_Optimizer, which holds fp32 gradients (its bf16 all-reduce is timed as a
  // reduce-scatter of fp32 ones: ImportDeepSpeed.Bf16WithoutZeroIsTheBf16OptimizersZeroOneSharding).
  EXPECT_EQ(grads(R"({"bf16": {"enabled": true}})"), "fp32");
  EXPECT_EQ(grads(R"({"train_micro_batch_size_per_gpu": 1})"), "absent") << "fp32 training: fp32 reductions";
  EXPECT_THROW((void)grads(R"({"bf16": {"enabled": true}, "communication_data_type": "int4"})"), base::ConfigError);
}

TEST(ImportMegatron, TrainTokensEndsTrainingAtTheFirstLimit) {
  // Megatron-DeepSpeed's --train-tokens: its GPT examples set --train-samples far past it ("large enough to make sure
  // ... don't terminate by train_samples"); training stops at the first limit reached. Found by a user trial.
  auto tokens = [](const std::string& limits) {
    return importers::import_megatron_text(
               "deepspeed pretrain_gpt.py --num-layers 12 --hidden-size 768 "
               "--num-attention-heads 12 --seq-length 2048 --global-batch-size 256 " +
                   limits + "\n",
               "ds_pretrain.sh")
        .draft.integer("training.tokens");
  };
  EXPECT_EQ(tokens("--train-tokens 300000000000 --train-samples 292968750"), 300'000'000'000);
  EXPECT_EQ(tokens("--train-tokens 300000000000 --train-samples 1000"), 1000 * 2048) << "the samples end it first";
  EXPECT_EQ(tokens("--train-tokens 300000000000"), 300'000'000'000);
  EXPECT_EQ(tokens("--train-samples 1000"), 1000 * 2048);
}

}  // namespace
}  // namespace sim::cli
