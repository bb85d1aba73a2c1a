// tests/unit/parallel_memory_test.cpp: memory per GPU against Korthikanti's activation formulas, ZeRO's byte counts,
// the pipeline schedules' in-flight micro-batches, and published configurations that do or do not fit.
#include "sim/parallel/memory.hpp"
#include "sim/parallel/schedule.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/layout.hpp"
#include "sim/workload/params.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <variant>
#include <vector>

namespace sim::parallel {
namespace {

using workload::ModelSpec;

ModelSpec model(const std::string& name) {
  return scenario::load_model(name);
}
base::Bytes hbm(const std::string& profile) {
  return scenario::load_hardware(profile).gpu.hbm;
}

std::string gib(base::Bytes b) {
  return std::to_string(b.gib()) + " GiB";
}
std::string describe(const MemoryBreakdown& m) {
  return "rank " + std::to_string(m.pipeline_rank) + ": params " + gib(m.params) + ", grads " + gib(m.grads) +
         ", optimizer " + gib(m.optimizer) + ", activations " + gib(m.activations) + ", buffers " + gib(m.buffers) +
         ", total " + gib(m.total);
}

using support::resolve;

// ---------------------------------------------------------------------------------------------------------------
// Activations per layer: Korthikanti et al. 2022, Table 2, on GPT-3 175B (s = 2048, b = 1, h = 12288, a = 96, t = 8).

struct Table2Case {
  const char* configuration;
  int tp;
  bool sequence_parallel;
  Recompute recompute;
  double expected;  // bytes
};

TEST(LayerActivations, ReduceExactlyToKorthikantiTable2ForAGptLayer) {
  const auto gpt3 = model("gpt3-175b");
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;
  const Table2Case cases[] = {
      {"no parallelism: sbh(34 + 5as/h)", 1, false, Recompute::None, sbh * (34 + 5 * a * s / h)},
      {"tensor parallel: sbh(10 + 24/t + 5as/(ht))", 8, false, Recompute::None,
       sbh * (10 + 24 / t + 5 * a * s / (h * t))},
      {"tensor + sequence parallel: sbh(34/t + 5as/(ht))", 8, true, Recompute::None,
       sbh * (34 / t + 5 * a * s / (h * t))},
      {"tensor parallel + selective recompute: sbh(10 + 24/t)", 8, false, Recompute::Selective, sbh * (10 + 24 / t)},
      {"tensor + sequence parallel + selective recompute: sbh(34/t)", 8, true, Recompute::Selective, sbh * 34 / t},
      {"full recompute: 2sbh", 8, false, Recompute::Full, 2 * sbh},
      {"full recompute with sequence parallelism: 2sbh/t", 8, true, Recompute::Full, 2 * sbh / t},
  };
  for (const auto& c : cases) {
    const ActivationShape shape{.seq_len = 2048,
                                .micro_batch = 1,
                                .tp = c.tp,
                                .cp = 1,
                                .sequence_parallel = c.sequence_parallel,
                                .recompute = c.recompute,
                                .flash_attention = false,
                                .dropout = true};
    const double computed = layer_activation_bytes(gpt3, shape);
    EXPECT_DOUBLE_EQ(computed, c.expected)
        << c.configuration << ": expected " << c.expected << " bytes, computed " << computed;
  }
}

TEST(LayerActivations, GqaSwiGluAndFlashAttentionChangeOnlyTheirOwnTensors) {
  // Llama 3 70B, t = 8 with SP, fused attention, no dropout. By tensor (memory.hpp): six h-wide tensors (two norm
  // inputs, two block inputs, Q, attention output) 6 x 2sbh/t; K and V: 8 KV heads over t = 8 is one 128-wide head
  // each, 2 x 2sb*128; log-sum-exp 4(a/t)sb in fp32; SwiGLU gate, up and product 3 x 2sbf/t.
  const auto llama = model("llama3-70b");
  const double s = 8192, b = 1, h = 8192, a = 64, t = 8, f = 28672, head_dim = 128;
  const double expected = 12 * s * b * h / t + 2 * 2 * s * b * head_dim + 4 * (a / t) * s * b + 3 * 2 * s * b * f / t;
  ActivationShape shape{.seq_len = 8192,
                        .micro_batch = 1,
                        .tp = 8,
                        .cp = 1,
                        .sequence_parallel = true,
                        .recompute = Recompute::None,
                        .flash_attention = true,
                        .dropout = false};
  const double computed = layer_activation_bytes(llama, shape);
  EXPECT_DOUBLE_EQ(computed, expected) << "expected " << expected << ", computed " << computed;

  shape.recompute = Recompute::Selective;  // the checkpointed core attention keeps no statistics
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama, shape), expected - 4 * (a / t) * s * b);
}

