// Per-GEMM FLOP accounting reproduces the published closed forms.
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"
#include "tests/support/pass_work.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace sim::workload {
namespace {

double narayanan_model_flops(const ModelSpec& m, double batch, double s) {
  // Narayanan et al. SC21 Eq. 3 without recomputation: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
  const double l = m.layers, h = m.hidden, V = m.vocab;
  return 72 * batch * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
}

TEST(LayerCosts, Gpt3ModelFlopsEqualNarayananEq3) {
  const auto m = scenario::load_model("gpt3-175b");
  const double expected = narayanan_model_flops(m, 1536, 2048);
  const double counted = model_flops_per_iteration(m, 2048, 1536);
  EXPECT_NEAR(counted / expected, 1.0, 1e-12) << "expected " << expected << ", counted " << counted;
}

using support::executed_gemm_flops;

TEST(LayerCosts, SquaredReluIsATwoMatrixMlpLikeGelu) {
  // Nemotron's squared ReLU (activation "relu2"): two MLP matrices and a 2-byte-per-element activation, as GELU; not
  // a gated MLP (So et al., "Primer", arXiv:2109.08668; NeMo's activation: squared-relu).
  auto m = scenario::load_model("gpt3-175b");
  LayerShape s;
  const auto gelu = layer_work(m, s, RecomputeMode::None);
  m.activation = Activation::Relu2;
  EXPECT_FALSE(m.gated());
  const auto relu2 = layer_work(m, s, RecomputeMode::None);
  EXPECT_DOUBLE_EQ(relu2.forward.executed_flops, gelu.forward.executed_flops);
  EXPECT_DOUBLE_EQ(relu2.forward.model_flops, gelu.forward.model_flops);
}

TEST(LayerCosts, TensorParallelRanksSplitTheLayerFlops) {
  const auto m = scenario::load_model("llama3-70b");
  LayerShape one;
  one.seq_len = 8192;
  LayerShape eight = one;
  eight.tp = 8;
  const auto w1 = layer_work(m, one, RecomputeMode::None);
  const auto w8 = layer_work(m, eight, RecomputeMode::None);
  EXPECT_NEAR(8 * executed_gemm_flops(w8.forward) / executed_gemm_flops(w1.forward), 1.0, 1e-9);
  EXPECT_NEAR(executed_gemm_flops(w1.backward_input) + executed_gemm_flops(w1.backward_weight),
              2.0 * executed_gemm_flops(w1.forward), 0.4 * executed_gemm_flops(w1.forward))
      << "backward is about twice the forward (fused attention backward is 2.5x its forward)";
}

TEST(LayerCosts, TensorParallelismAddsTwoCollectivesPerPassOrTwoPairsWithSequenceParallelism) {
  const auto m = scenario::load_model("llama3-8b");
  LayerShape s;
  s.tp = 4;
  auto count = [](const PassWork& p, CommKind k) {
    int n = 0;
    for (const auto& seg : p.segments)
      n += seg.is_comm && seg.comm == k;
    return n;
  };
  const auto w = layer_work(m, s, RecomputeMode::None);
  EXPECT_EQ(count(w.forward, CommKind::TpAllReduce), 2);
  EXPECT_EQ(count(w.backward_input, CommKind::TpAllReduce), 2);
  s.sequence_parallel = true;
  const auto sp = layer_work(m, s, RecomputeMode::None);
  EXPECT_EQ(count(sp.forward, CommKind::TpAllGather), 2);
  EXPECT_EQ(count(sp.forward, CommKind::TpReduceScatter), 2);
  EXPECT_EQ(count(sp.backward_input, CommKind::TpAllGather), 2);
}

/// fp32 / tf32 training moves and touches 4-byte activations (LayerShape::act_bytes): every tensor- and
/// context-parallel collective's payload and every memory-bound kernel's bytes double; the GEMMs are the same.
TEST(LayerCosts, Fp32ActivationsDoubleTheCollectivesAndMemoryBoundBytes) {
  const auto m = scenario::load_model("llama3-8b");
  auto totals = [](const PassWork& p) {
    std::pair<double, double> comm_memory{0, 0};
    for (const auto& seg : p.segments) {
      if (seg.is_comm) comm_memory.first += seg.comm_bytes;
      for (const auto& k : seg.kernels)
        if (k.kind == KernelKind::Memory) comm_memory.second += k.bytes;
    }
    return comm_memory;
  };
  LayerShape s;
  s.seq_len = 8192;
  s.tp = 4;
  s.cp = 2;
  s.sequence_parallel = true;
  const auto half = layer_work(m, s, RecomputeMode::None);
  s.act_bytes = 4;
  const auto full = layer_work(m, s, RecomputeMode::None);
  for (auto pass : {&LayerWork::forward, &LayerWork::backward_input}) {
    const auto [comm16, memory16] = totals(half.*pass);
    const auto [comm32, memory32] = totals(full.*pass);
    EXPECT_GT(comm16, 0);
    EXPECT_DOUBLE_EQ(comm32, 2 * comm16);
    EXPECT_GT(memory16, 0);
    EXPECT_DOUBLE_EQ(memory32, 2 * memory16);
  }
  EXPECT_EQ(executed_gemm_flops(full.forward), executed_gemm_flops(half.forward));
}

TEST(LayerCosts, FullRecomputeRepeatsTheForward) {
  const auto m = scenario::load_model("gpt3-175b");
  LayerShape s;
  s.flash_attention = false;
  const auto w = layer_work(m, s, RecomputeMode::Full);
  EXPECT_DOUBLE_EQ(w.recompute.executed_flops, w.forward.executed_flops);
  const auto sel = layer_work(m, s, RecomputeMode::Selective);
  const double attention_core = 4.0 * 2048.0 * 2048.0 * m.hidden;  // QK^T and PV: 4 b s^2 h
  EXPECT_NEAR(sel.recompute.executed_flops / attention_core, 1.0, 1e-9);
}

// Megatron-Core's selective modules run again what they name: with a fused attention kernel core_attn adds nothing;
// layernorm the two norms; moe_act the experts' activation; moe the whole MoE block, its all-to-alls included.
TEST(LayerCosts, SelectiveRecomputeRunsTheNamedModulesAgain) {
  const auto m = scenario::load_model("mixtral-8x7b");
  LayerShape s;
  s.ep = 8;
  auto kernels = [&](const RecomputeSet& set) {
    std::vector<std::string> names;
    int a2a = 0;
    for (const auto& seg : layer_work(m, s, RecomputeMode::Selective, set).recompute.segments) {
      if (seg.is_comm) a2a += seg.comm == CommKind::EpAllToAll ? 1 : 0;
      for (const auto& k : seg.kernels)
        names.emplace_back(k.name);
    }
    return std::pair{names, a2a};
  };
  // core_attn with a fused kernel: Megatron-Core checkpoints the core attention whatever its backend, so the fused
  // kernel's forward runs again (megatron/core/transformer/attention.py, _checkpointed_attention_forward).
  EXPECT_EQ(kernels({}).first, (std::vector<std::string>{"flash_attn_fwd"}));
  RecomputeSet norms{.core_attn = false, .layernorm = true};
  EXPECT_EQ(kernels(norms).first, (std::vector<std::string>{"attn_norm", "mlp_norm"}));
  RecomputeSet act{.core_attn = false, .moe_act = true};
  EXPECT_EQ(kernels(act).first, (std::vector<std::string>{"activation"}));
  RecomputeSet moe{.core_attn = false, .moe = true};
  const auto [names, a2a] = kernels(moe);
  EXPECT_EQ(a2a, 2) << "dispatch and combine run again";
  for (const char* k : {"router", "expert_up", "activation", "expert_down", "moe_unpermute"})
    EXPECT_NE(std::find(names.begin(), names.end(), std::string(k)), names.end()) << k;
  EXPECT_EQ(std::find(names.begin(), names.end(), std::string("qkv")), names.end()) << "attention is not part of it";
  // The hardware FLOPs of the recomputed experts: the forward's expert GEMMs once more.
  const auto w = layer_work(m, s, RecomputeMode::Selective, moe);
  double expert_fwd = 0, expert_rec = 0;
  for (const auto& seg : w.forward.segments)
    for (const auto& k : seg.kernels)
      if (std::string(k.name).rfind("expert", 0) == 0) expert_fwd += k.flops;
  for (const auto& seg : w.recompute.segments)
    for (const auto& k : seg.kernels)
      if (std::string(k.name).rfind("expert", 0) == 0) expert_rec += k.flops;
  EXPECT_GT(expert_fwd, 0);
  EXPECT_DOUBLE_EQ(expert_rec, expert_fwd);
}

TEST(LayerCosts, OpRecomputeRedoesEverySecondMatmulAndEveryElementwiseKernel) {
  // TorchTitan's per-operator policy on Llama 3 8B's block (wq, wk, wv, wo, w1, w3, w2): wk, wo and w3 run again,
  // the attention kernel does not (its output is saved), every memory-bound kernel does.
  const auto m = scenario::load_model("llama3-8b");
  LayerShape s;
  s.seq_len = 8192;
  const auto w = layer_work(m, s, RecomputeMode::Op);
  const double t = 8192, h = m.hidden, kv = 8 * 128.0, f = m.ffn_hidden;
  EXPECT_DOUBLE_EQ(w.recompute.executed_flops, 2 * t * (h * kv + h * h + h * f)) << "wk + wo + w3";
  double fwd_memory = 0, rec_memory = 0;
  bool attention = false;
  for (const auto& seg : w.forward.segments)
    for (const auto& k : seg.kernels)
      if (k.kind == KernelKind::Memory) fwd_memory += k.bytes;
  for (const auto& seg : w.recompute.segments)
    for (const auto& k : seg.kernels) {
      if (k.kind == KernelKind::Memory) rec_memory += k.bytes;
      attention = attention || k.kind == KernelKind::Attention;
    }
  EXPECT_DOUBLE_EQ(rec_memory, fwd_memory);
  EXPECT_FALSE(attention);
  EXPECT_EQ(w.recompute.model_flops, 0);
}

TEST(LayerCosts, EagerKernelsMoveTheBytesOfPyTorchsSeparateOps) {
  // Llama 3 8B, one 8k sequence: TorchTitan's eager RMSNorm (36 bytes per element against 4 fused), RoPE on q and k
  // (20 against 4) and SwiGLU (10 per inner element against 6); GEMMs and attention unchanged.
  const auto m = scenario::load_model("llama3-8b");
  LayerShape s;
  s.seq_len = 8192;
  auto bytes = [&](const LayerWork& w, const std::string& name) {
    double b = 0;
    for (const auto& seg : w.forward.segments)
      for (const auto& k : seg.kernels)
        if (name == k.name) b += k.bytes;
    return b;
  };
  const auto fused = layer_work(m, s, RecomputeMode::None);
  s.eager_kernels = true;
  const auto eager = layer_work(m, s, RecomputeMode::None);
  const double t = 8192, h = m.hidden, qk = (32 + 8) * 128.0, f = m.ffn_hidden;
  EXPECT_DOUBLE_EQ(bytes(fused, "attn_norm"), 4 * t * h);
  EXPECT_DOUBLE_EQ(bytes(eager, "attn_norm"), 36 * t * h);
  EXPECT_DOUBLE_EQ(bytes(eager, "rope"), 20 * t * qk);
  EXPECT_DOUBLE_EQ(bytes(fused, "activation"), 6 * t * f);
  EXPECT_DOUBLE_EQ(bytes(eager, "activation"), 10 * t * f);
  EXPECT_DOUBLE_EQ(eager.forward.executed_flops, fused.forward.executed_flops);
  // A LayerNorm model's norm is one aten kernel either way.
  const auto gpt = scenario::load_model("gpt3-175b");
  LayerShape g;
  g.eager_kernels = true;
  const auto gw = layer_work(gpt, g, RecomputeMode::None);
  g.eager_kernels = false;
  EXPECT_DOUBLE_EQ(bytes(gw, "attn_norm"), bytes(layer_work(gpt, g, RecomputeMode::None), "attn_norm"));
}

TEST(LayerCosts, TheLossMovesTheBytesOfItsImplementation) {
  // Llama 3 8B's output layer, one 8k sequence, each loss as the kernels it runs, byte by byte (bytes read + written
  // per logit). The 16-bit logits' copy to fp32 and the gradient's cast back are 2 + 4 and 4 + 2; fp32 training has
  // neither. The GEMMs do not change.
  const double cast = 6;
  // Megatron-Core's vocab_parallel_cross_entropy: max (4), in-place subtract, exp, divide (4 + 4 each), sum (4);
  // backward the in-place multiply (4 + 4).
  const double unfused_fwd = 4 + 8 + 8 + 8 + 4, unfused_bwd = 8;
  // PyTorch eager cross_entropy, one rank: log_softmax's max, sum and output passes (4 + 4 + 4 + 4); backward
  // nll_loss's zeroed gradient (4), log_softmax's sum pass and both inputs read, the gradient written (4 + 4 + 4 + 4).
  const double eager_fwd = 16, eager_bwd = 4 + 16;
  // loss_parallel: max (4), x - max (4 + 4), exp (4 + 4), sum (4), the result (4 + 4); backward zeros (4), exp(x)
  // (4 + 4), their sum (4 + 4 + 4), times the loss gradient (4 + 4).
  const double parallel_fwd = 4 + 8 + 8 + 4 + 8, parallel_bwd = 4 + 8 + 12 + 8;
  const auto m = scenario::load_model("llama3-8b");
  auto bytes = [](const PassWork& p, const std::string& name) {
    double b = 0;
    for (const auto& seg : p.segments)
      for (const auto& k : seg.kernels)
        if (name == k.name) b += k.bytes;
    return b;
  };
  struct Case {
    CrossEntropy loss;
    int tp;
    double act_bytes, fwd, bwd;
  };
  for (const Case& c : {Case{CrossEntropy::Fused, 2, 2, 12, 8},
                        Case{CrossEntropy::Unfused, 2, 2, unfused_fwd + cast, unfused_bwd + cast},
                        Case{CrossEntropy::Unfused, 2, 4, unfused_fwd, unfused_bwd},
                        Case{CrossEntropy::Upcast, 1, 2, eager_fwd + cast, eager_bwd + cast},
                        Case{CrossEntropy::Upcast, 2, 2, parallel_fwd + cast, parallel_bwd + cast},
                        Case{CrossEntropy::Upcast, 1, 4, eager_fwd, eager_bwd}}) {
    LayerShape s;
    s.seq_len = 8192;
    s.tp = c.tp;
    s.act_bytes = c.act_bytes;
    const double logits = 8192.0 * m.vocab / c.tp;
    const double flops = output_work(m, s).forward.executed_flops;
    s.loss = c.loss;
    const auto w = output_work(m, s);
    EXPECT_DOUBLE_EQ(bytes(w.forward, "cross_entropy"), c.fwd * logits) << static_cast<int>(c.loss) << " tp " << c.tp;
    EXPECT_DOUBLE_EQ(bytes(w.backward_input, "cross_entropy_bwd"), c.bwd * logits)
        << static_cast<int>(c.loss) << " tp " << c.tp;
    EXPECT_DOUBLE_EQ(w.forward.executed_flops, flops);
  }
}

TEST(LayerCosts, MoeCountsOnlyRoutedExperts) {
  const auto m = scenario::load_model("mixtral-8x7b");
  LayerShape s;
  s.seq_len = 4096;
  const auto w = layer_work(m, s, RecomputeMode::None);
  // Active parameters per layer drive the forward GEMM FLOPs: 2 x tokens x active matrix params (+ attention core).
  const double tokens = 4096;
  const double d = m.head_dim();
  const double attn_params = 2.0 * m.hidden * m.hidden + 2.0 * m.hidden * m.kv_heads * d;
  const double expert_params = 3.0 * m.hidden * m.moe->ffn_hidden * m.moe->top_k;
  const double router = 1.0 * m.hidden * m.moe->experts;
  const double core = 4.0 * tokens * tokens * m.hidden * 0.5;  // causal fused attention executes half
  EXPECT_NEAR(executed_gemm_flops(w.forward), 2 * tokens * (attn_params + expert_params + router) + core, 1e3);
}

}  // namespace
}  // namespace sim::workload

