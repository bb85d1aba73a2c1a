// sim/importers/hf_config.cpp: a Hugging Face model config.json into trainsim model fields.
//
// Key names follow transformers' configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2MoeConfig,
// DeepseekV2Config, GPT2Config); where a key is absent, the class default applies and is noted (e.g.
// num_key_value_heads defaults to num_attention_heads, tie_word_embeddings to true in PretrainedConfig).
#include "sim/base/json_reader.hpp"
#include "sim/importers/hf_import.hpp"
#include "sim/importers/hf_model_types.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

namespace sim::importers {
namespace detail {

/// A MoE model type whose config leaves its expert keys out takes its config class's defaults (a user trial: a
/// Mixtral config without num_local_experts was imported as a dense 7.2B model, silently): MixtralConfig's 8 experts,
/// top 2 (transformers configuration_mixtral.py); Qwen3MoeConfig's 128 experts, top 8, moe_intermediate_size 768
/// (configuration_qwen3_moe.py). The other MoE types' class defaults are not carried: left unresolved, by name.
void HfImport::moe_defaults(const std::string& model_type) {
  Draft& d = out_.draft;
  const std::string from = at("model_type") + " (its config class's default";
  // Each key on its own: a config may give the expert count and leave the width out (a review: a Qwen3-MoE config
  // with num_experts but no moe_intermediate_size got experts of intermediate_size, 6144 wide).
  if (model_type == "mixtral") {
    if (!d.has("model.moe.experts")) d.put("model.moe.experts", std::int64_t{8}, from + " num_local_experts 8)", true);
    if (!d.has("model.moe.top_k")) d.put("model.moe.top_k", std::int64_t{2}, from + " num_experts_per_tok 2)", true);
  } else if (model_type == "qwen3_moe") {
    if (!d.has("model.moe.experts")) d.put("model.moe.experts", std::int64_t{128}, from + " num_experts 128)", true);
    if (!d.has("model.moe.top_k")) d.put("model.moe.top_k", std::int64_t{8}, from + " num_experts_per_tok 8)", true);
    if (!d.has("model.moe.ffn_hidden"))
      d.put("model.moe.ffn_hidden", std::int64_t{768}, from + " moe_intermediate_size 768)", true);
  } else if (!d.has("model.moe.experts") &&
             (model_type == "qwen2_moe" || model_type == "deepseek_v2" || model_type == "deepseek_v3" ||
              model_type == "llama4" || model_type == "llama4_text")) {
    out_.unresolved.push_back({origin_,
                               "\"" + model_type +
                                   "\" is a mixture of experts, but the config gives no expert count (num_experts, "
                                   "num_local_experts or n_routed_experts); give --set moe.experts=N",
                               "model.moe.experts"});
  }
}

Import HfImport::run() {
  const auto keys = in_.keys();  // every key is looked at: those not read below are listed as ignored
  Draft& d = out_.draft;
  count("model.layers", {"num_hidden_layers", "n_layer", "num_layers"});
  count("model.hidden", {"hidden_size", "n_embd", "n_embed", "d_model"});
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
  } else if (const auto untied = untied_by_default(model_type)) {
    // The model's own config class sets the default, not PretrainedConfig (transformers' configuration_<model>.py:
    // DeepseekV2Config, Llama4TextConfig, LlamaConfig, ... declare tie_word_embeddings False).
    d.put("model.tied_embeddings", !*untied, at("model_type") + " (its config class's tie_word_embeddings default)",
          true);
  } else {
    d.put("model.tied_embeddings", true, origin_ + " (transformers' PretrainedConfig default)", true);
    out_.notes.push_back({origin_, "no tie_word_embeddings: tied, as transformers' PretrainedConfig default"});
  }
  biases(model_type);
  positions(model_type);
  if (in_.has("rms_norm_eps")) {
    d.put("model.norm", std::string("rmsnorm"), at("rms_norm_eps"));
    used_.push_back("rms_norm_eps");
  } else {
    for (const char* k : {"layer_norm_eps", "layer_norm_epsilon", "layernorm_epsilon", "norm_epsilon"}) {
      if (!in_.has(k)) continue;
      d.put("model.norm", std::string("layernorm"), at(k));
      used_.push_back(k);
      break;
    }
  }
  // transformers 5 gathers rope_theta and rope_scaling into rope_parameters.
  for (const char* k : {"rope_theta", "rope_scaling", "rope_parameters"})
    if (in_.has(k)) {
      if (!d.has("model.position_embedding")) d.put("model.position_embedding", std::string("rope"), at(k));
      used_.push_back(k);
    }
  // Rotary positions on part of each head (GPT-NeoX's rotary_pct, Phi's partial_rotary_factor, GPT-J's and
  // Phi-1.5's rotary_dim): no learned position table (their modeling code has none).
  for (const char* k : {"rotary_pct", "partial_rotary_factor", "rotary_dim", "rotary_emb_base"})
    if (in_.has(k)) {
      if (!d.has("model.position_embedding")) d.put("model.position_embedding", std::string("rope"), at(k));
      used_.push_back(k);
    }
  if (!d.has("model.position_embedding") && rotary_architecture(model_type))
    d.put("model.position_embedding", std::string("rope"),
          at("model_type") + " (its modeling code applies rotary embeddings; rope_theta takes its class default)");
  // GPTBigCode (SantaCoder, StarCoder): multi_query (GPTBigCodeConfig default true) is one key/value head.
  if (model_type == "gpt_bigcode" && !d.has("model.kv_heads")) {
    const auto mq = bool_key("multi_query");
    if (mq.value_or(true))
      d.put("model.kv_heads", std::int64_t{1},
            mq ? at("multi_query") : at("model_type") + " (GPTBigCodeConfig default multi_query true)");
  }

