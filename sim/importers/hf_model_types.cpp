// sim/importers/hf_model_types.cpp: the model types of transformers the Hugging Face importer knows.
#include "sim/importers/hf_model_types.hpp"

#include <set>
#include <string>

namespace sim::importers {

bool gated_architecture(std::string_view model_type) {
  static const std::set<std::string, std::less<>> kGated = {
      "llama",     "llama4_text", "llama4",      "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
      "qwen3_moe", "deepseek_v2", "deepseek_v3", "phi3",    "olmo",    "olmo2", "granite",   "cohere"};
  return model_type.starts_with("gemma") || kGated.contains(model_type);
}

bool rotary_architecture(std::string_view model_type) {
  static const std::set<std::string, std::less<>> kRotary = {
      "gpt_neox", "gptj",     "codegen",  "phi",        "phi-msft", "qwen",    "glm",
      "glm4",     "glm4_moe", "stablelm", "starcoder2", "internlm", "chatglm", "gemma3"};
  return gated_architecture(model_type) || kRotary.contains(model_type);
}

std::optional<bool> untied_by_default(std::string_view model_type) {
  static const std::set<std::string, std::less<>> kUntied = {
      "llama",     "llama4_text", "llama4",      "mistral", "mixtral",  "qwen2", "qwen2_moe", "qwen3",
      "qwen3_moe", "deepseek_v2", "deepseek_v3", "phi3",    "gpt_neox", "gptj",  "chatglm"};  // ChatGLM's output_layer
                                                                                              // is a linear of its own
                                                                                              // (modeling_chatglm.py)
  static const std::set<std::string, std::less<>> kTied = {"gemma", "gemma2",      "gemma3_text",
                                                           "gpt2",  "gpt_bigcode", "falcon"};
  if (kUntied.contains(model_type)) return true;
  if (kTied.contains(model_type)) return false;
  return std::nullopt;
}

bool known_model_type(std::string_view model_type) {
  // Beyond the two lists above: GPT-2's family, the first Qwen's remote code, GLM (glm, glm4, glm4_moe), Gemma 3's
  // multimodal config, and the types whose own keys hf_model_rules.cpp reads (StableLM, Starcoder2, InternLM), each
  // with its own rules.
  static const std::set<std::string, std::less<>> kKnown = {
      "gpt2", "gptj", "gpt_neox", "gpt_bigcode", "codegen",  "phi-msft",   "qwen",
      "glm",  "glm4", "glm4_moe", "gemma3",      "stablelm", "starcoder2", "internlm"};
  return gated_architecture(model_type) || kKnown.contains(model_type) || untied_by_default(model_type);
}

}  // namespace sim::importers
