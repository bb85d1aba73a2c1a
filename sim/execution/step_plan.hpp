// sim/execution/step_plan.hpp: one training iteration resolved into timed work per virtual pipeline stage.
#pragma once
#include "sim/base/units.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/parallel/placement.hpp"
#include "sim/topology/topology.hpp"
#include "sim/workload/layer_costs.hpp"
#include "sim/workload/model_spec.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sim::execution {

/// What a piece of work occupies: the compute stream, or a blocking collective of one parallel group. Dp: the part
/// of ZeRO-3's parameter all-gathers (data-parallel group) that prefetching does not hide, timed (not a rendezvous).
enum class SegKind : std::uint8_t { Compute, Tp, Cp, Ep, Dp };

/// A piece of an operation with its duration on a healthy GPU. Compute segments stretch with a GPU's slowdown;
/// collectives synchronise their group (a collective starts when its last participant arrives).
struct TimedSegment {
  base::Time duration;
  SegKind kind = SegKind::Compute;
  std::uint16_t label = 0;  // index into StepPlan::labels
};

/// The work of one operation kind (forward, backward, ...) of one virtual stage, for one micro-batch.
struct OpWork {
  std::vector<TimedSegment> segments;
  base::Time total() const;              // every segment back to back, no waiting
  base::Time total(SegKind kind) const;  // the segments of one kind
};

/// A data-parallel gradient bucket: reduced once the last micro-batch's backward has produced its gradients (with
/// ZeRO >= 2, after every micro-batch's: StepPlan::dp_every_micro_batch).
struct DpBucket {
  base::Bytes bytes;    // gradient bytes over the data-parallel group (fp32 main grads, Megatron's default for bf16)
  int ready_after = 0;  // index of the backward segment after which the bucket's gradients are final
  base::Time duration;  // its data-parallel collective(s) (all-reduce, or reduce-scatter with ZeRO >= 1)
  base::Time ready_at;  // the end of segment ready_after from the start of its pass (the durations before, summed)
  /// The routed experts' gradient bytes, reduced over the expert-data-parallel group after `bytes` (zero unless that
  /// group differs from the data-parallel group: ep x expert_tp != tp), and that reduction's closed-form time.
  base::Bytes expert_bytes;
  base::Time expert_duration;
};

struct StageWork {
  int layers = 0;
  OpWork forward;
  OpWork backward;         // recompute (if any) + input gradients + weight gradients, as 1F1B runs it
  OpWork backward_input;   // recompute + input gradients (zero-bubble B)
  OpWork backward_weight;  // weight gradients (zero-bubble W)
  /// With EP communication overlap (parallel.ep_comm_overlap): a steady-state forward and the backward it is paired
  /// with, their all-to-alls cut to the stall they cause beside the other pass (ep_overlap.hpp). Empty otherwise.
  OpWork forward_paired;
  OpWork backward_paired;
  std::vector<DpBucket> buckets;  // in the order they become ready during the last backward
  base::Time optimizer;           // optimizer step on this stage's (sharded) parameters
  base::Time param_gather;        // ZeRO 1-2: all-gather of updated parameters over the data-parallel group
  base::Bytes param_gather_bytes;
  double params_local = 0;  // parameters this GPU holds for the stage
};

/// Inputs of the step level, resolved by the composition root (scenario) into plain values.
struct StepInputs {
  const workload::ModelSpec* model = nullptr;
  const hardware::HardwareProfile* hardware = nullptr;
  parallel::ParallelConfig parallel;
  parallel::Layout layout;
  int seq_len = 0;
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  std::shared_ptr<const topology::Topology> topology;  // built once per cluster, shared by every plan
  bool flash_attention = true;
  bool dropout = false;            // hidden dropout (training.hidden_dropout > 0)
  bool attention_dropout = false;  // training.attention_dropout > 0
  /// Data-parallel gradients on the wire in fp32 (Megatron-LM's default for bf16) or in bf16 (--grad-reduce-in-bf16).
  bool fp32_main_grads = true;
  /// Bytes per parameter the optimizer keeps and rewrites (parallel::MemoryOptions::optimizer_state_bytes).
  double optimizer_state_bytes = 12;
  /// The optimizer writes a 16-bit copy of each weight after its step (a separate master: MemoryOptions::MasterWeights
  /// Separate); where the parameters are the master (FSDP's fp32 parameters, fp32 training, pure 16-bit) it does not.
  bool writes_16bit_weights = true;
  /// The fused attention kernel's class (FA3 / cuDNN as Transformer Engine runs it, FlashAttention-2, Triton).
  hardware::AttentionKernel attention_kernel = hardware::AttentionKernel::Fused;
  /// PyTorch eager-mode elementwise kernels (scenario training.kernels "eager"; workload::LayerShape::eager_kernels).
  bool eager_kernels = false;
  /// Keys and values copied to every query head before attention (scenario training.attention_kv "repeated").
  bool repeated_kv = false;
  /// How the loss runs (scenario training.cross_entropy; workload::LayerShape::loss).
  workload::CrossEntropy cross_entropy = workload::CrossEntropy::Fused;
  /// Sequence-parallel activations laid out [batch, sequence, hidden] (scenario training.sp_layout "batch_first").
  bool sp_batch_first = false;
  /// MoE routing imbalance (scenario training.moe_imbalance; workload::LayerShape::moe_imbalance).
  double moe_imbalance = 1;
  /// The routed experts' work done per token over top_k's (Megatron-Core's token dropping): min(1, capacity factor)
  /// when tokens are dropped, the factor when inputs are padded to capacity, 1 without a capacity (MemoryOptions).
  /// MFU counts the routed tokens' share, HFU what runs.
  double moe_routed_done = 1;
  double moe_routed_run = 1;
  /// How FP8 linears scale (only read when dtype is fp8/fp4): the bytes of their casts.
  workload::Fp8Scaling fp8_scaling = workload::Fp8Scaling::Delayed;
  /// Tokens per second the data pipeline (storage and loaders) delivers to the whole job; 0 = never the bottleneck.
  double data_tokens_per_s = 0;
};

