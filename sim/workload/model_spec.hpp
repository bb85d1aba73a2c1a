// sim/workload/model_spec.hpp: a transformer's architecture as read from models/*.json (or inline in a scenario).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/base/units.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sim::workload {

/// 2-matrix MLP (GELU; squared ReLU, Nemotron's "squared-relu": So et al., "Primer", arXiv:2109.08668) | 3-matrix
/// gated MLP (SiLU | GELU gate).
enum class Activation { Gelu, SwiGlu, GeGlu, Relu2 };
enum class Norm { LayerNorm, RmsNorm };  // weight+bias | weight only
enum class PositionEmbedding { Learned, Rope };

struct MoeSpec {
  int experts = 0;
  int top_k = 0;
  int ffn_hidden = 0;      // per expert
  int shared_experts = 0;  // always-active experts
  /// Inner size of all shared experts together (Megatron-Core's --moe-shared-expert-intermediate-size); 0: given
  /// none, shared_experts * ffn_hidden.
  int shared_ffn_hidden = 0;
  /// Which layers are MoE layers: the first `first_k_dense` are dense (DeepSeek's first_k_dense_replace), then every
  /// `layer_freq`-th layer (Megatron-LM's --moe-layer-freq N, Hugging Face's moe_layer_freq); or `layer_pattern`, one
  /// 0 (dense) or 1 (MoE) per layer (--moe-layer-freq as a list). Dense layers use the model's ffn_hidden.
  int first_k_dense = 0;
  int layer_freq = 1;
  std::vector<int> layer_pattern;
  /// Group-limited routing (DeepSeek-V2's device-limited, DeepSeek-V3's node-limited routing, arXiv:2412.19437
  /// Sec. 2.1.2; Hugging Face's n_group / topk_group, Megatron-LM's --moe-router-num-groups / --moe-router-group-topk):
  /// the experts in `router_groups` equal groups, a token's top_k chosen within its best `router_group_topk` groups.
  /// 0: no limit.
  int router_groups = 0;
  int router_group_topk = 0;
};

/// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1; DeepSeek-V3): queries through a low-rank
/// latent of q_lora_rank (0: a full h x heads*(nope+rope) projection), keys and values through one latent of
/// kv_lora_rank plus a shared RoPE key of qk_rope_head_dim; per head a qk_nope_head_dim + qk_rope_head_dim query/key
/// and a v_head_dim value. Hugging Face's field names.
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

struct ModelSpec {
  std::string name;
  std::string description;
  int layers = 0;
  int hidden = 0;
  int ffn_hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention; equals heads for multi-head attention
  /// Width of one attention head ("head_dim", Megatron-LM's --kv-channels, Hugging Face's head_dim); 0 when the
  /// file gives none: hidden / heads. Qwen3 and Gemma use heads * head_dim != hidden.
  int kv_channels = 0;
  int vocab = 0;
  Activation activation = Activation::Gelu;
  Norm norm = Norm::LayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::Rope;
  bool bias = false;  // biases on every linear layer (Megatron-LM's add_bias_linear, GPT-2)
  /// Biases on the query, key and value projections only (Megatron-LM's --add-qkv-bias; Qwen2 and Qwen2.5, GLM-4's
  /// attention_bias): implied by `bias`.
  bool qkv_bias = false;
  bool tied_embeddings = false;
  int max_seq_len = 0;
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  bool qk_norm = false;  // RMSNorm on each query and key head (Qwen3, OLMo 2): 2 x head_dim weights per layer
  /// Sliding-window attention (Mistral 7B, Gemma 2/3): a query attends to the last `sliding_window` tokens; 0: none.
  /// With global_every = k > 0 every k-th layer (layers k-1, 2k-1, ...) attends to the whole sequence (Gemma 3's
  /// 5 local : 1 global); 0: every layer is windowed.
  int sliding_window = 0;
  int global_every = 0;
  /// Multi-token prediction modules (DeepSeek-V3 Sec. 2.2; Megatron-Core --mtp-num-layers) on the last stage.
  int mtp_layers = 0;
  std::optional<base::Count> published_params;
  std::optional<base::Count> published_active_params;
  std::map<std::string, std::string> provenance;

  bool gated() const { return activation == Activation::SwiGlu || activation == Activation::GeGlu; }
  /// Whether layer `layer` attends through the sliding window.
  bool is_windowed_layer(int layer) const {
    return sliding_window > 0 && (global_every == 0 || (layer + 1) % global_every != 0);
  }
  /// Whether layer `layer` (0-based) has experts (false for every layer of a dense model).
  bool is_moe_layer(int layer) const;
  /// Layers with experts (0 for a dense model; layers when every layer is an MoE layer).
  int moe_layers() const;
  /// The same model with its experts removed: how one of its dense layers computes (ffn_hidden is their MLP).
  ModelSpec dense_variant() const {
    ModelSpec d = *this;
    d.moe.reset();
    return d;
  }
  /// Inner size of a dense layer's MLP, and of all shared experts of an MoE layer together.
  int dense_ffn() const { return ffn_hidden; }
  int shared_expert_ffn() const {
    return !moe ? 0 : moe->shared_ffn_hidden > 0 ? moe->shared_ffn_hidden : moe->shared_experts * moe->ffn_hidden;
  }
  /// Query/key width of one head (MLA: nope + rope part).
  int head_dim() const {
    if (mla) return mla->qk_nope_head_dim + mla->qk_rope_head_dim;
    return kv_channels > 0 ? kv_channels : hidden / heads;
  }
  /// Value width of one head: head_dim, or MLA's v_head_dim (DeepSeek-V2/V3: 128 beside the keys' 192).
  int value_head_dim() const { return mla ? mla->v_head_dim : head_dim(); }
  /// Width of all query heads together (= hidden unless head_dim says otherwise).
  int q_width() const { return heads * head_dim(); }

  /// Strict parse of a model object (schema "trainsim.model/1"). Field defaults for inline models: kv_heads = heads,
  /// norm = rmsnorm for swiglu else layernorm, position_embedding = rope for swiglu else learned, bias = false,
  /// tied_embeddings = false, max_seq_len = 2048 for learned positions, head_dim = hidden / heads (then heads must
  /// divide hidden). Problems go to the reader's diagnostics.
  static ModelSpec parse(base::JsonReader& in);
};

std::string to_string(Activation a);

}  // namespace sim::workload
