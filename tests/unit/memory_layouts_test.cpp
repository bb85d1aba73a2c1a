// tests/unit/memory_layouts_test.cpp: the training-stack keys (fused attention, dropout, Megatron-LM's recomputation,
// gradient precision, FP8 weight copies, the reserve), Megatron-LM's pipeline splits, head_dim, and the parameter
// counts of models with MLA, mixed dense/MoE layers and multi-token prediction (issue 16).
#include "sim/base/errors.hpp"
#include "sim/parallel/megatron_flags.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/layout.hpp"
#include "tests/support/scenario_errors.hpp"
#include "sim/workload/params.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace sim::parallel {
namespace {

using scenario::Override;
using workload::ModelSpec;

using support::load_error;
using support::resolve;

std::vector<std::string> broken_rules(const ModelSpec& m, const ClusterShape& cluster, const ParallelConfig& c,
                                      int seq_len) {
  auto r = resolve_layout(m, cluster, c, seq_len);
  std::vector<std::string> ids;
  if (auto* v = std::get_if<std::vector<Infeasible>>(&r))
    for (const auto& i : *v)
      ids.push_back(i.rule);
  return ids;
}

/// One layer at t = 8 with sequence parallelism, fused attention and no hidden dropout (today's stacks).
ActivationShape fused_tp8(int seq_len) {
  ActivationShape a{.seq_len = seq_len, .micro_batch = 1, .tp = 8, .cp = 1, .sequence_parallel = true};
  a.flash_attention = true;
  a.dropout = false;
  return a;
}

/// A pipeline configuration of `tp` x `pp` for `global_batch` sequences (the other sizes 1).
ParallelConfig pipeline_config(int tp, int pp, int global_batch) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  c.global_batch = global_batch;
  return c;
}

// ---------------------------------------------------------------------------------------------------------------
// Scenario keys and their defaults.

TEST(TrainingStackKeys, DefaultsAreTodaysStacksAndEveryKeyIsRead) {
  const auto d = scenario::load_default_scenario();
  EXPECT_TRUE(d.memory.fused_attention);
  EXPECT_EQ(d.memory.attention_dropout, 0.0);
  EXPECT_EQ(d.memory.hidden_dropout, 0.0);
  EXPECT_TRUE(d.memory.fp32_main_grads);
  EXPECT_FALSE(d.memory.fp8_weight_copies) << "bf16 training keeps no FP8 copies";
  EXPECT_EQ(d.memory.runtime_reserve, kDefaultRuntimeReserve);
  EXPECT_EQ(d.parallel.recompute_modules, kRecomputeCoreAttn);

  const auto s = scenario::load_default_scenario({{"training.fused_attention", "false"},
                                                  {"training.attention_dropout", "0.1"},
                                                  {"training.hidden_dropout", "0.05"},
                                                  {"training.main_grads", "bf16"},
                                                  {"training.dtype", "fp8"},
                                                  {"training.fp8_weight_copies", "true"},
                                                  {"memory.reserve", "\"3 GiB\""},
                                                  {"parallel.zero_stage", "3"},
                                                  {"memory.zero3_units", "3"},
                                                  {"parallel.recompute", "selective"},
                                                  {"parallel.recompute_modules", "[\"layernorm\", \"mlp\"]"}});
  EXPECT_FALSE(s.memory.fused_attention);
  EXPECT_EQ(s.memory.attention_dropout, 0.1);
  EXPECT_EQ(s.memory.hidden_dropout, 0.05);
  EXPECT_FALSE(s.memory.fp32_main_grads);
  EXPECT_TRUE(s.memory.fp8_weight_copies);
  EXPECT_EQ(s.memory.runtime_reserve, base::Bytes{3LL << 30});
  EXPECT_EQ(s.memory.zero3_units, 3);
  EXPECT_EQ(s.parallel.recompute_modules, kRecomputeLayernorm | kRecomputeMlp);

  const auto fp8 = scenario::load_default_scenario({{"hardware", "h100-sxm5-80gb"}, {"training.dtype", "fp8"}});
  EXPECT_FALSE(fp8.memory.fp8_weight_copies) << "NVIDIA's published FP8 runs fit only without persistent copies";
  EXPECT_TRUE(fp8.memory.fp8_activations) << "FP8 training saves linear-layer inputs in FP8";
  EXPECT_FALSE(d.memory.fp8_activations);

  const auto full = scenario::load_default_scenario(
      {{"parallel.recompute", "full"}, {"parallel.recompute_method", "block"}, {"parallel.recompute_num_layers", "3"}});
  EXPECT_EQ(full.parallel.recompute_method, RecomputeMethod::Block);
  EXPECT_EQ(full.parallel.recompute_num_layers, 3);
}

