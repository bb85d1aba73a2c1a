// sim/importers/hf_model_rules.cpp: the Hugging Face importer's rules of particular model types (hf_import.hpp):
// which linears have biases, the first Qwen's remote code, Llama 4, Qwen2-MoE's shared expert, Falcon, ChatGLM, and
// the position schemes trainsim does not model (ALiBi), each as the model's modeling code builds it.
#include "sim/importers/hf_import.hpp"

#include <algorithm>
#include <iterator>

namespace sim::importers::detail {

/// Which linears have biases, as transformers' modeling code builds them: GPT-2's, StarCoder's, Phi-1.5's and
/// GPT-NeoX's every one; Qwen2's q, k and v always; GLM's q, k and v when attention_bias (its o_proj has none);
/// Llama's family q, k, v and o when attention_bias, and the MLP's when mlp_bias. MLP biases alone (GPT-J, CodeGen,
/// mlp_bias without attention_bias) are noted, not counted.
void HfImport::biases(const std::string& model_type) {
  Draft& d = out_.draft;
  // Keys of their own (a user trial found them listed as not modelled): StableLM's use_qkv_bias (q, k, v),
  // Starcoder2's use_bias (every linear; Starcoder2Config default true), Falcon's bias (every linear; FalconConfig
  // default false) and the first InternLM's bias (q, k, v and o; InternLMConfig default true).
  if (const auto qkv = bool_key("use_qkv_bias"); qkv && *qkv)
    d.put("model.qkv_bias", true, at("use_qkv_bias") + " (q_proj, k_proj and v_proj with biases)");
  if (model_type == "starcoder2" || model_type == "falcon") {
    const auto all = bool_key(model_type == "falcon" ? "bias" : "use_bias");
    const bool on = all.value_or(model_type == "starcoder2");
    d.put("model.bias", on,
          all ? at(model_type == "falcon" ? "bias" : "use_bias")
              : at("model_type") + " (its config class's default: " + (on ? "biases on every linear)" : "none)"));
    return;
  }
  if (model_type == "internlm" && bool_key("bias").value_or(true)) {
    d.put("model.qkv_bias", true, at("model_type") + " (InternLM's q, k, v and o projections have biases)");
    out_.notes.push_back({at("model_type"), "o_proj's bias (hidden_size values a layer) is not counted"});
    return;
  }
  const auto attention = bool_key("attention_bias");
  const auto mlp = bool_key("mlp_bias");
  if (model_type == "gpt2" || model_type == "gpt_bigcode" || model_type == "phi-msft" ||
      (model_type == "gpt_neox" && attention.value_or(true))) {
    d.put("model.bias", true, at("model_type") + " (its modeling code: biases on every linear)");
  } else if (model_type == "qwen2" || model_type == "qwen2_moe") {
    d.put("model.qkv_bias", true, at("model_type") + " (Qwen2Attention: q_proj, k_proj and v_proj with biases)");
  } else if (model_type == "glm" || model_type == "glm4" || (attention && model_type == "glm4_moe")) {
    // GlmConfig and Glm4Config default attention_bias to true, Glm4MoeConfig to false.
    d.put("model.qkv_bias", attention.value_or(true),
          (attention ? at("attention_bias") : at("model_type") + " (its config class's attention_bias default)") +
              " (GLM's attention: biases on q_proj, k_proj and v_proj, none on o_proj)");
  } else if (attention && *attention && mlp.value_or(false)) {
    d.put("model.bias", true, at("attention_bias") + " and " + at("mlp_bias"));
  } else if (attention && *attention) {
    d.put("model.qkv_bias", true, at("attention_bias"));
    out_.notes.push_back({at("attention_bias"), "o_proj's bias (hidden_size values a layer) is not counted"});
  } else if (attention) {
    d.put("model.bias", false, at("attention_bias"));
  }
  const bool mlp_biases = mlp.value_or(false) || (model_type == "gpt_neox" && attention == false) ||
                          model_type == "gptj" || model_type == "codegen";
  const Field* all = d.find("model.bias");
  const bool every_linear = all && std::holds_alternative<bool>(all->value) && std::get<bool>(all->value);
  if (mlp_biases && !every_linear)
    out_.notes.push_back({mlp ? at("mlp_bias") : at("model_type"),
                          "the MLP's biases (without the attention's) are not counted: 2 x intermediate_size + "
                          "hidden_size values a layer at most"});
}

/// The first Qwen (model_type "qwen": Qwen-7B/14B/72B's remote code, modeling_qwen.py): QWenMLP's two input
/// matrices are intermediate_size / 2 wide, both norms are RMSNorm whatever layer_norm_epsilon's name says, and
/// c_attn (q, k and v fused) has biases always, the other linears unless no_bias (QWenConfig's default true).
void HfImport::qwen_remote_code() {
  Draft& d = out_.draft;
  if (const auto f = d.integer("model.ffn_hidden"))
    d.override_value("model.ffn_hidden", *f / 2, at("intermediate_size") + " (QWenMLP: intermediate_size / 2)");
  d.override_value("model.norm", std::string("rmsnorm"), at("model_type") + " (QWenBlock: RMSNorm ln_1 and ln_2)");
  const auto no_bias = bool_key("no_bias");
  if (no_bias.value_or(true))
    d.put("model.qkv_bias", true, at("model_type") + " (QWenAttention's c_attn has biases; no_bias for the rest)");
  else
    d.put("model.bias", true, at("no_bias"));
  if (const auto kv = int_key("kv_channels"); kv && *kv > 0) d.put("model.head_dim", *kv, at("kv_channels"));
  used_.push_back("seq_length");  // the training length it was built for; max_position_embeddings is the model's
}

/// Llama 4 (transformers' Llama4TextConfig and modeling_llama4.py): a MoE layer holds a shared expert of
/// intermediate_size beside its routed experts of that width; dense layers are intermediate_size_mlp wide; the MoE
/// layers are moe_layers, by default every interleave_moe_layer_step-th; queries and keys are L2-normalised
/// (use_qk_norm); RoPE layers attend within chunks of attention_chunk_size and the NoPE layers (no_rope_layers 0,
/// by default every no_rope_layer_interval-th, 4) attend globally.
void HfImport::llama4() {
  Draft& d = out_.draft;
  const std::string model = at("model_type");
  if (d.has("model.moe.experts")) {
    if (const auto f = d.integer("model.ffn_hidden"); f && !d.has("model.moe.ffn_hidden"))
      d.put("model.moe.ffn_hidden", *f, at("intermediate_size") + " (Llama 4's routed experts)");
    d.put("model.moe.shared_experts", std::int64_t{1},
          model + " (Llama 4's MoE layer: one shared expert of intermediate_size)");
    std::vector<int> listed;
    if (in_.kind("moe_layers") == Kind::Array) {
      used_.push_back("moe_layers");
      in_.optional("moe_layers", listed);
    }
    const auto step = int_key("interleave_moe_layer_step");
    if (!listed.empty() || (step && *step > 1)) {
      const auto layers = d.integer("model.layers").value_or(0);
      std::vector<std::int64_t> pattern;
      for (std::int64_t i = 0; i < layers; ++i)
        pattern.push_back(listed.empty() ? ((i + 1) % *step == 0 ? 1 : 0)
                                         : std::find(listed.begin(), listed.end(), i) != listed.end());
      d.put("model.moe.layer_pattern", pattern, at(listed.empty() ? "interleave_moe_layer_step" : "moe_layers"));
    }
  }
  if (const auto mlp = int_key("intermediate_size_mlp"); mlp && *mlp > 0)
    d.override_value("model.ffn_hidden", *mlp, at("intermediate_size_mlp") + " (Llama 4's dense layers)");
  const auto chunk = int_key("attention_chunk_size");
  if (!chunk || *chunk <= 0) return;
  std::int64_t every = int_key("no_rope_layer_interval").value_or(4);
  if (in_.kind("no_rope_layers") == Kind::Array) {
    used_.push_back("no_rope_layers");
    std::vector<int> rope;
    in_.optional("no_rope_layers", rope);
    if (!rope.empty()) {
      std::int64_t first_global = -1;
      for (std::size_t i = 0; i < rope.size() && first_global < 0; ++i)
        if (rope[i] == 0) first_global = static_cast<std::int64_t>(i);
      bool periodic = first_global >= 0;
      for (std::size_t i = 0; periodic && i < rope.size(); ++i)
        periodic = (rope[i] == 0) == ((static_cast<std::int64_t>(i) + 1) % (first_global + 1) == 0);
      if (!periodic) {
        in_.error("no_rope_layers",
                  "global (NoPE) attention layers that do not repeat every k layers (at layers k-1, 2k-1, ...) "
                  "are not modelled");
        return;
      }
      every = first_global + 1;
    }
  }
  d.put("model.sliding_window", *chunk, at("attention_chunk_size"));
  d.put("model.global_every", every, at("no_rope_layers") + " (NoPE layers attend globally)");
  out_.notes.push_back({at("attention_chunk_size"),
                        "chunked attention (each token attends within its chunk) taken as a sliding window of the "
                        "chunk size: the same for sequences up to " +
                            std::to_string(*chunk) +
                            " tokens; beyond, those layers' attention is counted at up to twice chunked "
                            "attention's FLOPs"});
}

/// Qwen2-MoE's shared expert of shared_expert_intermediate_size: in parameters and FLOPs, that many routed-width
/// shared experts (trainsim's shared experts have the routed experts' width).
void HfImport::shared_expert() {
  const auto size = int_key("shared_expert_intermediate_size");
  if (!size || *size == 0) return;
  const auto expert = out_.draft.integer("model.moe.ffn_hidden");
  if (expert && *size % *expert == 0) {
    out_.draft.put("model.moe.shared_experts", *size / *expert,
                   at("shared_expert_intermediate_size") + " / moe_intermediate_size (routed-width shared experts)");
  } else {
    out_.draft.put("model.moe.shared_experts", std::int64_t{1}, at("shared_expert_intermediate_size"));
    out_.draft.put("model.moe.shared_ffn_hidden", *size, at("shared_expert_intermediate_size"));
  }
}

/// Position schemes trainsim does not model are refused, never read as another (README: ALiBi is refused): a config's
/// alibi (Falcon-RW's FalconConfig, MPT's attn_config) or position_embedding_type "alibi", and BLOOM, whose
/// attention always adds ALiBi's biases (modeling_bloom.py: build_alibi_tensor; BloomConfig has no key for it).
void HfImport::positions(const std::string& model_type) {
  bool alibi = model_type == "bloom";
  const char* key = "model_type";
  if (bool_key("alibi").value_or(false)) {
    alibi = true;
    key = "alibi";
  }
  std::string type;
  if (in_.kind("position_embedding_type") == Kind::String && text("position_embedding_type", type) && type == "alibi") {
    alibi = true;
    key = "position_embedding_type";
  }
  if (in_.kind("attn_config") == Kind::Object) {
    auto attn = in_.optional_object("attn_config");
    if (attn->kind("alibi") == Kind::Bool) {
      bool b = false;
      attn->optional("alibi", b);
      if (b) {
        alibi = true;
        key = "attn_config";
      }
    }
    used_.push_back("attn_config");
  }
  if (alibi)
    in_.error(key,
              "ALiBi (attention scores biased by distance, no position embedding) is not modelled: trainsim models "
              "learned and rotary positions, and does not read a model as another scheme");
}

/// Falcon (transformers' FalconConfig and modeling_falcon.py): one key/value head when multi_query (default true),
/// num_kv_heads of them with new_decoder_architecture (default: as many as the query heads); the MLP is
/// ffn_hidden_size wide, 4 x hidden_size by default, with the activation gelu; parallel_attn runs attention and MLP
/// side by side from one norm, the same parameters and FLOPs as one after the other.
void HfImport::falcon() {
  Draft& d = out_.draft;
  const auto heads = d.integer("model.heads");
  const bool new_arch = bool_key("new_decoder_architecture").value_or(false);
  const auto kv = int_key("num_kv_heads");
  const auto mq = bool_key("multi_query");
  if (new_arch && heads) {
    d.put("model.kv_heads", kv && *kv > 0 ? *kv : *heads,
          kv ? at("num_kv_heads") : at("new_decoder_architecture") + " (num_kv_heads null: one per query head)");
  } else if (mq.value_or(true)) {
    d.put("model.kv_heads", std::int64_t{1},
          mq ? at("multi_query") : at("model_type") + " (FalconConfig's default multi_query true)");
  }
  if (const auto f = int_key("ffn_hidden_size"); f && *f > 0) {
    d.put("model.ffn_hidden", *f, at("ffn_hidden_size"));
  } else if (const auto h = d.integer("model.hidden")) {
    d.put("model.ffn_hidden", 4 * *h, at("model_type") + " (FalconConfig: ffn_hidden_size 4 x hidden_size)");
  }
  for (const char* k : {"parallel_attn", "num_ln_in_parallel_attn"})
    if (present(k)) used_.push_back(k);
  if (!d.has("model.position_embedding"))
    d.put("model.position_embedding", std::string("rope"), at("model_type") + " (Falcon's rotary embeddings)");
}

/// ChatGLM2/3 (THUDM's remote code, configuration_chatglm.py and modeling_chatglm.py): its own key names
/// (num_layers, ffn_hidden_size, padded_vocab_size, multi_query_group_num, kv_channels, add_qkv_bias, rmsnorm,
/// seq_length), a SwiGLU MLP, rotary positions on half of each head, and an output layer of its own (untied).
void HfImport::chatglm() {
  Draft& d = out_.draft;
  // The first ChatGLM-6B shares the model type but not the model: GLM's 2D positions and a gelu MLP of
  // inner_hidden_size with biases on every linear (THUDM/chatglm-6b's modeling_chatglm.py).
  for (const char* v1 : {"inner_hidden_size", "position_encoding_2d"})
    if (present(v1)) {
      used_.push_back(v1);
      in_.error(v1,
                "is the first ChatGLM-6B's (GLM's 2D positions, a gelu MLP of inner_hidden_size), which is not "
                "modelled; ChatGLM2 and ChatGLM3 are");
      return;
    }
  if (const auto f = int_key("ffn_hidden_size"); f && *f > 0) d.put("model.ffn_hidden", *f, at("ffn_hidden_size"));
  if (const auto v = int_key("padded_vocab_size"); v && *v > 0) d.put("model.vocab", *v, at("padded_vocab_size"));
  if (bool_key("multi_query_attention").value_or(false))
    if (const auto g = int_key("multi_query_group_num"); g && *g > 0)
      d.put("model.kv_heads", *g, at("multi_query_group_num"));
  if (const auto kv = int_key("kv_channels"); kv && *kv > 0) d.put("model.head_dim", *kv, at("kv_channels"));
  if (bool_key("add_qkv_bias").value_or(false)) d.put("model.qkv_bias", true, at("add_qkv_bias"));
  if (bool_key("add_bias_linear").value_or(false)) d.put("model.bias", true, at("add_bias_linear"));
  if (const auto rms = bool_key("rmsnorm"))
    d.override_value("model.norm", std::string(*rms ? "rmsnorm" : "layernorm"), at("rmsnorm"));
  if (const auto len = int_key("seq_length"); len && *len > 0) d.put("model.max_seq_len", *len, at("seq_length"));
  if (!d.has("model.position_embedding"))
    d.put("model.position_embedding", std::string("rope"), at("model_type") + " (ChatGLM's rotary embeddings)");
  for (const char* k : {"original_rope", "rope_ratio", "apply_residual_connection_post_layernorm", "post_layer_norm",
                        "apply_query_key_layer_scaling", "attention_softmax_in_fp32", "fp32_residual_connection"})
    if (present(k)) used_.push_back(k);
}

/// Gemma's config classes set the head size and the head counts themselves (transformers' GemmaConfig: 16 query and
/// 16 key/value heads; Gemma2Config and Gemma3TextConfig: 8 and 4; all three head_dim 256, whatever hidden_size / heads
/// is). Gemma 3 12B's config, saved without head_dim, has 16 heads of 256 on a 3,840-wide model: 11.77B parameters
/// (the Gemma 3 report's Table 1: 1,012M embedding + 10,759M non-embedding), where heads of 240 gave 11.62B; Gemma 3
/// 4B's text_config gives no head count at all (a user trial).
void HfImport::gemma_defaults(const std::string& model_type) {
  if (model_type != "gemma" && model_type != "gemma2" && model_type != "gemma3_text") return;
  Draft& d = out_.draft;
  const bool first = model_type == "gemma";
  const std::string cls = first ? "GemmaConfig" : model_type == "gemma2" ? "Gemma2Config" : "Gemma3TextConfig";
  if (!d.has("model.heads"))
    d.put("model.heads", std::int64_t{first ? 16 : 8},
          at("model_type") + " (" + cls + "'s default num_attention_heads " + (first ? "16" : "8") + ")", true);
  if (!d.has("model.kv_heads"))
    d.put("model.kv_heads", std::int64_t{first ? 16 : 4},
          at("model_type") + " (" + cls + "'s default num_key_value_heads " + (first ? "16" : "4") + ")", true);
  if (!present("head_dim"))
    d.put("model.head_dim", std::int64_t{256}, at("model_type") + " (" + cls + "'s default head_dim 256)", true);
}

void HfImport::attention_kinds(const std::string& model_type) {
  // DeepSeek-V3.2's sparse attention (transformers' DeepseekV32Config: a lightning indexer of index_n_heads heads of
  // index_head_dim picks index_topk keys per query, 2,048 by default): the indexer's weights and the sparse core
  // change the parameter count, the FLOPs and the memory at long sequences.
  // "use_sparse_attention": false alone turns it off (a review found such a DeepSeek-V3 config refused).
  const char* kIndexer[] = {"index_topk", "index_n_heads", "index_head_dim", "use_sparse_attention"};
  const bool sparse_off = bool_key("use_sparse_attention") == false;
  const bool indexer = std::any_of(std::begin(kIndexer), std::end(kIndexer), [&](const char* k) {
    return present(k) && !(sparse_off && std::string_view(k) == "use_sparse_attention");
  });
  if (indexer || (model_type == "deepseek_v32" && !sparse_off)) {
    used_.insert(used_.end(), std::begin(kIndexer), std::end(kIndexer));
    in_.error(indexer ? (present("index_topk")       ? "index_topk"
                         : present("index_n_heads")  ? "index_n_heads"
                         : present("index_head_dim") ? "index_head_dim"
                                                     : "use_sparse_attention")
                      : "model_type",
              "DeepSeek Sparse Attention (a lightning indexer choosing index_topk keys for each query) is not "
              "modelled: its indexer's weights and its sparse attention change the parameter count, FLOPs and "
              "memory; trainsim models full and sliding-window attention (give the model without the indexer "
              "keys and model_type deepseek_v3 to estimate it as dense MLA)");
  }
  // Bidirectional attention (Gemma 3's use_bidirectional_attention, EmbeddingGemma): every query sees every key, twice
  // the score FLOPs of the causal attention trainsim models.
  if (const auto bidirectional = bool_key("use_bidirectional_attention"); bidirectional && *bidirectional)
    in_.error("use_bidirectional_attention",
              "is true: bidirectional (non-causal) attention is not modelled; trainsim's attention is causal, half "
              "the score matrix of a bidirectional layer");
}

void HfImport::mlp_layer_types() {
  std::vector<std::string> kinds;
  if (!in_.optional("mlp_layer_types", kinds)) return;
  const auto layers = out_.draft.integer("model.layers").value_or(0);
  if (static_cast<std::int64_t>(kinds.size()) != layers) {
    in_.error("mlp_layer_types", "has " + std::to_string(kinds.size()) + " entries for " + std::to_string(layers) +
                                     " layers (num_hidden_layers): give one kind per layer");
    return;
  }
  std::vector<std::int64_t> pattern;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != "dense" && kinds[i] != "sparse") {
      in_.error("mlp_layer_types", "entry " + std::to_string(i) + " is \"" + kinds[i] +
                                       "\"; accepted: \"dense\" (an MLP), \"sparse\" (the MoE layer)");
      return;
    }
    pattern.push_back(kinds[i] == "sparse" ? 1 : 0);
  }
  // first_k_dense_replace, which transformers keeps beside the list, must agree with it (read, not "ignored").
  if (const auto k = int_key("first_k_dense_replace")) {
    const auto dense_first = std::find(pattern.begin(), pattern.end(), 1) - pattern.begin();
    if (*k != dense_first)
      in_.error("first_k_dense_replace", "is " + std::to_string(*k) + " but mlp_layer_types starts with " +
                                             std::to_string(dense_first) + " dense layers: give one of them");
  }
  out_.draft.put("model.moe.layer_pattern", pattern, at("mlp_layer_types"));
}

}  // namespace sim::importers::detail
