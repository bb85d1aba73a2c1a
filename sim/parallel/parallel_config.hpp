// sim/parallel/parallel_config.hpp: the parallel strategy of a job (TP/SP, PP/VPP, DP/ZeRO, CP, EP, recompute).
#pragma once
#include "sim/base/json_reader.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sim::parallel {

/// Megatron-LM's --recompute-granularity (none: not given), and Op: PyTorch's per-operator selective activation
/// checkpointing as TorchTitan runs it ([activation_checkpoint] mode "selective", selective_ac_option "op";
/// torchtitan/models/llama3/parallelize.py, _save_list): a transformer block saves the outputs of its matmuls except
/// every second one, of the attention kernel and of the reduce-scatters, and recomputes everything else.
enum class Recompute { None, Selective, Full, Op };
enum class RecomputeMethod { Uniform, Block };  // Megatron-LM's --recompute-method (full granularity only)
/// How MoE tokens reach their experts' ranks: Megatron-Core's all-to-all token dispatcher (every routed copy travels
/// to its expert's rank), or DeepEP (--moe-token-dispatcher-type flex --moe-enable-deepep), whose inter-node kernels
/// send a token once to each node that holds one of its experts and forward it over NVLink inside the node (DeepEP
/// README, "normal kernels": RDMA and NVLink forwarding; DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 3.2.2).
enum class MoeDispatcher { AllToAll, DeepEp };
/// How tensor-parallel communication is overlapped (with tp_comm_overlap): Transformer Engine's userbuffers
/// (Megatron-LM's --tp-comm-overlap) or PyTorch's async TP (Inductor's micro-pipeline pass, TorchTitan's
/// enable_async_tensor_parallel), which leaves the backward reduce-scatters of summed input gradients exposed
/// (execution/tp_overlap.hpp).
enum class TpOverlapMethod { Userbuffers, AsyncTp };
/// When ZeRO-3 / FSDP gathers the next unit's weights in the backward (PyTorch FSDP's BackwardPrefetch,
/// torch/distributed/fsdp/api.py): Pre issues it before the current unit's gradient computation, which hides it;
/// Post after, so that it overlaps only the current unit's reduce-scatter and the next unit's gradient computation
/// waits for it; None when that unit's backward starts.
enum class BackwardPrefetch { Pre, Post, None };
/// How context parallelism moves keys and values (Megatron-Core's --cp-comm-type): P2p passes each rank's chunk
/// around a ring (Transformer Engine's default); AllGather gathers every rank's chunk once per attention pass
/// (PyTorch's context_parallel with its default rotate method, TorchTitan's; Llama 3's context parallelism,
/// arXiv:2407.21783, Sec. 3.3.2), which holds the whole sequence's keys and values on each rank (memory.cpp).
enum class CpCommType { P2p, AllGather };
/// DualPipeV: DeepSeek's DualPipe cut in half (deepseek-ai/DualPipe, dualpipe/dualpipev.py): two chunks per rank in a
/// V (rank r holds virtual stages r and 2pp - 1 - r), forwards and backwards of different micro-batches run as
/// overlapped pairs, the backward split into input and weight gradients at the ends (schedule.hpp).
enum class Schedule { GPipe, OneFOneB, Interleaved, ZeroBubbleH1, DualPipeV };

/// Megatron-Core's --recompute-modules (selective granularity; TransformerConfig.recompute_modules), as a bit set.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,       // "core_attn": scores, softmax, dropout, context (Korthikanti's selective)
  kRecomputeLayernorm = 1u << 1,      // "layernorm": input_layernorm and pre_mlp_layernorm outputs
  kRecomputeMlp = 1u << 2,            // "mlp": the dense MLP submodule (keeps its input)
  kRecomputeMoe = 1u << 3,            // "moe": the whole MoE layer (keeps its input)
  kRecomputeMoeAct = 1u << 4,         // "moe_act": the experts' activation function
  kRecomputeMlaUpProj = 1u << 5,      // "mla_up_proj": MLA up-projections and RoPE
  kRecomputeSharedExperts = 1u << 6,  // "shared_experts": the shared experts
};

