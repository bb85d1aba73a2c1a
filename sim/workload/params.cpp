// sim/workload/params.cpp: parameter counting per weight matrix.
#include "sim/workload/params.hpp"

namespace sim::workload {
namespace {

/// One MLP block of inner size f (weights and biases).
double mlp_params(const ModelSpec& m, double f) {
  const double h = m.hidden;
  if (m.activation == Activation::SwiGlu) return 3.0 * h * f + (m.bias ? 2.0 * f + h : 0.0);
  return 2.0 * h * f + (m.bias ? f + h : 0.0);
}

}  // namespace

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts p;
  const double h = m.hidden;
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim();
  p.embedding = static_cast<double>(m.vocab) * h;
  p.position = m.position_embedding == PositionEmbedding::Learned ? static_cast<double>(m.max_seq_len) * h : 0.0;
  p.output = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
  p.attention_per_layer = 2.0 * h * h + 2.0 * h * kv + (m.bias ? 2.0 * h + 2.0 * kv : 0.0);
  const double norm = m.norm == Norm::LayerNorm ? 2.0 * h : h;
  p.norms_per_layer = 2.0 * norm;
  p.final_norm = norm;
  if (m.moe) {
    const double expert = mlp_params(m, m.moe->ffn_hidden);
    p.mlp_per_layer = (m.moe->experts + m.moe->shared_experts) * expert;
    p.active_mlp_per_layer = (m.moe->top_k + m.moe->shared_experts) * expert;
    p.router_per_layer = h * m.moe->experts;
  } else {
    p.mlp_per_layer = mlp_params(m, m.ffn_hidden);
    p.active_mlp_per_layer = p.mlp_per_layer;
  }
  return p;
}

}  // namespace sim::workload
