// sim/importers/megatron_args.hpp: the Megatron-LM arguments trainsim reads (megatron/training/arguments.py): their
// names, kinds, accepted values and bounds, the scenario field each gives, and how argparse reads an integer. Used by
// megatron.cpp, which applies them to a scenario draft.
#pragma once
#include "sim/importers/draft.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sim::importers::megatron {

enum class Kind { Int, Bool, Choice, Text };  // Text: any value, checked where it is used

struct FlagSpec {
  const char* name;  // without the leading "--"
  Kind kind;
  const char* path;                       // scenario path for a direct mapping, else nullptr (handled by the caller)
  std::vector<const char*> choices = {};  // accepted values of a Choice flag
  int nargs = 1;                          // values an Int flag takes (--rampup-batch-size START INCR SAMPLES)
  std::int64_t max = 1'000'000'000;       // the largest value accepted
  bool presence_only = false;             // only whether it is given matters: a value from a variable is fine
};

/// Every flag trainsim reads. Anything else is listed as ignored.
const std::vector<FlagSpec>& flag_specs();
/// The spec of a flag written without "--" and with '-' for '_'; nullptr when trainsim does not read it.
const FlagSpec* find_spec(const std::string& normalized);

/// A flag trainsim does not read (no FlagSpec), by what it may do to the estimate:
/// - NoEffect: a Megatron-LM flag that changes neither the step, the memory nor the run (learning rate, logging,
///   data paths, initialisation, ...): listed as ignored;
/// - NotModelled: a Megatron-LM flag that changes speed or memory in a way trainsim does not model: a warning;
/// - ShapesModel: not a flag trainsim knows, and its name says it may set the model's shape, the layout, the batch
///   or the precision (a fork's spelling such as MindSpeed-LLM's --n-shared-experts): the import is refused;
/// - Unknown: not a flag trainsim knows: a warning that it was not read.
/// `why` says what to do (the Megatron-LM spelling where one is known).
enum class Unread { NoEffect, NotModelled, ShapesModel, Unknown };
/// Whether a Slurm option of sbatch, srun or #SBATCH (-N, --nodes, --partition, ...) takes the next word as its value.
bool slurm_option_takes_value(std::string_view flag);
/// Why a word of the command refuses the import (an entry point that trains another architecture, a NeMo Hydra
/// launch), or nullopt.
std::optional<std::string> other_entry_point(const std::string& word);
Unread classify_unread(const std::string& normalized, std::string& why);
/// Why a word after the training script that is neither a flag nor a flag's value refuses the import: argparse
/// refuses it as an unrecognized argument, so the job would not start (a flag written with an en dash pasted from a
/// web page, or one hyphen, was dropped and its setting lost; found by a tester). Nullopt for a number (a negative
/// value) and for "--".
std::optional<std::string> stray_word(const std::string& word);
/// A control operator or redirection left as a word where a command line was built in a string and run with eval
/// (`run_cmd="deepspeed pretrain_gpt.py ... &> $LOG &"`): &, |, ;, &&, >, &>, 2>&1, <, ... The words after it are
/// not the script's arguments.
bool shell_operator_word(std::string_view word);
/// The scenario field a flag gives (for unresolved values); empty when none.
std::string settles(const FlagSpec& s);
/// "a, b, c".
std::string join(const std::vector<const char*>& items);
/// An integer as Python's int() reads argparse values: digits with single underscores between them ("220_000_000").
std::optional<std::int64_t> python_int(std::string text);

/// One flag as given, for messages and origins.
struct Given {
  std::string flag;   // as written, with "--"
  std::string value;  // empty for a boolean flag; several values joined by spaces
  int line = 0;
  std::size_t command = 0;  // which command of the script gave it
};

/// What the feature readings below need of the importer: the flags given, the values known so far (the file's, else
/// the other inputs'), the import to add to, and its error list.
struct Context {
  const std::string& origin;
  std::function<const Given*(const std::string&)> given;
  std::function<std::optional<std::int64_t>(std::string_view)> lookup;
  Import& out;
  std::function<void(int, const std::string&)> error;
};

/// Where a flag was given, for origins and notes: "file:line --flag".
inline std::string where(const Context& c, const Given& g) {
  return c.origin + ":" + std::to_string(g.line) + " " + g.flag;
}

/// The classic GPT layer's architecture flags with Megatron-LM's defaults when the file describes a model
/// (megatron_model.cpp): activation, norm, positions, biases, tied embeddings, MLP width, query groups, MoE top-k and
/// width, the padded vocabulary; it calls apply_architecture_features.
void apply_model_flags(const Context& c);
/// Model features beyond the classic GPT layer (megatron_features.cpp): --kv-channels (head dimension),
/// multi-latent attention, --moe-layer-freq (dense and MoE layers), --moe-shared-expert-intermediate-size,
/// --quick-geglu, --qk-layernorm, --mtp-num-layers.
void apply_architecture_features(const Context& c);
/// Megatron-DeepSpeed's MoE flags where the file is a Megatron-DeepSpeed launch (--deepspeed, or one of its own MoE
/// flags): --topk (default 1), --expert-interval (default 2: every second layer), --moe-expert-parallel-size, token
/// dropping at --moe-train-capacity-factor (default 1.0) unless --disable-moe-token-dropping (megatron_features.cpp).
void apply_megatron_deepspeed_moe(const Context& c);
/// Data-parallel sharding (megatron_sharding.cpp): Megatron-DeepSpeed's --zero-stage, Megatron-FSDP's
/// --data-parallel-sharding-strategy, --use-torch-fsdp2, --num-distributed-optimizer-instances (hybrid sharding).
void apply_sharding_flags(const Context& c);
/// Virtual pipeline stages from --num-layers-per-virtual-pipeline-stage N, as Megatron-LM derives them
/// (megatron_features.cpp); --num-virtual-stages-per-pipeline-rank gives them directly.
void apply_virtual_pipeline(const Context& c);
/// Training features: --grad-reduce-in-bf16 (bf16 main gradients), dropout (Megatron-LM's default 0.1), the attention
/// backend, --recompute-method / --recompute-num-layers / --recompute-modules, uneven first and last pipeline stages.
void apply_training_features(const Context& c);

}  // namespace sim::importers::megatron
