// The CPU-side parts of calibrate/bench: the GEMM shapes `measure` times are exactly the GEMMs trainsim simulates for
// the built-in models (sim/workload/layer_costs), and the outlier rejection of timed samples.
#include "calibrate/bench/shapes.hpp"
#include "calibrate/bench/stats.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/base/builtin.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <set>
#include <string>
#include <tuple>

namespace calibrate::bench {
namespace {

using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

Key key_of(const sim::workload::Kernel& k) {
  auto up = [](double v) { return static_cast<std::int64_t>(std::ceil(v)); };
  return {up(k.m), up(k.n), up(k.k), up(k.batch)};
}

void collect(const sim::workload::PassWork& p, std::set<Key>& out) {
  for (const auto& seg : p.segments)
    for (const auto& k : seg.kernels)
      if (k.kind == sim::workload::KernelKind::Gemm) out.insert(key_of(k));
}

TEST(BenchShapes, ModelTableMatchesTheBuiltinModelFiles) {
  // The sweep covers the seven models of DESIGN.md's built-in list; later built-ins (DeepSeek-V3's MLA, Qwen3's
  // head_dim) have GEMM shapes model_gemms does not derive, and are timed from the fitted curves.
  const auto names = sim::base::builtin_names("models");
  ASSERT_EQ(kBuiltinModels.size(), 7u);
  ASSERT_GE(names.size(), kBuiltinModels.size());
  for (const auto& d : kBuiltinModels) {
    SCOPED_TRACE(d.name);
    const auto m = sim::scenario::load_model(d.name);
    EXPECT_EQ(d.hidden, m.hidden);
    EXPECT_EQ(d.ffn_hidden, m.ffn_hidden);
    EXPECT_EQ(d.heads, m.heads);
    EXPECT_EQ(d.kv_heads, m.kv_heads);
    EXPECT_EQ(d.vocab, m.vocab);
    EXPECT_EQ(d.gated, m.activation == sim::workload::Activation::SwiGlu);
    EXPECT_EQ(d.fused_attention, sim::parallel::default_flash_attention(m));
    EXPECT_EQ(d.experts, m.moe ? m.moe->experts : 0);
    EXPECT_EQ(d.top_k, m.moe ? m.moe->top_k : 0);
    EXPECT_EQ(d.expert_ffn_hidden, m.moe ? m.moe->ffn_hidden : 0);
    EXPECT_EQ(d.seq_len, std::min(m.max_seq_len, kMaxSeqLen));
  }
}

TEST(BenchShapes, AreTheGemmsTheSimulatorTimesForEveryModelTpAndMicroBatch) {
  for (const auto& d : kBuiltinModels) {
    const auto model = sim::scenario::load_model(d.name);
    for (int tp : {1, 2, 4, 8})
      for (int mb = 1; mb <= 4; ++mb) {
        SCOPED_TRACE(std::string(d.name) + " tp" + std::to_string(tp) + " mb" + std::to_string(mb));
        sim::workload::LayerShape s;
        s.micro_batch = mb;
        s.seq_len = d.seq_len;
        s.tp = tp;
        s.flash_attention = sim::parallel::default_flash_attention(model);
        s.dropout = s.attention_dropout = sim::parallel::default_dropout(model);
        std::set<Key> simulated;
        const auto layer = sim::workload::layer_work(model, s, sim::workload::RecomputeMode::None);
        const auto output = sim::workload::output_work(model, s);
        for (const auto* p : {&layer.forward, &layer.backward_input, &layer.backward_weight, &output.forward,
                              &output.backward_input, &output.backward_weight})
          collect(*p, simulated);
        std::set<Key> measured;
        for (const auto& g : model_gemms(d, tp, mb, true))
          measured.insert(g.key());
        EXPECT_EQ(measured, simulated);
      }
  }
}

TEST(BenchShapes, QuickSweepIsSmallAndFullSweepHasNoDuplicates) {
  const auto quick = sweep_shapes(true);
  const auto full = sweep_shapes(false);
  std::set<Key> keys;
  for (const auto& g : full)
    keys.insert(g.key());
  EXPECT_EQ(keys.size(), full.size());
  EXPECT_LT(quick.size(), 200u) << "quick: forward shapes at micro-batch 1, three dtypes in about 5 minutes";
  EXPECT_GT(full.size(), quick.size());
  std::cout << "[ shapes ] quick sweep " << quick.size() << " GEMM shapes, full sweep " << full.size() << "\n";
}

TEST(RobustMean, RejectsSamplesBeyondThreeScaledMads) {
  const auto r = robust_mean({1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.60});
  EXPECT_EQ(r.rejected, 1);
  EXPECT_EQ(r.kept, 6);
  EXPECT_NEAR(r.mean, 1.0, 1e-12);
  const auto same = robust_mean({2.0, 2.0, 2.0});
  EXPECT_EQ(same.rejected, 0);
  EXPECT_DOUBLE_EQ(same.mean, 2.0);
}

}  // namespace
}  // namespace calibrate::bench
