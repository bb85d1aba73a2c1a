// sim/importers/hf_model_types.hpp: what the Hugging Face importer knows of a config's model_type, from transformers'
// modeling and configuration code: which classes build a gated MLP, which default to untied embeddings, and which
// model types the importer's rules follow (another is read as a Llama-like class, with a warning).
#pragma once
#include <optional>
#include <string_view>

namespace sim::importers {

/// Config classes whose modeling code always builds a gated MLP (gate_proj, up_proj, down_proj) with rotary
/// positions, whatever hidden_act names: LlamaMLP, MistralMLP, Qwen2MLP, DeepseekV3MLP, Phi3MLP, GemmaMLP, ...
bool gated_architecture(std::string_view model_type);

/// Config classes whose modeling code always applies rotary positions and has no learned position table, whether or
/// not the config names rope_theta: the gated ones above, and GPT-NeoX, GPT-J, CodeGen, Phi, Qwen, GLM, StableLM,
/// Starcoder2 and InternLM (their modeling_<model>.py; a config without rope keys was read as learned positions,
/// adding a max_position_embeddings x hidden table: StarCoder2-3B 3.1B instead of 3.03B, a tester's trial).
bool rotary_architecture(std::string_view model_type);

/// Config classes whose tie_word_embeddings default is False (transformers' configuration_<model>.py: true), those
/// that keep PretrainedConfig's True (false), or nullopt for those not known here.
std::optional<bool> untied_by_default(std::string_view model_type);

/// The model types whose modeling code the importer's rules follow.
bool known_model_type(std::string_view model_type);

}  // namespace sim::importers
