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

  double per_layer() const { return attention_per_layer + mlp_per_layer + router_per_layer + norms_per_layer; }
  double total(int layers) const { return embedding + position + output + final_norm + layers * per_layer(); }
  /// Parameters touched per token (MoE: only the routed top_k experts).
  double active(int layers) const {
    return embedding + position + output + final_norm +
           layers * (attention_per_layer + active_mlp_per_layer + router_per_layer + norms_per_layer);
  }
};

/// Counts every weight matrix, bias and norm of the architecture:
///   attention: Q and O are h x h, K and V are h x (kv_heads * head_dim) (GQA, Ainslie et al. 2023);
///   MLP: 2 h x f matrices for GELU, 3 for SwiGLU (Shazeer 2020, "GLU Variants Improve Transformer");
///   biases where the model has them (GPT-3: 12lh^2 + 13lh per stack, Narayanan et al. SC21 Sec. 3).
ParamCounts count_params(const ModelSpec& m);

}  // namespace sim::workload
