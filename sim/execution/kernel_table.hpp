// sim/execution/kernel_table.hpp: every kernel and collective of one transformer layer, the input embedding and the
// output layer, for one micro-batch on one GPU, each with the shape, FLOPs, bytes and time the step plan uses
// (`trainsim step --kernels`): the numbers a step time is the sum of, to check one against a profile.
#pragma once
#include "sim/base/units.hpp"
#include "sim/execution/step_plan.hpp"

#include <string>
#include <vector>

namespace sim::execution {

struct KernelRow {
  std::string part;  // "layer" (a transformer layer; an MoE layer where the model has experts), "dense_layer" (an
                     // MoE model's dense layer, where it has some), "embedding" (first stage), "output" (last stage:
                     // final norm, logits, loss)
  std::string pass;  // "forward", "recompute", "backward" (input gradients), "wgrad" (weight gradients)
  std::string name;  // the kernel or collective ("qkv", "attn_norm", "attn_ag", ...)
  std::string kind;  // "gemm", "gemm_fp8", "attention", "memory", or the collective: "all_gather", ...
  double m = 0, n = 0, k = 0, batch = 1;  // GEMM shape
  double flops = 0;                       // executed FLOPs (GEMM, attention)
  double bytes = 0;                       // HBM traffic (memory-bound) or payload per rank (collectives)
  int group = 0;                          // ranks of a collective's group
  base::Time time;                        // alone on the GPU or the group
  base::Time exposed;                     // what the step pays: the time, or with --tp-comm-overlap what the
                                          // collective adds beyond the GEMM it overlaps
};

/// The rows for `in`, in execution order within each part and pass.
std::vector<KernelRow> kernel_table(const StepInputs& in);

}  // namespace sim::execution
