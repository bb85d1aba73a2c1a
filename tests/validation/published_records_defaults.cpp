// tests/validation/published_records_defaults.cpp: the framework defaults the published-record converter fills in.
// Source families, public model architectures, hardware profiles, recomputation, dtype and ModelZoo commands.
#include "tests/validation/published_records_convert.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace validation::conversion {
namespace {

constexpr Family kFamilies[] = {
    {"Narayanan et al., SC21", "megatron-sc21", true, false},
    {"Narayanan et al., Efficient Large-Scale Language Model Training", "megatron-sc21", true, false},
    {"Korthikanti et al.", "korthikanti22", true, false},
    {"NVIDIA Megatron-LM README 'Training Speed", "megatron-readme", true, false},
    {"NVIDIA Megatron-LM README (Megatron-Core", "megatron-readme", true, false},
    {"NVIDIA Megatron-LM, megatron/core/transformer/moe", "megatron-moe", true, false},
    {"NVIDIA Megatron-MoE-ModelZoo", "megatron-moe-modelzoo", true, false},
    {"NVIDIA NeMo Framework performance summary", "nemo-24.07", true, false},
    {"NVIDIA dgxc-benchmarking", "dgxc-benchmarking", true, false},
    {"Llama Team, The Llama 3 Herd", "llama3-paper", false, true},
    {"MosaicML llm-foundry", "llm-foundry", false, true},
    {"PyTorch torchtitan", "torchtitan", false, true},
};

/// Model family traits the records do not spell out, from the model's name (public architectures): Llama, Mixtral,
/// Qwen and Mistral are SwiGLU + RMSNorm + RoPE without biases; GPT-3 (Megatron, NeMo) GELU + LayerNorm + learned
/// positions with biases; MPT GELU + LayerNorm with ALiBi (no position table) and no biases (MosaicML, "Introducing
/// MPT-7B", 2023: no_bias, ALiBi, FlashAttention).
/// Public architectures of the records whose model dimensions are null, from the configurations the runs used:
/// MosaicML llm-foundry scripts/train/yamls/pretrain/mpt-{125m,350m,760m}.yaml (commits 2a59782a, 39393a21:
/// d_model, n_heads, n_layers, expansion_ratio 4, vocab_size 50368), NVIDIA NeMo-Framework-Launcher
/// launcher_scripts/conf/training/gpt3/{5b,20b}.yaml (commits 00af8f26, 056a90ed: num_layers, hidden_size,
/// num_attention_heads, ffn 4 x hidden, GPT2BPETokenizer's 50,257 entries).
struct KnownArchitecture {
  const char* name;
  int layers, hidden, heads, vocab;
};
constexpr KnownArchitecture kKnown[] = {
    {"MPT-125m", 12, 768, 12, 50368}, {"MPT-350m", 24, 1024, 16, 50368}, {"MPT-760m", 24, 1536, 12, 50368},
    {"GPT3-5B", 24, 4096, 32, 50257}, {"GPT3-20B", 44, 6144, 48, 50257},
};

/// NeMo's Nemotron models of the NeMo 24.07 performance table: NVIDIA NeMo-Framework-Launcher
/// launcher_scripts/conf/training/nemotron/nemotron_{8b,22b,340b}.yaml (commits 329df4af, 3dd35614, 6daee02a):
/// num_layers, hidden_size, ffn_hidden_size, num_attention_heads, num_query_groups (null: multi-head), activation
/// squared-relu, position_embedding_type rope (rotary_percentage 0.5), normalization layernorm1p, bias false,
/// share_embeddings_and_output_weights false; the 340B's tokenizer nemotron_2_256k (256,000 entries; the Nemotron-4
/// papers' vocabulary), taken for all three; the 340B recomputes selectively (activations_checkpoint_granularity)
/// and keeps and reduces its gradients in bf16 (optim.grad_sync_dtype bf16).
constexpr NemotronArchitecture kNemotron[] = {
    {"Nemotron-8B", 32, 4096, 16384, 32, 32, false, false},
    {"Nemotron-22B", 40, 6144, 24576, 48, 48, false, false},
    {"Nemotron-340B", 96, 18432, 73728, 96, 8, true, true},
};

}  // namespace

// ---- (1) families and their defaults -------------------------------------------------------------------------------

const Family* family_of(const json& r) {
  const std::string paper = r.at("source").at("paper").get<std::string>();
  for (const auto& f : kFamilies)
    if (paper.rfind(f.prefix, 0) == 0) return &f;
  // A source the converter has no rules for (runs from other publications): the defaults of the framework the record
  // names in its source or notes (not its FLOP convention: FSDP runs count Megatron's FLOPs too), each family's
  // general ones above and nothing source-specific.
  static constexpr Family kOtherMegatron{
      "", "other-megatron", true, false,
      "source not known to the converter: Megatron-LM / NeMo defaults (the record names the framework)"};
  static constexpr Family kOtherFsdp{
      "", "other-fsdp", false, true,
      "source not known to the converter: PyTorch FSDP defaults (the record names FSDP, TorchTitan or Composer)"};
  static constexpr Family kOther{"", "other", false, false,
                                 "source not known to the converter, nor its framework: only what the record states"};
  const std::string text = lower(paper + " " + r.value("notes", std::string()));
  const json& p = r.contains("parallel") && r.at("parallel").is_object() ? r.at("parallel") : json::object();
  if (contains(text, "megatron") || contains(text, "nemo")) return &kOtherMegatron;
  if (contains(text, "fsdp") || contains(text, "torchtitan") || contains(text, "composer") ||
      contains(text, "llm-foundry") || get<bool>(p, "fsdp").value_or(false))
    return &kOtherFsdp;
  return &kOther;
}

