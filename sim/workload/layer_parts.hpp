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
};

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