namespace sim::workload {
namespace {

double cast_bytes(const PassWork& p) {
  double b = 0;
  for (const auto& s : p.segments)
    for (const auto& k : s.kernels)
      if (k.fp8_cast) b += k.bytes;
  return b;
}

int fp8_gemms(const PassWork& p) {
  int n = 0;
  for (const auto& s : p.segments)
    for (const auto& k : s.kernels)
      n += k.kind == KernelKind::Gemm && k.fp8;
  return n;
}

TEST(LayerCostsFp8, EachLinearCastsItsInputForwardAndItsOutputGradientBackward) {
  const auto m = scenario::load_model("llama3-8b");
  LayerShape s;
  s.seq_len = 8192;
  s.fp8 = Fp8Scaling::Delayed;
  const auto w = layer_work(m, s, RecomputeMode::None);
  // Four linears (qkv, attention output, gate+up, down) run in FP8; the attention core stays 16-bit.
  EXPECT_EQ(fp8_gemms(w.forward), 4);
  const double t = 8192, h = m.hidden, f = m.ffn_hidden;
  // Forward: qkv and gate+up inputs (h wide) cast in the norm (2 B/elem extra: the transposed copy); the attention
  // output's and the down projection's inputs (h and f wide) by cast_transpose (read 2, write 1 + 1).
  EXPECT_DOUBLE_EQ(cast_bytes(w.forward), t * h * 2 + t * h * 4 + t * h * 2 + t * f * 4);
  // Backward: every GEMM's output gradient, m x n, by cast_transpose (4 B/elem).
  const double qkv_n = (32 + 2 * 8) * 128.0;
  EXPECT_DOUBLE_EQ(cast_bytes(w.backward_input), 4 * t * (qkv_n + h + 2 * f + h));
  EXPECT_EQ(fp8_gemms(w.backward_input), 4);
  EXPECT_EQ(fp8_gemms(w.backward_weight), 4);
  // Current scaling reads each 16-bit tensor once more for its amax.
  s.fp8 = Fp8Scaling::Current;
  const auto c = layer_work(m, s, RecomputeMode::None);
  EXPECT_DOUBLE_EQ(cast_bytes(c.forward) - cast_bytes(w.forward), 2 * t * (h + h + h + f));
  // 16-bit training has no casts and no FP8 GEMMs; FLOP counts do not depend on the recipe.
  s.fp8 = Fp8Scaling::None;
  const auto b = layer_work(m, s, RecomputeMode::None);
  EXPECT_EQ(cast_bytes(b.forward) + cast_bytes(b.backward_input), 0);
  EXPECT_EQ(fp8_gemms(b.forward), 0);
  EXPECT_DOUBLE_EQ(b.forward.model_flops, w.forward.model_flops);
}

TEST(LayerCostsMoe, TokensArePermutedBeforeTheExpertsAndUnpermutedAfter) {
  const auto m = scenario::load_model("mixtral-8x7b");
  LayerShape s;
  s.seq_len = 4096;
  s.ep = 8;
  const auto w = layer_work(m, s, RecomputeMode::None);
  double permute = 0, sort = 0;
  for (const auto& seg : w.forward.segments)
    for (const auto& k : seg.kernels) {
      if (std::string(k.name) == "moe_permute" || std::string(k.name) == "moe_unpermute") permute += k.bytes;
      if (std::string(k.name) == "moe_sort_chunks" || std::string(k.name) == "moe_unsort_chunks") sort += k.bytes;
    }
  const double t = 4096, h = m.hidden, k = 2;
  EXPECT_DOUBLE_EQ(permute, 2 * (t + k * t) * h * 2) << "read T x h, write kT x h (and back), 16-bit";
  EXPECT_EQ(sort, 0) << "one expert per rank at ep = experts: nothing to sort";
  s.ep = 2;
  const auto w2 = layer_work(m, s, RecomputeMode::None);
  sort = 0;
  for (const auto& seg : w2.forward.segments)
    for (const auto& kk : seg.kernels)
      if (std::string(kk.name) == "moe_sort_chunks") sort += kk.bytes;
  EXPECT_DOUBLE_EQ(sort, 2 * k * t * h * 2);
}

TEST(LayerCostsMoe, ParallelFoldingRoutesTheSequenceParallelShardWithoutTpCollectives) {
  // Megatron-Core MoE parallel folding, expert_tp 1 under tp 4 with sequence parallelism: each rank routes its own
  // s/t tokens (k copies dispatched), its experts are whole (f, not f/t), and the MoE block has no TP collective.
  const auto m = scenario::load_model("mixtral-8x7b");
  LayerShape s;
  s.seq_len = 4096;
  s.tp = 4;
  s.ep = 8;
  s.sequence_parallel = true;
  s.expert_tp = 1;
  const auto w = layer_work(m, s, RecomputeMode::None);
  const double t = 4096.0 / 4, h = m.hidden, k = 2;
  int tp_comms = 0;
  double dispatched = 0, expert_flops = 0;
  for (const auto& seg : w.forward.segments) {
    if (seg.is_comm && seg.comm == CommKind::EpAllToAll && seg.label == "dispatch") dispatched = seg.comm_bytes;
    if (seg.is_comm && seg.comm != CommKind::EpAllToAll) ++tp_comms;
    for (const auto& kk : seg.kernels)
      if (std::string(kk.name).rfind("expert_", 0) == 0) expert_flops += kk.flops;
  }
  EXPECT_DOUBLE_EQ(dispatched, k * t * h * 2);
  EXPECT_EQ(tp_comms, 2) << "attention's all-gather and reduce-scatter only";
  EXPECT_DOUBLE_EQ(expert_flops, 2.0 * k * t * 3 * h * m.moe->ffn_hidden) << "whole SwiGLU experts on k*s/t tokens";
  // expert_tp 2: the shard is gathered over 2 ranks (an expert-TP all-gather and reduce-scatter around the experts).
  s.expert_tp = 2;
  const auto w2 = layer_work(m, s, RecomputeMode::None);
  int etp = 0;
  for (const auto& seg : w2.forward.segments)
    if (seg.is_comm && (seg.comm == CommKind::EtpAllGather || seg.comm == CommKind::EtpReduceScatter)) ++etp;
  EXPECT_EQ(etp, 2);
}

TEST(LayerCostsMoe, TheAllToAllMovesTheRanksOwnShardAndTheExpertTpGroupGathersWhatItReceived) {
  // Megatron-Core's alltoall dispatcher with expert_tp = tp (the default) under tp 2 and sequence parallelism
  // (token_dispatcher.py at bed33f89: permute -> all-to-all over EP -> gather over TP -> sort): each rank routes and
  // dispatches its own s/t tokens, then the TP group gathers the k*s/t copies each rank received. A user trial found
  // the all-to-all charged the TP-gathered s tokens, t times the bytes, over InfiniBand.
  const auto m = scenario::load_model("mixtral-8x7b");
  LayerShape s;
  s.seq_len = 4096;
  s.tp = 2;
  s.ep = 8;
  s.sequence_parallel = true;
  const auto w = layer_work(m, s, RecomputeMode::None);
  const double t = 4096.0 / 2, h = m.hidden, k = 2;
  double dispatched = 0, combined = 0, gathered = 0, scattered = 0, router_rows = 0, expert_flops = 0;
  std::vector<std::string> order;
  for (const auto& seg : w.forward.segments) {
    if (seg.is_comm) order.push_back(seg.label);
    if (seg.is_comm && seg.label == "dispatch") dispatched = seg.comm_bytes;
    if (seg.is_comm && seg.label == "combine") combined = seg.comm_bytes;
    if (seg.is_comm && seg.comm == CommKind::EtpAllGather) gathered = seg.comm_bytes;
    if (seg.is_comm && seg.comm == CommKind::EtpReduceScatter) scattered = seg.comm_bytes;
    for (const auto& kk : seg.kernels) {
      if (std::string(kk.name) == "router") router_rows = kk.m;
      if (std::string(kk.name).rfind("expert_", 0) == 0) expert_flops += kk.flops;
    }
  }
  EXPECT_DOUBLE_EQ(router_rows, t) << "the router scores the rank's own shard";
  EXPECT_DOUBLE_EQ(dispatched, k * t * h * 2);
  EXPECT_DOUBLE_EQ(combined, k * t * h * 2);
  EXPECT_DOUBLE_EQ(gathered, 2 * k * t * h * 2) << "the gathered k*s tokens, what each expert slice takes";
  EXPECT_DOUBLE_EQ(scattered, gathered);
  EXPECT_DOUBLE_EQ(expert_flops, 2.0 * k * 4096 * 3 * h * m.moe->ffn_hidden / 2) << "k*s tokens on f/t slices";
  const std::vector<std::string> expected = {"attn_ag", "attn_rs", "dispatch", "moe_etp_ag", "moe_etp_rs", "combine"};
  EXPECT_EQ(order, expected) << "no TP gather of the hidden states before the router";
}

}  // namespace
}  // namespace sim::workload

