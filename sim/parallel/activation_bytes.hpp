// sim/parallel/activation_bytes.hpp: what one transformer layer holds in activations on one GPU, by tensor
// (internal to sim/parallel: memory.cpp sums these over the layers and micro-batches a pipeline rank holds; the
// public per-layer figure is memory.hpp's layer_activation_bytes).
#pragma once
#include "sim/parallel/memory.hpp"
#include "sim/workload/model_spec.hpp"

namespace sim::parallel::activation_bytes {

constexpr double kBf16 = 2;  // bytes per bf16 element
constexpr double kFp32 = 4;
constexpr double kMask = 1;  // a dropout mask element (Korthikanti et al. 2022 count 1 byte)
constexpr double kFp8 = 1;   // an FP8 activation element

/// Key/value heads one tensor-parallel rank holds: its share (resolve_layout's kv-heads-tp rule makes them divide; one
/// whole head otherwise, for MLA models, whose kv_heads are not split this way).
inline int kv_heads_per_rank(const workload::ModelSpec& m, int tp) {
  return m.kv_heads % tp == 0 ? m.kv_heads / tp : 1;
}

/// Activation gradients live at the peak of one layer's backward, which no stored-activation count includes
/// (Korthikanti et al. 2022 count what the forward saves): autograd holds an operator's output gradient while it
/// computes the input gradient. In an MLP of inner size f over t ranks, for n tokens: the activation function's
/// backward holds d(its output), f/t, and d(its input), 2f/t gated (gate and up) or f/t; the first projection's
/// input-gradient GEMM then holds d(its output) and d(its input), h wide (whole: the reduce-scatter or all-reduce
/// that shards or sums it comes after). The larger of the two, in 16-bit. For an MoE layer the routed experts' tokens
/// and inner size, as moe_parts. Attention's gradients (q, k, v and the output, h wide or less per token) are smaller
/// than the MLP's for f >= h and are not added.
double gradient_working_bytes(const workload::ModelSpec& m, const ActivationShape& a);

}  // namespace sim::parallel::activation_bytes
