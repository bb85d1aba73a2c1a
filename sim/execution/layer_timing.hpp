// sim/execution/layer_timing.hpp: what every step plan and the kernel table (`trainsim step --kernels`) time alike:
// the layer shape one GPU runs, a kernel's time on the scenario's GPU, and which collective a layer's communication
// segment is.
#pragma once
#include "sim/collectives/collective.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/parallel/placement.hpp"
#include "sim/workload/layer_costs.hpp"

#include <vector>

namespace sim::execution {

/// The shape of one transformer layer on one GPU for these inputs (micro-batch, sequence, tp/cp/ep, kernels, FP8).
workload::LayerShape layer_shape(const StepInputs& in);

/// A kernel's time on the inputs' GPU (sim/hardware/compute_model.hpp): GEMMs at the FP8 rate where the kernel is an
/// FP8 linear and in 16 bits otherwise, fused attention, memory-bound kernels at achieved HBM bandwidth.
base::Time kernel_time(const StepInputs& in, const workload::Kernel& k);

/// The collective a layer's communication segment runs and the parallel dimension whose group runs it.
struct LayerCollective {
  collectives::Op op = collectives::Op::AllReduce;
  parallel::Dim dim = parallel::Dim::Tp;
};
LayerCollective layer_collective(workload::CommKind kind);

/// The payload n the collective formulas take for a segment of `bytes` per rank on `group`: a context-parallel
/// exchange is an all-gather of the group's chunks; DeepEP's all-to-all crosses the network once per node.
double layer_collective_payload(const StepInputs& in, workload::CommKind kind, const std::vector<int>& group,
                                double bytes);

}  // namespace sim::execution