// ---- (2) record -> scenario: what the record leaves out -------------------------------------------------------------

std::optional<HardwareChoice> hardware_of(const json& r, std::vector<std::string>& assumptions) {
  const std::string gpu = r.at("hardware").at("gpu").get<std::string>();
  // The SXM parts the built-in profiles describe; PCIe / NVL boards (other clocks, power and links) have none. "NVL"
  // names a board (H100 NVL) or a rack (NVL72), "NVLink" the links every part has.
  std::string board = lower(gpu);
  for (auto at = board.find("nvlink"); at != std::string::npos; at = board.find("nvlink"))
    board.erase(at, 6);
  if (contains(board, "pcie") || ((contains(board, " nvl") || contains(board, "-nvl")) && !contains(board, "nvl72")))
    return std::nullopt;
  if (contains(gpu, "a100")) {
    if (contains(gpu, "40g") || contains(gpu, "40 g")) return HardwareChoice{"a100-sxm4-40gb", "ampere"};
    return HardwareChoice{"a100-sxm4-80gb", "ampere"};
  }
  if (contains(gpu, "h200")) return HardwareChoice{"h200-sxm-141gb", "hopper"};
  if (contains(gpu, "gb300")) return HardwareChoice{"gb300-nvl72", "blackwell"};
  if (contains(gpu, "gb200")) return HardwareChoice{"gb200-nvl72", "blackwell"};
  if (contains(gpu, "b200")) return HardwareChoice{"b200-sxm-180gb", "blackwell"};
  if (contains(gpu, "h800")) {
    assumptions.push_back("H800 SXM5: H100's compute with 400 GB/s NVLink (the h800-sxm5-80gb profile)");
    return HardwareChoice{"h800-sxm5-80gb", "hopper"};
  }
  if (contains(gpu, "96gb")) return HardwareChoice{"h100-sxm5-96gb-500w", "hopper"};
  if (contains(gpu, "h100")) return HardwareChoice{"h100-sxm5-80gb", "hopper"};
  return std::nullopt;
}

const NemotronArchitecture* nemotron_of(const std::string& name) {
  for (const auto& n : kNemotron)
    if (name == n.name) return &n;
  return nullptr;
}

json model_of(json m, const Family& fam, std::vector<std::string>& assumptions, std::string& refusal) {
  const std::string name = get<std::string>(m, "name").value_or("model");
  for (const auto& k : kKnown)
    if (name == k.name && is_null(m, "layers")) {
      m["layers"] = k.layers;
      m["hidden"] = k.hidden;
      m["heads"] = k.heads;
      m["vocab"] = k.vocab;
      assumptions.push_back(std::string("architecture of ") + k.name + " from its public training configuration");
    }
  const bool swiglu =
      contains(name, "llama") || contains(name, "mixtral") || contains(name, "qwen") || contains(name, "mistral");
  const bool mpt = contains(name, "mpt");
  if (const auto* n = nemotron_of(name); n && is_null(m, "layers")) {
    json out;
    out["name"] = name;
    out["layers"] = n->layers;
    out["hidden"] = n->hidden;
    out["ffn_hidden"] = n->ffn;
    out["heads"] = n->heads;
    out["kv_heads"] = n->kv_heads;
    out["vocab"] = 256000;
    out["activation"] = "relu2";
    out["norm"] = "layernorm";
    out["position_embedding"] = "rope";
    out["bias"] = false;
    out["tied_embeddings"] = false;
    out["max_seq_len"] = std::max(4096, get<int>(m, "seq_len").value_or(4096));
    assumptions.push_back(std::string("architecture of ") + n->name +
                          " from NeMo-Framework-Launcher's nemotron yaml (squared ReLU, 256k vocabulary)");
    return out;
  }
  if (contains(name, "nemotron")) {
    refusal = "a Nemotron model whose architecture the record does not give and the converter does not know";
    return {};
  }
  for (const char* k : {"layers", "hidden", "heads", "vocab"})
    if (is_null(m, k)) {
      refusal = std::string("the record does not give the architecture (model.") + k + " is null)";
      return {};
    }
  json out;
  out["name"] = name;
  out["layers"] = m.at("layers");
  out["hidden"] = m.at("hidden");
  out["heads"] = m.at("heads");
  out["vocab"] = m.at("vocab");
  const int hidden = m.at("hidden").get<int>();
  if (is_null(m, "ffn_hidden")) {
    out["ffn_hidden"] = 4 * hidden;
    assumptions.push_back("ffn_hidden = 4 x hidden (Megatron-LM's default --ffn-hidden-size)");
  } else {
    out["ffn_hidden"] = m.at("ffn_hidden");
  }
  if (is_null(m, "kv_heads")) {
    out["kv_heads"] = m.at("heads");
    assumptions.push_back("kv_heads = heads (Megatron-LM's default: no grouped-query attention)");
  } else {
    out["kv_heads"] = m.at("kv_heads");
  }
  out["activation"] = swiglu ? "swiglu" : "gelu";
  out["norm"] = swiglu ? "rmsnorm" : "layernorm";
  // MPT's benchmark runs learn their positions: llm-foundry's benchmark table gives NumParams growing by d_model per
  // extra position of seq_len (1B: 1,315,950,592 at 2k, 1,445,974,016 at 64k = +2,048 x 63,488), the learned_pos_emb
  // table of its MPT config, no ALiBi and no rotary embedding.
  out["position_embedding"] = swiglu ? "rope" : "learned";
  out["bias"] = !(swiglu || mpt);
  out["tied_embeddings"] = !swiglu;
  out["max_seq_len"] = std::max(2048, get<int>(m, "seq_len").value_or(2048));
  if (!is_null(m, "moe")) {
    const json& e = m.at("moe");
    if (get<int>(e, "dense_layers").value_or(0) > 0) {
      refusal = "mixed dense and MoE layers (model.moe.dense_layers > 0) are not modelled yet";
      return {};
    }
    json moe;
    moe["experts"] = e.at("num_experts");
    moe["top_k"] = e.at("top_k");
    moe["ffn_hidden"] = is_null(e, "expert_ffn_hidden") ? out["ffn_hidden"] : e.at("expert_ffn_hidden");
    moe["shared_experts"] = get<int>(e, "shared_experts").value_or(0);
    out["moe"] = moe;
  }
  // Qwen3's kv_channels (Megatron --kv-channels) of 128: attention width 8192 while hidden is 4096 (arch_notes).
  if (!is_null(m, "arch_notes") && contains(m.at("arch_notes").get<std::string>(), "kv_channels 128"))
    out["head_dim"] = 128;
  (void)fam;
  return out;
}

