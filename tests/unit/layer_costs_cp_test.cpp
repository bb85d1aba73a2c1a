// Context parallelism in the layer's work: what the ring moves, and the attention calls each rank runs.
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace sim::workload {
namespace {

double executed_gemm_flops(const PassWork& p) {
  double f = 0;
  for (const auto& s : p.segments)
    for (const auto& k : s.kernels)
      if (k.kind != KernelKind::Memory) f += k.flops;
  return f;
}

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

/// Context parallelism's attention as its calls (load-balanced chunks i and 2cp-1-i per rank): one causal call on the
/// rank's own keys, 1/cp of its work at length s/cp, and the rest without a mask at s/2cp, the calls off the diagonal
/// that the non-causal kernel rates time. Same FLOPs in all as one causal call of s/cp queries against s keys.
TEST(LayerCosts, ContextParallelAttentionIsOneCausalCallAndTheRestUnmasked) {
  const auto m = scenario::load_model("llama3-8b");
  auto attention = [&](const PassWork& p) {
    std::vector<Kernel> out;
    for (const auto& seg : p.segments)
      for (const auto& k : seg.kernels)
        if (k.kind == KernelKind::Attention) out.push_back(k);
    return out;
  };
  LayerShape s;
  s.seq_len = 131072;
  const auto one = layer_work(m, s, RecomputeMode::None);
  ASSERT_EQ(attention(one.forward).size(), 1u);
  EXPECT_TRUE(attention(one.forward)[0].causal);
  for (int cp : {2, 8}) {
    s.cp = cp;
    const auto w = layer_work(m, s, RecomputeMode::None);
    for (const PassWork* p : {&w.forward, &w.backward_input}) {
      const auto calls = attention(*p);
      ASSERT_EQ(calls.size(), 2u) << "cp " << cp;
      const double local = 131072.0 / cp;
      EXPECT_TRUE(calls[0].causal);
      EXPECT_EQ(calls[0].m, local);
      EXPECT_EQ(calls[0].n, local);
      EXPECT_FALSE(calls[1].causal);
      EXPECT_EQ(std::min(calls[1].m, calls[1].n), local / 2);
      const double total = calls[0].flops + calls[1].flops;
      EXPECT_NEAR(calls[0].flops / total, 1.0 / cp, 1e-12) << "cp " << cp;
      // The whole is what one call of the local queries against every key does (the causal half of s/cp x s):
      // 4 x 32 heads x 128 per score forward, 2.5x that backward.
      const double per_score = (p == &w.forward ? 1.0 : 2.5) * 4.0 * 128 * 32;
      EXPECT_NEAR(total / (per_score * local * 131072 * 0.5), 1.0, 1e-12) << "cp " << cp;
    }
  }
  // Without a causal mask nothing is split: every call is unmasked.
  s.causal = false;
  const auto encoder = attention(layer_work(m, s, RecomputeMode::None).forward);
  ASSERT_EQ(encoder.size(), 1u);
  EXPECT_FALSE(encoder[0].causal);
}

}  // namespace
}  // namespace sim::workload
