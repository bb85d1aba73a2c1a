// sim/workload/layer_costs.cpp: per-kernel FLOPs and bytes of a transformer layer on one GPU.
#include "sim/workload/layer_costs.hpp"

#include "sim/workload/layer_parts.hpp"

#include <algorithm>
#include <string_view>

namespace sim::workload {

using detail::add;
using detail::attended_keys;
using detail::attention_core_forward;
using detail::compute;
using detail::Dims;
using detail::flash_attention_calls;
using detail::gemm;
using detail::own_chunk_keys;

namespace {

Kernel memory(const char* name, double bytes) {
  return Kernel{KernelKind::Memory, name, 0, 0, 0, 1, 0, bytes};
}

/// Bytes per element of a cast of a 16-bit tensor to FP8 for a GEMM on Hopper, whose FP8 tensor cores take only the
/// "TN" layout, so the wgrad/dgrad GEMMs need a transposed FP8 copy: Transformer Engine's cast_transpose reads the
/// 16-bit tensor (2 B) and writes the FP8 tensor and its transpose (1 + 1 B). Where the cast is fused into the
/// preceding norm (TE's LayerNormLinear) the norm writes FP8 in place of 16 bits, and only the transposed copy is
/// extra (read 1, write 1). Current scaling first reads the 16-bit tensor for its amax (2 B more). Source: NVIDIA
/// Transformer Engine, transformer_engine/common/transpose/cast_transpose.cu and the "FP8 primer" of its docs;
/// torchao.float8 (tensorwise/rowwise dynamic scaling) likewise computes an amax, then casts.
double fp8_cast_bytes(Fp8Scaling f, bool fused_with_norm) {
  if (f == Fp8Scaling::None) return 0;
  const double base = fused_with_norm ? 2.0 : 4.0;
  return base + (f == Fp8Scaling::Current || f == Fp8Scaling::Rowwise ? 2.0 : 0.0);
}

/// Where a linear's FP8 input comes from: cast here from 16 bits, cast inside the norm before it, or received already
/// in FP8 (from an FP8 MoE dispatch), of which only the transposed copy the weight gradient needs is made (read 1,
/// write 1).
enum class Fp8Input { Cast, FusedWithNorm, Received };

/// A linear layer's GEMM, and in FP8 training the cast of its input (m x k) to FP8 before it. The output layer and
/// the router stay 16-bit (Megatron-Core builds them outside Transformer Engine; torchao converts only the
/// transformer blocks' linears), and are made with gemm() directly.
void linear(std::vector<Kernel>& out, const LayerShape& s, const char* name, double m, double n, double k,
            double batch = 1, Fp8Input input = Fp8Input::Cast) {
  Kernel g = gemm(name, m, n, k, batch);
  if (s.fp8 != Fp8Scaling::None) {
    Kernel c = memory("fp8_transpose", m * k * batch * 2.0);
    if (input != Fp8Input::Received) {
      // Row-wise scaling casts the gathered 16-bit tensor (Fp8Scaling::Rowwise), not the norm's shard.
      const bool fused_with_norm = input == Fp8Input::FusedWithNorm && s.fp8 != Fp8Scaling::Rowwise;
      // With sequence parallelism the norm runs on this rank's 1/t of the tokens, and its fused cast with it (the
      // all-gather then carries the cast tensor).
      const double shard = fused_with_norm && s.sequence_parallel && s.tp > 1 ? 1.0 / s.tp : 1.0;
      c = memory("fp8_cast", m * k * batch * shard * fp8_cast_bytes(s.fp8, fused_with_norm));
    }
    c.fp8_cast = true;
    out.push_back(c);
    g.fp8 = true;
  }
  out.push_back(g);
}

Segment comm(CommKind kind, double bytes, std::string label) {
  Segment s;
  s.is_comm = true;
  s.comm = kind;
  s.comm_bytes = bytes;
  s.label = std::move(label);
  return s;
}

Dims dims(const ModelSpec& m, const LayerShape& s) {
  Dims d{};
  d.b = s.micro_batch;
  d.s_local = static_cast<double>(s.seq_len) / s.cp;
  d.s_kv = attended_keys(m, s);  // ring attention: local queries against every key of the sequence (or window)
  d.s_own = own_chunk_keys(m, s);
  d.tokens = d.b * d.s_local;
  d.t = s.tp;
  d.tokens_sp = s.sequence_parallel ? d.tokens / d.t : d.tokens;
  d.h = m.hidden;
  d.d = m.head_dim();
  d.dv = m.value_head_dim();
  d.q_heads = static_cast<double>(m.heads) / s.tp;
  d.kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / s.tp);  // tp divides them (kv-heads-tp); MLA's keep one
  d.f = static_cast<double>(m.ffn_hidden) / s.tp;
  d.etp = s.expert_tp > 0 ? s.expert_tp : s.tp;
  // Folding needs sequence parallelism with tp > 1 (Megatron-Core requires it for MoE with TP; resolve_layout's
  // moe-tp-needs-sp rule), so each rank holds tokens/tp of them before the block.
  const bool folded = m.moe.has_value() && d.etp < s.tp && s.sequence_parallel;
  d.moe_tokens = folded ? d.tokens_sp * d.etp : d.tokens;
  return d;
}

/// MLA's projections in place of the QKV GEMM (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1.2; Megatron-Core MLA): the
/// down projections to the query latent (q_lora_rank; a full h x heads*(nope+rope) projection without one) and to
/// the key/value latent plus the shared RoPE key, replicated on every TP rank; the up projections split over heads.
std::vector<Kernel> mla_projections(const MlaSpec& a, const Dims& d) {
  const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  std::vector<Kernel> out;
  if (a.q_lora_rank > 0) {
    out.push_back(gemm("q_down", d.tokens, a.q_lora_rank, d.h));
    out.push_back(gemm("q_up", d.tokens, d.q_heads * qk, a.q_lora_rank));
  } else {
    out.push_back(gemm("q_proj", d.tokens, d.q_heads * qk, d.h));
  }
  out.push_back(gemm("kv_down", d.tokens, a.kv_lora_rank + a.qk_rope_head_dim, d.h));
  out.push_back(gemm("kv_up", d.tokens, d.q_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank));
  return out;
}

/// The copy that rearranges a sequence-parallel collective's tensor when the sequence is not its outermost dimension
/// (LayerShape::sp_batch_first with more than one sequence per micro-batch): PyTorch's functional collectives gather
/// and scatter along dimension 0, then torch.cat(torch.chunk(...)) the all-gather's output into place, and the same
/// before a reduce-scatter (pytorch/pytorch torch/distributed/_functional_collectives.py at fff02e67,
/// all_gather_tensor and reduce_scatter_tensor with gather_dim / scatter_dim != 0; TorchTitan's parallelize notes that
/// folding the batch into the sequence avoids it, torchtitan PR 437). One read and one write of the whole tensor, its
/// backward the mirror collective's copy of the same bytes.
void sp_layout_copy(PassWork& p, const LayerShape& s, const Dims& d, const std::string& label, double elem_bytes) {
  if (!s.sp_batch_first || !s.sequence_parallel || s.tp <= 1 || s.micro_batch <= 1) return;
  Kernel k = memory("sp_layout_copy", d.tokens * d.h * elem_bytes * 2.0);
  k.mirror_once = true;
  p.segments.push_back(compute(label, {k}));
}

/// The tensor-parallel collective(s) before (entering) or after (leaving) a block, each with its layout copy
/// (sp_layout_copy).
/// In FP8 training the sequence-parallel all-gather before a linear whose input cast is fused into the norm carries
/// the FP8 tensor (Transformer Engine's LayerNormLinear casts the local shard, then gathers it; "FP8 primer",
/// sequence parallelism), 1 byte per element; its backward mirror (the input gradient's reduce-scatter) stays 16-bit.
void tp_enter(PassWork& p, const LayerShape& s, const Dims& d, const std::string& label, bool fp8_input = false) {
  if (s.tp <= 1 || !s.sequence_parallel) return;
  const bool fp8 = fp8_input && s.fp8 != Fp8Scaling::None && s.fp8 != Fp8Scaling::Rowwise;
  Segment c = comm(CommKind::TpAllGather, d.tokens * d.h * (fp8 ? 1.0 : s.act_bytes), label);
  if (fp8) c.backward_bytes = d.tokens * d.h * s.act_bytes;
  p.segments.push_back(std::move(c));
  sp_layout_copy(p, s, d, label + "_copy", fp8 ? 1.0 : s.act_bytes);
}
void tp_leave(PassWork& p, const LayerShape& s, const Dims& d, const std::string& label) {
  if (s.tp <= 1) return;
  sp_layout_copy(p, s, d, label + "_copy", s.act_bytes);
  p.segments.push_back(comm(s.sequence_parallel ? CommKind::TpReduceScatter : CommKind::TpAllReduce,
                            d.tokens * d.h * s.act_bytes, label));
}

std::vector<Kernel> attention_core_backward(const LayerShape& s, const Dims& d) {
  const double bh = d.b * d.q_heads;
  // FlashAttention's backward per score: QK^T again (2d FLOPs), dV = P^T dO and dP = dO V^T (2dv each), dQ = dS K and
  // dK = dS^T Q (2d each): 6d + 4dv, 2.5x the forward's 2d + 2dv when the widths are equal (MLA's are not: DeepSeek-V2/
  // V3's 192 and 128; a user trial found everything charged at 192).
  if (s.flash_attention) return flash_attention_calls(s, d, "flash_attn_bwd", 2.0 * (3.0 * d.d + 2.0 * d.dv), true);
  const double scores = bh * d.s_local * d.s_kv;
  std::vector<Kernel> out{gemm("context_dgrad_v", d.s_kv, d.dv, d.s_local, bh),
                          gemm("context_dgrad_p", d.s_local, d.s_kv, d.dv, bh)};
  if (s.attention_dropout) out.push_back(memory("attn_dropout_bwd", scores * (s.act_bytes * 2 + 1)));
  out.push_back(memory("softmax_bwd", scores * s.act_bytes * 3));
  out.push_back(gemm("scores_dgrad_q", d.s_local, d.d, d.s_kv, bh));
  out.push_back(gemm("scores_dgrad_k", d.s_kv, d.d, d.s_local, bh));
  return out;
}

/// The MLP of a dense layer, or the experts of an MoE layer, as GEMM shapes (m, n, k, count) for one GPU.
struct MlpGemm {
  const char* name;
  double m, n, k, count;
};

std::vector<MlpGemm> mlp_gemms(const ModelSpec& m, const LayerShape& s, const Dims& d) {
  const bool glu = m.gated();
  std::vector<MlpGemm> out;
  if (!m.moe) {
    out.push_back({"mlp_up", d.tokens, (glu ? 2.0 : 1.0) * d.f, d.h, 1});
    out.push_back({"mlp_down", d.tokens, d.h, d.f, 1});
    return out;
  }
  const auto& e = *m.moe;
  const double fe = static_cast<double>(e.ffn_hidden) / d.etp;
  const double local_experts = static_cast<double>(e.experts) / s.ep;
  // Balanced routing: ep GPUs each send b*s*top_k token copies; after dispatch each GPU holds as many, spread over
  // its local experts (Fedus et al. 2022, Switch Transformers, Sec. 2.2; capacity factor 1).
  const double tokens_per_expert = d.moe_tokens * e.top_k / local_experts * s.moe_imbalance;
  out.push_back({"expert_up", tokens_per_expert, (glu ? 2.0 : 1.0) * fe, d.h, local_experts});
  out.push_back({"expert_down", tokens_per_expert, d.h, fe, local_experts});
  if (m.shared_expert_ffn() > 0) {
    // All shared experts together (their own inner size where the model gives one): a dense MLP over the TP group.
    const double fs = static_cast<double>(m.shared_expert_ffn()) / s.tp;
    out.push_back({"shared_up", d.tokens, (glu ? 2.0 : 1.0) * fs, d.h, 1});
    out.push_back({"shared_down", d.tokens, d.h, fs, 1});
  }
  return out;
}

/// Bytes per element of PyTorch's eager ops, counted from the implementations TorchTitan runs
/// (torchtitan/models/norms.py, model.py at commit 9dec370): RMSNorm x.float() (read 2, write 4), pow(2) (4, 4), mean
/// (4), x * rsqrt (4, 4), type_as (4, 2), * weight (2, 2): 36 against a fused kernel's 4; RoPE xq.float() (2, 4), the
/// complex multiply (4, 4), type_as (4, 2): 20 against 4; SwiGLU silu(w1 x) (2, 2) then * w3 x (4, 2): 10 per inner
/// element against 6. LayerNorm (one aten kernel), GELU and the residual add move the same bytes eager or fused.
constexpr double kEagerRmsNormBytes = 36, kEagerRopeBytes = 20, kEagerSwigluBytes = 10;

double activation_bytes(const ModelSpec& m, const LayerShape& s, const Dims& d) {
  // Elementwise activation between the MLP matrices: bias-GELU reads and writes f; SwiGLU reads 2f, writes f.
  const double per_element = !m.gated() ? s.act_bytes * 2.0 : s.eager_kernels ? kEagerSwigluBytes : s.act_bytes * 3.0;
  if (!m.moe) return d.tokens * d.f * per_element;
  const double fe = static_cast<double>(m.moe->ffn_hidden);
  const double elements =
      d.moe_tokens * m.moe->top_k * s.moe_imbalance * fe / d.etp + d.tokens * m.shared_expert_ffn() / s.tp;
  return elements * per_element;
}

PassWork forward_pass(const ModelSpec& m, const LayerShape& s, const Dims& d) {
  PassWork p;
  const bool eager_rms = s.eager_kernels && m.norm == Norm::RmsNorm;
  const double norm_bytes =
      d.tokens_sp * d.h * (eager_rms ? kEagerRmsNormBytes : s.act_bytes * 2);  // read x, write norm(x)
  // Residual add (read two, write one), with the dropout mask when the model trains with dropout.
  const double residual_bytes = d.tokens_sp * d.h * (s.act_bytes * 3 + (s.dropout ? 1 : 0));
  // Attention block.
  add(p, compute("attn_norm", {memory("attn_norm", norm_bytes)}));
  tp_enter(p, s, d, "attn_ag", /*fp8_input=*/!m.mla);
  std::vector<Kernel> attn;
  if (m.mla) {
    // MLA's down/up projections as linears: in FP8 training each casts its input like any other linear.
    for (const auto& k : mla_projections(*m.mla, d))
      linear(attn, s, k.name, k.m, k.n, k.k, k.batch);
  } else {
    linear(attn, s, "qkv", d.tokens, (d.q_heads + 2 * d.kv_heads) * d.d, d.h, 1, Fp8Input::FusedWithNorm);
  }
  if (m.position_embedding == PositionEmbedding::Rope)
    attn.push_back(memory(
        "rope", d.tokens * (d.q_heads + d.kv_heads) * d.d * (s.eager_kernels ? kEagerRopeBytes : s.act_bytes * 2)));
  for (auto& k : attention_core_forward(s, d))
    attn.push_back(k);
  linear(attn, s, "attn_out", d.tokens, d.h, d.q_heads * d.dv);
  Segment a = compute("attn", std::move(attn));
  // Model FLOPs count attention without the causal saving (Narayanan et al. convention).
  for (auto& k : a.kernels) {
    p.executed_flops += k.flops;
    if (k.kind == KernelKind::Gemm) p.model_flops += k.flops;
    if (k.kind == KernelKind::Attention) p.model_flops += s.causal ? 2.0 * k.flops : k.flops;
  }
  p.segments.push_back(std::move(a));
  tp_leave(p, s, d, "attn_rs");
  add(p, compute("attn_residual", {memory("attn_residual", residual_bytes)}));
  // MLP block (or MoE).
  add(p, compute("mlp_norm", {memory("mlp_norm", norm_bytes)}));
  // Routed experts as Megatron-Core's alltoall dispatcher runs them (megatron/core/transformer/moe/token_dispatcher.py
  // at bed33f89, MoEAlltoAllTokenDispatcher): the router, the permutation and the expert-parallel all-to-all take
  // this rank's own sequence-parallel shard (num_local_tokens S/TP*B); the tokens received are then gathered over the
  // expert-TP group, whose ranks each hold a slice of every local expert (gather_from_sequence_parallel_region), and
  // the experts' outputs reduce-scattered back before the combine. A user trial found the all-to-all charged the
  // TP-gathered tokens, tp times the bytes, with TP 2-4 and expert_tp = tp. Shared experts are a dense MLP over the
  // whole TP group, gathered as a dense MLP is.
  const bool shared = m.moe && m.shared_expert_ffn() > 0;
  if (!m.moe || shared) tp_enter(p, s, d, "mlp_ag", /*fp8_input=*/!m.moe);
  // MoE token movement: permute the k routed copies of each token into expert order (read T x h, write kT x h), and
  // after the dispatch (and the expert-TP gather) sort the chunks by local expert (read and write kT x h) when a rank
  // holds more than one expert; the mirror image after the experts (unsort, reduce-scatter, combine, unpermute with
  // the routing weights).
  const double local = m.moe ? d.tokens_sp : 0;
  const double routed = m.moe ? local * m.moe->top_k : 0;
  // What the busiest expert-parallel rank receives in the dispatch (and sends back in the combine), and what its
  // experts take after the expert-TP gather (d.moe_tokens x k x imbalance, the grouped GEMMs' rows) and sort.
  const double received = routed * s.moe_imbalance;
  const double at_experts = received * d.etp;
  // Chunks from several ranks (the all-to-all's, or the expert-TP gather's) are sorted by local expert.
  const bool sort_chunks = m.moe && (s.ep > 1 || d.etp > 1) && m.moe->experts / s.ep > 1;
  // FP8 dispatch (LayerShape::moe_dispatch_fp8): each element crosses as one FP8 byte plus its share of the fp32
  // scale of its 1 x 128 tile (DeepEP's FP8 dispatch input: the FP8 tensor and [tokens, hidden / 128] fp32 scales).
  const bool fp8_dispatch = m.moe && s.ep > 1 && s.moe_dispatch_fp8 && s.fp8 != Fp8Scaling::None;
  constexpr double kFp8Dispatch = 1.0 + 4.0 / 128;
  const double dispatched = fp8_dispatch ? kFp8Dispatch : s.act_bytes;
  // With FP8 dispatch the permutation and the sort after the dispatch move FP8 tokens; their backward mirrors move
  // the 16-bit gradients, as without it.
  auto moved = [&](const char* name, double elements) {
    Kernel k = memory(name, elements * dispatched);
    if (fp8_dispatch) k.backward_bytes = 2.0 * elements * s.act_bytes;
    return k;
  };
  if (m.moe) {
    std::vector<Kernel> route{gemm("router", local, m.moe->experts, d.h),
                              memory("topk", local * m.moe->experts * 4 * 2)};
    if (fp8_dispatch) {
      // The sender casts its tokens once, before they are copied per expert: read 16 bits, write 8 (the tile's
      // amax in the same pass).
      Kernel c = memory("moe_dispatch_cast", local * d.h * 3.0);
      c.fp8_cast = true;
      route.push_back(c);
    }
    route.push_back(moved("moe_permute", (local + routed) * d.h));
    add(p, compute("router", std::move(route)));
    if (s.ep > 1) {
      Segment c = comm(CommKind::EpAllToAll, received * d.h * dispatched, "dispatch");
      if (fp8_dispatch) c.backward_bytes = received * d.h * s.act_bytes;  // the tokens' gradients return 16-bit
      p.segments.push_back(std::move(c));
    }
    if (d.etp > 1) {
      Segment g = comm(CommKind::EtpAllGather, at_experts * d.h * dispatched, "moe_etp_ag");
      if (fp8_dispatch) g.backward_bytes = at_experts * d.h * s.act_bytes;
      p.segments.push_back(std::move(g));
    }
  }
  std::vector<Kernel> mlp;
  if (sort_chunks) mlp.push_back(moved("moe_sort_chunks", 2 * at_experts * d.h));
  const auto gemms = mlp_gemms(m, s, d);
  // A dense MLP's first projection takes the norm's output (its cast fused there); routed experts take permuted
  // tokens, received in FP8 under FP8 dispatch.
  linear(mlp, s, gemms[0].name, gemms[0].m, gemms[0].n, gemms[0].k, gemms[0].count,
         fp8_dispatch ? Fp8Input::Received
         : m.moe      ? Fp8Input::Cast
                      : Fp8Input::FusedWithNorm);
  mlp.push_back(memory("activation", activation_bytes(m, s, d)));
  for (std::size_t i = 1; i < gemms.size(); ++i)
    linear(mlp, s, gemms[i].name, gemms[i].m, gemms[i].n, gemms[i].k, gemms[i].count);
  if (sort_chunks) mlp.push_back(memory("moe_unsort_chunks", 2 * at_experts * d.h * s.act_bytes));
  add(p, compute("mlp", std::move(mlp)));
  if (m.moe && d.etp > 1) {
    Segment r = comm(CommKind::EtpReduceScatter, at_experts * d.h * s.act_bytes, "moe_etp_rs");
    if (fp8_dispatch)
      r.backward_bytes = at_experts * d.h * kFp8Dispatch;  // the output gradients reach the experts in FP8
    p.segments.push_back(std::move(r));
  }
  if (m.moe && s.ep > 1) {
    Segment c = comm(CommKind::EpAllToAll, received * d.h * s.act_bytes, "combine");
    // The output gradients reach the experts in FP8 (DeepSeek-V3 Sec. 3.3.4: the activation gradient before the
    // down-projections is quantised likewise); the experts' own cast of that gradient stays counted per GEMM.
    if (fp8_dispatch) c.backward_bytes = received * d.h * kFp8Dispatch;
    p.segments.push_back(std::move(c));
  }
  if (m.moe) add(p, compute("moe_unpermute", {memory("moe_unpermute", (local + routed) * d.h * s.act_bytes)}));
  if (!m.moe || shared) tp_leave(p, s, d, "mlp_rs");
  add(p, compute("mlp_residual", {memory("mlp_residual", residual_bytes)}));
  return p;
}

/// Backward of the forward's segments in reverse order: each GEMM once for input gradients (B) and once for weight
/// gradients (W); memory-bound kernels about twice their forward traffic; collectives mirrored.
void backward_passes(const ModelSpec& m, const LayerShape& s, const Dims& d, const PassWork& fwd, PassWork& b,
                     PassWork& w) {
  for (auto it = fwd.segments.rbegin(); it != fwd.segments.rend(); ++it) {
    const Segment& seg = *it;
    if (seg.is_comm) {
      Segment c = seg;
      // The backward of an all-gather is a reduce-scatter and vice versa; all-reduce and all-to-all mirror.
      if (seg.comm == CommKind::TpAllGather)
        c.comm = CommKind::TpReduceScatter;
      else if (seg.comm == CommKind::TpReduceScatter)
        c.comm = CommKind::TpAllGather;
      else if (seg.comm == CommKind::EtpAllGather)
        c.comm = CommKind::EtpReduceScatter;
      else if (seg.comm == CommKind::EtpReduceScatter)
        c.comm = CommKind::EtpAllGather;
      c.label = seg.label + "_bwd";
      if (seg.backward_bytes >= 0) {
        c.comm_bytes = seg.backward_bytes;
        c.backward_bytes = -1;
      }
      b.segments.push_back(std::move(c));
      continue;
    }
    std::vector<Kernel> bk, wk;
    bool core_done = false;
    for (const auto& k : seg.kernels) {
      if (k.attention_core) {
        // The attention core's backward is emitted once, where its first kernel stood.
        if (!core_done)
          for (auto& a : attention_core_backward(s, d))
            bk.push_back(a);
        core_done = true;
      } else if (k.fp8_cast) {
        continue;  // the forward's input cast; the backward casts the output gradient (below, per GEMM)
      } else if (k.kind == KernelKind::Memory) {
        bk.push_back(memory(k.name, k.backward_bytes >= 0 ? k.backward_bytes : k.bytes * (k.mirror_once ? 1.0 : 2.0)));
      } else {
        if (k.fp8) {
          // The output gradient (m x n, 16-bit) cast and transposed to FP8 for both backward GEMMs.
          Kernel c = memory("fp8_cast_grad", k.m * k.n * k.batch * fp8_cast_bytes(s.fp8, false));
          c.fp8_cast = true;
          bk.push_back(c);
        }
        // dgrad: (m x n) x (n x k) -> m x k; wgrad: (k x m) x (m x n) -> k x n. Same FLOPs as the forward.
        Kernel dgrad = gemm(k.name, k.m, k.k, k.n, k.batch);
        Kernel wgrad = gemm(k.name, k.k, k.n, k.m, k.batch);
        dgrad.fp8 = wgrad.fp8 = k.fp8;
        bk.push_back(dgrad);
        wk.push_back(wgrad);
      }
    }
    if (!bk.empty()) add(b, compute(seg.label + "_bwd", std::move(bk)));
    if (!wk.empty()) add(w, compute(seg.label + "_wgrad", std::move(wk)));
  }
  (void)m;
  // Model FLOPs of the backward: twice the forward's (the convention of Narayanan et al.), split B/W evenly.
  b.model_flops = fwd.model_flops;
  w.model_flops = fwd.model_flops;
}

/// Forward model FLOPs of every transformer layer (and multi-token prediction layer) given one layer's: an MoE
/// model's dense layers (first_k_dense, layer_freq) run the dense MLP; DeepSeek-V3's MTP modules add a layer each
/// (and their 2h x h projection).
double layer_stack_flops(const ModelSpec& m, const LayerShape& s, double per_layer) {
  const int moe_layers = m.moe ? m.moe_layers() : m.layers;
  double dense_layer = per_layer;
  if (moe_layers < m.layers) dense_layer = layer_work(m.dense_variant(), s, RecomputeMode::None).forward.model_flops;
  const double mtp_projection = 2.0 * s.micro_batch * s.seq_len * 2.0 * m.hidden * m.hidden;
  return moe_layers * per_layer + (m.layers - moe_layers) * dense_layer + m.mtp_layers * (per_layer + mtp_projection);
}

}  // namespace

