// sim/workload/params.hpp: parameter counts of a model, per component, derived per weight matrix (not from 6N).
#pragma once
#include "sim/workload/model_spec.hpp"

namespace sim::workload {

/// Parameter counts (as doubles: 405B does not fit an int32, and sums stay exact below 2^53).
struct ParamCounts {
  double embedding = 0;  // vocab x hidden
  double position = 0;   // learned positions: max_seq_len x hidden
  double output = 0;     // untied output projection: vocab x hidden (0 when tied)
  double attention_per_layer = 0;
  double mlp_per_layer = 0;     // dense MLP, or all experts (+ shared experts) of an MoE layer
  double router_per_layer = 0;  // MoE gate: hidden x experts
  double norms_per_layer = 0;
  double final_norm = 0;
  double active_mlp_per_layer = 0;  // dense MLP, or top_k + shared experts
  double shared_mlp_per_layer = 0;  // the shared experts of an MoE layer (part of mlp_per_layer)
  /// An MoE model's dense layers (first_k_dense, layer_freq): how many, and each one's MLP (the model's ffn_hidden).
  int dense_layers = 0;
  double dense_mlp_per_layer = 0;
  /// Multi-token prediction modules (DeepSeek-V3 Sec. 2.2), all together: a transformer layer, two norms and the
  /// 2h x h projection each, sharing the embedding and the output head. Not part of total(): DeepSeek's 671B
  /// excludes its 14B MTP module.
  double mtp = 0;

  /// One layer of the kind most layers are: an MoE layer for a model with experts.
  double per_layer() const { return attention_per_layer + mlp_per_layer + router_per_layer + norms_per_layer; }
  double dense_layer() const { return attention_per_layer + dense_mlp_per_layer + norms_per_layer; }
  /// `layers` is the model's layer count (of which dense_layers are dense).
  double total(int layers) const {
    return embedding + position + output + final_norm + (layers - dense_layers) * per_layer() +
           dense_layers * dense_layer();
  }
  /// Parameters touched per token (MoE: only the routed top_k experts).
  double active(int layers) const {
    return embedding + position + output + final_norm +
           (layers - dense_layers) * (attention_per_layer + active_mlp_per_layer + router_per_layer + norms_per_layer) +
           dense_layers * dense_layer();
  }
};

/// Counts every weight matrix, bias and norm of the architecture:
///   attention: Q and O are h x (heads * head_dim) (h x h unless head_dim is given), K and V are
///   h x (kv_heads * head_dim) (GQA, Ainslie et al. 2023); with qk_norm a norm of head_dim on queries and keys
///   (Qwen3); MLA (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1.2): W_DQ h x q_lora, W_UQ q_lora x heads*(nope+rope),
///   W_DKV and W_KR h x (kv_lora + rope), W_UK and W_UV kv_lora x heads*(nope+v), W_O heads*v x h, and norms on the
///   two latents;
///   MLP: 2 h x f matrices for GELU, 3 for SwiGLU and gated GELU (Shazeer 2020, "GLU Variants Improve Transformer");
///   biases where the model has them (GPT-3: 12lh^2 + 13lh per stack, Narayanan et al. SC21 Sec. 3).
ParamCounts count_params(const ModelSpec& m);

/// One attention block's parameters (the per-layer count above).
double attention_params(const ModelSpec& m);

}  // namespace sim::workload
