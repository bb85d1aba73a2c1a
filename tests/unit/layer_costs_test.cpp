// Per-GEMM FLOP accounting reproduces the published closed forms.
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"

#include <gtest/gtest.h>

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

double executed_gemm_flops(const PassWork& p) {
  double f = 0;
  for (const auto& s : p.segments)
    for (const auto& k : s.kernels)
      if (k.kind != KernelKind::Memory) f += k.flops;
  return f;
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