namespace detail {

Kernel gemm(const char* name, double m, double n, double k, double batch) {
  return Kernel{KernelKind::Gemm, name, m, n, k, batch, 2.0 * m * n * k * batch, 0};
}

Segment compute(std::string label, std::vector<Kernel> ks) {
  Segment s;
  s.label = std::move(label);
  s.kernels = std::move(ks);
  return s;
}

void add(PassWork& p, Segment s, double model_scale) {
  for (const auto& k : s.kernels) {
    p.executed_flops += k.flops;
    if (k.kind != KernelKind::Memory) p.model_flops += k.flops * model_scale;
  }
  p.segments.push_back(std::move(s));
}

std::vector<Kernel> attention_core_forward(const LayerShape& s, const Dims& d) {
  const double bh = d.b * d.q_heads;
  // QK^T and PV, 2d + 2dv per score.
  if (s.flash_attention) return flash_attention_calls(s, d, "flash_attn_fwd", 2.0 * (d.d + d.dv), false);
  const double scores = bh * d.s_local * d.s_kv;
  std::vector<Kernel> out{gemm("scores", d.s_local, d.s_kv, d.d, bh),
                          memory("scale_mask_softmax", scores * s.act_bytes * 2)};
  if (s.attention_dropout) out.push_back(memory("attn_dropout", scores * (s.act_bytes * 2 + 1)));
  out.push_back(gemm("context", d.s_local, d.dv, d.s_kv, bh));
  for (auto& k : out)
    k.attention_core = true;
  return out;
}

}  // namespace detail

