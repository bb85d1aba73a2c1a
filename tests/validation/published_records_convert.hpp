// tests/validation/published_records_convert.hpp: what the published-record converter's source files share.
// JSON helpers, source families, framework defaults and the reference step time, internal to published_records*.cpp;
// the converter's API is published_records.hpp.
#pragma once
#include "tests/validation/published_records.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace validation::conversion {

using nlohmann::json;

// ---- JSON and text helpers ------------------------------------------------------------------------------------------

inline bool is_null(const json& j, const char* key) {
  return !j.contains(key) || j.at(key).is_null();
}

template <typename T>
std::optional<T> get(const json& j, const char* key) {
  if (is_null(j, key)) return std::nullopt;
  return j.at(key).get<T>();
}

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

inline bool contains(const std::string& text, const char* what) {
  return lower(text).find(what) != std::string::npos;
}

// ---- (1) families and their defaults (published_records_defaults.cpp) -----------------------------------------------

/// The framework defaults a family's records rely on (shared/validation/README.md: "fill them with that framework's
/// documented default ... and say so").
struct Family {
  const char* prefix;  // start of source.paper
  const char* name;
  bool megatron_like;  // Megatron-LM / Megatron-Core / NeMo / Megatron-Bridge: distributed optimizer, SP with TP > 1
  bool fsdp_like;      // llm-foundry / TorchTitan: FSDP sharding, SP with TP (TorchTitan always pairs them)
  const char* inferred = nullptr;  // for a source the converter does not know: how its defaults were chosen
};

/// The family of a record's source: a known one by the start of source.paper; otherwise "other-megatron",
/// "other-fsdp" or "other", by the framework the record's text names (never null).
const Family* family_of(const json& r);

struct HardwareChoice {
  std::string profile;
  std::string generation;
};

/// The built-in hardware profile and GPU generation of the record's GPU, or nothing when no profile fits.
std::optional<HardwareChoice> hardware_of(const json& r, std::vector<std::string>& assumptions);

/// A NeMo Nemotron model's public architecture (the table in published_records_defaults.cpp).
struct NemotronArchitecture {
  const char* name;
  int layers, hidden, ffn, heads, kv_heads;
  bool selective;   // activations_checkpoint_granularity: selective
  bool bf16_grads;  // optim.grad_sync_dtype: bf16
};

/// The Nemotron architecture of that name, or nullptr.
const NemotronArchitecture* nemotron_of(const std::string& name);

/// The record's model as scenario JSON, with the public architectures and framework defaults it leaves out (each
/// noted in `assumptions`); empty JSON with `refusal` set when it cannot be expressed.
json model_of(json m, const Family& fam, std::vector<std::string>& assumptions, std::string& refusal);

/// The recompute setting of the record's layout, the family's default when it says none.
std::string recompute_of(const json& p, const json& model, const Family& fam, std::vector<std::string>& assumptions);

/// The training dtype of the record's precision: "fp8", "fp16" or "bf16".
std::string dtype_of(const json& r);

/// What a Megatron-MoE-ModelZoo command line states where its table does not (yanring/Megatron-MoE-ModelZoo,
/// best_practice/qwen3/readme.md at 020b8136b3bc6f47e4143849f54e400cf0f71e8a; the micro-batch default of
/// runtime_configs/benchmarking/runtime.conf at 30631ea5a4aa6a5328be4e81466ac0d7e9fc438f, "Qwen3-235B-A22B" row).
struct ModelZooCommand {
  int pp = 0, vpp = 0, ep = 0, micro_batch = 0;  // 0: not stated
  bool deepep = false;
  std::vector<std::string> recompute_modules;
  std::string source;  // the assumption line naming the command
};

/// The layout a Megatron-MoE-ModelZoo record's command states; nothing stated for other families.
ModelZooCommand modelzoo_command(const json& r, const Family& fam);

// ---- (3) reference step time (published_records_reference.cpp) ------------------------------------------------------

/// Sets `out`'s reference step time (and how it was obtained) by the source's own convention: its step time, its
/// tokens/s, or its TFLOP/s with its FLOP count. False, with out.refusal set, when the record publishes none of them.
bool reference_of(const json& r, Record& out, int gpus, double batch, double seq);

}  // namespace validation::conversion