TEST(LayerActivations, MoeLayersStoreTheTopKDispatchedTokens) {
  // Mixtral 8x7B, t = 2 with SP, fused attention, no dropout, s = 4096: attention as a dense layer (8 KV heads over
  // t = 2: 4 heads of 128), then router input 2sbh/t, fp32 router probabilities 4sbE/t, the k = 2 dispatched copies
  // in 2sbkh (Megatron-Core 0.13 keeps no expert outputs), and the experts' SwiGLU activations for s*b*k tokens
  // 3 x 2sbkf/t.
  const auto mixtral = model("mixtral-8x7b");
  const double s = 4096, b = 1, h = 4096, a = 32, t = 2, f = 14336, k = 2, experts = 8;
  const double attention = 2 * s * b * h / t * 4 + 2 * 2 * s * b * 4 * 128 + 4 * (a / t) * s * b;  // + LN2 input
  const double moe = 2 * s * b * h / t + 4 * s * b * experts / t + 2 * s * b * k * h + 3 * 2 * s * b * k * f / t;
  const ActivationShape shape{.seq_len = 4096,
                              .micro_batch = 1,
                              .tp = 2,
                              .cp = 1,
                              .sequence_parallel = true,
                              .recompute = Recompute::None,
                              .flash_attention = true,
                              .dropout = false};
  const double computed = layer_activation_bytes(mixtral, shape);
  EXPECT_DOUBLE_EQ(computed, attention + 2 * s * b * h / t + moe)
      << "expected " << attention + 2 * s * b * h / t + moe << ", computed " << computed;
}

TEST(LayerActivations, ContextParallelismDividesTheSequence) {
  // With fused attention every stored tensor is linear in the local sequence s/cp.
  const auto llama = model("llama3-70b");
  ActivationShape shape{.seq_len = 32768, .micro_batch = 1, .tp = 8, .cp = 1, .sequence_parallel = true};
  shape.flash_attention = true;
  shape.dropout = false;
  const double whole = layer_activation_bytes(llama, shape);
  shape.cp = 4;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama, shape), whole / 4);
}

// ---------------------------------------------------------------------------------------------------------------
// In-flight micro-batches per pipeline schedule.

Layout pipeline(int pp, int vpp, int micro_batches, int layers_per_stage) {
  Layout l;
  l.pp = pp;
  l.vpp = vpp;
  l.micro_batches = micro_batches;
  l.layers_per_stage = std::vector<int>(static_cast<std::size_t>(pp * vpp), layers_per_stage);
  return l;
}

TEST(MicroBatchesHeld, OneFOneBHoldsPMinusRAndZbH1POnEveryRank) {
  for (int m : {2, 8}) {
    const Layout l = pipeline(4, 1, m, 1);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(micro_batches_held(l, Schedule::OneFOneB, r), std::vector<int>{std::min(4 - r, m)})
          << "1F1B min(p - r, m), r = " << r;
      // ZB-H1 (Qi et al. Sec. 2.1): every stage holds the first stage's count, a micro-batch being held from its
      // forward until its W pass (what W needs is most of its activations). The same count from the program itself:
      int held = 0, peak = 0;
      for (const PipeOp& op : pipeline_ops(Schedule::ZeroBubbleH1, 4, 1, m, r)) {
        held += op.kind == OpKind::Forward ? 1 : op.kind == OpKind::BackwardWeight ? -1 : 0;
        peak = std::max(peak, held);
      }
      EXPECT_EQ(peak, std::min(4, m)) << "r = " << r;
      EXPECT_EQ(micro_batches_held(l, Schedule::ZeroBubbleH1, r), std::vector<int>{peak}) << "ZB-H1, r = " << r;
    }
  }
}