const char* to_string(CommKind k) {
  switch (k) {
    case CommKind::TpAllReduce:
      return "tp_all_reduce";
    case CommKind::TpAllGather:
      return "tp_all_gather";
    case CommKind::TpReduceScatter:
      return "tp_reduce_scatter";
    case CommKind::CpExchange:
      return "cp_exchange";
    case CommKind::EpAllToAll:
      return "ep_all_to_all";
    case CommKind::EtpAllGather:
      return "etp_all_gather";
    case CommKind::EtpReduceScatter:
      return "etp_reduce_scatter";
  }
  return "?";
}

LayerWork linear_work(const LayerShape& s, double m, double n, double k) {
  LayerWork w;
  std::vector<Kernel> ks;
  linear(ks, s, "linear", m, n, k);
  add(w.forward, compute("linear", std::move(ks)));
  backward_passes(ModelSpec{}, s, Dims{}, w.forward, w.backward_input, w.backward_weight);
  return w;
}

LayerWork layer_work(const ModelSpec& m, const LayerShape& s, RecomputeMode recompute, const RecomputeSet& modules) {
  const Dims d = dims(m, s);
  LayerWork w;
  w.forward = forward_pass(m, s, d);
  backward_passes(m, s, d, w.forward, w.backward_input, w.backward_weight);
  if (recompute == RecomputeMode::Full) {
    w.recompute = w.forward;
    w.recompute.model_flops = 0;
  } else if (recompute == RecomputeMode::Selective) {
    w.recompute = detail::selective_recompute(m, s, d, w.forward, modules);
  } else if (recompute == RecomputeMode::Op) {
    w.recompute = detail::op_recompute(m, d, w.forward);
  }
  if (s.cp > 1) {
    // Ring attention (Liu et al. 2023; Megatron-Core context parallelism): each rank passes its key/value chunk
    // around the ring, cp-1 steps per pass, beside the attention of the chunk in hand (the step plan times what stays
    // exposed: sim/execution/cp_overlap.hpp). The chunk is
    // what the attention call receives: grouped keys and values, or with repeated_kv one per query head (TorchTitan's
    // Llama calls repeat_kv before SDPA, torchtitan/models/llama/model.py at 0199cbc1, and PyTorch's context parallel
    // gathers what SDPA is given).
    const double kv_bytes = d.tokens * (s.repeated_kv ? d.q_heads : d.kv_heads) * (d.d + d.dv) * s.act_bytes;
    auto insert_cp = [&](PassWork& p, double factor, const char* label) {
      for (std::size_t i = 0; i < p.segments.size(); ++i) {
        const std::string& l = p.segments[i].label;
        if (l == "attn" || l == "attn_bwd" || l == "attn_core_recompute") {
          p.segments.insert(p.segments.begin() + static_cast<std::ptrdiff_t>(i),
                            comm(CommKind::CpExchange, kv_bytes * factor, label));
          return;
        }
      }
    };
    insert_cp(w.forward, 1.0, "cp_kv");
    insert_cp(w.backward_input, 2.0, "cp_kv_bwd");  // keys/values forward again, their gradients back
    // Recomputing the core attention runs its ring again (Megatron-Core checkpoints the attention module, which
    // exchanges the keys and values itself; a tester's trial found the selective recompute without it).
    if (recompute == RecomputeMode::Full || (recompute == RecomputeMode::Selective && modules.core_attn))
      insert_cp(w.recompute, 1.0, "cp_kv");
  }
  return w;
}