  if (model_type == "falcon") falcon();
  if (model_type == "chatglm") chatglm();

  // Defaults of the transformers classes for absent keys.
  gemma_defaults(model_type);
  if (const auto heads = d.integer("model.heads"); heads && !d.has("model.kv_heads")) {
    d.put("model.kv_heads", *heads, origin_ + " (no num_key_value_heads: multi-head attention)");
  }
  // n_inner null (or absent): 4 x hidden in GPT-2 and the models built like it (modeling_gpt2.py, modeling_gptj.py,
  // modeling_gpt_bigcode.py, Phi-1.5's remote code: inner_dim = n_inner if not None else 4 * n_embd).
  const bool four_h = model_type == "gpt2" || model_type == "gptj" || model_type == "gpt_bigcode" ||
                      model_type == "phi-msft" || model_type == "codegen";
  if (const auto h = d.integer("model.hidden"); h && !d.has("model.ffn_hidden") && four_h) {
    d.put("model.ffn_hidden", 4 * *h, at("model_type") + " (n_inner null: 4 x n_embd, as its modeling code has it)");
  }
  if (!d.has("model.vocab") && model_type == "gemma3_text")  // the multimodal configs leave it to the class
    d.put("model.vocab", std::int64_t{262208}, at("model_type") + " (Gemma3TextConfig default vocab_size 262208)");
  if (model_type == "qwen") qwen_remote_code();
  if (model_type.empty())  // transformers' AutoConfig refuses such a file; its architectures may name another family
    out_.not_modelled.push_back(
        {origin_,
         "has no model_type: its keys were read as transformers' Llama-like classes read them; check the "
         "parameter count (trainsim describe models) against the model card, or add the model_type"});
  else if (!known_model_type(model_type))
    out_.not_modelled.push_back(
        {at("model_type"), "\"" + model_type +
                               "\" is not a model type whose modeling code trainsim knows: its keys were read as "
                               "transformers' Llama-like classes read them; check the parameter count (trainsim "
                               "describe models) against the model card"});
  architecture_checks(model_type);
  moe_defaults(model_type);
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

void HfImport::activation(const std::string& model_type) {
  const char* key = in_.has("hidden_act")            ? "hidden_act"
                    : in_.has("hidden_activation")   ? "hidden_activation"  // Gemma 2 and 3
                    : in_.has("activation_function") ? "activation_function"
                                                     : nullptr;
  if (!key && model_type.starts_with("gemma")) {
    // Gemma2Config and Gemma3TextConfig default hidden_activation to "gelu_pytorch_tanh" (a gated GeLU MLP).
    out_.draft.put("model.activation", std::string("geglu"),
                   at("model_type") + " (transformers' default hidden_activation gelu_pytorch_tanh: gated GeLU)");
    return;
  }
  // FalconConfig's activation (default "gelu", a two-matrix MLP); ChatGLM's MLP is a SwiGLU whatever its config says.
  if (!key && model_type == "falcon") key = in_.has("activation") ? "activation" : nullptr;
  if (!key && (model_type == "falcon" || model_type == "chatglm")) {
    out_.draft.put("model.activation", std::string(model_type == "falcon" ? "gelu" : "swiglu"),
                   at("model_type") + (model_type == "falcon" ? " (FalconConfig's default activation gelu)"
                                                              : " (ChatGLM's MLP: swiglu on dense_h_to_4h)"));
    return;
  }
  if (!key && model_type == "qwen") {
    out_.draft.put("model.activation", std::string("swiglu"), at("model_type") + " (QWenMLP: w1 x silu(w2))");
    return;
  }
  // The config classes whose hidden_act defaults to "silu" (transformers' LlamaConfig, MistralConfig, MixtralConfig,
  // Qwen2/Qwen3 and their MoE configs, DeepseekV2Config, DeepseekV3Config, Phi3Config): a gated SiLU MLP, as
  // transformers builds it when the key is left out (a tester's trial: a Llama config without it was refused).
  static constexpr std::string_view kSiluByDefault[] = {"llama", "mistral",   "mixtral",     "qwen2",       "qwen2_moe",
                                                        "qwen3", "qwen3_moe", "deepseek_v2", "deepseek_v3", "phi3"};
  if (!key && std::find(std::begin(kSiluByDefault), std::end(kSiluByDefault), model_type) != std::end(kSiluByDefault)) {
    out_.draft.put("model.activation", std::string("swiglu"),
                   at("model_type") + " (transformers' default hidden_act silu: gated SiLU MLP)");
    return;
  }
  if (!key) {
    out_.unresolved.push_back({origin_, "no hidden_act: give --set activation=swiglu or gelu", "model.activation"});
    return;
  }
  std::string act;
  if (!text(key, act)) return;
  if (act == "silu" || act == "swish") {
    out_.draft.put("model.activation", std::string("swiglu"), at(key) + " (gated SiLU MLP)");
  } else if (act.starts_with("gelu") && gated_architecture(model_type)) {
    out_.draft.put("model.activation", std::string("geglu"),
                   at(key) + " (" + model_type + "'s MLP is gated whatever its activation: gated GeLU)");
  } else if (act.starts_with("gelu")) {
    out_.draft.put("model.activation", std::string("gelu"), at(key));
  } else if (act == "relu2") {
    out_.draft.put("model.activation", std::string("relu2"), at(key) + " (squared ReLU, Nemotron)");
  } else {
    out_.unresolved.push_back({at(key),
                               "\"" + act + "\"" + (gated_architecture(model_type) ? " in a gated MLP" : "") +
                                   " is not modelled; accepted: silu, swish (gated, \"swiglu\"), gelu "
                                   "variants (\"gelu\"), relu2 (\"relu2\"); give --set activation=swiglu or gelu",
                               "model.activation"});
  }
}

void HfImport::architecture_checks(const std::string& model_type) {
  Draft& d = out_.draft;
  attention_kinds(model_type);
  // Multi-head latent attention (DeepseekV2Config / DeepseekV3Config; q_lora_rank null: a full query projection).
  const char* kMla[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};
  // An MLA config saved by a recent transformers carries head_dim = qk_rope_head_dim (DeepseekV3Config sets it so):
  // bookkeeping, not a head size (MLA's are qk_nope_head_dim + qk_rope_head_dim and v_head_dim). A user trial found
  // such files refused with "omit head_dim".
  const auto hd = int_key("head_dim");
  if (hd && present("kv_lora_rank") && in_.kind("qk_rope_head_dim") == Kind::Integer) {
    std::int64_t rope = 0;
    in_.optional("qk_rope_head_dim", rope);
    if (*hd == rope)
      out_.notes.push_back({at("head_dim"),
                            "equals qk_rope_head_dim, as transformers' DeepseekV3Config sets it: "
                            "not read (MLA's head sizes are qk_nope_head_dim + qk_rope_head_dim "
                            "and v_head_dim)"});
    else
      d.put("model.head_dim", *hd, at("head_dim"));
  } else if (hd && *hd > 0) {
    d.put("model.head_dim", *hd, at("head_dim"));
  }
  const bool mla_keys = std::any_of(std::begin(kMla) + 2, std::end(kMla), [&](const char* k) { return present(k); });
  if (!present("kv_lora_rank") && (mla_keys || model_type == "deepseek_v2" || model_type == "deepseek_v3") &&
      in_.kind("kv_lora_rank") != Kind::Missing) {
    used_.insert(used_.end(), std::begin(kMla), std::end(kMla));
    in_.error("kv_lora_rank",
              "is null, but multi-head latent attention needs the rank of its compressed keys and values "
              "(DeepSeek-V2/V3: 512); give kv_lora_rank, or leave out the MLA keys for full multi-head attention");
  } else if (present("kv_lora_rank")) {
    for (const char* k : kMla) {
      used_.push_back(k);
      // q_lora_rank null is a full query projection; absent, DeepseekV2Config's and DeepseekV3Config's default
      // (1536) applies.
      if (std::string_view(k) == "q_lora_rank" && in_.kind(k) == Kind::Null) {
        d.put("model.mla.q_lora_rank", std::int64_t{0}, origin_ + " (q_lora_rank null: a full query projection)");
        continue;
      }
      if (std::string_view(k) == "q_lora_rank" && !present(k)) {
        d.put("model.mla.q_lora_rank", std::int64_t{1536},
              at("model_type") + " (no q_lora_rank: its config class's default 1536)", true);
        continue;
      }
      count((std::string("model.mla.") + k).c_str(), {k},
            Range::at_least(std::string_view(k) == "q_lora_rank" ? 0 : 1));
    }
  }
  // Dense and MoE layers: DeepseekV3 (layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0) and
  // Qwen2/3-MoE ((layer_idx + 1) % decoder_sparse_step == 0 and layer_idx not in mlp_only_layers).
  const bool moe = d.has("model.moe.experts");
  // transformers 5 writes the layers' kinds as mlp_layer_types ("dense" or "sparse" for each layer); without it or
  // first_k_dense_replace, DeepseekV3Config's and DeepseekV32Config's default is 3 dense layers first.
  const bool kinds = in_.kind("mlp_layer_types") == Kind::Array && moe;
  if (kinds) {
    used_.push_back("mlp_layer_types");
    mlp_layer_types();
  } else if (auto k = int_key("first_k_dense_replace"); k && moe && *k > 0) {
    d.put("model.moe.first_k_dense", *k, at("first_k_dense_replace"));
  } else if (!k && moe && (model_type == "deepseek_v3" || model_type == "deepseek_v32")) {
    d.put("model.moe.first_k_dense", std::int64_t{3},
          at("model_type") + " (no first_k_dense_replace: its config class's default 3)", true);
    out_.notes.push_back({at("model_type"),
                          "no first_k_dense_replace: layers 0-2 dense, as DeepseekV3Config's "
                          "default"});
  }
  if (auto f = int_key("moe_layer_freq"); f && moe && *f > 1) {
    if (kinds)  // the per-layer kinds say it all; a frequency beside them could only disagree (a review)
      in_.error("moe_layer_freq", "is given beside mlp_layer_types, which names every layer's kind: give one of them");
    else
      d.put("model.moe.layer_freq", *f, at("moe_layer_freq"));
  }
  // Group-limited routing (DeepseekV2/V3Config n_group, topk_group: a token's experts within its best topk_group of
  // n_group groups); one group, or every group chosen, is no limit.
  const auto groups = int_key("n_group"), chosen = int_key("topk_group");
  if (moe && groups && chosen && *groups > 1 && *chosen < *groups) {
    d.put("model.moe.router_groups", *groups, at("n_group"));
    d.put("model.moe.router_group_topk", *chosen, at("topk_group"));
  }
  std::vector<int> dense_only;
  if (in_.kind("mlp_only_layers") == Kind::Array) {
    used_.push_back("mlp_only_layers");
    in_.optional("mlp_only_layers", dense_only);
  }
  const auto step = int_key("decoder_sparse_step");
  if (moe && ((step && *step > 1) || !dense_only.empty())) {
    const auto layers = d.integer("model.layers").value_or(0);
    std::vector<std::int64_t> pattern;
    for (std::int64_t i = 0; i < layers; ++i) {
      const bool sparse = (i + 1) % std::max<std::int64_t>(step.value_or(1), 1) == 0 &&
                          std::find(dense_only.begin(), dense_only.end(), i) == dense_only.end();
      pattern.push_back(sparse ? 1 : 0);
    }
    d.put("model.moe.layer_pattern", pattern, at(dense_only.empty() ? "decoder_sparse_step" : "mlp_only_layers"));
  }
  // Sliding windows (Mistral, Qwen2 with use_sliding_window) and layer kinds (gpt-oss, Gemma 3: sliding and full).
  std::optional<std::int64_t> window;
  if (present("sliding_window")) {
    used_.push_back("sliding_window");
    used_.push_back("use_sliding_window");
    bool use = true;
    if (present("use_sliding_window")) in_.optional("use_sliding_window", use);
    if (use) window = int_key("sliding_window");
  }
  std::optional<std::int64_t> global_every;
  if (in_.kind("layer_types") == Kind::Array) {
    used_.push_back("layer_types");
    std::vector<std::string> types;
    in_.optional("layer_types", types);
    std::int64_t first_full = -1;
    bool other = false;
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (types[i] == "full_attention" && first_full < 0) first_full = static_cast<std::int64_t>(i);
      other = other || (types[i] != "full_attention" && types[i] != "sliding_attention");
    }
    bool periodic = !other && first_full >= 0;
    for (std::size_t i = 0; periodic && i < types.size(); ++i)
      periodic = (types[i] == "full_attention") == ((static_cast<std::int64_t>(i) + 1) % (first_full + 1) == 0);
    if (other) {
      in_.error("layer_types",
                "layers of linear or state-space attention among full attention are not modelled; "
                "trainsim models full and sliding-window attention");
    } else if (first_full < 0) {
      global_every = 0;  // every layer is windowed
    } else if (!periodic) {
      in_.error("layer_types",
                "sliding and full attention layers that do not repeat every k layers (full at layers "
                "k-1, 2k-1, ...) are not modelled");
    } else if (first_full > 0) {
      global_every = first_full + 1;
    }
    if (global_every && !window) in_.error("layer_types", "sliding-window layers without a sliding_window size");
  }
  // Qwen2/Qwen3 (dense and MoE): with use_sliding_window, layers from max_window_layers on are windowed
  // (Qwen2Config's layer_types: "sliding_attention" if i >= max_window_layers; the class default is 28).
  if (window && *window > 0 && !in_.has("layer_types") && model_type.starts_with("qwen")) {
    const auto layers = d.integer("model.layers").value_or(0);
    const std::int64_t full = int_key("max_window_layers").value_or(28);
    const std::string where = present("max_window_layers")
                                  ? at("max_window_layers")
                                  : at("model_type") + " (no max_window_layers: its config class's default 28)";
    if (full >= layers) {
      window.reset();
      out_.notes.push_back({where, "max_window_layers " + std::to_string(full) + " >= " + std::to_string(layers) +
                                       " layers: no layer is windowed, every layer attends to the full sequence"});
    } else if (full > 0) {
      in_.error(present("max_window_layers") ? "max_window_layers" : "model_type",
                "layers 0-" + std::to_string(full - 1) + " attend to the full sequence and layers " +
                    std::to_string(full) + "-" + std::to_string(layers - 1) + " within sliding_window " +
                    std::to_string(*window) +
                    ": a split at one layer is not modelled (trainsim windows every layer, or all but every k-th); "
                    "set use_sliding_window false or max_window_layers 0 or >= num_hidden_layers");
    }
  } else if (present("max_window_layers")) {
    used_.push_back("max_window_layers");  // without a window it changes nothing
  }
  // Gemma 2 and 3 without layer_types: their classes interleave full-attention layers, every second (Gemma2Config)
  // or every sliding_window_pattern-th, 6 by default (Gemma3TextConfig).
  if (window && *window > 0 && !in_.has("layer_types") && (model_type == "gemma2" || model_type == "gemma3_text")) {
    const auto pattern = int_key("sliding_window_pattern");
    global_every = pattern.value_or(model_type == "gemma2" ? 2 : 6);
    if (!pattern)
      out_.notes.push_back({at("model_type"), "one layer in every " + std::to_string(*global_every) +
                                                  " attends globally, the others within sliding_window (" +
                                                  (model_type == "gemma2" ? "Gemma2Config" : "Gemma3TextConfig") +
                                                  "'s layer pattern)"});
  }
  if (window && *window > 0 && (!in_.has("layer_types") || global_every)) {
    d.put("model.sliding_window", *window, at("sliding_window"));
    if (global_every && *global_every > 0) d.put("model.global_every", *global_every, at("layer_types"));
  }
  // Mamba / state-space hybrids (Jamba, Zamba, Nemotron-H, Falcon-H1, ...) and recurrent or linear-attention models:
  // their layers are not attention, so the model is refused rather than read as attention everywhere.
  static const std::set<std::string, std::less<>> kNotAttention = {
      "jamba",           "mamba",      "mamba2",  "falcon_mamba", "zamba",
      "zamba2",          "nemotron_h", "bamba",   "falcon_h1",    "granitemoehybrid",
      "recurrent_gemma", "rwkv",       "minimax", "qwen3_next",   "lfm2"};
  if (kNotAttention.contains(model_type))
    in_.error("model_type", "\"" + model_type +
                                "\" has state-space, recurrent or linear-attention layers, which trainsim does not "
                                "model; trainsim models full and sliding-window attention");
  for (const auto& k : in_.keys())
    if (k.starts_with("mamba_") || k.starts_with("ssm_") || k == "attn_layer_period" || k == "attn_layer_offset") {
      used_.push_back(k);
      if (!kNotAttention.contains(model_type))
        in_.error(k,
                  "state-space (Mamba) layers among attention layers are not modelled; trainsim models full and "
                  "sliding-window attention");
    }
  for (const char* k : {"full_attention_interval", "linear_num_value_heads", "linear_num_key_heads",
                        "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
                        "hybrid_override_pattern", "layers_block_type", "attn_layer_indices", "attn_type_list"}) {
    if (!present(k)) continue;
    used_.push_back(k);
    in_.error(k,
              "layers of linear or state-space attention among full attention are not modelled; trainsim "
              "models full and sliding-window attention");
  }
  // QK-norm: Qwen3's attention normalises each query and key head (no config key: the architecture has it).
  if (model_type == "qwen3" || model_type == "qwen3_moe" || model_type == "gemma3_text")
    d.put("model.qk_norm", true,
          at("model_type") + " (Qwen3 and Gemma 3 attention: RMSNorm on each query and key head)");
  // use_qk_norm: Llama 4's L2 norm, GLM-4.5's RMSNorm on each query and key head (transformers' Llama4TextConfig,
  // Glm4MoeConfig). It was read for Llama 4 only and listed as not modelled elsewhere (a user trial).
  if (const auto qk = bool_key("use_qk_norm"); qk && *qk)
    d.put("model.qk_norm", true, at("use_qk_norm") + " (a norm on each query and key head)");
  if (auto n = int_key("num_nextn_predict_layers"); n && *n > 0)
    d.put("model.mtp_layers", *n, at("num_nextn_predict_layers"));
  if (model_type == "llama4_text") llama4();
}

}  // namespace detail

