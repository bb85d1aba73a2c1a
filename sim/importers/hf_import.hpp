// sim/importers/hf_import.hpp: (internal to the Hugging Face importer) the reader of one config.json: the keys it
// reads, what it writes into the model draft, and the rules of particular model types. hf_config.cpp holds the walk
// over the keys every config has, hf_model_rules.cpp the rules of particular model types (transformers' modeling
// code, or the model's own remote code).
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/importers/importers.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sim::importers::detail {

using base::JsonReader;
using base::Range;
using Kind = JsonReader::Kind;

class HfImport {
 public:
  HfImport(const std::string& origin, JsonReader& in) : origin_(origin), in_(in) {}

  Import run();

 private:
  std::string at(std::string_view key) const { return origin_ + " " + in_.path(key); }

  /// The first of `keys` present (null counts as absent, as in transformers), as a positive integer.
  void count(const char* path, std::initializer_list<const char*> keys, Range r = Range::at_least(1)) {
    for (const char* k : keys) {
      const auto kind = in_.kind(k);
      if (kind == Kind::Missing) continue;
      used_.push_back(k);
      if (kind == Kind::Null) continue;
      std::int64_t v = 0;
      if (in_.required(k, v, Range::between(r.min, 1e12))) out_.draft.put(path, v, at(k));
      return;
    }
  }

  bool text(const char* key, std::string& out) {
    if (in_.kind(key) == Kind::Missing || in_.kind(key) == Kind::Null) return false;
    used_.push_back(key);
    return in_.required(key, out);
  }

  std::optional<bool> bool_key(const char* key) {
    if (in_.kind(key) == Kind::Missing || in_.kind(key) == Kind::Null) return std::nullopt;
    used_.push_back(key);
    bool b = false;
    if (!in_.required(key, b)) return std::nullopt;
    return b;
  }

  /// silu/swish MLPs in these configs are gated (three matrices): trainsim's "swiglu". GeLU variants are the
  /// two-matrix GPT MLP, except in the gated architectures above ("geglu").
  void activation(const std::string& model_type);

  /// A key that is present and not null (transformers treats null as absent).
  bool present(const char* key) const { return in_.kind(key) != Kind::Missing && in_.kind(key) != Kind::Null; }

  std::optional<std::int64_t> int_key(const char* key) {
    if (!present(key)) return std::nullopt;
    used_.push_back(key);
    std::int64_t v = 0;
    if (!in_.required(key, v, Range::between(-1, 1e12))) return std::nullopt;
    return v;
  }

  /// Keys beyond the classic decoder layer: head_dim, MLA, dense and MoE layers, sliding windows, layer kinds, QK-norm,
  /// multi-token prediction. What trainsim does not model (linear or state-space attention) is refused, never dropped.
  void architecture_checks(const std::string& model_type);
  void moe_defaults(const std::string& model_type);

  // Rules of particular model types (hf_model_rules.cpp).
  void biases(const std::string& model_type);
  void qwen_remote_code();
  void llama4();
  void shared_expert();
  void falcon();
  void chatglm();
  void positions(const std::string& model_type);
  void gemma_defaults(const std::string& model_type);
  /// transformers 5's mlp_layer_types ("dense" or "sparse" per layer): the MoE layer pattern.
  void mlp_layer_types();
  /// Attention trainsim does not model (DeepSeek Sparse Attention's indexer, bidirectional attention): refused.
  void attention_kinds(const std::string& model_type);

  const std::string& origin_;
  JsonReader& in_;
  Import out_;
  std::vector<std::string> used_;
  std::vector<std::string> ignored_;
};

}  // namespace sim::importers::detail