LayerWork embedding_work(const ModelSpec& m, const LayerShape& s) {
  const Dims d = dims(m, s);
  LayerWork w;
  add(w.forward, compute("embedding", {memory("embedding_lookup", d.tokens * d.h * s.act_bytes * 2)}));
  // Vocab-parallel embedding: each rank looks up its vocabulary slice and the partial rows are summed.
  tp_leave(w.forward, s, d, "embedding_ar");
  add(w.backward_weight, compute("embedding_wgrad", {memory("embedding_grad", d.tokens * d.h * s.act_bytes * 3)}));
  return w;
}

LayerWork output_work(const ModelSpec& m, const LayerShape& s) {
  const Dims d = dims(m, s);
  const double v = s.vocab_per_rank > 0 ? s.vocab_per_rank : static_cast<double>(m.vocab) / s.tp;
  LayerWork w;
  const bool eager_rms = s.eager_kernels && m.norm == Norm::RmsNorm;
  add(w.forward, compute("final_norm", {memory("final_norm", d.tokens_sp * d.h *
                                                                 (eager_rms ? kEagerRmsNormBytes : s.act_bytes * 2))}));
  tp_enter(w.forward, s, d, "logits_ag");
  const auto [loss_fwd, loss_bwd] = cross_entropy_bytes(s.loss, s.tp > 1, s.act_bytes >= 4);
  Segment logits =
      compute("logits", {gemm("logits", d.tokens, v, d.h), memory("cross_entropy", d.tokens * v * loss_fwd)});
  add(w.forward, std::move(logits));
  add(w.backward_input,
      compute("logits_bwd", {memory("cross_entropy_bwd", d.tokens * v * loss_bwd), gemm("logits", d.tokens, d.h, v)}));
  add(w.backward_weight, compute("logits_wgrad", {gemm("logits", d.h, v, d.tokens)}));
  if (s.tp > 1 && s.sequence_parallel)
    tp_leave(w.backward_input, s, d, "logits_rs_bwd");
  else if (s.tp > 1)
    w.backward_input.segments.push_back(comm(CommKind::TpAllReduce, d.tokens * d.h * s.act_bytes, "logits_ar_bwd"));
  w.backward_input.model_flops = w.forward.model_flops;
  w.backward_weight.model_flops = w.forward.model_flops;
  return w;
}

double model_flops_per_iteration(const ModelSpec& m, int seq_len, double sequences) {
  LayerShape s;
  s.micro_batch = 1;
  s.seq_len = seq_len;
  s.flash_attention = true;
  s.causal = true;
  const double per_layer = layer_work(m, s, RecomputeMode::None).forward.model_flops;
  const double logits = output_work(m, s).forward.model_flops;
  return 3.0 * sequences * (layer_stack_flops(m, s, per_layer) + logits * (1 + m.mtp_layers));
}

}  // namespace sim::workload
