// sim/execution/step_plan_cache_impl.hpp: the step-plan cache's entries (internal to sim/execution: step_plan.cpp
// fills and reads them, step_plan_cache.cpp owns them). Seam: what a layer's timings are keyed by and hold, apart from
// how build_step_plan computes them.
#pragma once
#include "sim/execution/step_plan_cache.hpp"
#include "sim/workload/params.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace sim::execution {
namespace detail {

/// Per-plan memo of collective times: (op, first member, second member, size, bytes, sibling groups) identifies a
/// group of one plan's placement, a payload, and how many groups run it at the same moment (Planner::collective).
using CollectiveKey = std::tuple<int, int, int, int, std::int64_t, int>;
using CollectiveMemo = std::map<CollectiveKey, base::Time>;

/// Everything the layer-level timings are computed from (see StepPlanCache).
struct LayerKey {
  const workload::ModelSpec* model = nullptr;
  const hardware::HardwareProfile* hardware = nullptr;
  const topology::Topology* topology = nullptr;
  int dtype = 0;
  int fp8 = 0;
  int recompute = 0;
  unsigned recompute_modules = 0;  // selective only
  int attention_kernel = 0;
  bool eager_kernels = false;
  bool repeated_kv = false;
  workload::CrossEntropy loss = workload::CrossEntropy::Fused;
  bool sp_batch_first = false;
  double moe_imbalance = 1;
  bool flash_attention = false;
  bool dropout = false;
  bool attention_dropout = false;
  bool sequence_parallel = false;
  int micro_batch = 0;
  int seq_len = 0;
  int tp = 0;
  int cp = 0;
  int ep = 0;
  int expert_tp = 0;
  int moe_dispatcher = 0;
  bool moe_dispatch_fp8 = false;
  bool tp_comm_overlap = false;
  int tp_comm_overlap_method = 0;
  std::vector<int> tp_group;  // where the timed GPU's groups sit (Planner::placement_key), not their members
  std::vector<int> cp_group;
  std::vector<int> ep_group;

  auto tie() const {
    return std::tie(model, hardware, topology, dtype, fp8, recompute, recompute_modules, attention_kernel,
                    eager_kernels, repeated_kv, loss, sp_batch_first, moe_imbalance, flash_attention, dropout,
                    attention_dropout, sequence_parallel, micro_batch, seq_len, tp, cp, ep, expert_tp, moe_dispatcher,
                    moe_dispatch_fp8, tp_comm_overlap, tp_comm_overlap_method, tp_group, cp_group, ep_group);
  }
  bool operator<(const LayerKey& o) const { return tie() < o.tie(); }
};

/// The layer-level timings of one LayerKey, and the label table and collective memo a fresh build has after them.
struct LayerTimings {
  std::vector<TimedSegment> l_fwd, l_rec, l_b, l_w, d_fwd, d_rec, d_b, d_w, e_fwd, e_b, e_w, o_fwd, o_b, o_w;
  std::vector<TimedSegment> p_fwd, p_b, p_w;  // a multi-token-prediction module's projection (none without MTP)
  base::Time l_w_mlp;                         // of l_w, the MLP's (the experts') weight gradients (ep_overlap.hpp)
  double layer_forward_model_flops = 0;
  double layer_recompute_flops = 0;       // executed FLOPs of one layer's recompute pass on one GPU
  double layer_recompute_gemm_flops = 0;  // of which matmuls outside the attention core
  // The same of a dense layer of an MoE model with dense layers (first_k_dense, layer_freq); the layer's otherwise.
  double dense_forward_model_flops = 0, dense_recompute_flops = 0, dense_recompute_gemm_flops = 0;
  workload::ParamCounts params;
  std::vector<std::string> labels;
  CollectiveMemo collectives;
};

}  // namespace detail

struct StepPlanCache::Impl {
  std::map<detail::LayerKey, detail::LayerTimings> layers;
  /// Collective times by (topology, op, bytes) and then the exact members: the cost model's own answer, reused.
  std::map<std::tuple<const topology::Topology*, int, std::int64_t>, std::map<std::vector<int>, base::Time>>
      collectives;
  /// workload::model_flops_per_iteration by (model, sequence length, sequences per iteration).
  std::map<std::tuple<const workload::ModelSpec*, int, double>, double> model_flops;
};

}  // namespace sim::execution