TEST(MicroBatchesHeld, GPipeHoldsEveryMicroBatch) {
  const Layout l = pipeline(4, 1, 8, 1);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(micro_batches_held(l, Schedule::GPipe, r), std::vector<int>{8});
}

TEST(MicroBatchesHeld, InterleavedFirstStageMatchesKorthikantiInterleavingFactor) {
  // Korthikanti Sec. 4.2.3: the first stage of the interleaved schedule holds L(1 + (p - 1)/(pv)) layers' worth.
  const int p = 4, v = 2, per_chunk = 4, L = p * v * per_chunk;
  const Layout l = pipeline(p, v, 8, per_chunk);
  const auto held = micro_batches_held(l, Schedule::Interleaved, 0);
  EXPECT_EQ(held, (std::vector<int>{2 * p - 1, p})) << "warm-up (p-1)*2 + (v-1)*p forwards, plus one";
  const int layers = std::inner_product(held.begin(), held.end(), std::vector<int>(2, per_chunk).begin(), 0);
  const double expected = L * (1 + (p - 1.0) / (p * v));
  EXPECT_EQ(layers, expected) << "expected " << expected << " layer-micro-batches, computed " << layers;
  EXPECT_EQ(micro_batches_held(l, Schedule::Interleaved, 3), (std::vector<int>{4, 1})) << "last rank: (v-1)p + 1";
}

TEST(MicroBatchesHeld, InterleavedWithAsManyMicroBatchesAsStagesRunsAllForwardsFirst) {
  // Megatron-LM: "Run all forward passes and then all backward passes if number of microbatches is just the number
  // of pipeline stages."
  const Layout l = pipeline(4, 2, 4, 3);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(micro_batches_held(l, Schedule::Interleaved, r), (std::vector<int>{4, 4}));
}

/// The straightforward replay micro_batches_held used to be: every forward and backward of the rank in order, the
/// counts copied at each new peak of layer-weighted activations. The fast version must agree with it everywhere.
std::vector<int> reference_held(const Layout& l, int warmup, int r) {
  const int p = l.pp, v = l.vpp, total = l.micro_batches * v;
  std::vector<int> held(static_cast<std::size_t>(v), 0), peak = held;
  long long weight = 0, peak_weight = -1;
  auto layers = [&](int c) { return l.layers_per_stage[static_cast<std::size_t>(l.stage(c, r))]; };
  auto chunk_of = [&](int k) { return (k % (p * v)) / p; };
  auto forward = [&](int k) {
    ++held[static_cast<std::size_t>(chunk_of(k))];
    weight += layers(chunk_of(k));
    if (weight > peak_weight) {
      peak_weight = weight;
      peak = held;
    }
  };
  auto backward = [&](int k) {
    const int c = v - 1 - chunk_of(k);
    --held[static_cast<std::size_t>(c)];
    weight -= layers(c);
  };
  for (int k = 0; k < warmup; ++k)
    forward(k);
  for (int k = 0; k < total - warmup; ++k) {
    forward(k + warmup);
    backward(k);
  }
  return peak;
}