TEST(TrainingStackKeys, BadValuesAreOneClearMessage) {
  const std::string saved = load_error({{"training.sp_saved_inputs", "whole"}});
  EXPECT_NE(saved.find("/training/sp_saved_inputs"), std::string::npos) << saved;
  EXPECT_NE(saved.find("gathered"), std::string::npos) << "names what is accepted: " << saved;
  EXPECT_TRUE(scenario::load_default_scenario({{"training.sp_saved_inputs", "gathered"}}).memory.sp_gathered_inputs);
  EXPECT_FALSE(scenario::load_default_scenario().memory.sp_gathered_inputs) << "Megatron-Core's default: sharded";
  EXPECT_NE(load_error({{"parallel.recompute", "selective"}, {"parallel.recompute_modules", "[\"activation\"]"}})
                .find("\"activation\" is not a Megatron-Core recompute module; accepted: core_attn"),
            std::string::npos);
  EXPECT_NE(load_error({{"parallel.recompute", "selective"}, {"parallel.recompute_method", "block"}})
                .find("applies to \"recompute\": \"full\" only"),
            std::string::npos);
  EXPECT_NE(load_error({{"parallel.recompute", "none"}, {"parallel.recompute_modules", "[\"mlp\"]"}})
                .find("applies to \"recompute\": \"selective\""),
            std::string::npos);
  EXPECT_NE(load_error({{"training.main_grads", "fp16"}}).find("main_grads"), std::string::npos);
  EXPECT_NE(load_error({{"training.attention_dropout", "1.5"}}).find("attention_dropout"), std::string::npos);
  EXPECT_NE(load_error({{"memory.spare", "1"}}).find("spare"), std::string::npos) << "unknown keys stay errors";
  EXPECT_NE(load_error({{"parallel.layers_per_stage", "[16, 16]"},
                        {"parallel.account_for_embedding_in_pipeline_split", "true"}})
                .find("cannot be combined"),
            std::string::npos);
  // This session's keys: each value outside its set or range is one message naming the key.
  EXPECT_NE(load_error({{"training.kernels", "\"compiled\""}}).find("/training/kernels"), std::string::npos);
  const std::string loss = load_error({{"training.cross_entropy", "\"fp32\""}});
  EXPECT_NE(loss.find("/training/cross_entropy"), std::string::npos) << loss;
  EXPECT_NE(loss.find("upcast"), std::string::npos) << "names what is accepted: " << loss;
  EXPECT_NE(load_error({{"cluster.network.nvls", "\"off\""}}).find("/cluster/network/nvls"), std::string::npos);
  EXPECT_NE(load_error({{"parallel.recompute", "\"ops\""}}).find("/parallel/recompute"), std::string::npos);
  EXPECT_NE(load_error({{"parallel.moe_dispatcher", "\"nvshmem\""}}).find("/parallel/moe_dispatcher"),
            std::string::npos);
  EXPECT_NE(load_error({{"reliability.detection.crsh", "\"1 min\""}}).find("did you mean \"crash\""),
            std::string::npos);
  EXPECT_NE(load_error({{"reliability.detection.crash", "\"-1 s\""}}).find("/reliability/detection/crash"),
            std::string::npos);
  EXPECT_NE(load_error({{"reliability.straggler_slowdown", "0.5"}}).find("/reliability/straggler_slowdown"),
            std::string::npos);
  const std::string kv = load_error({{"training.attention_kv", "\"expanded\""}});
  EXPECT_NE(kv.find("/training/attention_kv"), std::string::npos) << kv;
  EXPECT_NE(kv.find("repeated"), std::string::npos) << "names what is accepted: " << kv;
  EXPECT_EQ(load_error({{"training.attention_kv", "\"repeated\""}}), "");
  EXPECT_EQ(load_error({{"training.kernels", "\"eager\""},
                        {"reliability.detection.crash", "\"1 min\""},
                        {"reliability.straggler_slowdown", "1.3"}}),
            "");
}

