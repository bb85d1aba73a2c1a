// Context parallelism in the layer's work: what the ring moves, and the attention calls each rank runs.
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"
#include "tests/support/pass_work.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace sim::workload {
namespace {

using support::executed_gemm_flops;

/// Context parallelism passes each rank's keys and values around the ring: 2 x tokens x kv_heads x head_dim x 2 B per
/// pass, or with repeated_kv (TorchTitan's repeat_kv before SDPA) one head per query head, heads / kv_heads times
/// more (4x for Llama 3 8B: 32 query heads over 8 key/value heads; under TP 4, 8 over 2).
TEST(LayerCosts, RepeatedKeysAndValuesMultiplyWhatContextParallelismMoves) {
  const auto m = scenario::load_model("llama3-8b");
  auto cp_bytes = [](const PassWork& p) {
    double b = 0;
    for (const auto& seg : p.segments)
      if (seg.is_comm && seg.comm == CommKind::CpExchange) b += seg.comm_bytes;
    return b;
  };
  for (int tp : {1, 4}) {
    LayerShape s;
    s.seq_len = 8192;
    s.cp = 2;
    s.tp = tp;
    const auto grouped = layer_work(m, s, RecomputeMode::None);
    s.repeated_kv = true;
    const auto repeated = layer_work(m, s, RecomputeMode::None);
    const double tokens = 8192.0 / 2;
    EXPECT_DOUBLE_EQ(cp_bytes(grouped.forward), 2 * tokens * (8.0 / tp) * 128 * 2) << "tp " << tp;
    EXPECT_DOUBLE_EQ(cp_bytes(repeated.forward), 4 * cp_bytes(grouped.forward)) << "tp " << tp;
    EXPECT_DOUBLE_EQ(cp_bytes(repeated.backward_input), 4 * cp_bytes(grouped.backward_input)) << "tp " << tp;
    EXPECT_EQ(executed_gemm_flops(repeated.forward), executed_gemm_flops(grouped.forward)) << "the same attention";
  }
  LayerShape no_cp;
  no_cp.repeated_kv = true;
  EXPECT_EQ(cp_bytes(layer_work(m, no_cp, RecomputeMode::None).forward), 0) << "nothing to move without CP";
}

/// The attention of one rank, chunk by chunk: the sequence in 2cp chunks, the rank holding chunks r and 2cp-1-r (the
/// load balancing of Megatron-LM and PyTorch), each query chunk meeting every key chunk at or before it (half a block
/// on the diagonal). Returns {work on the rank's own key chunks, all its work}, in blocks.
std::pair<double, double> chunk_work(int cp, int rank) {
  double own = 0, all = 0;
  for (const int q : {rank, 2 * cp - 1 - rank})
    for (int k = 0; k <= q; ++k) {
      const double block = k == q ? 0.5 : 1.0;
      all += block;
      if (k == rank || k == 2 * cp - 1 - rank) own += block;
    }
  return {own, all};
}

std::vector<Kernel> attention(const PassWork& p) {
  std::vector<Kernel> out;
  for (const auto& seg : p.segments)
    for (const auto& k : seg.kernels)
      if (k.kind == KernelKind::Attention) out.push_back(k);
  return out;
}

/// Context parallelism's attention as its calls: one causal call on the rank's own keys and the rest unmasked, one
/// chunk against two (the calls off the diagonal that the non-causal kernel rates time), against the chunk-by-chunk
/// count above; the FLOPs in all those of the rank's causal share of the sequence. MLA's value head (128) is narrower
/// than its query/key head (192).
TEST(LayerCosts, ContextParallelAttentionIsOneCausalCallAndTheRestUnmasked) {
  for (const char* name : {"llama3-8b", "deepseek-v3"}) {
    SCOPED_TRACE(name);
    const auto m = scenario::load_model(name);
    LayerShape s;
    s.seq_len = 131072;
    const auto one = layer_work(m, s, RecomputeMode::None);
    ASSERT_EQ(attention(one.forward).size(), 1u);
    EXPECT_TRUE(attention(one.forward)[0].causal);
    const double heads = m.heads, dk = m.head_dim(), dv = m.value_head_dim();
    for (int cp : {2, 8}) {
      s.cp = cp;
      const auto w = layer_work(m, s, RecomputeMode::None);
      const auto [own, all] = chunk_work(cp, 0);
      EXPECT_EQ(chunk_work(cp, cp - 1).second, all) << "every rank the same work";
      const double chunk = 131072.0 / (2 * cp);
      for (const PassWork* p : {&w.forward, &w.backward_input}) {
        const auto calls = attention(*p);
        ASSERT_EQ(calls.size(), 2u) << "cp " << cp;
        EXPECT_TRUE(calls[0].causal);
        EXPECT_EQ(std::min(calls[0].m, calls[0].n), 2 * chunk);
        EXPECT_FALSE(calls[1].causal);
        EXPECT_EQ(std::min(calls[1].m, calls[1].n), chunk);
        // Per score: QK^T and PV forward (2dk + 2dv); the backward 6dk + 4dv.
        const double per_score = p == &w.forward ? 2 * (dk + dv) : 2 * (3 * dk + 2 * dv);
        const double block = heads * chunk * chunk * per_score;
        EXPECT_NEAR(calls[0].flops / (own * block), 1.0, 1e-12) << "cp " << cp;
        EXPECT_NEAR(calls[1].flops / ((all - own) * block), 1.0, 1e-12) << "cp " << cp;
        EXPECT_NEAR(calls[1].m * calls[1].n * calls[1].batch * per_score / calls[1].flops, 1.0, 1e-12)
            << "the row's shape times its calls is its FLOPs";
      }
    }
  }
  // Without a causal mask nothing is split: every call is unmasked.
  const auto m = scenario::load_model("llama3-8b");
  LayerShape s;
  s.seq_len = 131072;
  s.cp = 8;
  s.causal = false;
  const auto encoder = attention(layer_work(m, s, RecomputeMode::None).forward);
  ASSERT_EQ(encoder.size(), 1u);
  EXPECT_FALSE(encoder[0].causal);
  // Sliding windows: a windowed layer's own-chunk call holds at most its window, so the split moves continuously with
  // the window (a tester's trial: a window one token short of the sequence dropped the split and its faster rates, a
  // 2-4% jump in step time), and a window inside one chunk leaves nothing to the unmasked calls.
  auto split = [](const ModelSpec& model, int cp) {
    LayerShape w;
    w.seq_len = 32768;
    w.cp = cp;
    const auto calls = attention(layer_work(model, w, RecomputeMode::None).forward);
    double unmasked = 0, all = 0;
    for (const auto& k : calls) {
      all += k.flops;
      if (!k.causal) unmasked += k.flops;
    }
    return std::pair{calls.size(), unmasked / all};
  };
  ModelSpec windowed = scenario::load_model("llama3-8b");
  windowed.global_every = 4;
  for (int cp : {2, 8}) {
    windowed.sliding_window = 32768;
    const auto whole = split(windowed, cp);
    windowed.sliding_window = 32767;
    const auto one_short = split(windowed, cp);
    EXPECT_EQ(one_short.first, 2u) << "cp " << cp;
    EXPECT_NEAR(one_short.second, whole.second, 1e-3) << "cp " << cp;
  }
  windowed.sliding_window = 1024;
  windowed.global_every = 0;  // every layer windowed, the window inside one chunk (2048 tokens at cp 8)
  EXPECT_EQ(split(windowed, 8).first, 1u);
  // Llama 4 Maverick's chunked layers (taken as windows of 8192) beside its global ones: both calls.
  EXPECT_EQ(split(scenario::load_model("llama4-maverick"), 8).first, 2u);
}

// Recomputing the core attention runs its ring again: Megatron-Core checkpoints the attention module, which exchanges
// the keys and values itself (a tester's trial: selective recompute under CP had no exchange, full recompute had it).
TEST(LayerCosts, RecomputingTheCoreAttentionRunsItsRingAgain) {
  const auto m = scenario::load_model("llama3-8b");
  LayerShape s;
  s.seq_len = 8192;
  s.cp = 2;
  auto rings = [&](RecomputeMode mode, const RecomputeSet& set) {
    const auto w = layer_work(m, s, mode, set);
    int n = 0;
    for (std::size_t i = 0; i < w.recompute.segments.size(); ++i)
      if (w.recompute.segments[i].is_comm && w.recompute.segments[i].comm == CommKind::CpExchange) {
        ++n;
        EXPECT_LT(i + 1, w.recompute.segments.size()) << "the attention it feeds follows it";
      }
    return n;
  };
  EXPECT_EQ(rings(RecomputeMode::Full, {}), 1);
  EXPECT_EQ(rings(RecomputeMode::Selective, {}), 1) << "core_attn (the default set)";
  EXPECT_EQ(rings(RecomputeMode::Selective, RecomputeSet{.core_attn = false, .layernorm = true}), 0);
  EXPECT_EQ(rings(RecomputeMode::Op, {}), 0) << "the attention's output is saved";
}

}  // namespace
}  // namespace sim::workload
