// sim/workload/model_spec.cpp: strict parsing and consistency rules of a model architecture.
#include "sim/workload/model_spec.hpp"

namespace sim::workload {

using base::Range;

std::string to_string(Activation a) {
  return a == Activation::SwiGlu ? "swiglu" : "gelu";
}

ModelSpec ModelSpec::parse(base::JsonReader& in) {
  ModelSpec m;
  std::string schema;
  if (in.optional("schema", schema) && schema != "trainsim.model/1")
    in.error("schema", "\"" + schema + "\" is not a model schema; expected \"trainsim.model/1\"");
  in.required("name", m.name);
  in.optional("description", m.description);
  in.required("layers", m.layers, Range::at_least(1));
  in.required("hidden", m.hidden, Range::at_least(1));
  in.required("ffn_hidden", m.ffn_hidden, Range::at_least(1));
  in.required("heads", m.heads, Range::at_least(1));
  m.kv_heads = m.heads;
  in.optional("kv_heads", m.kv_heads, Range::at_least(1));
  in.required("vocab", m.vocab, Range::at_least(1));
  std::string activation;
  if (in.required_enum("activation", activation, {"gelu", "swiglu"}))
    m.activation = activation == "swiglu" ? Activation::SwiGlu : Activation::Gelu;
  const bool modern = m.activation == Activation::SwiGlu;
  m.norm = modern ? Norm::RmsNorm : Norm::LayerNorm;
  std::string norm;
  if (in.optional_enum("norm", norm, {"layernorm", "rmsnorm"}))
    m.norm = norm == "rmsnorm" ? Norm::RmsNorm : Norm::LayerNorm;
  m.position_embedding = modern ? PositionEmbedding::Rope : PositionEmbedding::Learned;
  std::string pos;
  if (in.optional_enum("position_embedding", pos, {"learned", "rope"}))
    m.position_embedding = pos == "rope" ? PositionEmbedding::Rope : PositionEmbedding::Learned;
  in.optional("bias", m.bias);
  in.optional("tied_embeddings", m.tied_embeddings);
  m.max_seq_len = 2048;
  in.optional("max_seq_len", m.max_seq_len, Range::at_least(1));
  if (auto moe = in.optional_object("moe")) {
    MoeSpec e;
    moe->required("experts", e.experts, Range::at_least(1));
    moe->required("top_k", e.top_k, Range::at_least(1));
    moe->required("ffn_hidden", e.ffn_hidden, Range::at_least(1));
    moe->optional("shared_experts", e.shared_experts, Range::at_least(0));
    moe->finish();
    if (e.experts > 0 && e.top_k > e.experts)
      moe->error("top_k",
                 std::to_string(e.top_k) + " exceeds the number of experts (" + std::to_string(e.experts) + ")");
    m.moe = e;
  }
  if (in.kind("published_params") != base::JsonReader::Kind::Null) {
    base::Count c;
    if (in.optional("published_params", c)) m.published_params = c;
  } else {
    in.accept("published_params");
  }
  if (in.kind("published_active_params") != base::JsonReader::Kind::Null) {
    base::Count c;
    if (in.optional("published_active_params", c)) m.published_active_params = c;
  } else {
    in.accept("published_active_params");
  }
  if (auto prov = in.optional_object("provenance")) {
    for (const auto& k : prov->keys()) {
      std::string text;
      if (prov->required(k, text)) m.provenance[k] = text;
    }
  }
  in.finish();

  // Consistency rules, reported against the field that breaks them.
  if (m.heads > 0 && m.hidden > 0 && m.hidden % m.heads != 0)
    in.error("heads", std::to_string(m.heads) + " does not divide hidden = " + std::to_string(m.hidden) +
                          " (the head dimension must be a whole number)");
  if (m.kv_heads > m.heads)
    in.error("kv_heads", std::to_string(m.kv_heads) + " exceeds heads = " + std::to_string(m.heads));
  else if (m.kv_heads > 0 && m.heads % m.kv_heads != 0)
    in.error("kv_heads", std::to_string(m.kv_heads) + " does not divide heads = " + std::to_string(m.heads) +
                             " (each key/value head serves a whole group of query heads)");
  return m;
}

}  // namespace sim::workload
