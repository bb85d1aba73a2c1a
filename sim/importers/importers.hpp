// sim/importers/importers.hpp: scenario and model drafts from the configurations users already have (Megatron-LM,
// DeepSpeed, TorchTitan, Hugging Face). Importers produce JSON drafts, never Scenario objects; the command line
// checks the result with the scenario loader.
#pragma once
#include "sim/importers/draft.hpp"
#include "sim/importers/shell.hpp"

#include <string>
#include <string_view>

namespace sim::importers {

/// A Megatron-LM launch command line or argument list (a shell script fragment: line continuations, comments,
/// quotes, NAME=value assignments and $NAME / ${NAME} expansions, a torchrun prefix). `known` holds what other inputs
/// already gave (a model config, --gpus): defaults that need it (global batch = micro batch x dp, virtual stages
/// from layers per virtual stage) read it. Malformed input throws base::ConfigError naming the file and line.
/// `invocation`: the script's arguments and environment, as it is run (`bash run.sh dsw A37B` with MP_VP=2).
Import import_megatron(const std::string& path, const Draft& known = {}, const ShellInvocation& invocation = {});
Import import_megatron_text(std::string_view text, const std::string& origin, const Draft& known = {},
                            const ShellInvocation& invocation = {});

/// A DeepSpeed JSON config: ZeRO stage, micro batch, gradient accumulation, train batch size, activation
/// checkpointing, bf16/fp16. "auto" values (the Hugging Face Trainer integration) are reported as unresolved.
Import import_deepspeed(const std::string& path, const Draft& known = {});

/// A TorchTitan TOML job config: [parallelism], [training], [activation_checkpoint], [model].
Import import_torchtitan(const std::string& path, const Draft& known = {});
Import import_torchtitan_text(std::string_view text, const std::string& origin, const Draft& known = {});

/// A Hugging Face model config.json into model fields ("model.layers", ...).
Import import_hf_config(const std::string& path);

}  // namespace sim::importers
