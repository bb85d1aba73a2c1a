// sim/importers/hf_config.cpp: a Hugging Face model config.json into trainsim model fields.
//
// Key names follow transformers' configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2MoeConfig,
// DeepseekV2Config, GPT2Config); where a key is absent, the class default applies and is noted (e.g.
// num_key_value_heads defaults to num_attention_heads, tie_word_embeddings to true in PretrainedConfig).
#include "sim/base/json_reader.hpp"
#include "sim/importers/importers.hpp"

#include <algorithm>
#include <filesystem>

namespace sim::importers {
namespace {

using base::JsonReader;
using base::Range;
using Kind = JsonReader::Kind;

class HfImport {
 public:
  HfImport(const std::string& origin, JsonReader& in) : origin_(origin), in_(in) {}

  Import run() {
    const auto keys = in_.keys();  // every key is looked at: those not read below are listed as ignored
    Draft& d = out_.draft;
    count("model.layers", {"num_hidden_layers", "n_layer", "num_layers"});
    count("model.hidden", {"hidden_size", "n_embd", "d_model"});
    count("model.heads", {"num_attention_heads", "n_head"});
    count("model.kv_heads", {"num_key_value_heads"});
    count("model.vocab", {"vocab_size"});
    count("model.max_seq_len", {"max_position_embeddings", "n_positions"});
    count("model.moe.experts", {"num_local_experts", "num_experts", "n_routed_experts"});
    count("model.moe.top_k", {"num_experts_per_tok"});
    count("model.moe.ffn_hidden", {"moe_intermediate_size"});
    count("model.moe.shared_experts", {"n_shared_experts"}, Range::at_least(0));
    count("model.ffn_hidden", {"intermediate_size", "n_inner", "ffn_dim"});

    // Name: the Hub id the config was saved from, else the model type, else the file name.
    std::string name;
    if (text("_name_or_path", name) && !name.empty()) {
      d.put("model.name", name, at("_name_or_path"));
    } else if (text("model_type", name) && !name.empty()) {
      d.put("model.name", name, at("model_type"));
    } else {
      d.put("model.name", std::filesystem::path(origin_).stem().string(), origin_ + " (file name)");
    }
    std::string model_type;
    text("model_type", model_type);
    d.put("model.description", "Imported from the Hugging Face config " + origin_ + " by trainsim import hf-config",
          origin_);
    d.put("model.provenance.architecture", "Hugging Face config.json: " + origin_, origin_);

    activation(model_type);
    if (bool_key("tie_word_embeddings")) {
      d.put("model.tied_embeddings", *bool_key("tie_word_embeddings"), at("tie_word_embeddings"));
    } else {
      d.put("model.tied_embeddings", true, origin_ + " (transformers' PretrainedConfig default)", true);
      out_.notes.push_back({origin_, "no tie_word_embeddings: tied, as transformers' PretrainedConfig default"});
    }
    if (bool_key("attention_bias")) d.put("model.bias", *bool_key("attention_bias"), at("attention_bias"));
    if (in_.has("rms_norm_eps")) {
      d.put("model.norm", std::string("rmsnorm"), at("rms_norm_eps"));
      used_.push_back("rms_norm_eps");
    } else {
      for (const char* k : {"layer_norm_eps", "layer_norm_epsilon", "layernorm_epsilon"}) {
        if (!in_.has(k)) continue;
        d.put("model.norm", std::string("layernorm"), at(k));
        used_.push_back(k);
        break;
      }
    }
    if (in_.has("rope_theta") || in_.has("rope_scaling")) {
      d.put("model.position_embedding", std::string("rope"), at(in_.has("rope_theta") ? "rope_theta" : "rope_scaling"));
      used_.insert(used_.end(), {"rope_theta", "rope_scaling"});
    }

    // Defaults of the transformers classes for absent keys.
    if (const auto heads = d.integer("model.heads"); heads && !d.has("model.kv_heads")) {
      d.put("model.kv_heads", *heads, origin_ + " (no num_key_value_heads: multi-head attention)");
    }
    if (const auto h = d.integer("model.hidden"); h && !d.has("model.ffn_hidden") && model_type == "gpt2") {
      d.put("model.ffn_hidden", 4 * *h, origin_ + " (GPT2Config default: n_inner = 4 x n_embd)");
    }
    architecture_checks();
    if (d.has("model.moe.experts")) {
      if (!d.has("model.moe.top_k"))
        out_.unresolved.push_back(
            {origin_, "has experts but no num_experts_per_tok; give --set moe.top_k=K", "model.moe.top_k"});
      if (!d.has("model.moe.ffn_hidden"))
        if (auto f = d.integer("model.ffn_hidden")) d.put("model.moe.ffn_hidden", *f, at("intermediate_size"));
      shared_expert();
      if (!d.has("model.moe.shared_experts")) d.put("model.moe.shared_experts", std::int64_t{0}, origin_);
    }
    for (const auto& k : keys)
      if (std::find(used_.begin(), used_.end(), k) == used_.end()) ignored_.push_back(k);
    if (!ignored_.empty()) {
      std::string list;
      for (const auto& k : ignored_)
        list += (list.empty() ? "" : ", ") + k;
      out_.ignored.push_back({origin_, list + ": not modelled by trainsim"});
    }
    if (!d.has("model.layers") && !d.has("model.hidden") && !d.has("model.heads"))
      in_.error(
          "no architecture found: expected a Hugging Face config.json with num_hidden_layers, hidden_size, "
          "num_attention_heads, intermediate_size and vocab_size");
    return std::move(out_);
  }

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
  /// two-matrix GPT MLP, except in Gemma-style gated configs, which are left to the user.
  void activation(const std::string& model_type) {
    const char* key = in_.has("hidden_act")            ? "hidden_act"
                      : in_.has("activation_function") ? "activation_function"
                                                       : nullptr;
    if (!key) {
      out_.unresolved.push_back({origin_, "no hidden_act: give --set activation=swiglu or gelu", "model.activation"});
      return;
    }
    std::string act;
    if (!text(key, act)) return;
    if (act == "silu" || act == "swish") {
      out_.draft.put("model.activation", std::string("swiglu"), at(key) + " (gated SiLU MLP)");
    } else if (act.starts_with("gelu") && !model_type.starts_with("gemma")) {
      out_.draft.put("model.activation", std::string("gelu"), at(key));
    } else {
      out_.unresolved.push_back({at(key),
                                 "\"" + act + "\"" +
                                     (model_type.starts_with("gemma") ? " in a gated (GeGLU) MLP" : "") +
                                     " is not modelled; accepted: silu, swish (gated, \"swiglu\"), gelu "
                                     "variants (\"gelu\"); give --set activation=swiglu or gelu",
                                 "model.activation"});
    }
  }