// ---------------------------------------------------------------------------------------------------------------
// Fused attention and dropout are independent of the position embedding.

TEST(TrainingStackKeys, FusedAttentionAndDropoutDecideTheGpt3LayerTensors) {
  // GPT-3 175B (learned positions), t = 8 with SP: unfused with dropout is Korthikanti's sbh(34 + 5as/h)/t; fused
  // attention without dropout stores 32sbh/t (no 1-byte hidden-dropout masks) plus the fp32 statistics 4asb/t.
  const auto gpt3 = scenario::load_model("gpt3-175b");
  const double s = 2048, h = 12288, a = 96, t = 8;
  ActivationShape shape{.seq_len = 2048, .micro_batch = 1, .tp = 8, .cp = 1, .sequence_parallel = true};
  shape.flash_attention = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(gpt3, shape), s * h / t * (34 + 5 * a * s / h));
  shape.flash_attention = true;
  shape.dropout = false;
  shape.attention_dropout = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(gpt3, shape), s * h / t * 32 + 4 * a * s / t);
}

// ---------------------------------------------------------------------------------------------------------------
// Megatron-LM's recomputation.

ParallelConfig llama_tp8_pp4() {
  ParallelConfig c;
  c.tp = 8;
  c.pp = 4;
  c.sequence_parallel = true;
  c.distributed_optimizer = true;
  c.micro_batch = 1;
  c.global_batch = 64;
  return c;
}

TEST(Recompute, SelectiveModulesDropTheirOwnTensors) {
  const auto llama = scenario::load_model("llama3-70b");
  const double s = 8192, h = 8192, t = 8, f = 28672;
  ActivationShape shape = fused_tp8(8192);
  shape.recompute = Recompute::Selective;
  shape.recompute_modules = kRecomputeCoreAttn;
  const double core = layer_activation_bytes(llama, shape);
  shape.recompute_modules = kRecomputeCoreAttn | kRecomputeLayernorm;
  EXPECT_DOUBLE_EQ(core - layer_activation_bytes(llama, shape), 2 * 2 * s * h / t) << "two norm outputs";
  shape.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
  EXPECT_DOUBLE_EQ(core - layer_activation_bytes(llama, shape), 3 * 2 * s * f / t) << "SwiGLU gate, up, product";
  // DTensor tensor parallelism saves the two norm outputs whole, t times what Megatron-Core's sharded ones take.
  shape.recompute_modules = kRecomputeCoreAttn;
  shape.sp_gathered_inputs = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama, shape) - core, 2 * 2 * s * h * (1 - 1 / t))
      << "norm outputs saved gathered";
}

TEST(Recompute, FullUniformKeepsOneInputPerGroupAndBlockRecomputesTheFirstLayers) {
  const auto llama = scenario::load_model("llama3-70b");  // 80 layers: 20 per stage
  MemoryOptions o;
  o.runtime_reserve = base::Bytes{0};
  auto c = llama_tp8_pp4();
  ActivationShape shape = fused_tp8(8192);
  shape.attention_dropout = false;
  const double full = layer_activation_bytes(llama, shape);
  shape.recompute = Recompute::Full;
  const double input = layer_activation_bytes(llama, shape);
  const ClusterShape cluster{256, 8, 8};
  // The activation gradients of one MLP backward (memory.hpp), by hand: SwiGLU f/t = 28672/8 = 3584, gate and up
  // 7168; the first projection's input gradient h = 8192 whole: max(3584 + 7168, 7168 + 8192) x 2 B x 8192 tokens.
  const double grads = 2.0 * 8192 * (7168 + 8192);
  // Rank 3 (the last) holds one micro-batch: its 20 layers.
  c.recompute = Recompute::Full;
  c.recompute_num_layers = 1;
  const Layout l = resolve(llama, cluster, c, 8192);
  const auto one = memory_per_gpu(llama, l, c, 8192, 3, o);
  EXPECT_DOUBLE_EQ(static_cast<double>(one.activations.n), std::ceil(20 * input + full - input + grads));
  c.recompute_num_layers = 4;
  const auto four = memory_per_gpu(llama, l, c, 8192, 3, o);
  EXPECT_DOUBLE_EQ(static_cast<double>(four.activations.n), std::ceil(5 * input + 4 * full - input + grads))
      << "groups of 4 layers: 5 inputs, one group recomputed at a time";
  c.recompute_method = RecomputeMethod::Block;
  c.recompute_num_layers = 5;
  const auto block = memory_per_gpu(llama, l, c, 8192, 3, o);
  EXPECT_DOUBLE_EQ(static_cast<double>(block.activations.n), std::ceil(5 * input + 15 * full + full - input + grads))
      << "5 layers recomputed, 15 store everything";
}

