// sim/parallel/megatron_flags.hpp: a resolved parallel configuration written back as Megatron-LM arguments.
#pragma once
#include "sim/hardware/profile.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/workload/model_spec.hpp"

#include <string>

namespace sim::parallel {

/// The effective configuration as Megatron-LM (megatron/training/arguments.py) arguments: first, as "# " comment
/// lines, what Megatron-LM derives itself (the data-parallel size) or has no flag for (ZeRO-2/3, GPipe and zero-bubble
/// schedules, non-default rank orders, fp32/tf32/fp4); then one flag per line joined by " \" continuations, so that
/// the text pastes into a launch script. `trainsim import megatron` reads it back to the same configuration.
std::string megatron_flags(const ParallelConfig& config, const Layout& layout, const workload::ModelSpec& model,
                           int seq_len, hardware::Dtype dtype);

}  // namespace sim::parallel
