// sim/execution/ep_overlap.hpp: Megatron-Core's batch-level overlap of MoE all-to-alls with another micro-batch.
//
// With --overlap-moe-expert-parallel-comm (parallel.ep_comm_overlap) Megatron-Core runs the forward of one
// micro-batch and the backward of another as one "combined 1F1B" step on two CUDA streams
// (megatron/core/models/common/model_chunk_schedule_plan.py at 01cf4fb5, TransformerLayerSchedulePlan.run). A layer
// is cut into attention (attention, norm, router), dispatch all-to-all, MLP (the experts) and combine all-to-all; the
// forward layer l and the backward layer of the mirrored position are launched in this order:
//   comm stream:    combine_bwd | dispatch_fwd -> dispatch_bwd        | combine_fwd
//   compute stream: attn_fwd    | mlp_bwd -> mlp_bwd_dw -> mlp_fwd     | attn_bwd
// Each stream runs in launch order; the forward's parts wait for each other, the backward's likewise (one CUDA event
// per model chunk), so the forward's dispatch hides under the backward's MLP, the backward's combine under the
// forward's attention, and so on. Only steady-state pairs overlap: warm-up forwards and cool-down backwards run
// alone (parallel::pair_forward_backward marks the pairs).
//
// EpOverlapBuilder collects a stage's passes unit by unit (embedding, layers, output layer, as the step plan builds
// them), replays that two-stream launch order for one forward and one backward of the same stage, and rewrites each
// all-to-all segment to the compute-stream stall it causes, so a paired forward plus its paired backward last as long
// as the two streams do. Recomputed all-to-alls (recompute module "moe") stay on the backward's chain before its
// combine. The compute beside an all-to-all loses the SMs its kernels occupy: 20 for DeepEP (DeepSeek-V3 technical
// report, arXiv:2412.19437, Sec. 3.2.2: "only 20 SMs are sufficient to fully utilize the bandwidths of IB and
// NVLink"), 24 for NCCL's all-to-all (the step plan's kNcclCollectiveSms). Pairing a stage's forward with its own
// backward stands in for Megatron's pairing of different model chunks under interleaving (the chunks of a rank are
// alike but for the embedding and the output layer).
#pragma once
#include "sim/base/units.hpp"
#include "sim/execution/step_plan.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace sim::execution {

/// One pass of one unit (a layer, the embedding or the output layer) cut where Megatron-Core's overlap cuts it.
/// Forward: attn, dispatch, mlp, combine, post (after the combine). Backward: pre (before combine_bwd), plus
/// recomputed all-to-alls, combine, mlp (with the experts' weight gradients), dispatch, attn (with the rest).
struct OverlapUnit {
  base::Time pre;
  base::Time recompute_comm;  // backward only: all-to-alls of a recomputed MoE block, before the combine
  base::Time attn;
  base::Time dispatch;
  base::Time mlp;
  base::Time combine;
  base::Time post;
  int recompute_alltoalls = 0;  // how many all-to-all segments recompute_comm sums
  bool has_dispatch = false;
  bool has_combine = false;
};

/// The weight-gradient time of a layer's MLP (its "mlp_wgrad" segment: experts and shared experts), which
/// Megatron-Core runs as mlp_bwd_dw right after the MLP's input gradients.
base::Time mlp_weight_grad_time(const workload::PassWork& weight_grad,
                                const std::function<base::Time(const workload::Kernel&)>& kernel_time);

/// The forward unit of a timed segment list: compute (and TP/CP/DP segments, which run on the compute stream)
/// before the first all-to-all is attn, between the two is mlp, after the second is post. No all-to-all: all attn.
OverlapUnit forward_unit(const std::vector<TimedSegment>& segs);

/// The backward unit of a layer: its recomputation, input-gradient and weight-gradient segments, of which
/// `mlp_weight_grad` (the experts' weight gradients, run between mlp_bwd and dispatch_bwd) belongs to the MLP part.
OverlapUnit backward_unit(const std::vector<TimedSegment>& recompute, const std::vector<TimedSegment>& input_grad,
                          const std::vector<TimedSegment>& weight_grad, base::Time mlp_weight_grad);

/// Two-stream replay of one stage's forward units (in order) beside its backward units (in backward order): for
/// every all-to-all segment of the forward and of the backward, in segment order, the compute-stream stall it
/// causes; their sum plus every unit's compute is the pair's makespan.
struct OverlapStalls {
  std::vector<base::Time> forward;
  std::vector<base::Time> backward;
  base::Time makespan;
};
OverlapStalls overlap_stalls(const std::vector<OverlapUnit>& forward, const std::vector<OverlapUnit>& backward);

/// A copy of `op` whose all-to-all segments (SegKind::Ep, in order) take the given stalls. Segments stay where they
/// were (a zero stall stays a zero-length segment), so gradient buckets' segment indices hold for the paired pass.
OpWork with_ep_stalls(const OpWork& op, const std::vector<base::Time>& stalls);

/// Collects one stage's units while the step plan appends them, then writes the stage's paired passes.
class EpOverlapBuilder {
 public:
  void forward(const std::vector<TimedSegment>& segs) { forward_.push_back(forward_unit(segs)); }
  void backward(const std::vector<TimedSegment>& recompute, const std::vector<TimedSegment>& input_grad,
                const std::vector<TimedSegment>& weight_grad, base::Time mlp_weight_grad) {
    backward_.push_back(backward_unit(recompute, input_grad, weight_grad, mlp_weight_grad));
  }
  /// Sets st.forward_paired and st.backward_paired (left empty when the stage has no all-to-all). The compute that
  /// runs beside an all-to-all runs on the SMs its kernels leave (`comm_sms` of `sms`), so the paired backward gains
  /// hidden x comm_sms / sms of compute (the step plan's overlap_interference for gradient buckets, likewise).
  void finish(StageWork& st, int sms, int comm_sms, std::uint16_t interference_label) const;

 private:
  std::vector<OverlapUnit> forward_, backward_;
};

}  // namespace sim::execution