TEST(Memory, MainGradsAndFp8CopiesChangeTheWeightBytes) {
  const auto llama = scenario::load_model("llama3-70b");
  const auto c = llama_tp8_pp4();
  const Layout l = resolve(llama, {256, 8, 8}, c, 8192);
  MemoryOptions o;
  const auto base = memory_per_gpu(llama, l, c, 8192, 1, o);
  o.fp32_main_grads = false;
  const auto bf16 = memory_per_gpu(llama, l, c, 8192, 1, o);
  EXPECT_EQ(bf16.grads.n * 2, base.grads.n);
  o.fp8_weight_copies = true;
  const auto fp8 = memory_per_gpu(llama, l, c, 8192, 1, o);
  EXPECT_EQ(fp8.params.n, base.params.n * 2) << "rank 1 holds only layers: FP8 weight + transpose = 2 bytes each";
}

TEST(Memory, DeepSpeedZero3HoldsAtMostItsLiveParametersGathered) {
  // GPT-3 175B under ZeRO-3 on 384 GPUs (SC21 Table 2): a layer has 1.81e9 parameters, so FSDP-style units (two whole
  // layers, 3.62e9 parameters, 7.25 GB in bf16) hold 3.62x DeepSpeed's default stage3_max_live_parameters (1e9).
  const auto gpt = scenario::load_model("gpt3-175b");
  ParallelConfig c;
  c.zero_stage = 3;
  c.global_batch = 1536;
  const Layout l = resolve(gpt, {384, 8, 8}, c, 2048);
  MemoryOptions o;
  const auto units = memory_per_gpu(gpt, l, c, 2048, 0, o);
  o.zero3_live_params = 1e9;
  const auto live = memory_per_gpu(gpt, l, c, 2048, 0, o);
  const double layer = 12.0 * 12288.0 * 12288.0;  // about 12 h^2 per layer (plus biases and norms)
  EXPECT_NEAR(static_cast<double>(units.buffers.n - live.buffers.n), 2.0 * (2.0 * layer - 1e9), 2.0 * 2e6)
      << "2 bytes per gathered parameter: 2 layers against 1e9";
  o.zero3_live_params = 1e12;
  EXPECT_EQ(memory_per_gpu(gpt, l, c, 2048, 0, o).buffers, units.buffers) << "a limit above two layers changes nothing";
  EXPECT_NE(load_error({{"memory.zero3_live_params", "10"}}).find("/memory/zero3_live_params"), std::string::npos);
}

TEST(Memory, TorchPipeliningHoldsAReceiveBufferPerMicroBatch) {
  // Llama 3 70B, TP 8 with SP, PP 4, 1F1B, 16 micro-batches of one 8k sequence: a stage boundary tensor is
  // 2sbh/t = 16 MiB. PyTorch's pipelining runtime (memory.pipeline_buffers "per_micro_batch") holds, on the first
  // stage, a gradient buffer per micro-batch (16) and the outputs of its 4 in-flight micro-batches; on a middle stage
  // (rank 1, 3 in flight) also forward buffers for the 13 micro-batches its layers do not hold; on the last, forward
  // buffers beyond its 1 in flight (15). Megatron-LM's (the default) holds 2 on every stage.
  const auto llama = scenario::load_model("llama3-70b");
  auto c = llama_tp8_pp4();
  c.global_batch = 16;
  const Layout l = resolve(llama, {32, 8, 4}, c, 8192);
  ASSERT_EQ(l.micro_batches, 16);
  const double tensor = 2.0 * 8192 * 8192 / 8;
  MemoryOptions torch;
  torch.pipeline_buffers_per_micro_batch = true;
  const double expected[] = {16 + 4, 13 + 16 + 3, 14 + 16 + 2, 15};
  for (int rank = 0; rank < 4; ++rank) {
    const auto megatron = memory_per_gpu(llama, l, c, 8192, rank, {});
    const auto pipelining = memory_per_gpu(llama, l, c, 8192, rank, torch);
    EXPECT_NEAR(static_cast<double>(pipelining.buffers.n - megatron.buffers.n), (expected[rank] - 2) * tensor, 1)
        << "rank " << rank;
    EXPECT_EQ(pipelining.activations, megatron.activations);
  }
  const std::string bad = load_error({{"memory.pipeline_buffers", "\"per_stage\""}});
  EXPECT_NE(bad.find("/memory/pipeline_buffers"), std::string::npos) << bad;
  EXPECT_NE(bad.find("per_micro_batch"), std::string::npos) << "names what is accepted: " << bad;
  EXPECT_EQ(load_error({{"memory.pipeline_buffers", "\"per_micro_batch\""}}), "");
}