/// Everything the three fidelities need, computed once: per-stage timed work, pipeline transfer times, and the
/// iteration's FLOP counts.
struct StepPlan {
  parallel::Layout layout;
  parallel::Schedule schedule = parallel::Schedule::OneFOneB;
  std::string order = "tp-cp-dp-pp";  // rank placement, innermost first
  int gpus = 0;
  /// Work by chunk * pp + rank (stage()): the virtual stage's under interleaving; under DualPipeV's V (Layout::v_shape)
  /// chunk 1 of rank r holds virtual stage 2pp - 1 - r's work. Stages alike in work share one StageWork (never modified
  /// once built), so a deep pipeline's plan holds a few, not pp x vpp copies of their segment lists.
  std::vector<std::shared_ptr<const StageWork>> stages;
  std::vector<int> first_layers;  // by virtual stage: the model layer each starts at
  base::Time p2p;                 // activation (or gradient) send between adjacent stages
  bool p2p_crosses_network = false;
  bool dp_reduce_scatter = false;  // ZeRO >= 1 / distributed optimizer: gradients reduce-scattered, not all-reduced
  /// ZeRO >= 2: a GPU keeps only its shard of the gradients, so every micro-batch's gradients are reduce-scattered
  /// as its backward produces them (DeepSpeed stage 2, FSDP outside no_sync), not once after the last micro-batch.
  bool dp_every_micro_batch = false;
  /// Without overlap (parallel.overlap_grad_reduce false, ZeRO 0-1): Megatron-LM's finalize_model_grads reduces every
  /// chunk's buckets after the rank's last backward, so with interleaving no chunk's reduction runs under another's.
  bool dp_after_backward = false;
  /// Hybrid sharding (parallel.dp_shard below dp): the data-parallel ranks of one copy's group. Its gradients are
  /// reduce-scattered within each copy's group (dp_shard x cp ranks), then each shard all-reduced across the copies.
  /// 0: one group.
  int dp_shard = 0;
  /// Megatron-Core's --overlap-moe-expert-parallel-comm (or DualPipeV with expert parallelism): steady-state
  /// forward/backward pairs run their paired passes.
  bool ep_comm_overlap = false;
  std::shared_ptr<const topology::Topology> topology;  // for flow-level replays of data-parallel collectives
  double model_flops = 0;                              // per iteration, whole job (MFU convention)
  double hardware_flops = 0;     // per iteration, whole job, recomputation counted (HFU convention)
  double tokens = 0;             // per iteration
  double data_tokens_per_s = 0;  // what the data pipeline delivers (0: unlimited); a slower pipeline stalls the step
  base::FlopRate peak;           // per GPU in the training dtype
  std::vector<std::string> labels;

  int pp() const { return layout.pp; }
  int vpp() const { return layout.vpp; }
  int micro_batches() const { return layout.micro_batches; }
  const StageWork& stage(int chunk, int rank) const {
    return *stages[static_cast<std::size_t>(chunk * layout.pp + rank)];
  }
};

/// Builds the plan: kernels from workload::layer_work timed by hardware::compute_model, collectives timed on the
/// concrete groups of the placement by collectives::collective_time.
StepPlan build_step_plan(const StepInputs& in);

/// A tensor-, context- or expert-parallel group split over NVLink domains though its GPUs (lowest to highest) would
/// fit in one: a domain boundary falls inside it, and its layer collectives cross the network. Groups spread wider
/// than a domain by their layout are not listed. The first such group of each dimension (by pipeline rank).
struct GroupAcrossDomains {
  parallel::Dim dim = parallel::Dim::Tp;
  int pipeline_rank = 0;
  int first_gpu = 0, last_gpu = 0;  // the group's lowest and highest GPU
  int domains = 0;                  // NVLink domains it spans
};
std::vector<GroupAcrossDomains> groups_across_nvlink_domains(const StepInputs& in);

/// A data-parallel group whose NVLink domains hold different numbers of its ranks (256 GPUs filling 72-GPU domains
/// 72/72/72/40 put a group of 32 as 9/9/9/5): NCCL's rings cross the domains over the rails of the smallest share
/// (sim/collectives/collective.hpp). The first such group, by pipeline rank.
struct UnevenGroup {
  int pipeline_rank = 0;
  std::vector<int> members;     // its GPUs
  std::vector<int> per_domain;  // its ranks in each domain it spans, by domain
};
std::optional<UnevenGroup> uneven_data_parallel_group(const StepInputs& in);

}  // namespace sim::execution
