// sim/workload/params.cpp: parameter counting per weight matrix.
#include "sim/workload/params.hpp"

namespace sim::workload {
namespace {

/// One MLP block of inner size f (weights and biases).
double mlp_params(const ModelSpec& m, double f) {
  const double h = m.hidden;
  if (m.gated()) return 3.0 * h * f + (m.bias ? 2.0 * f + h : 0.0);
  return 2.0 * h * f + (m.bias ? f + h : 0.0);
}

double norm_params(const ModelSpec& m, double width) {
  return m.norm == Norm::LayerNorm ? 2.0 * width : width;
}

}  // namespace

double attention_params(const ModelSpec& m) {
  const double h = m.hidden;
  if (m.mla) {
    const auto& a = *m.mla;
    const double heads = m.heads;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    double p = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * heads * qk + norm_params(m, a.q_lora_rank)
                                 : h * heads * qk;
    p += h * (a.kv_lora_rank + a.qk_rope_head_dim) + norm_params(m, a.kv_lora_rank);
    p += a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim);
    p += heads * a.v_head_dim * h;
    return p;
  }
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim();
  const double q = m.q_width();
  // Q is h x (heads * head_dim), O its transpose; biases on Q, K, V (qkv_bias) and the output (h, with bias).
  double p = 2.0 * h * q + 2.0 * h * kv + (m.qkv_bias ? q + 2.0 * kv : 0.0) + (m.bias ? h : 0.0);
  if (m.qk_norm) p += 2.0 * norm_params(m, m.head_dim());
  return p;
}

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts p;
  const double h = m.hidden;
  p.embedding = static_cast<double>(m.vocab) * h;
  p.position = m.position_embedding == PositionEmbedding::Learned ? static_cast<double>(m.max_seq_len) * h : 0.0;
  p.output = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
  p.attention_per_layer = attention_params(m);
  const double norm = norm_params(m, h);
  p.norms_per_layer = 2.0 * norm;
  p.final_norm = norm;
  p.dense_mlp_per_layer = mlp_params(m, m.dense_ffn());
  if (m.moe) {
    const double expert = mlp_params(m, m.moe->ffn_hidden);
    const double shared = m.moe->shared_experts > 0 ? mlp_params(m, m.shared_expert_ffn()) : 0.0;
    p.shared_mlp_per_layer = shared;
    p.mlp_per_layer = m.moe->experts * expert + shared;
    p.active_mlp_per_layer = m.moe->top_k * expert + shared;
    p.router_per_layer = h * m.moe->experts;
    p.dense_layers = m.layers - m.moe_layers();
  } else {
    p.mlp_per_layer = p.dense_mlp_per_layer;
    p.active_mlp_per_layer = p.mlp_per_layer;
  }
  // DeepSeek-V3 Sec. 2.2: each MTP module has its own transformer layer (an MoE layer when the model has experts),
  // RMSNorms on the hidden state and on the next token's embedding, and the projection M of 2h x h.
  const double mtp_layer = m.moe ? p.per_layer() : p.dense_layer();
  p.mtp = m.mtp_layers * (mtp_layer + 2.0 * norm + 2.0 * h * h + norm);  // + the module's final norm
  return p;
}

}  // namespace sim::workload