TEST(Memory, Fp8ActivationsHalveTheSavedGemmInputs) {
  // Llama 3 70B, t = 8 with SP: the two norm outputs (2 x sbh/t), the attention output (sbh/t) and the SwiGLU
  // product (sbf/t) drop from 2 bytes to 1.
  const auto llama = scenario::load_model("llama3-70b");
  const double s = 8192, h = 8192, t = 8, f = 28672;
  ActivationShape shape = fused_tp8(8192);
  const double bf16 = layer_activation_bytes(llama, shape);
  shape.fp8_activations = true;
  EXPECT_DOUBLE_EQ(bf16 - layer_activation_bytes(llama, shape), 3 * s * h / t + s * f / t);
}

TEST(Memory, OpRecomputeStoresTheBlockInputAndTheSavedOperatorOutputs) {
  // TorchTitan's per-operator checkpointing of a Llama 3 8B block, t = 1: the block input, wq's queries, wv's values,
  // the attention output (and its statistics), w1's and w2's outputs, in 16 bits: (h + h + kv + h + f + h) s b x 2.
  const auto llama = scenario::load_model("llama3-8b");
  ActivationShape a{.seq_len = 8192, .micro_batch = 1, .tp = 1, .cp = 1, .sequence_parallel = false};
  a.flash_attention = true;
  a.dropout = false;
  const double s = 8192, h = 4096, kv = 1024, f = 14336;
  a.recompute = Recompute::Op;
  const double op = layer_activation_bytes(llama, a);
  a.recompute = Recompute::Full;
  const double statistics = 4.0 * 32 * s;  // fp32 log-sum-exp per head and token (fused attention)
  EXPECT_NEAR(op, 2 * s * (4 * h + kv + f) + statistics, 0.01 * op);
  EXPECT_GT(op, layer_activation_bytes(llama, a)) << "more than full recomputation's layer input";
  a.recompute = Recompute::None;
  EXPECT_LT(op, 0.5 * layer_activation_bytes(llama, a)) << "well under no recomputation";
  // Not modelled for experts or MLA: refused by name.
  ModelSpec mixtral = scenario::load_model("mixtral-8x7b");
  ParallelConfig c = pipeline_config(1, 1, 64);
  c.recompute = Recompute::Op;
  EXPECT_EQ(broken_rules(mixtral, {8, 8, 8}, c, 4096), std::vector<std::string>{"recompute-op-dense"});
}

TEST(Memory, ExpertTensorParallelismFoldsExpertParallelismIntoTp) {
  // Qwen3-235B-A22B's Megatron-MoE-ModelZoo layout: TP2 PP8 DP16 EP32 (256 H100s): ep = 32 does not divide
  // dp*cp = 16, but with expert_tp = 1 (MoE parallel folding) ep * expert_tp = 32 divides tp*dp*cp = 32.
  ModelSpec m = scenario::load_model("mixtral-8x7b");
  m.moe->experts = 128;
  m.moe->ffn_hidden = 1536;
  ParallelConfig c = pipeline_config(2, 8, 2048);
  c.ep = 32;
  c.sequence_parallel = true;
  EXPECT_EQ(broken_rules(m, {256, 8, 8}, c, 4096), std::vector<std::string>{"ep-dp-cp"});
  c.expert_tp = 1;
  // Placement builds EP groups across TP ranks (Placement's expert mesh): accepted.
  EXPECT_EQ(broken_rules(m, {256, 8, 8}, c, 4096), std::vector<std::string>{});
  // The memory model divides the experts over ep * expert_tp.
  const Layout l = resolve(m, {256, 8, 8}, c, 4096);
  const auto folded = params_per_gpu(m, l, 1);
  // Each rank holds 128 / 32 = 4 whole experts (no TP split): 4 x 3 x h x f per layer, 4 layers on rank 1.
  EXPECT_DOUBLE_EQ(folded.expert, 4 * 4 * 3.0 * 4096 * 1536);
  c.expert_tp = 3;
  EXPECT_EQ(broken_rules(m, {256, 8, 8}, c, 4096), (std::vector<std::string>{"expert-tp", "ep-dp-cp"}));
}

