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
  // Sliding windows (Llama 4's chunked layers, taken as windows) attend to fewer chunks than the ring's steps: one
  // causal call, as before the split.
  LayerShape windowed;
  windowed.seq_len = 131072;
  windowed.cp = 8;
  const auto chunked =
      attention(layer_work(scenario::load_model("llama4-maverick"), windowed, RecomputeMode::None).forward);
  ASSERT_EQ(chunked.size(), 1u);
  EXPECT_TRUE(chunked[0].causal);
}

}  // namespace
}  // namespace sim::workload
