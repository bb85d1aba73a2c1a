// sim/workload/layer_parts.hpp: (internal to sim/workload) what the passes of layer_costs.cpp and the recompute passes
// derived from them (recompute_costs.cpp) share: one layer's shapes on one GPU and the helpers that build its kernels
// and segments.
#pragma once
#include "sim/workload/layer_costs.hpp"

#include <string>
#include <vector>

namespace sim::workload::detail {

/// Shapes shared by the passes of one layer.
struct Dims {
  double b, s_local, s_kv, tokens, tokens_sp, h, d, q_heads, kv_heads, f, t;
  double etp;  // tensor parallelism of the routed experts
  /// Tokens whose routed copies this rank's experts can take: the sequence shards of its expert-TP group (all the TP
  /// group's, or with MoE parallel folding, expert_tp < tp, expert_tp of them).
  double moe_tokens;
  double dv;  // value width of one head: d, or MLA's v_head_dim (DeepSeek-V2/V3: 128 beside q/k's 192)
  /// With context parallelism: the keys the causal call on the rank's own chunks meets, as s_kv counts them
  /// (own_chunk_keys).
  double s_own;
};

/// Keys one query meets, averaged over the layers (attention_calls.cpp), written for the fused kernels' causal halving.
double attended_keys(const ModelSpec& m, const LayerShape& s);
/// Of those, what the causal call on the rank's own chunks meets with context parallelism: s_local for a global layer,
/// at most its window for a sliding-window layer (whose attention then lies mostly on its own chunks), averaged alike.
double own_chunk_keys(const ModelSpec& m, const LayerShape& s);
/// A fused attention pass as its calls (attention_calls.cpp).
std::vector<Kernel> flash_attention_calls(const LayerShape& s, const Dims& d, const char* name, double per_score,
                                          bool backward);

/// A GEMM of m x k by k x n, `batch` times (2mnk FLOPs each).
Kernel gemm(const char* name, double m, double n, double k, double batch = 1);
/// A compute segment of `ks`.
Segment compute(std::string label, std::vector<Kernel> ks);
/// Adds the FLOPs of a segment's kernels to a pass.
void add(PassWork& p, Segment s, double model_scale = 1.0);
/// Attention core forward: scores, softmax, context. Fused (flash) or unfused (two batched GEMMs + softmax).
std::vector<Kernel> attention_core_forward(const LayerShape& s, const Dims& d);

/// The recompute passes of layer_work (recompute_costs.cpp): what a pass runs again before the backward, taken from
/// the forward `fwd`.
PassWork op_recompute(const ModelSpec& m, const Dims& d, const PassWork& fwd);
PassWork selective_recompute(const ModelSpec& m, const LayerShape& s, const Dims& d, const PassWork& fwd,
                             const RecomputeSet& modules);

}  // namespace sim::workload::detail