// ---------------------------------------------------------------------------------------------------------------
// Pipeline layouts Megatron-LM runs.

TEST(PipelineSplit, Llama31_405bWithEmbeddingAndLossCountedAsLayers) {
  // 126 layers + embedding + loss = 128 = 64 virtual stages of 2: PP8 VPP8 and PP16 VPP4 (Megatron-LM
  // --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split).
  const auto llama = scenario::load_model("llama3-405b");
  for (auto [pp, vpp] : {std::pair{8, 8}, std::pair{16, 4}}) {
    ParallelConfig c;
    c.tp = 8;
    c.pp = pp;
    c.vpp = vpp;
    c.schedule = Schedule::Interleaved;
    c.sequence_parallel = true;
    c.distributed_optimizer = true;
    c.account_for_embedding = true;
    c.account_for_loss = true;
    c.global_batch = 2048;
    const Layout l = resolve(llama, {16384, 8, 8}, c, 8192);
    ASSERT_EQ(static_cast<int>(l.layers_per_stage.size()), pp * vpp);
    EXPECT_EQ(l.layers_per_stage.front(), 1) << "the embedding is the first virtual stage's other layer";
    EXPECT_EQ(l.layers_per_stage.back(), 1) << "the loss is the last virtual stage's other layer";
    for (std::size_t i = 1; i + 1 < l.layers_per_stage.size(); ++i)
      EXPECT_EQ(l.layers_per_stage[i], 2);
    EXPECT_EQ(l.first_layer(pp * vpp - 1), 125);
  }
  ParallelConfig bad = pipeline_config(1, 8, 2048);
  bad.vpp = 3;
  bad.schedule = Schedule::Interleaved;
  bad.account_for_embedding = true;
  EXPECT_EQ(broken_rules(llama, {64, 8, 8}, bad, 8192), std::vector<std::string>{"pipeline-split-accounting"});
}

TEST(PipelineSplit, AccountedLayersWriteNoFirstOrLastStageFlags) {
  // Llama 3 405B over PP 8 without interleaving, embedding and loss counted: 15 layers on the first and last stages,
  // 16 on the others. The accounting flags write that split; Megatron-Core refuses --decoder-first/last-pipeline-
  // num-layers beside them (TransformerConfig), which the flags printed too (a user trial, on a plan's candidate).
  const auto llama = scenario::load_model("llama3-405b");
  ParallelConfig c = pipeline_config(8, 8, 1152);
  c.sequence_parallel = true;
  c.distributed_optimizer = true;
  c.account_for_embedding = true;
  c.account_for_loss = true;
  const Layout l = resolve(llama, {576, 4, 72}, c, 8192);
  ASSERT_EQ(l.layers_per_stage.front(), 15);
  const std::string flags = megatron_flags(c, l, llama, 8192, hardware::Dtype::Bf16);
  EXPECT_NE(flags.find("--account-for-embedding-in-pipeline-split"), std::string::npos) << flags;
  EXPECT_EQ(flags.find("--decoder-first-pipeline-num-layers"), std::string::npos) << flags;
  EXPECT_EQ(flags.find("--decoder-last-pipeline-num-layers"), std::string::npos) << flags;
}