namespace sim::workload {
namespace {

TEST(LayerCostsFp8, WithSequenceParallelismTheNormFusedCastsRunOnTheLocalShard) {
  const auto m = scenario::load_model("llama3-70b");
  LayerShape s;
  s.seq_len = 8192;
  s.tp = 4;
  s.sequence_parallel = true;
  s.fp8 = Fp8Scaling::Delayed;
  const auto w = layer_work(m, s, RecomputeMode::None);
  double fused = 0, unfused = 0;
  for (const auto& seg : w.forward.segments)
    for (std::size_t i = 0; i + 1 < seg.kernels.size(); ++i) {  // a cast always precedes its GEMM
      const auto& k = seg.kernels[i];
      if (!k.fp8_cast) continue;
      const std::string next = seg.kernels[i + 1].name;
      (next == "qkv" || next == "mlp_up" ? fused : unfused) += k.bytes;
    }
  const double t = 8192, h = m.hidden, f = m.ffn_hidden / 4.0;
  EXPECT_DOUBLE_EQ(fused, 2 * (t / 4) * h * 2) << "qkv and gate+up inputs: the 1/t shard, transposed copy only";
  EXPECT_DOUBLE_EQ(unfused, 4 * t * (h / 4) + 4 * t * f) << "attention output and down projection: full tokens, k/t";
  // The sequence-parallel all-gathers before those two linears carry the FP8 shards (1 byte); their backward
  // reduce-scatters carry 16-bit input gradients; the reduce-scatters after the blocks stay 16-bit.
  for (const auto& seg : w.forward.segments) {
    if (seg.is_comm && seg.comm == CommKind::TpAllGather) {
      EXPECT_DOUBLE_EQ(seg.comm_bytes, t * h) << seg.label;
    }
  }
  for (const auto& seg : w.backward_input.segments) {
    if (seg.is_comm && seg.comm == CommKind::TpReduceScatter) {
      EXPECT_DOUBLE_EQ(seg.comm_bytes, t * h * 2) << seg.label;
    }
  }
  s.fp8 = Fp8Scaling::None;
  for (const auto& seg : layer_work(m, s, RecomputeMode::None).forward.segments) {
    if (seg.is_comm) {
      EXPECT_DOUBLE_EQ(seg.comm_bytes, t * h * 2) << seg.label << ": 16-bit training";
    }
  }
}

TEST(LayerCosts, AttentionAndHiddenDropoutCostTheirOwnKernels) {
  // Attention dropout masks the s x s probabilities of unfused attention (kernels of its own, forward and backward);
  // hidden dropout masks each residual add (one byte per element more). Neither one stands for the other.
  const auto m = scenario::load_model("gpt3-175b");
  LayerShape s;
  s.seq_len = 2048;
  s.tp = 8;
  s.flash_attention = false;
  auto named = [&](const LayerShape& shape, const char* name) {
    const auto w = layer_work(m, shape, RecomputeMode::None);
    int n = 0;
    for (const auto* p : {&w.forward, &w.backward_input})
      for (const auto& seg : p->segments)
        for (const auto& k : seg.kernels)
          n += std::string(k.name).starts_with(name) ? 1 : 0;
    return n;
  };
  auto residual_bytes = [&](const LayerShape& shape) {
    for (const auto& seg : layer_work(m, shape, RecomputeMode::None).forward.segments)
      for (const auto& k : seg.kernels)
        if (std::string(k.name) == "attn_residual") return k.bytes;
    return 0.0;
  };
  LayerShape attention = s, hidden = s;
  attention.attention_dropout = true;
  hidden.dropout = true;
  EXPECT_EQ(named(s, "attn_dropout"), 0);
  EXPECT_EQ(named(attention, "attn_dropout"), 2) << "forward and backward";
  EXPECT_EQ(named(hidden, "attn_dropout"), 0) << "hidden dropout is not attention dropout";
  EXPECT_EQ(residual_bytes(attention), residual_bytes(s));
  EXPECT_GT(residual_bytes(hidden), residual_bytes(s));
}

double attention_flops(const PassWork& p) {
  double f = 0;
  for (const auto& s : p.segments)
    for (const auto& k : s.kernels)
      if (k.kind == KernelKind::Attention) f += k.flops;
  return f;
}

TEST(LayerCosts, ASlidingWindowSavesWhatItsCausalMaskLeavesOut) {
  // Query i of a causal window w sees min(i, w) keys: w - w^2 / 2s on average over s queries. A window of half the
  // sequence or more had been charged as no window (Gemma 2's 4096 at s = 8192; found by a user trial).
  auto m = scenario::load_model("llama3-8b");
  LayerShape s;
  s.seq_len = 8192;
  const double global = attention_flops(layer_work(m, s, RecomputeMode::None).forward);
  for (const int w : {1024, 4096, 6144, 8192, 16384}) {
    m.sliding_window = w;
    const double ws = std::min(w, 8192), mean = ws - ws * ws / (2.0 * 8192);
    EXPECT_NEAR(attention_flops(layer_work(m, s, RecomputeMode::None).forward) / global, mean / 4096.0, 1e-12)
        << "window " << w << ": the causal mean is s / 2 = 4096 keys a query";
  }
}

TEST(LayerCosts, LatentAttentionMultipliesTheValuesAtTheirOwnWidth) {
  // MLA's scores take the query/key width (DeepSeek-V3: 128 + 64) and its context the value width (128): Megatron-Core
  // builds the core attention with k_channels and v_channels apart. PV had been charged at 192 (a user trial).
  auto m = scenario::load_model("deepseek-v3");
  LayerShape s;
  s.seq_len = 4096;
  const double at128 = attention_flops(layer_work(m, s, RecomputeMode::None).forward);
  m.mla->v_head_dim = 192;
  const double at192 = attention_flops(layer_work(m, s, RecomputeMode::None).forward);
  EXPECT_NEAR(at128 / at192, (192.0 + 128.0) / (2 * 192.0), 1e-12);
}

}  // namespace
}  // namespace sim::workload
