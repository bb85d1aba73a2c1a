// sim/workload/recompute_costs.cpp: what activation recomputation runs again before a layer's backward, derived from
// its forward pass (split from layer_costs.cpp along that seam).
#include "sim/workload/layer_parts.hpp"

#include <string>
#include <string_view>

namespace sim::workload::detail {

/// TorchTitan's per-operator policy on a block written as PyTorch's Llama is (torchtitan/models/llama3/model.py:
/// separate wq, wk, wv, wo and w1, w3, w2 projections, in that order): the outputs of the 1st, 3rd, ... matmul of the
/// block, of the attention kernel and of the reduce-scatters are saved; the 2nd, 4th, ... matmul (wk, wo, and w3 of a
/// gated MLP or w2 of a plain one) and every other operator (norms, RoPE, activation, residual adds, FP8 casts, the
/// sequence-parallel all-gathers) run again before the backward. Source: torchtitan parallelize_llama.py, _save_list
/// and _custom_policy ("save output of all compute ops, except every second mm"), PR #701 (aten.max saved). The
/// forward's kernels are in fused form here (one QKV and one up projection), so the recomputed matmuls are taken as
/// their column slices: the K part of QKV, the w3 half of a gated up projection.
PassWork op_recompute(const ModelSpec& m, const Dims& d, const PassWork& fwd) {
  PassWork p;
  for (const auto& seg : fwd.segments) {
    if (seg.is_comm) {
      if (seg.comm == CommKind::TpAllGather || seg.comm == CommKind::EtpAllGather) p.segments.push_back(seg);
      continue;
    }
    std::vector<Kernel> ks;
    for (const auto& k : seg.kernels) {
      if (k.kind == KernelKind::Attention || k.attention_core) continue;  // the attention kernel's output is saved
      if (k.kind == KernelKind::Memory) {
        ks.push_back(k);
        continue;
      }
      const std::string name = k.name;
      Kernel g = k;
      if (name == "qkv") {
        g = gemm("qkv", k.m, d.kv_heads * d.d, k.k, k.batch);  // wk
      } else if (name == "mlp_up" && m.gated()) {
        g = gemm("mlp_up", k.m, k.n / 2, k.k, k.batch);  // w3 of w1, w3
      } else if (!(name == "attn_out" || (name == "mlp_down" && !m.gated()))) {
        continue;  // wq, wv, w1 (and w2 of a gated MLP): outputs saved
      }
      g.fp8 = k.fp8;
      ks.push_back(g);
    }
    if (!ks.empty()) add(p, compute(seg.label + "_recompute", std::move(ks)));
  }
  p.model_flops = 0;
  return p;
}

/// Selective recomputation: the forward's kernels (and, for the whole MoE block, its collectives) that `modules` run
/// again, in forward order. core_attn runs the attention core's forward again whatever its kernel: Megatron-Core wraps
/// the core attention in tensor_parallel.checkpoint when "core_attn" is recomputed, Transformer Engine's fused kernels
/// included (megatron/core/transformer/attention.py, checkpoint_core_attention -> _checkpointed_attention_forward), so
/// a fused kernel's forward runs twice, before its backward (which recomputes the scores inside it, as always).
PassWork selective_recompute(const ModelSpec& m, const LayerShape& s, const Dims& d, const PassWork& fwd,
                             const RecomputeSet& modules) {
  PassWork p;
  const bool moe = m.moe.has_value();
  auto wanted = [&](std::string_view segment, const Kernel& k) {
    const std::string_view name = k.name;
    if (modules.layernorm && (segment == "attn_norm" || segment == "mlp_norm")) return true;
    if (modules.mla_up_proj && (name == "q_up" || name == "kv_up" || name == "rope") && m.mla) return true;
    if (moe && modules.moe && (segment == "router" || segment == "mlp" || segment == "moe_unpermute")) return true;
    if (!moe && modules.mlp && segment == "mlp") return true;
    if (modules.moe_act && segment == "mlp" && name == "activation") return true;
    if (moe && modules.shared_experts && (name == "shared_up" || name == "shared_down")) return true;
    return false;
  };
  for (const auto& seg : fwd.segments) {
    if (seg.is_comm) {
      const bool moe_comm = seg.comm == CommKind::EpAllToAll || seg.comm == CommKind::EtpAllGather ||
                            seg.comm == CommKind::EtpReduceScatter;
      if (moe && modules.moe && moe_comm) p.segments.push_back(seg);
      continue;
    }
    std::vector<Kernel> ks;
    for (const auto& k : seg.kernels)
      if (wanted(seg.label, k)) ks.push_back(k);
    if (!ks.empty()) add(p, compute(seg.label + "_recompute", std::move(ks)));
  }
  if (modules.core_attn) add(p, compute("attn_core_recompute", attention_core_forward(s, d)));
  p.model_flops = 0;
  return p;
}

}  // namespace sim::workload::detail