TEST(PipelineSplit, AStageMayHoldTheEmbeddingOrTheLossAlone) {
  // NVIDIA's DGX Cloud Llama 3.1 405B proxy (30 layers) at TP8 PP4 VPP8 CP2 on 64 H100s: 30 + 2 = 32 virtual stages
  // of one, so the first holds only the embedding and the last only the output layer and loss.
  auto proxy = scenario::load_model("llama3-405b");
  proxy.layers = 30;
  ParallelConfig c = pipeline_config(8, 4, 64);
  c.vpp = 8;
  c.cp = 2;
  c.schedule = Schedule::Interleaved;
  c.sequence_parallel = true;
  c.account_for_embedding = true;
  c.account_for_loss = true;
  const Layout l = resolve(proxy, {64, 8, 8}, c, 8192);
  ASSERT_EQ(l.layers_per_stage.size(), 32u);
  EXPECT_EQ(l.layers_per_stage.front(), 0);
  EXPECT_EQ(l.layers_per_stage.back(), 0);
  EXPECT_EQ(l.layers_per_stage[1], 1);
  EXPECT_GT(peak_memory(proxy, l, c, 8192).total.n, 0);
}

TEST(PipelineSplit, FirstAndLastStageLayers) {
  // Llama 3 405B's published split (Llama Team 2024, Sec. 3.3.2): one layer fewer on the first and last of 16
  // stages: first_stage_layers 7, last_stage_layers 7, 8 on the 14 others.
  const auto llama = scenario::load_model("llama3-405b");
  ParallelConfig c = pipeline_config(8, 16, 2048);
  c.first_stage_layers = 7;
  c.last_stage_layers = 7;
  const Layout l = resolve(llama, {16384, 8, 8}, c, 8192);
  std::vector<int> expected(16, 8);
  expected.front() = expected.back() = 7;
  EXPECT_EQ(l.layers_per_stage, expected);
  c.first_stage_layers = 8;
  EXPECT_EQ(broken_rules(llama, {16384, 8, 8}, c, 8192), std::vector<std::string>{"first-last-stage-layers"})
      << "111 layers do not divide over 14 stages";
}

TEST(PipelineSplit, MixedLayersFollowTheirStage) {
  // DeepSeek-V3's 61 layers on PP4: first_stage_layers 16 and last_stage_layers 15 leave 30 = 2 x 15 for the middle.
  const auto ds = scenario::load_model("deepseek-v3");
  ParallelConfig c = pipeline_config(1, 4, 64);
  c.ep = 8;
  c.first_stage_layers = 16;
  c.last_stage_layers = 15;
  const Layout l = resolve(ds, {32, 8, 8}, c, 4096);
  EXPECT_EQ(l.layers_per_stage, (std::vector<int>{16, 15, 15, 15}));
  // The first stage holds the three dense layers: fewer expert weights than the second stage's 15 MoE layers.
  EXPECT_LT(params_per_gpu(ds, l, 0).expert, params_per_gpu(ds, l, 1).expert);
  EXPECT_DOUBLE_EQ(params_per_gpu(ds, l, 0).expert * 15, params_per_gpu(ds, l, 1).expert * 13);
}

// ---------------------------------------------------------------------------------------------------------------
// Model features: head_dim, MLA, mixed dense/MoE layers, shared experts, MTP.

TEST(ModelFeatures, PublishedParameterCountsWithinHalfAPercent) {
  struct Case {
    const char* model;
    double published;
  };
  for (const auto& c : {Case{"qwen3-32b", 32.8e9}, Case{"deepseek-v3", 671e9}}) {
    const auto m = scenario::load_model(c.model);
    const double counted = workload::count_params(m).total(m.layers);
    EXPECT_NEAR(counted / c.published, 1.0, 0.005) << c.model << ": counted " << counted;
  }
  // DeepSeek-V3's MTP module: the Hugging Face card's 14B (685B - 671B), whose checkpoint stores its own copies of
  // the embedding and the output head (2 x 129280 x 7168) that training shares: 14B - 1.85B within 5%.
  const auto ds = scenario::load_model("deepseek-v3");
  EXPECT_NEAR(workload::count_params(ds).mtp / (14e9 - 2 * 129280.0 * 7168), 1.0, 0.05);
}