  /// A key that is present and not null (transformers treats null as absent).
  bool present(const char* key) const { return in_.kind(key) != Kind::Missing && in_.kind(key) != Kind::Null; }

  std::optional<std::int64_t> int_key(const char* key) {
    if (!present(key)) return std::nullopt;
    used_.push_back(key);
    std::int64_t v = 0;
    if (!in_.required(key, v, Range::between(-1, 1e12))) return std::nullopt;
    return v;
  }

  /// Keys that change the architecture in ways trainsim does not model yet: refused, never dropped.
  void architecture_checks() {
    Draft& d = out_.draft;
    if (const auto hd = int_key("head_dim")) {
      const auto h = d.integer("model.hidden"), heads = d.integer("model.heads");
      if (h && heads && *hd * *heads == *h) {
        out_.notes.push_back({at("head_dim"), std::to_string(*hd) + " = hidden_size / num_attention_heads"});
      } else {
        in_.error("head_dim", std::to_string(*hd) + " differs from hidden_size / num_attention_heads" +
                                  (h && heads ? " = " + std::to_string(*h / *heads) : std::string()) +
                                  ": a head dimension of its own is not modelled yet");
      }
    }
    const char* kMla[] = {"kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"};
    bool mla = false;
    for (const char* k : kMla)
      if (present(k)) {
        used_.push_back(k);
        mla = mla || std::string_view(k) == "kv_lora_rank";
      }
    if (mla)
      in_.error("kv_lora_rank",
                "multi-latent attention (kv_lora_rank, q_lora_rank, qk_rope_head_dim, v_head_dim) is not modelled "
                "yet; trainsim models multi-head and grouped-query attention");
    auto mixed = [&](const char* key, std::int64_t dense_if_above) {
      if (auto v = int_key(key); v && *v > dense_if_above)
        in_.error(key, std::to_string(*v) + ": a mix of dense and MoE layers is not modelled yet; trainsim's MoE "
                                            "models have experts in every layer");
    };
    mixed("first_k_dense_replace", 0);
    mixed("decoder_sparse_step", 1);
    mixed("moe_layer_freq", 1);
    if (in_.kind("mlp_only_layers") == Kind::Array) {
      used_.push_back("mlp_only_layers");
      std::vector<int> layers;
      if (in_.optional("mlp_only_layers", layers) && !layers.empty())
        in_.error("mlp_only_layers", "dense layers among MoE layers are not modelled yet");
    }
    for (const char* k : {"layer_types", "full_attention_interval", "linear_num_value_heads", "linear_num_key_heads",
                          "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
                          "hybrid_override_pattern", "layers_block_type", "attn_layer_indices", "attn_type_list"}) {
      if (!present(k)) continue;
      used_.push_back(k);
      if (std::string_view(k) == "layer_types" && in_.kind(k) == Kind::Array) {
        std::vector<std::string> types;
        if (in_.optional(k, types) &&
            std::all_of(types.begin(), types.end(), [](const std::string& t) { return t == "full_attention"; }))
          continue;
      }
      in_.error(k, "layers of different kinds (linear, sliding-window or state-space attention among full "
                   "attention) are not modelled yet; trainsim models full attention in every layer");
    }
    if (present("sliding_window")) {
      used_.push_back("sliding_window");
      used_.push_back("use_sliding_window");
      bool use = true;
      if (present("use_sliding_window")) in_.optional("use_sliding_window", use);
      if (use)
        in_.error("sliding_window", "sliding-window attention is not modelled yet; trainsim attends over the whole "
                                    "sequence (set it to null only if the training run does not use the window)");
    }
    if (auto n = int_key("num_nextn_predict_layers"); n && *n > 0)
      out_.ignored.push_back({at("num_nextn_predict_layers"),
                              std::to_string(*n) + " multi-token-prediction module(s): not modelled (DeepSeek-V3's "
                                                   "published 671B parameters exclude them)"});
  }