std::string recompute_of(const json& p, const json& model, const Family& fam, std::vector<std::string>& assumptions) {
  const auto text = get<std::string>(p, "recompute");
  // TorchTitan's "selective" is PyTorch's per-operator checkpointing (selective_ac_option "op", the default of its
  // llama3_8b.toml at the benchmarked commit; torchtitan train_configs/llama3_8b.toml), trainsim's recompute "op".
  const bool torchtitan = std::string(fam.name) == "torchtitan";
  if (torchtitan && !text) {
    assumptions.push_back("per-operator selective checkpointing (TorchTitan's llama3_8b.toml default: op)");
    return "op";
  }
  if (torchtitan && contains(*text, "selective")) return "op";
  const auto* nemotron = nemotron_of(get<std::string>(model, "name").value_or(""));
  if (!text && nemotron && nemotron->selective) {
    assumptions.push_back("selective recomputation (the model's NeMo training config)");
    return "selective";
  }
  if (!text) {
    assumptions.push_back("no recomputation (the framework default when the recipe does not enable it)");
    return "none";
  }
  if (contains(*text, "full")) return "full";
  if (contains(*text, "selective")) return "selective";
  return "none";
}

std::string dtype_of(const json& r) {
  const std::string p = lower(r.value("precision", std::string()));
  if (p.find("fp8") != std::string::npos) return "fp8";
  if (p.find("fp16") != std::string::npos && p.find("bf16") == std::string::npos) return "fp16";
  return "bf16";
}

ModelZooCommand modelzoo_command(const json& r, const Family& fam) {
  ModelZooCommand c;
  if (std::string(fam.name) != "megatron-moe-modelzoo") return c;
  const std::string table = r.at("source").value("table", std::string());
  const std::string id = r.at("id").get<std::string>();
  if (contains(table, "long context") && contains(table, "h100")) {
    // "PP=8 VPP=4 TP=${TP} EP=8 CP=${CP} ... --recompute-granularity selective --recompute-modules layernorm moe",
    // "Dispatcher: DeepEP" in the setup above it; MBS=1 from runtime.conf.
    c.pp = 8;
    c.vpp = 4;
    c.ep = 8;
    c.micro_batch = 1;
    c.deepep = true;
    c.recompute_modules = {"layernorm", "moe"};
    c.source =
        "layout of the README's long-context command (PP 8, VPP 4, EP 8, DeepEP, selective recomputation of "
        "layernorm and moe; micro-batch 1, runtime.conf's default)";
  } else if (id == "modelzoo_qwen3_235b_gb200_256gpu_mxfp8_seq4096") {
    // "--recompute-granularity selective --recompute-modules moe_act layernorm ... --fine-grained-activation-offloading
    // --offload-modules expert_fc1 moe_act".
    c.recompute_modules = {"moe_act", "layernorm"};
    c.source = "selective recomputation of moe_act and layernorm (the README's MXFP8 command)";
  }
  return c;
}

}  // namespace validation::conversion