using detail::HfImport;
using detail::JsonReader;
using detail::Kind;

Import import_hf_config(const std::string& path) {
  const auto doc = base::JsonDocument::parse_file(path);
  base::Diagnostics diag(doc.origin());
  JsonReader root = doc.root(diag);
  // A multimodal config (Llama 4, Gemma 3, Mistral Small 3.1, Qwen2.5-VL) holds its language model in text_config:
  // that is the model trained here; the vision encoder is not modelled.
  if (!root.has("num_hidden_layers") && !root.has("hidden_size") && root.kind("text_config") == Kind::Object) {
    auto text = root.optional_object("text_config");
    HfImport hf(path, *text);
    Import out = hf.run();
    std::string name, type;
    if (root.kind("_name_or_path") == Kind::String) root.optional("_name_or_path", name);
    if (name.empty() && root.kind("model_type") == Kind::String) root.optional("model_type", type);
    if (!name.empty() || !type.empty())
      out.draft.override_value("model.name", name.empty() ? type : name,
                               path + " /" + (name.empty() ? "model_type" : "_name_or_path"));
    std::string others;
    for (const auto& k : root.keys())
      if (k != "text_config" && k != "_name_or_path" && k != "model_type") others += (others.empty() ? "" : ", ") + k;
    out.notes.push_back({path + " /text_config",
                         "the language model of a multimodal config; the rest (" + others +
                             ") is not modelled: the vision encoder's compute and memory are not in the estimate"});
    diag.throw_if_any();
    return out;
  }
  HfImport hf(path, root);
  Import out = hf.run();
  diag.throw_if_any();
  return out;
}

}  // namespace sim::importers