TEST(ModelFeatures, HeadDimDecidesTheAttentionWidth) {
  // Qwen3-32B: Q and O are 5120 x (64 x 128 = 8192), K and V 5120 x 1024, plus two 128-wide QK norms.
  const auto q = scenario::load_model("qwen3-32b");
  EXPECT_EQ(q.head_dim(), 128);
  EXPECT_DOUBLE_EQ(workload::attention_params(q), 2.0 * 5120 * 8192 + 2.0 * 5120 * 1024 + 2 * 128);
  ActivationShape shape = fused_tp8(4096);
  auto wide = q;
  wide.kv_channels = 256;  // doubles Q, K, V and the attention output
  const double s = 4096, t = 8;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(wide, shape) - layer_activation_bytes(q, shape),
                   2 * 2 * s * 8192 / t + 2 * 2 * s * 128);
}

TEST(ModelFeatures, MixedDenseAndMoeLayers) {
  const auto ds = scenario::load_model("deepseek-v3");
  EXPECT_EQ(ds.moe_layers(), 58);
  EXPECT_FALSE(ds.is_moe_layer(2));
  EXPECT_TRUE(ds.is_moe_layer(3));
  auto every_other = ds;
  every_other.moe->first_k_dense = 0;
  every_other.moe->layer_freq = 2;  // Megatron-LM --moe-layer-freq 2: layers 0, 2, 4, ...
  EXPECT_EQ(every_other.moe_layers(), 31);
  const auto p = workload::count_params(ds);
  EXPECT_EQ(p.dense_layers, 3);
  EXPECT_DOUBLE_EQ(p.dense_mlp_per_layer, 3.0 * 7168 * 18432);
  EXPECT_DOUBLE_EQ(p.shared_mlp_per_layer, 3.0 * 7168 * 2048) << "one shared expert of 2048";
}

TEST(ModelFeatures, RefusalsAreClear) {
  auto bad = [](const std::string& model) {
    try {
      scenario::load_default_scenario({{"model", model}});
    } catch (const base::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string base =
      R"({"name":"x","layers":4,"hidden":1000,"ffn_hidden":4000,"heads":16,"vocab":1000,"activation":"geglu")";
  EXPECT_NE(bad(base + "}").find("does not divide hidden"), std::string::npos);
  EXPECT_EQ(bad(base + R"(,"head_dim":64})"), "") << "head_dim lifts the divisibility rule";
  EXPECT_NE(bad(base + R"(,"head_dim":64,"mla":{"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,)"
                       R"("v_head_dim":128}})")
                .find("omit head_dim"),
            std::string::npos);
  EXPECT_NE(bad(base + R"(,"head_dim":64,"moe":{"experts":8,"top_k":2,"ffn_hidden":100,"layer_pattern":[0,1]}})")
                .find("layer_pattern has 2 entries"),
            std::string::npos);
  EXPECT_NE(bad(base + R"(,"head_dim":64,"global_every":6})").find("needs sliding_window"), std::string::npos);
  // Group-limited routing: both keys, groups dividing the experts, enough experts in the chosen groups.
  const std::string moe = base + R"(,"head_dim":64,"moe":{"experts":8,"top_k":2,"ffn_hidden":100,)";
  EXPECT_EQ(bad(moe + R"("router_groups":4,"router_group_topk":2}})"), "");
  EXPECT_NE(bad(moe + R"("router_groups":4}})").find("needs both router_groups and router_group_topk"),
            std::string::npos);
  EXPECT_NE(bad(moe + R"("router_groups":3,"router_group_topk":2}})").find("3 groups do not divide 8 experts"),
            std::string::npos);
  EXPECT_NE(bad(moe + R"("router_groups":4,"router_group_topk":5}})").find("exceeds router_groups (4)"),
            std::string::npos);
  EXPECT_NE(bad(base + R"(,"head_dim":64,"moe":{"experts":8,"top_k":4,"ffn_hidden":100,"router_groups":8,)"
                       R"("router_group_topk":2}})")
                .find("hold fewer than top_k = 4 experts"),
            std::string::npos);
}

TEST(PaddedVocab, RoundsUpToA128TimesTpMultipleAsMegatronDoes) {
  EXPECT_EQ(padded_vocab(50257, 1), 50304);    // GPT-2/3 vocabulary, the well-known 50304
  EXPECT_EQ(padded_vocab(50257, 8), 51200);    // 1024 * 50
  EXPECT_EQ(padded_vocab(128256, 8), 129024);  // Llama 3: 1024 * 126
  EXPECT_EQ(padded_vocab(32000, 8), 32768);
  EXPECT_EQ(padded_vocab(32000, 1), 32000);
}

}  // namespace
}  // namespace sim::parallel
