// sim/execution/data_parallel_bytes.hpp: what the data-parallel side of a step moves and touches per parameter
// (gradient buckets, gradient and weight bytes on the wire, the optimizer's memory traffic), split from
// step_plan.cpp along that seam.
#pragma once
#include "sim/hardware/profile.hpp"

#include <algorithm>

namespace sim::execution {

/// Megatron-Core's gradient bucket: max(40M, 1M x dp) parameters (DistributedDataParallelConfig.bucket_size).
inline double bucket_params(int dp) {
  return std::max(40e6, 1e6 * dp);
}

/// Adam in mixed precision touches per local parameter: the main gradient read by the gradient-norm pass and by the
/// step (fp32: 2 x 4), the master weight and the two moments read and written (fp32: 3 x 8), the 16-bit weight
/// written (2): 34 bytes with Megatron's defaults. `state_bytes` is what the optimizer keeps per parameter
/// (parallel::MemoryOptions::optimizer_state_bytes: 12 by default, 6 with bf16 moments and 16-bit master remainders);
/// `writes_16bit_weights` false where the parameters are themselves the master (no 16-bit copy to write).
inline double optimizer_bytes_per_param(bool fp32_main_grads, double state_bytes, bool writes_16bit_weights) {
  const double grad = fp32_main_grads ? 4.0 : 2.0;
  return 2 * grad + 2 * state_bytes + (writes_16bit_weights ? 2.0 : 0.0);
}
/// Gradient bytes on the wire: the main gradients' dtype (training.main_grads), as memory counts them. bf16 training
/// reduces fp32 main gradients by default (Megatron-LM forces accumulate_allreduce_grads_in_fp32 for bf16,
/// arguments.py); fp16 training 16-bit ones (the flag's default, the scenario's default for fp16:
/// training_section.cpp).
inline double grad_bytes(bool fp32_main_grads) {
  return fp32_main_grads ? 4.0 : 2.0;
}
/// Weight bytes on the wire (ZeRO-3 / FSDP gathers, the distributed optimizer's parameter all-gather): the
/// parameters' dtype, 16-bit in mixed precision, fp32 in fp32 / tf32 training (hardware::tensor_bytes).
inline double param_bytes(hardware::Dtype training_dtype) {
  return hardware::tensor_bytes(training_dtype);
}

}  // namespace sim::execution