const char* to_string(Recompute r);
const char* to_string(RecomputeMethod m);
const char* to_string(Schedule s);
const char* to_string(BackwardPrefetch b);  // "pre", "post", "none": the scenario key's values
const char* to_string(TpOverlapMethod m);   // "userbuffers", "async_tp"
const char* to_string(CpCommType c);        // "p2p", "all_gather"
/// The module names in Megatron-Core's spelling, in bit order.
std::vector<std::string> recompute_module_names(unsigned modules);

struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  std::optional<int> dp;  // derived as gpus / (tp*pp*cp) when omitted
  int cp = 1;
  int ep = 1;
  /// Megatron-Core's --expert-tensor-parallel-size: the tensor parallelism of the experts; 0 (not given) is tp. With
  /// expert_tp < tp ("MoE parallel folding", Megatron-Core 0.10) expert-parallel groups also span tensor-parallel
  /// ranks: ep * expert_tp must divide tp * dp * cp.
  int expert_tp = 0;
  int expert_tp_or_tp() const { return expert_tp > 0 ? expert_tp : tp; }
  int vpp = 1;  // virtual pipeline stages per rank (interleaved 1F1B when > 1)
  bool sequence_parallel = false;
  int zero_stage = 0;
  bool distributed_optimizer = false;  // Megatron's distributed optimizer: optimizer states sharded over DP
  Recompute recompute = Recompute::None;
  RecomputeMethod recompute_method = RecomputeMethod::Uniform;
  /// Full granularity: uniform = layers per recomputed group (only each group's input is stored); block = layers
  /// recomputed per virtual stage (the first ones), the rest store everything. Megatron-LM's --recompute-num-layers.
  int recompute_num_layers = 1;
  unsigned recompute_modules = kRecomputeCoreAttn;         // selective granularity only
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;  // "moe_dispatcher": "alltoall" (default) or "deepep"
  /// "moe_dispatch_dtype": "bf16" (default) or "fp8". FP8 dispatch (DeepSeek-V3, arXiv:2412.19437 Sec. 3.3.4,
  /// "Low-Precision Communication"; DeepEP's dispatch takes an FP8 tensor with one fp32 scale per 128 channels):
  /// tokens are quantised before the dispatch and the output gradients before the combine's backward, both feeding
  /// FP8 expert GEMMs; the combine and the dispatch's backward stay 16-bit. Needs training.dtype "fp8".
  bool moe_dispatch_fp8 = false;
  /// Megatron-LM's --tp-comm-overlap: Transformer Engine's userbuffers run each sequence-parallel all-gather and
  /// reduce-scatter of a linear layer pipelined with its GEMM (execution/tp_overlap.hpp). Needs sequence parallelism.
  bool tp_comm_overlap = false;
  /// Megatron-LM's --overlap-moe-expert-parallel-comm (Megatron-Core 0.14): a steady-state forward and backward of
  /// two micro-batches run as one step on two streams, each MoE all-to-all beside the other pass's compute
  /// (execution/ep_overlap.hpp). Needs ep > 1, pp 1 or the interleaved schedule, no full recomputation.
  bool ep_comm_overlap = false;
  /// "userbuffers" (default) or "async_tp"; given only with tp_comm_overlap true.
  TpOverlapMethod tp_comm_overlap_method = TpOverlapMethod::Userbuffers;
  /// Megatron-LM's --overlap-param-gather (distributed optimizer / ZeRO 1-2): the updated parameters' all-gather runs
  /// bucket by bucket under the next iteration's first forward instead of after the optimizer step.
  bool overlap_param_gather = false;
  /// Gradient reduction overlapped with the backward (ZeRO 0-2): each bucket's all-reduce or reduce-scatter starts
  /// once the backward (the last micro-batch's; each micro-batch's with ZeRO-2) has made its gradients (Megatron-LM's
  /// --overlap-grad-reduce, DeepSpeed's overlap_comm, PyTorch DDP). False: every bucket waits for the end of that
  /// backward (Megatron-LM without the flag and DeepSpeed ZeRO 0-2 without overlap_comm, their defaults; the importers
  /// set it so). ZeRO-3 reduces each unit's gradients as its backward ends whatever this says; false is refused there.
  bool overlap_grad_reduce = true;
  /// Hybrid sharding (HSDP; TorchTitan's data_parallel_shard_degree beside data_parallel_replicate_degree, PyTorch
  /// FSDP's HYBRID_SHARD): the data-parallel ranks a ZeRO state is sharded over, the states replicated across the
  /// dp / dp_shard groups (and over context parallelism as before). 0: all dp ranks. Memory, optimizer time and the
  /// checkpoint share count it; the weights are gathered within a copy's group, the gradients reduce-scattered within
  /// it and then all-reduced across the copies (execution/step_plan.cpp). Needs zero_stage >= 1 or the distributed
  /// optimizer, ep 1.
  int dp_shard = 0;
  /// ZeRO-3 / FSDP only: "pre" (default; PyTorch FSDP's BACKWARD_PRE default, FSDP2's and DeepSpeed's prefetch),
  /// "post" (BACKWARD_POST, MosaicML Composer's default) or "none".
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;
  /// ZeRO-3 only, "zero3_overlap": false when each unit's gather and reduce-scatter block the compute stream, nothing
  /// prefetched. DeepSpeed's ZeRO-3 before its PR #1188 (June 2021) synchronised the device before every parameter
  /// all-gather, so its prefetch did not overlap ("the async version is not async at all").
  bool zero3_overlap = true;
  /// ZeRO-3 only, "zero3_engine_gbs" (GB/s; not given, 0 here: no bound but NCCL's): the most bytes per second of
  /// gathered weights and reduce-scattered gradients one GPU's ZeRO-3 engine moves where the framework's own path
  /// (Python per parameter, copies, synchronisation), not the network, bounds it. A unit's gather takes at least its
  /// 16-bit weights' bytes over this rate, its reduce-scatter its gradients' at the reduction dtype
  /// (execution/step_plan.cpp); nothing where the group is one GPU.
  double zero3_engine_bytes_per_s = 0;
  /// Context parallelism's key/value exchange: "p2p" (default, Megatron-Core's) or "all_gather". No effect at cp 1.
  CpCommType cp_comm_type = CpCommType::P2p;
  int micro_batch = 1;
  int global_batch = 0;  // sequences per iteration
  Schedule schedule = Schedule::OneFOneB;
  std::vector<int> layers_per_stage;  // optional uneven split over pp*vpp stages
  /// Given as Megatron-LM's --pipeline-model-parallel-layout ("pipeline_layout", pipeline_layout.hpp): it set
  /// layers_per_stage, vpp (stages / pp) and layout_mtp (its MTP layers, checked against the model's). The string
  /// itself is not kept (the planner copies configurations by the million): pipeline_layout_text writes it back.
  bool from_layout = false;
  int layout_mtp = 0;
  /// Megatron-LM's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: the input
  /// embedding (on the first virtual stage) and the output layer and loss (on the last) each count as one layer when
  /// the layers are split evenly, so those stages hold one transformer layer fewer.
  bool account_for_embedding = false;
  bool account_for_loss = false;
  /// Megatron-Core's --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers: transformer layers of
  /// the first / last pipeline rank (over its vpp chunks); the others split the rest evenly. 0: not given.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  std::string order = "tp-cp-dp-pp";  // rank placement, innermost first

  /// Strict parse of the scenario's "parallel" object. Defaults: tp = pp = cp = ep = vpp = 1, sequence_parallel
  /// false, zero_stage 0, recompute "none" (or "selective", "full", "op"), recompute_method "uniform",
  /// recompute_num_layers 1, recompute_modules
  /// ["core_attn"] (Megatron-Core's defaults), micro_batch 1, schedule "1f1b" ("interleaved" is implied by vpp > 1),
  /// account_for_embedding/loss_in_pipeline_split false, first/last_stage_layers not given, tp_comm_overlap,
  /// ep_comm_overlap and overlap_param_gather false (Megatron-LM's defaults), overlap_grad_reduce true,
  /// tp_comm_overlap_method "userbuffers",
  /// backward_prefetch "pre", zero3_overlap true, zero3_engine_gbs not given (all three with zero_stage 3 only),
  /// cp_comm_type "p2p". global_batch is required.
  static ParallelConfig parse(base::JsonReader& in);
};

}  // namespace sim::parallel