  /// Qwen2-MoE's shared expert of shared_expert_intermediate_size: in parameters and FLOPs, that many routed-width
  /// shared experts (trainsim's shared experts have the routed experts' width).
  void shared_expert() {
    const auto size = int_key("shared_expert_intermediate_size");
    if (!size || *size == 0) return;
    const auto expert = out_.draft.integer("model.moe.ffn_hidden");
    if (expert && *size % *expert == 0) {
      out_.draft.put("model.moe.shared_experts", *size / *expert,
                     at("shared_expert_intermediate_size") + " / moe_intermediate_size (routed-width shared experts)");
    } else {
      in_.error("shared_expert_intermediate_size",
                std::to_string(*size) + " is not a multiple of moe_intermediate_size: a shared expert of its own "
                                        "width is not modelled yet");
    }
  }

  const std::string& origin_;
  JsonReader& in_;
  Import out_;
  std::vector<std::string> used_;
  std::vector<std::string> ignored_;
};

}  // namespace

Import import_hf_config(const std::string& path) {
  const auto doc = base::JsonDocument::parse_file(path);
  base::Diagnostics diag(doc.origin());
  JsonReader root = doc.root(diag);
  HfImport hf(path, root);
  Import out = hf.run();
  diag.throw_if_any();
  return out;
}

}  // namespace sim::importers
