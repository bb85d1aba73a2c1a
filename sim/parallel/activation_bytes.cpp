// sim/parallel/activation_bytes.cpp: the activations one transformer layer stores on one GPU, by tensor
// (Korthikanti et al. 2022 and what today's kernels keep; activation_bytes.hpp), and the per-layer figure of
// memory.hpp's layer_activation_bytes under each recomputation.
#include "sim/parallel/activation_bytes.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <cmath>

namespace sim::parallel {
namespace activation_bytes {

using workload::Activation;
using workload::ModelSpec;

double gradient_working_bytes(const ModelSpec& m, const ActivationShape& a) {
  const double s = static_cast<double>(a.seq_len) / a.cp;
  const double b = a.micro_batch;
  double tokens = s * b, f = m.dense_ffn() / static_cast<double>(a.tp);
  if (m.moe && a.moe_layer) {
    const double etp = a.expert_tp > 0 ? a.expert_tp : a.tp;
    tokens = s * b * m.moe->top_k * etp / a.tp * a.moe_imbalance;
    f = m.moe->ffn_hidden / etp;
  }
  const double inner = m.gated() ? 2 * f : f;
  return a.element_bytes * tokens * std::max(f + inner, inner + static_cast<double>(m.hidden));
}

}  // namespace activation_bytes

namespace {

using namespace activation_bytes;
using workload::Activation;
using workload::ModelSpec;

/// Activation bytes of one MLP block's inner tensors for `tokens` tokens of inner size f on one TP rank:
/// GELU stores its input and output (Korthikanti: 2 x 2sbf/t = 16sbh/t for f = 4h); SwiGLU stores the gate and up
/// projections it multiplies (2 x 2sbf/t) and their product, the down projection's input (2sbf/t). With FP8
/// activations the down projection's input is kept in FP8 (1 byte; MemoryOptions::fp8_activations). `elem`: bytes
/// per element (ActivationShape::element_bytes).
double mlp_inner_bytes(const ModelSpec& m, double tokens, double f, double t, double elem, bool fp8 = false) {
  const double per_matrix = elem * tokens * f / t;
  const double down_input = (fp8 ? kFp8 : elem) * tokens * f / t;
  return (m.gated() ? 2 * per_matrix : per_matrix) + down_input;
}

/// Activation bytes of the attention scores of one layer on one rank (Korthikanti Sec. 4.1): softmax output
/// 2as^2b, its dropout mask as^2b and the dropout output 2as^2b, divided by t; with context parallelism the local
/// queries (s/cp) meet every key (s). Fused attention keeps only the fp32 log-sum-exp per query row and head
/// (FlashAttention-2, Dao 2023) and regenerates dropout from the RNG state (Dao et al. 2022, Sec. 3.1).
double score_bytes(const ModelSpec& m, const ActivationShape& a) {
  const double heads = static_cast<double>(m.heads) / a.tp;
  const double b = a.micro_batch;
  const double s_q = static_cast<double>(a.seq_len) / a.cp;
  if (a.flash_attention) return kFp32 * heads * s_q * b;
  const double s_k = a.seq_len;
  const double per_element = a.element_bytes + (a.attention_dropout ? kMask + a.element_bytes : 0.0);
  return per_element * heads * s_q * s_k * b;
}

/// Bytes of one MoE block's tensors beyond its input (Megatron-Core token dispatch with top-k routing), by part.
struct MoeParts {
  double routing = 0;     // router probabilities and the dispatched inputs and outputs
  double experts = 0;     // routed experts' inner activations
  double expert_act = 0;  // of which the activation output (the down projection's input): moe_act recomputes it
  double shared = 0;      // shared experts' inner activations
  double total() const { return routing + experts + shared; }
};

MoeParts moe_parts(const ModelSpec& m, const ActivationShape& a, double sigma) {
  const auto& e = *m.moe;
  const double s = static_cast<double>(a.seq_len) / a.cp;
  const double b = a.micro_batch;
  const double h = m.hidden;
  const double t = a.tp;
  // Token copies one rank's experts process, with balanced routing: the k copies of the tokens gathered over the
  // expert-tensor-parallel group (all of the TP group's tokens when expert_tp = tp; with MoE parallel folding and
  // expert_tp < tp, sequence parallelism leaves each rank s*b/t tokens, gathered over expert_tp ranks).
  const double etp = a.expert_tp > 0 ? a.expert_tp : t;
  // The busiest expert-parallel rank receives moe_imbalance times the mean (MemoryOptions::moe_imbalance).
  const double routed = s * b * e.top_k * etp / t * a.moe_imbalance;
  const double in_bytes = a.fp8_activations ? kFp8 : a.element_bytes;  // the experts' first GEMM input
  MoeParts p;
  p.routing = kFp32 * s * b * e.experts * sigma;  // router probabilities (fp32: assumption)
  // The dispatched expert inputs. Not the expert outputs: Megatron-Core 0.13's "memory efficient token permutation
  // by moving the probs multiplication from unpermutation to activation function of GroupedMLP" (Megatron-LM
  // megatron/core/transformer/moe/README.md, What's New) leaves the combine nothing to save.
  p.routing += in_bytes * routed * h;
  p.experts = mlp_inner_bytes(m, routed, e.ffn_hidden, etp, a.element_bytes,
                              a.fp8_activations);  // routed experts' inner tensors
  p.expert_act = (a.fp8_activations ? kFp8 : a.element_bytes) * routed * e.ffn_hidden / etp;
  p.shared = mlp_inner_bytes(m, s * b, m.shared_expert_ffn(), t, a.element_bytes,
                             a.fp8_activations);  // shared experts see all
  return p;
}

/// Stored activations of one layer by what the recompute modules can drop. full() is the layer with no
/// recomputation (the sum of every tensor listed in memory.hpp).
struct LayerParts {
  double input = 0;     // the layer input (the input norm's input): what full recomputation keeps
  double fixed = 0;     // tensors no module recomputes
  double scores = 0;    // core attention: scores / softmax / dropout, or the fused kernel's statistics
  double norm_out = 0;  // the two norm outputs (the QKV projection's and the MLP's inputs)
  double mlp = 0;       // dense MLP inner tensors
  double mlp_act = 0;   // of which the activation output
  MoeParts moe;
  double mla_up = 0;  // MLA: the up-projected queries, keys and values
  double full() const { return input + fixed + scores + norm_out + mlp + moe.total() + mla_up; }
};

LayerParts layer_parts(const ModelSpec& m, const ActivationShape& a) {
  const double s = static_cast<double>(a.seq_len) / a.cp;
  const double b = a.micro_batch;
  const double h = m.hidden;
  const double t = a.tp;
  // Korthikanti Sec. 4.2.2: sequence parallelism shards the tensors outside the TP regions (norm inputs, block
  // inputs, dropout masks) over t; without it every TP rank stores them whole.
  const double sigma = a.sequence_parallel ? 1.0 / t : 1.0;
  const double sbh = s * b * h;
  const double sbq = s * b * m.q_width();  // all query heads (= sbh unless head_dim is given)
  const double kv = static_cast<double>(kv_heads_per_rank(m, a.tp)) * m.head_dim();
  const double mask = a.dropout ? kMask : 0.0;
  const bool moe = m.moe && a.moe_layer;
  const double elem = a.element_bytes;  // a stored activation element: 2 bytes, 4 in fp32 training

  LayerParts p;
  // Attention block (Korthikanti: 11sbh + 5as^2b).
  p.input = elem * sbh * sigma;                            // input norm's input
  const double gemm_in = a.fp8_activations ? kFp8 : elem;  // what a linear layer saves of its input
  // The QKV projection's input; whole with DTensor tensor parallelism (MemoryOptions::sp_gathered_inputs).
  const double norm_share = a.sp_gathered_inputs ? 1.0 : sigma;
  p.norm_out = gemm_in * sbh * norm_share;
  if (m.mla) {
    // MLA (DeepSeek-V2 Sec. 2.1.2): the latents the down projections write, the up projections' inputs, on every TP
    // rank (q_lora_rank, kv_lora_rank + the RoPE key); the up-projected per-head queries, keys (nope + rope) and
    // values, split over t (what mla_up_proj recomputes); the attention output, heads * v_head_dim / t.
    const auto& l = *m.mla;
    const double heads = static_cast<double>(m.heads) / t;
    p.fixed += elem * s * b * (l.q_lora_rank + l.kv_lora_rank + l.qk_rope_head_dim);
    p.mla_up = elem * s * b * heads * (2.0 * m.head_dim() + l.v_head_dim);
    p.fixed += gemm_in * s * b * heads * l.v_head_dim;
  } else {
    p.fixed = elem * sbq / t;          // Q
    p.fixed += 2 * elem * s * b * kv;  // K and V (GQA: kv_heads * head_dim wide)
    p.fixed += gemm_in * sbq / t;      // attention output: the output projection's input
  }
  p.scores = score_bytes(m, a);   // scores / softmax, or the fused kernel's statistics
  p.fixed += mask * sbh * sigma;  // attention-block dropout mask
  // MLP block (Korthikanti: 19sbh for GELU with f = 4h).
  p.fixed += elem * sbh * sigma;  // post-attention norm's input
  // The router's, shared experts' or first MLP projection's input (the norm's output).
  p.norm_out += gemm_in * sbh * norm_share;
  if (moe) {
    p.moe = moe_parts(m, a, sigma);
  } else {
    p.mlp = mlp_inner_bytes(m, s * b, m.dense_ffn(), t, a.element_bytes, a.fp8_activations);
    p.mlp_act = gemm_in * s * b * m.dense_ffn() / t;
  }
  p.fixed += mask * sbh * sigma;  // MLP dropout mask
  return p;
}

/// What selective recomputation with `modules` does not store of a layer (Megatron-Core recompute_modules).
double recomputed_bytes(const LayerParts& p, unsigned modules) {
  double r = 0;
  if (modules & kRecomputeCoreAttn) r += p.scores;
  if (modules & kRecomputeLayernorm) r += p.norm_out;
  if (modules & kRecomputeMlp) {
    r += p.mlp;
  } else if (modules & kRecomputeMoeAct) {
    r += p.mlp_act;  // moe_act on a dense layer: Megatron-Core applies it to the dense MLP's activation too (assumed)
  }
  if (modules & kRecomputeMoe) {
    r += p.moe.total();
  } else {
    if (modules & kRecomputeMoeAct) r += p.moe.expert_act;
    if (modules & kRecomputeSharedExperts) r += p.moe.shared;
  }
  if (modules & kRecomputeMlaUpProj) r += p.mla_up;
  return r;
}

}  // namespace

double layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape) {
  SIM_ASSERT(shape.seq_len > 0 && shape.micro_batch > 0 && shape.tp > 0 && shape.cp > 0, "activation shape sizes");
  const LayerParts parts = layer_parts(model, shape);
  switch (shape.recompute) {
    case Recompute::Full:
      // Korthikanti Table 2: only the layer input survives, 2sbh (sharded over t with sequence parallelism).
      return parts.input;
    case Recompute::Selective:
      // Korthikanti Sec. 5 (core attention: the 5as/h term, or the fused kernel's statistics, is not stored), and
      // Megatron-Core's finer modules (memory.hpp).
      return parts.full() - recomputed_bytes(parts, shape.recompute_modules);
    case Recompute::Op: {
      // TorchTitan's per-operator policy (parallel_config.hpp) on a dense block: the block input, the saved matmul
      // outputs (wq's queries, wv's values, w1's output and w2's output, which is the whole sequence before its
      // reduce-scatter), the attention kernel's output and statistics, and the two reduce-scatter outputs with
      // tensor parallelism. MoE and MLA blocks are refused by resolve_layout (rule recompute-op-dense).
      if (model.mla || (model.moe && shape.moe_layer)) return parts.full();
      const double s = static_cast<double>(shape.seq_len) / shape.cp, b = shape.micro_batch;
      const double t = shape.tp, h = model.hidden;
      const double kv = static_cast<double>(kv_heads_per_rank(model, shape.tp)) * model.head_dim();
      const double e = shape.element_bytes;
      const double tp_outputs = t > 1 ? 2 * e * s * b * h / t : 0.0;
      return parts.input + e * s * b * (2 * model.q_width() / t + kv + model.dense_ffn() / t + h) + parts.scores +
             tp_outputs;
    }
    case Recompute::None:
      return parts.full();
  }
  return parts.full();
}

}  // namespace sim::parallel
