// sim/parallel/megatron_flags.hpp: a resolved parallel configuration written back as Megatron-LM arguments.
#pragma once
#include "sim/hardware/profile.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/workload/model_spec.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sim::parallel {

/// The effective configuration as Megatron-LM (megatron/training/arguments.py) arguments, in three parts:
/// - notes: what Megatron-LM derives itself (the data-parallel size) or has no flag for (GPipe and zero-bubble
///   schedules, non-default rank orders, uneven virtual stages, fp32/tf32/fp4);
/// - parallel: parallelism, data-parallel sharding, recomputation and batch flags (what `trainsim plan` prints for a
///   candidate, one line);
/// - model: sequence, architecture and precision flags.
/// The one writer of Megatron-LM flags (`step --explain` and `plan`); `trainsim import megatron` reads them back to
/// the same configuration.
struct MegatronArgs {
  std::vector<std::string> notes;
  std::vector<std::string> parallel;
  std::vector<std::string> model;
};
/// `fp8_recipe`: the scenario's training.fp8_recipe ("delayed", Megatron-LM's default, writes no flag). `training`:
/// the scenario's attention, dropout and gradient precision (training.fused_attention, attention_dropout,
/// hidden_dropout, main_grads), written where Megatron-LM's defaults differ from them; none: not written.
MegatronArgs megatron_args(const ParallelConfig& config, const Layout& layout, const workload::ModelSpec& model,
                           int seq_len, hardware::Dtype dtype, std::string_view fp8_recipe = "delayed",
                           const MemoryOptions* training = nullptr);

/// megatron_args() as text that pastes into a launch script: the notes as "# " comment lines, then one flag per line
/// joined by " \" continuations.
std::string megatron_flags(const ParallelConfig& config, const Layout& layout, const workload::ModelSpec& model,
                           int seq_len, hardware::Dtype dtype, std::string_view fp8_recipe = "delayed",
                           const MemoryOptions* training = nullptr);

/// The parallel part on one line, flags separated by spaces (a plan's candidate).
std::string megatron_parallel_line(const MegatronArgs& args);

}  // namespace sim::parallel