TEST(MicroBatchesHeld, InterleavedMatchesTheReferenceReplayForEvenAndUnevenChunks) {
  for (bool uneven : {false, true})
    for (int p : {2, 3, 4, 8})
      for (int v : {2, 3, 5})
        for (int m : {p, 2 * p, 3 * p + 1, 7 * p}) {
          Layout l = pipeline(p, v, m, 3);
          for (std::size_t s = 0; s < l.layers_per_stage.size() && uneven; ++s)
            l.layers_per_stage[s] = 1 + static_cast<int>((s * 7 + 3) % 5);  // uneven: 1..5 layers per chunk
          for (int r = 0; r < p; ++r) {
            const int warmup = m == p ? m * v : std::min((p - r - 1) * 2 + (v - 1) * p, m * v);
            EXPECT_EQ(micro_batches_held(l, Schedule::Interleaved, r), reference_held(l, warmup, r))
                << (uneven ? "uneven" : "even") << " p " << p << " v " << v << " m " << m << " r " << r;
          }
        }
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters per GPU and ZeRO.

/// A two-layer model small enough to count by hand: h = 1024, 8 heads (MHA), GELU f = 4096, LayerNorm, no biases,
/// RoPE (no position table), untied 2048-token vocabulary.
ModelSpec toy() {
  ModelSpec m;
  m.name = "toy";
  m.layers = 2;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4096;
  m.vocab = 2048;
  m.activation = workload::Activation::Gelu;
  m.norm = workload::Norm::LayerNorm;
  m.position_embedding = workload::PositionEmbedding::Rope;
  m.max_seq_len = 2048;
  return m;
}

TEST(ZeroStages, ShardTheOptimizerThenGradientsThenWeightsOverDpTimesCp) {
  // By hand: per layer 4h^2 (Q, K, V, O) + 2hf (MLP) + 2 x 2h (two LayerNorms) = 4,194,304 + 8,388,608 + 4,096
  // = 12,587,008; two layers 25,174,016; embedding and output 2 x 2048 x 1024 = 4,194,304; final norm 2,048.
  // P = 29,370,368 parameters; bf16 weights 2P = 58,740,736; fp32 grads 4P = 117,481,472; Adam 12P = 352,444,416.
  const auto m = toy();
  ASSERT_EQ(workload::count_params(m).total(m.layers), 29370368.0);
  struct Case {
    int zero_stage;
    bool distributed_optimizer;
    std::int64_t params, grads, optimizer;
  };
  const Case cases[] = {
      {0, false, 58740736, 117481472, 352444416},              // 18 bytes per parameter
      {1, false, 58740736, 117481472, 352444416 / 8},          // ZeRO-1: 2 + 4 + 12/d
      {0, true, 58740736, 117481472, 352444416 / 8},           // Megatron's distributed optimizer: 6 + 12/d
      {2, false, 58740736, 117481472 / 8, 352444416 / 8},      // ZeRO-2: 2 + (4 + 12)/d
      {3, false, 58740736 / 8, 117481472 / 8, 352444416 / 8},  // ZeRO-3: (2 + 4 + 12)/d
  };
  for (auto [dp, cp] : {std::pair{8, 1}, std::pair{4, 2}}) {  // Megatron shards over the dp x cp group
    for (const auto& c : cases) {
      ParallelConfig config;
      config.cp = cp;
      config.zero_stage = c.zero_stage;
      config.distributed_optimizer = c.distributed_optimizer;
      config.global_batch = 8;
      const Layout l = resolve(m, {8, 8, 8}, config, 2048);
      EXPECT_EQ(l.dp, dp);
      const auto mem = memory_per_gpu(m, l, config, 2048, 0);
      const std::string what = "zero_stage " + std::to_string(c.zero_stage) +
                               (c.distributed_optimizer ? " + distributed optimizer" : "") + ", dp " +
                               std::to_string(dp) + " cp " + std::to_string(cp);
      EXPECT_EQ(mem.params.n, c.params) << what;
      EXPECT_EQ(mem.grads.n, c.grads) << what;
      EXPECT_EQ(mem.optimizer.n, c.optimizer) << what;
    }
  }
}

TEST(ParamsPerGpu, PipelineStagesPartitionTheModel) {
  const auto llama = model("llama3-70b");  // 128256 = 1002 x 128: no padding at tp = 1
  const Layout l = pipeline(4, 1, 8, 20);
  double sum = 0;
  for (int r = 0; r < 4; ++r)
    sum += params_per_gpu(llama, l, r).total();
  EXPECT_DOUBLE_EQ(sum, workload::count_params(llama).total(llama.layers));
}

TEST(ParamsPerGpu, TiedEmbeddingsAreCopiedToTheLastStageAndPadded) {
  const auto gpt3 = model("gpt3-175b");
  const Layout l = pipeline(8, 1, 8, 12);
  double sum = 0;
  for (int r = 0; r < 8; ++r)
    sum += params_per_gpu(gpt3, l, r).total();
  const double padded = padded_vocab(gpt3.vocab, 1) * 12288.0;  // 50304 x h
  const double expected = workload::count_params(gpt3).total(gpt3.layers) - gpt3.vocab * 12288.0 + 2 * padded;
  EXPECT_DOUBLE_EQ(sum, expected) << "the first stage's padded embedding plus the last stage's copy";
}

TEST(ParamsPerGpu, ExpertsSplitOverEpAndTp) {
  const auto mixtral = model("mixtral-8x7b");
  const auto counts = workload::count_params(mixtral);
  Layout l = pipeline(1, 1, 1, 32);
  l.ep = 4;
  l.tp = 2;
  const auto p = params_per_gpu(mixtral, l, 0);
  EXPECT_DOUBLE_EQ(p.expert * l.ep * l.tp, counts.mlp_per_layer * mixtral.layers) << "8 experts / ep 4 / tp 2";
}

// ---------------------------------------------------------------------------------------------------------------
// Whole-GPU memory on published configurations.

/// The training stack of Korthikanti et al.'s runs (Megatron-LM 2022): unfused attention, dropout 0.1.
MemoryOptions megatron2022() {
  MemoryOptions o;
  o.fused_attention = false;
  o.attention_dropout = 0.1;
  o.hidden_dropout = 0.1;
  return o;
}

ParallelConfig gpt3_tp8_pp8() {
  // The 175B configuration of Korthikanti et al. 2022's evaluation (Sec. 6): 64 A100 80 GB GPUs, t = 8, p = 8,
  // micro-batch 1, s = 2048.
  ParallelConfig c;
  c.tp = 8;
  c.pp = 8;
  c.sequence_parallel = true;
  c.recompute = Recompute::Selective;
  c.micro_batch = 1;
  c.global_batch = 64;
  return c;
}

TEST(MemoryPerGpu, FirstOneFOneBStageHoldsLLayersWorthOfActivations) {
  // Korthikanti Sec. 4.2.3: the first stage keeps p micro-batches of L/p layers in flight, L layers' worth:
  // 96 x sbh(34/t) with SP + selective recompute, plus the one layer being recomputed (its 5as^2b/t scores), plus the
  // activation gradients of one MLP backward: GELU f/t = 4h/t in and out, then f/t and the whole h input gradient,
  // 2 B x s x max(2f/t, f/t + h).
  const auto gpt3 = model("gpt3-175b");
  const auto c = gpt3_tp8_pp8();
  const Layout l = resolve(gpt3, {64, 8, 8}, c, 2048);
  const double s = 2048, h = 12288, a = 96, t = 8;
  const double expected = 96 * s * h * 34 / t + 5 * a * s * s / t + 2 * s * std::max(8 * h / t, 4 * h / t + h);
  const auto mem = memory_per_gpu(gpt3, l, c, 2048, 0, megatron2022());
  EXPECT_EQ(static_cast<double>(mem.activations.n), expected)
      << "expected " << expected << " bytes, computed " << mem.activations.n;
}

TEST(MemoryPerGpu, UpcastCrossEntropyHoldsTwelveBytesPerLogitOnTheLastStageSixteenUnderTensorParallelism) {
  // training.cross_entropy "upcast" (TorchTitan's loss): against the fused loss's 4 B stored and 2 B transient at its
  // peak (the bf16 logits beside their fp32 copy), 12 B per logit of the last stage's micro-batch without tensor
  // parallelism, and 16 B with it, where PyTorch's loss_parallel backward holds the log-softmax, a zeroed gradient,
  // its exp and their sum at once; vocabulary-parallel over t, the padded vocabulary; other stages and categories
  // unchanged.
  const auto gpt3 = model("gpt3-175b");
  for (const int tp : {1, 8}) {
    auto c = gpt3_tp8_pp8();
    c.tp = tp;
    c.sequence_parallel = tp > 1;
    const Layout l = resolve(gpt3, {8 * tp, tp, 8}, c, 2048);
    MemoryOptions upcast = megatron2022();
    upcast.cross_entropy = workload::CrossEntropy::Upcast;
    const auto fused_last = memory_per_gpu(gpt3, l, c, 2048, 7, megatron2022());
    const auto upcast_last = memory_per_gpu(gpt3, l, c, 2048, 7, upcast);
    const double logits = 2048.0 * l.micro_batch * padded_vocab(gpt3.vocab, tp) / tp;
    EXPECT_EQ(static_cast<double>(upcast_last.buffers.n - fused_last.buffers.n), (tp > 1 ? 10 : 6) * logits)
        << "tp " << tp;
    EXPECT_EQ(upcast_last.activations, fused_last.activations);
    EXPECT_EQ(memory_per_gpu(gpt3, l, c, 2048, 0, upcast).total,
              memory_per_gpu(gpt3, l, c, 2048, 0, megatron2022()).total)
        << "the first stage has no loss";
  }
}

TEST(MemoryPerGpu, ZbH1LastStageHoldsOneLossAndTheLogitGradientsOfItsDeferredWeightPasses) {
  // ZB-H1 (Qi et al. 2023) holds p micro-batches on the last rank too, all but one only waiting for their deferred W
  // pass: each keeps the output projection's input and the logits' gradient (2sbh + 2sbV/t, in bf16), not the loss's
  // fp32 softmax, which its B pass freed. 1F1B's last rank holds one micro-batch: the same loss, nothing waiting.
  const auto gpt3 = model("gpt3-175b");
  auto c = gpt3_tp8_pp8();
  const Layout l = resolve(gpt3, {64, 8, 8}, c, 2048);
  const auto one_f_one_b = memory_per_gpu(gpt3, l, c, 2048, 7, megatron2022());
  c.schedule = Schedule::ZeroBubbleH1;
  const auto zb = memory_per_gpu(gpt3, l, c, 2048, 7, megatron2022());
  const double s = 2048, h = 12288, t = 8;
  const double waiting = 2 * s * h / t + 2 * s * padded_vocab(gpt3.vocab, 8) / t;
  EXPECT_EQ(static_cast<double>(zb.buffers.n - one_f_one_b.buffers.n), 7 * waiting)
      << "p - 1 = 7 deferred W passes; the fp32 softmax of 4 B per logit is not among them";
}

TEST(MemoryPerGpu, ContextParallelismHoldsItsKeyValueExchangeBuffers) {
  // parallel.cp_comm_type, bytes for q query and kv key (or value) elements per rank, cp ranks:
  // - "all_gather" (PyTorch's context_parallel, _templated_ring_attention_backward): the all-gathered keys and values
  //   in bf16 (2 cp 2kv), fp32 accumulators for the local q, k and v (4 (q + 2kv)), the fp32 key/value gradients sent
  //   on and received (2 x 4 x 2kv) and the bf16 concatenation of the local k and v (2 x 2kv);
  // - "p2p" (Transformer Engine's AttnFuncWithCPAndKVP2P): the larger of the forward's received chunks and partial
  //   outputs, 2 cp (2kv + q), and the backward's two packed key/value/gradient buffers and dq, 2 (8kv + q).
  // Oracle by hand for Llama 3 70B (64 heads, 8 KV heads, d 128) at cp 4, tp 2: s = 8192 per rank, b = 1, 32 query
  // heads per rank, 4 KV heads per rank (32 with repeated keys). Checked by differences, on the first pipeline stage
  // (no loss): repeated minus grouped keys for each type, and all-gather minus p2p.
  const auto llama = model("llama3-70b");
  ParallelConfig c = gpt3_tp8_pp8();
  c.tp = 2;
  c.pp = 4;
  c.cp = 4;
  c.recompute = Recompute::Full;
  c.global_batch = 32;
  const int seq = 32768;
  const Layout l = resolve(llama, {32, 8, 8}, c, seq);
  const double s = seq / 4.0, q = s * 32 * 128, cp = 4;
  auto expected = [&](CpCommType type, bool repeated) {
    const double kv = s * (repeated ? 32 : 4) * 128;
    return type == CpCommType::AllGather ? 2 * cp * 2 * kv + 4 * (q + 2 * kv) + 2 * 4 * 2 * kv + 2 * 2 * kv
                                         : std::max(2 * cp * (2 * kv + q), 2 * (8 * kv + q));
  };
  auto buffers = [&](CpCommType type, bool repeated, int rank) {
    ParallelConfig with = c;
    with.cp_comm_type = type;
    MemoryOptions o;
    o.repeated_kv = repeated;
    return static_cast<double>(memory_per_gpu(llama, l, with, seq, rank, o).buffers.n);
  };
  for (const auto type : {CpCommType::P2p, CpCommType::AllGather})
    EXPECT_EQ(buffers(type, true, 0) - buffers(type, false, 0), expected(type, true) - expected(type, false))
        << to_string(type);
  for (const bool repeated : {false, true})
    EXPECT_EQ(buffers(CpCommType::AllGather, repeated, 0) - buffers(CpCommType::P2p, repeated, 0),
              expected(CpCommType::AllGather, repeated) - expected(CpCommType::P2p, repeated))
        << (repeated ? "repeated" : "grouped");
  // The last stage holds the loss's logits, which are never live beside these buffers: the larger of the two.
  const double loss =
      buffers(CpCommType::P2p, false, 3) - buffers(CpCommType::P2p, false, 0) + expected(CpCommType::P2p, false);
  ASSERT_GT(loss, expected(CpCommType::P2p, false));
  for (const bool repeated : {false, true}) {
    const double e = expected(CpCommType::AllGather, repeated);
    EXPECT_NEAR(buffers(CpCommType::AllGather, repeated, 3) - buffers(CpCommType::AllGather, repeated, 0),
                std::max(loss, e) - e, 1.0)
        << (repeated ? "repeated" : "grouped");
  }
  // Without context parallelism there is no exchange.
  ParallelConfig no_cp = c;
  no_cp.cp = 1;
  const Layout l1 = resolve(llama, {8, 8, 8}, no_cp, 8192);
  ParallelConfig no_cp_gather = no_cp;
  no_cp_gather.cp_comm_type = CpCommType::AllGather;
  EXPECT_EQ(memory_per_gpu(llama, l1, no_cp, 8192, 0, MemoryOptions{}).total,
            memory_per_gpu(llama, l1, no_cp_gather, 8192, 0, MemoryOptions{}).total);
}

TEST(MemoryPerGpu, Gpt3On64A100sFitsWithSequenceParallelismAndSelectiveRecompute) {
  const auto gpt3 = model("gpt3-175b");
  const auto c = gpt3_tp8_pp8();
  const Layout l = resolve(gpt3, {64, 8, 8}, c, 2048);
  const auto peak = peak_memory(gpt3, l, c, 2048, megatron2022());
  EXPECT_TRUE(fits(peak, hbm("a100-sxm4-80gb"))) << describe(peak);
  EXPECT_EQ(peak.pipeline_rank, 0) << "1F1B's first stage holds the most activations";
}

TEST(MemoryPerGpu, Gpt3On64A100sDoesNotFitWithTensorParallelismAlone) {
  // The case Korthikanti et al. set out to fix: without SP and selective recompute a t = 8 GPT-3 layer stores
  // sbh(10 + 24/t + 5as/(ht)) = 23 sbh, 96 layers of it on the first stage.
  const auto gpt3 = model("gpt3-175b");
  auto c = gpt3_tp8_pp8();
  c.sequence_parallel = false;
  c.recompute = Recompute::None;
  const Layout l = resolve(gpt3, {64, 8, 8}, c, 2048);
  const auto peak = peak_memory(gpt3, l, c, 2048, megatron2022());
  EXPECT_FALSE(fits(peak, hbm("a100-sxm4-80gb"))) << describe(peak);
}

TEST(MemoryPerGpu, Gpt3WithoutModelParallelismDoesNotFit) {
  const auto gpt3 = model("gpt3-175b");
  ParallelConfig c;
  c.global_batch = 64;
  c.recompute = Recompute::Full;
  const Layout l = resolve(gpt3, {64, 8, 8}, c, 2048);
  const auto peak = peak_memory(gpt3, l, c, 2048, megatron2022());
  EXPECT_FALSE(fits(peak, hbm("a100-sxm4-80gb"))) << describe(peak);
  EXPECT_GT(peak.params.gb(), 340) << "2 bytes x 174.6B weights alone are 349 GB";
}

TEST(MemoryPerGpu, Llama3_405bPublishedLayoutFitsAnH100) {
  // Llama Team 2024, Table 4 and Sec. 3.3.2: 405B pre-training at s = 8192 on 8192 H100s with TP 8, CP 1, PP 16,
  // DP 64, 16M tokens per batch (2048 sequences), one layer fewer on the first and the last stage (126 layers).
  // Meta's FSDP shards gradients as well as optimizer states (zero_stage 2, as scenarios/examples/llama3-405b-16384-
  // h100.json writes it: 68.2 GiB without recomputation). This test keeps Megatron's unsharded fp32 gradients (the
  // distributed optimizer), where no recomputation is just over the 79.6 GiB of an H100; full recomputation is what
  // a Megatron user would add, so the test uses it.
  const auto llama = model("llama3-405b");
  ParallelConfig c;
  c.tp = 8;
  c.pp = 16;
  c.sequence_parallel = true;
  c.distributed_optimizer = true;
  c.recompute = Recompute::Full;
  c.micro_batch = 1;
  c.global_batch = 2048;
  c.layers_per_stage = std::vector<int>(16, 8);
  c.layers_per_stage.front() = 7;
  c.layers_per_stage.back() = 7;
  const Layout l = resolve(llama, {8192, 8, 8}, c, 8192);
  const auto peak = peak_memory(llama, l, c, 8192);
  EXPECT_TRUE(fits(peak, hbm("h100-sxm5-80gb"))) << describe(peak);
  EXPECT_EQ(peak.pipeline_rank, 1) << "rank 1 holds 15 micro-batches of 8 layers; rank 0 holds 16 of 7";
}

TEST(MemoryPerGpu, TotalIsTheSumAndFitsIsInclusive) {
  const auto gpt3 = model("gpt3-175b");
  const auto c = gpt3_tp8_pp8();
  const Layout l = resolve(gpt3, {64, 8, 8}, c, 2048);
  for (int r = 0; r < l.pp; ++r) {
    const auto m = memory_per_gpu(gpt3, l, c, 2048, r, megatron2022());
    EXPECT_EQ(m.total, m.params + m.grads + m.optimizer + m.activations + m.buffers);
    EXPECT_TRUE(fits(m, m.total));
    EXPECT_FALSE(fits(m, m.total - base::Bytes{1}));
  }
}

TEST(MemoryPerGpu, RuntimeReserveIsAnOption) {
  const auto gpt3 = model("gpt3-175b");
  const auto c = gpt3_tp8_pp8();
  const Layout l = resolve(gpt3, {64, 8, 8}, c, 2048);
  MemoryOptions none;
  none.runtime_reserve = base::Bytes{0};
  const auto with = memory_per_gpu(gpt3, l, c, 2048, 3, MemoryOptions{});
  const auto without = memory_per_gpu(gpt3, l, c, 2048, 3, none);
  EXPECT_EQ(with.buffers - without.buffers, kDefaultRuntimeReserve);
}

}  // namespace
}  // namespace sim::parallel
