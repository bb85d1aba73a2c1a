// sim/workload/model_spec.hpp: a transformer's architecture as read from models/*.json (or inline in a scenario).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/base/units.hpp"

#include <map>
#include <optional>
#include <string>

namespace sim::workload {

enum class Activation { Gelu, SwiGlu };  // 2-matrix MLP | 3-matrix gated MLP
enum class Norm { LayerNorm, RmsNorm };  // weight+bias | weight only
enum class PositionEmbedding { Learned, Rope };

struct MoeSpec {
  int experts = 0;
  int top_k = 0;
  int ffn_hidden = 0;      // per expert
  int shared_experts = 0;  // always-active experts of the same size
};

struct ModelSpec {
  std::string name;
  std::string description;
  int layers = 0;
  int hidden = 0;
  int ffn_hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention; equals heads for multi-head attention
  int vocab = 0;
  Activation activation = Activation::Gelu;
  Norm norm = Norm::LayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::Rope;
  bool bias = false;
  bool tied_embeddings = false;
  int max_seq_len = 0;
  std::optional<MoeSpec> moe;
  std::optional<base::Count> published_params;
  std::optional<base::Count> published_active_params;
  std::map<std::string, std::string> provenance;

  int head_dim() const { return hidden / heads; }

  /// Strict parse of a model object (schema "trainsim.model/1"). Field defaults for inline models: kv_heads = heads,
  /// norm = rmsnorm for swiglu else layernorm, position_embedding = rope for swiglu else learned, bias = false,
  /// tied_embeddings = false, max_seq_len = 2048 for learned positions. Problems go to the reader's diagnostics.
  static ModelSpec parse(base::JsonReader& in);
};

std::string to_string(Activation a);

}  // namespace sim::workload
