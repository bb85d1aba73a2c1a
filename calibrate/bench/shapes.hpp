// calibrate/bench/shapes.hpp: the GEMM shapes `measure` times: every GEMM of the built-in models' layers as
// sim/workload/layer_costs.cpp counts them, at tp 1, 2, 4, 8 and micro-batch 1-4, plus squares and a k sweep.
// Standard library only (GPU nodes build this without the rest of trainsim); a unit test checks the table and the
// shapes against models/*.json and layer_costs.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace calibrate::bench {

/// A built-in model's dimensions, as in models/*.json.
struct ModelDims {
  const char* name;
  int hidden, ffn_hidden, heads, kv_heads, vocab;
  bool gated;            // SwiGLU: gate and up projections fused into one GEMM of 2 x ffn_hidden columns
  bool fused_attention;  // RoPE models train with flash attention (sim/parallel default_flash_attention)
  int experts, top_k, expert_ffn_hidden;  // 0 for dense models
  int seq_len;                            // pre-training sequence: min(max_seq_len, 8192)
};

inline constexpr int kMaxSeqLen = 8192;

inline constexpr std::array<ModelDims, 7> kBuiltinModels{{
    {"gpt3-175b", 12288, 49152, 96, 96, 50257, false, false, 0, 0, 0, 2048},
    {"llama2-70b", 8192, 28672, 64, 8, 32000, true, true, 0, 0, 0, 4096},
    {"llama3-8b", 4096, 14336, 32, 8, 128256, true, true, 0, 0, 0, 8192},
    {"llama3-70b", 8192, 28672, 64, 8, 128256, true, true, 0, 0, 0, 8192},
    {"llama3-405b", 16384, 53248, 128, 8, 128256, true, true, 0, 0, 0, 8192},
    {"mixtral-8x7b", 4096, 14336, 32, 8, 32000, true, true, 8, 2, 14336, 8192},
    {"mixtral-8x22b", 6144, 16384, 48, 8, 32768, true, true, 8, 2, 16384, 8192},
}};

/// C (m x n) = A (m x k) B (k x n), `batch` times.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string label;  // "llama3-70b tp8 mb1 qkv fwd"
  auto key() const { return std::tuple(m, n, k, batch); }
};

/// Ceiling division: a vocabulary that tp does not divide is padded (Megatron pads to a multiple of 128 x tp).
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/// One GPU's GEMMs for one transformer layer plus the output layer (cp = ep = 1), following layer_costs.cpp:
///   qkv (tokens, (q + 2 kv) d, h); [unfused attention: scores (s, s, d, mb q), context (s, d, s, mb q)];
///   attn_out (tokens, h, q d); mlp_up (tokens, 2f or f, h), mlp_down (tokens, h, f) or, for MoE, router
///   (tokens, E, h) and experts (tokens top_k / E, 2 f_e or f_e, h) and (.., h, f_e), E at a time; logits
///   (tokens, ceil(V / tp), h).
/// With `backward`, each GEMM's input gradient (m, k, n) and weight gradient (k, n, m) as well; the unfused attention
/// core's backward GEMMs repeat its forward shapes.
inline std::vector<GemmShape> model_gemms(const ModelDims& d, int tp, int micro_batch, bool backward) {
  const std::int64_t s = d.seq_len;
  const std::int64_t tokens = std::int64_t{micro_batch} * s;
  const std::int64_t head_dim = d.hidden / d.heads;
  const std::int64_t q = d.heads / tp;
  const std::int64_t kv = std::max<std::int64_t>(1, d.kv_heads / tp);
  const std::int64_t f = d.ffn_hidden / tp;
  const std::string prefix =
      std::string(d.name) + " tp" + std::to_string(tp) + " mb" + std::to_string(micro_batch) + " ";
  struct Fwd {
    const char* name;
    std::int64_t m, n, k, batch;
    bool attention_core;
  };
  std::vector<Fwd> fwd{{"qkv", tokens, (q + 2 * kv) * head_dim, d.hidden, 1, false}};
  if (!d.fused_attention) {
    fwd.push_back({"scores", s, s, head_dim, micro_batch * q, true});
    fwd.push_back({"context", s, head_dim, s, micro_batch * q, true});
  }
  fwd.push_back({"attn_out", tokens, d.hidden, q * head_dim, 1, false});
  const std::int64_t up = d.gated ? 2 : 1;
  if (d.experts == 0) {
    fwd.push_back({"mlp_up", tokens, up * f, d.hidden, 1, false});
    fwd.push_back({"mlp_down", tokens, d.hidden, f, 1, false});
  } else {
    const std::int64_t fe = d.expert_ffn_hidden / tp;
    const std::int64_t per_expert = tokens * d.top_k / d.experts;  // balanced routing, capacity factor 1
    fwd.push_back({"router", tokens, d.experts, d.hidden, 1, false});
    fwd.push_back({"expert_up", per_expert, up * fe, d.hidden, d.experts, false});
    fwd.push_back({"expert_down", per_expert, d.hidden, fe, d.experts, false});
  }
  fwd.push_back({"logits", tokens, ceil_div(d.vocab, tp), d.hidden, 1, false});

  std::vector<GemmShape> out;
  for (const auto& g : fwd) {
    out.push_back({g.m, g.n, g.k, g.batch, prefix + g.name + " fwd"});
    if (!backward) continue;
    if (g.attention_core) {
      out.push_back({g.m, g.n, g.k, g.batch, prefix + g.name + " bwd"});
      continue;
    }
    out.push_back({g.m, g.k, g.n, g.batch, prefix + g.name + " dgrad"});
    out.push_back({g.k, g.n, g.m, g.batch, prefix + g.name + " wgrad"});
  }
  return out;
}

/// Squares and a k sweep at m = n = 8192: the k half-point of the efficiency is seen where k is small.
inline std::vector<GemmShape> probe_gemms(bool quick) {
  std::vector<GemmShape> out;
  for (std::int64_t n = quick ? 1024 : 256; n <= 16384; n *= 2)
    out.push_back({n, n, n, 1, "square " + std::to_string(n)});
  for (std::int64_t k = 64; k <= 16384; k *= 2)
    out.push_back({8192, 8192, k, 1, "k sweep " + std::to_string(k)});
  return out;
}

/// The sweep: quick = forward GEMMs at micro-batch 1 (every tp) and the probes; full = forward and backward at
/// micro-batch 1-4. Duplicates (the same m, n, k, batch from several models) are timed once, under the first label.
inline std::vector<GemmShape> sweep_shapes(bool quick) {
  std::vector<GemmShape> all = probe_gemms(quick);
  for (const auto& d : kBuiltinModels)
    for (int tp : {1, 2, 4, 8})
      for (int mb = 1; mb <= (quick ? 1 : 4); ++mb)
        for (auto& g : model_gemms(d, tp, mb, !quick))
          all.push_back(std::move(g));
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> seen;
  std::vector<GemmShape> out;
  for (auto& g : all)
    if (seen.insert(g.key()).second) out.push_back(std::move(g));
  return out;
}

}  // namespace calibrate::bench
