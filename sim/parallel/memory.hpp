// sim/parallel/memory.hpp: bytes per GPU of a layout: weights, gradients, optimizer states, activations and buffers.
#pragma once
#include "sim/base/units.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/workload/layer_costs.hpp"
#include "sim/workload/model_spec.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <vector>

namespace sim::parallel {

/// HBM one GPU needs at its peak, by category. total is the sum of the five.
struct MemoryBreakdown {
  base::Bytes params;       // bf16 weights (sharded over data parallelism by ZeRO-3)
  base::Bytes grads;        // fp32 main gradients (sharded by ZeRO-2 and -3)
  base::Bytes optimizer;    // fp32 master weights, Adam m and v (sharded by ZeRO-1+ / the distributed optimizer)
  base::Bytes activations;  // transformer layers' stored activations at the schedule's peak + the recompute set
  base::Bytes buffers;      // embedding/logits, communication buffers, ZeRO-3 gathers, the runtime reserve
  base::Bytes total;
  int pipeline_rank = 0;  // the pipeline rank this breakdown accounts
};

/// CUDA context, cuBLAS/cuDNN/TransformerEngine workspaces and NCCL communicator buffers, which no tensor accounts
/// for. ASSUMPTION, not a measurement: about 0.5 GiB of CUDA context and kernel images per process, workspaces of tens
/// of MiB per stream, and NCCL buffers for the 4-6 process groups of a 3D/4D-parallel job (NCCL_BUFFSIZE is 4 MiB per
/// channel and peer) round to 2 GiB. Allocator fragmentation is not modelled. Scenario key memory.reserve.
inline constexpr base::Bytes kDefaultRuntimeReserve{2LL << 30};

/// What the training stack decides about memory (scenario keys: README "Memory and recomputation"). The defaults are
/// those of current Megatron-Core, NeMo and TorchTitan: fused attention, no dropout, fp32 main gradients.
struct MemoryOptions {
  /// Fused attention (FlashAttention, Dao et al. 2022; cuDNN / TransformerEngine) stores no s x s score matrix.
  /// Independent of the position embedding: training.fused_attention.
  bool fused_attention = true;
  /// Dropout probabilities (training.attention_dropout, training.hidden_dropout). A probability above zero stores
  /// 1-byte masks (Korthikanti et al. 2022 count them): attention dropout on the s x s scores when attention is not
  /// fused (fused kernels regenerate it from the RNG state); hidden dropout after the attention and MLP blocks and
  /// on the embedding.
  double attention_dropout = 0;
  double hidden_dropout = 0;
  /// fp32 main gradients (Megatron-LM's default for bf16: "bfloat16 requires gradient accumulation and all-reduce to
  /// be done in fp32"), or bf16 with --grad-reduce-in-bf16: training.main_grads "fp32" | "bf16".
  bool fp32_main_grads = true;
  /// Where the master weights live (training.master_weights):
  /// - Separate (default): 16-bit weights beside an fp32 master copy the optimizer keeps (Megatron-LM's distributed
  ///   optimizer, DeepSpeed's ZeRO; 2 + 4 + 12 = 18 bytes per parameter, as above);
  /// - Params: the parameters themselves are fp32 and the master; 16-bit weights exist only where they are gathered
  ///   or cast for a GEMM (PyTorch FSDP's MixedPrecisionPolicy, whose sharded parameters keep their fp32 dtype and are
  ///   cast to param_dtype before the all-gather, torch/distributed/fsdp/_fully_shard/_fsdp_param.py; torch.autocast
  ///   without FSDP; TorchTitan): 4 + 4 + 8 = 16 bytes, the 4 of the weights sharded with ZeRO-3 as the 2 were. The
  ///   gradients take the fp32 parameters' dtype: fp32_main_grads false then only halves the bytes reduced (FSDP's
  ///   reduce_dtype, the reduced shard cast back: _fsdp_collectives.py foreach_reduce);
  /// - None: no fp32 copy at all, parameters, gradients and Adam's moments in the 16-bit dtype (TorchTitan's
  ///   [training] dtype "bfloat16": "all parameters, gradients, and optimizer states in bfloat16, without an extra
  ///   copy of fp32 weights", torchtitan/config/job_config.py): 2 + 2 + 4 = 8 bytes, reduced in 16 bits.
  /// Under ZeRO 1-2 (how trainsim writes FSDP that keeps its gathered weights across micro-batches, TorchTitan with
  /// pipeline parallelism) the gathered 16-bit weights are whole beside the shard: Params counts as Separate there,
  /// None as 2 + 2 + 4/d.
  enum class MasterWeights { Separate, Params, None };
  MasterWeights master_weights = MasterWeights::Separate;
  /// The dtypes of the separate master copy and of Adam's two moments (only read with Separate master weights):
  /// Megatron-Core's precision-aware optimizer (--use-precision-aware-optimizer: TransformerEngine's FusedAdam, which
  /// needs the distributed optimizer) keeps them in --main-params-dtype fp32 | fp16 and --exp-avg-dtype /
  /// --exp-avg-sq-dtype fp32 | fp16 | bf16 | fp8, and with TransformerEngine >= 2.1 stores an fp32 master as the 16
  /// bits the bf16 weights lack (store_param_remainders: 2 bytes). Megatron-LM's OptimizerConfig
  /// (megatron/core/optimizer/optimizer_config.py) and get_megatron_optimizer. training.main_params,
  /// training.exp_avg, training.exp_avg_sq; the defaults are the 4 + 4 + 4 = 12 above.
  enum class MainParams { Fp32, Fp32Remainders, Fp16 };
  enum class Moment { Fp32, Bf16, Fp16, Fp8 };
  /// Their spellings, in enum order: the scenario keys' values and Megatron-LM's --main-params-dtype /
  /// --exp-avg-dtype / --exp-avg-sq-dtype values alike.
  static constexpr std::array<std::string_view, 3> kMainParamsNames{"fp32", "fp32_remainders", "fp16"};
  static constexpr std::array<std::string_view, 4> kMomentNames{"fp32", "bf16", "fp16", "fp8"};
  static std::string_view name(Moment m) { return kMomentNames[static_cast<std::size_t>(m)]; }
  MainParams main_params = MainParams::Fp32;
  Moment exp_avg = Moment::Fp32;
  Moment exp_avg_sq = Moment::Fp32;
  static double bytes(MainParams m) { return m == MainParams::Fp32 ? 4 : 2; }
  static double bytes(Moment m) { return m == Moment::Fp32 ? 4 : m == Moment::Fp8 ? 1 : 2; }
  /// Bytes per local parameter of what the optimizer keeps and rewrites each step: the master and the two moments
  /// (Separate), the fp32 parameters and two fp32 moments (Params: 4 + 8), or 16-bit parameters and moments (None).
  double optimizer_state_bytes() const {
    switch (master_weights) {
      case MasterWeights::Params:
        return 12;
      case MasterWeights::None:
        return 6;
      case MasterWeights::Separate:
        break;
    }
    return bytes(main_params) + bytes(exp_avg) + bytes(exp_avg_sq);
  }
  /// The optimizer steps each parameter inside the backward, as soon as its (sharded) gradient is reduced, and drops
  /// the gradient (TorchTitan's [optimizer] early_step_in_backward: OptimizersInBackwardContainer's
  /// post-accumulate-grad hooks, torchtitan/components/optimizer.py). Modelled with FSDP (ZeRO-3) or one data-parallel
  /// rank, one micro-batch per step, no pipeline or expert parallelism (TorchTitan refuses those two): the sharded
  /// gradients are never all held; one layer's are, while its step runs. training.optimizer_in_backward.
  bool optimizer_in_backward = false;
  /// Persistent FP8 copies of each GEMM weight and its transpose (Hopper's FP8 GEMMs take only the TN layout):
  /// 2 bytes per transformer-layer weight beside the bf16 weights, for recipes that keep them across the iteration.
  /// training.fp8_weight_copies, default off even for FP8 training: the published FP8 runs of NVIDIA's recipes
  /// (DGX Cloud Llama 3.1 8B/70B/405B, NeMo 24.07) fit 80 GB only without them, so TransformerEngine's casts are
  /// taken as transient per GEMM.
  bool fp8_weight_copies = false;
  /// FP8 training keeps the inputs TransformerEngine's linear layers save for their weight gradients in FP8 (1 byte):
  /// the two norm outputs, the attention output (the projection's input) and the MLP activation output (the down
  /// projection's input). training.fp8_activations; default on when training.dtype is fp8.
  bool fp8_activations = false;
  /// Bytes per element of the tensors a step stores in its training dtype (hardware::tensor_bytes of
  /// training.dtype): 2 in mixed precision; 4 in fp32 / tf32 training, whose weights, activations and buffers are
  /// fp32 and whose fp32 parameters are their own master (Megatron-LM without --bf16/--fp16 uses FP32Optimizer, no
  /// copy; 4 + 4 + 8 = 16 bytes per parameter, sharded as MasterWeights::Params but whole under ZeRO 1-2 too).
  double element_bytes = 2;
  /// How the loss holds the logits (training.cross_entropy), per logit of the last stage's micro-batch:
  /// - fused (default) and unfused: Megatron-Core's vocabulary-parallel cross entropy keeps the fp32 softmax for its
  ///   backward, 4 B (Korthikanti et al. 2022, Sec. 4.3, "output layer"), fused or not (the kernels' bytes moved,
  ///   workload::cross_entropy_bytes, differ);
  /// - upcast: PyTorch's cross_entropy on an fp32 copy of the bf16 logits, as TorchTitan computes its loss
  ///   (`cross_entropy(pred.flatten(0, 1).float(), labels)`, then `del pred` before `loss.backward()`): at the loss
  ///   backward the log-softmax output its gradient formula keeps, the dense gradient nll_loss hands it and the
  ///   gradient it allocates are live at once, 3 x 4 B = 12 B (in the forward, logits 2 + fp32 copy 4 + log-softmax
  ///   output 4 = 10 B). PyTorch's derivatives.yaml: log_softmax backward uses the result, nll_loss backward
  ///   returns a dense gradient. With tensor parallelism the loss is PyTorch's loss_parallel on vocabulary-sharded
  ///   logits, whose fused backward holds one more fp32 tensor: 16 B (memory.cpp).
  workload::CrossEntropy cross_entropy = workload::CrossEntropy::Fused;
  bool upcast_cross_entropy() const { return cross_entropy == workload::CrossEntropy::Upcast; }
  /// What a tensor-parallel linear layer with sequence parallelism saves of its input, the norm's output, for its
  /// weight gradient (training.sp_saved_inputs):
  /// - sharded (default): this rank's 1/t of the sequence, gathered again in the backward (Megatron-Core's and
  ///   Transformer Engine's linear layers; Korthikanti et al. 2022, Sec. 4.2.2);
  /// - gathered: the all-gathered input, whole, as PyTorch's DTensor tensor parallelism saves it (TorchTitan: the
  ///   attention and feed-forward modules redistribute their input from Shard(1) to Replicate, and the column-parallel
  ///   linears after it save that replicated tensor for their weight gradient, torch.distributed.tensor.parallel).
  bool sp_gathered_inputs = false;
  /// Keys and values reach the attention call repeated to every query head (training.attention_kv "repeated"), so
  /// context parallelism by all-gather gathers them at that width (memory.cpp).
  bool repeated_kv = false;
  base::Bytes runtime_reserve = kDefaultRuntimeReserve;  // memory.reserve
  /// MoE routing (training.moe_imbalance): the tokens routed to the busiest expert-parallel rank over the mean, >= 1.
  /// 1 (default) is balanced routing, what --moe-router-force-load-balancing enforces in the published benchmarks;
  /// the busiest rank stores that many more expert activations, and every rank's peak is that rank's.
  double moe_imbalance = 1;
  /// Megatron-Core's token dropping (training.moe_capacity_factor, --moe-expert-capacity-factor): each expert keeps at
  /// most ceil(tokens x top_k / experts x factor) of the tokens routed to it
  /// (megatron/core/transformer/moe/moe_utils.py get_capacity, Megatron-LM at e61c3841), so the busiest rank holds at
  /// most factor x the mean. 0 (default): dropless, Megatron-Core's default.
  double moe_capacity_factor = 0;
  /// --moe-pad-expert-input-to-capacity (training.moe_pad_to_capacity): every expert's input padded to its capacity,
  /// so every rank moves and computes factor x the mean whatever the routing. Needs a capacity factor.
  bool moe_pad_to_capacity = false;
  /// The busiest expert-parallel rank's routed tokens over the mean as they are moved, computed and stored: the
  /// imbalance; capped by the capacity when tokens are dropped; the capacity itself when inputs are padded to it.
  /// Without expert parallelism (ep 1) the one rank holds every expert and its tokens are the mean, whatever the
  /// router does (a user trial: the imbalance slowed and enlarged ep-1 layouts, which the planner then pruned).
  double moe_load(int ep) const {
    const double imbalance = ep > 1 ? moe_imbalance : 1.0;
    if (moe_capacity_factor <= 0) return imbalance;
    return moe_pad_to_capacity ? moe_capacity_factor : std::min(imbalance, moe_capacity_factor);
  }
  /// The routed experts' work over top_k's, summed over experts: the tokens kept, at most min(1, factor) of those
  /// routed when the capacity drops tokens (at most: with uneven routing more are dropped); padded to capacity, the
  /// work run is the factor's, of which the kept tokens' is done.
  double moe_routed_done() const { return moe_capacity_factor > 0 ? std::min(1.0, moe_capacity_factor) : 1.0; }
  double moe_routed_run() const { return moe_pad_to_capacity ? moe_capacity_factor : moe_routed_done(); }
  /// ZeRO-3 / FSDP: transformer layers (units) whose gathered bf16 weights are live at once: the one in use and the
  /// prefetched next (DeepSpeed's prefetch, FSDP's forward/backward prefetch of one unit). memory.zero3_units.
  int zero3_units = 2;
  /// DeepSpeed ZeRO-3 gathers and releases parameters per submodule, holding at most stage3_max_live_parameters
  /// (DeepSpeed's default 1e9) gathered at once: when given (> 0), the gathered weights are at most this many
  /// parameters, whatever zero3_units layers hold. memory.zero3_live_params; 0 = zero3_units whole layers (FSDP).
  double zero3_live_params = 0;
  /// Pipeline receive buffers (memory.pipeline_buffers). false ("in_flight", default): Megatron-LM's point-to-point
  /// communication allocates each received tensor per call, so one activation and one gradient buffer are live at the
  /// peak. true ("per_micro_batch"): PyTorch's torch.distributed.pipelining (TorchTitan) allocates a receive buffer
  /// for every micro-batch up front, activations on every stage but the first and gradients on every stage but the
  /// last (stage.py, _prepare_forward_infra / _prepare_backward_infra), and keeps each in-flight micro-batch's output
  /// in fwd_cache until its backward.
  bool pipeline_buffers_per_micro_batch = false;
};

/// Era defaults for models without a training stack: fused attention for RoPE models, unfused with dropout for
/// learned-position GPT models (the 2021-22 Megatron-LM runs). Used by calibrate's benchmark shapes only; scenarios
/// state their own settings (MemoryOptions' defaults are today's stacks).
bool default_flash_attention(const workload::ModelSpec& model);
bool default_dropout(const workload::ModelSpec& model);

/// How one GPU sees one layer of one micro-batch.
struct ActivationShape {
  int seq_len = 0;  // the full trained sequence; context parallelism divides it
  int micro_batch = 1;
  int tp = 1;
  int cp = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  bool flash_attention = false;
  bool dropout = true;                              // hidden dropout masks (after attention, after the MLP)
  bool attention_dropout = true;                    // the score dropout mask and output (unfused attention only)
  unsigned recompute_modules = kRecomputeCoreAttn;  // with Recompute::Selective
  bool fp8_activations = false;                     // GEMM inputs saved in FP8 (MemoryOptions::fp8_activations)
  int expert_tp = 0;                                // tensor parallelism of the experts (0: tp)
  double moe_imbalance = 1;  // the busiest expert-parallel rank's routed tokens over the mean (MemoryOptions)
  bool moe_layer = true;     // for a model with experts: this layer is an MoE layer (false: one of its dense layers)
  bool sp_gathered_inputs = false;  // MemoryOptions::sp_gathered_inputs: the norm outputs saved whole, not sharded
  double element_bytes = 2;         // MemoryOptions::element_bytes: a stored activation element (4 in fp32 training)
};

/// Bytes of activations one transformer layer stores for the backward pass, for one micro-batch, on one GPU.
/// Per tensor, after Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Sec. 4
/// (bf16 activations: 2 bytes per element, dropout masks 1 byte); s = seq_len / cp, b, h, a heads, t = tp, f the MLP
/// inner size, kv = key/value width per GPU (kv_heads * head_dim / t; tp divides the kv heads, resolve_layout's
/// kv-heads-tp):
///   norm inputs 2 x 2sbh, attention/MLP block inputs 2 x 2sbh, attention dropout mask sbh, MLP dropout mask sbh
///   (all divided by t with sequence parallelism, whole without);
///   Q 2sbh/t, K and V 2sb*kv each; attention output (projection input) 2sbh/t;
///   scores: softmax output 2as^2b/t, dropout mask as^2b/t, dropout output 2as^2b/t (no fused attention), or the fp32
///   softmax statistics 4asb/t (FlashAttention keeps only the log-sum-exp, and regenerates dropout from the RNG);
///   GELU MLP: GELU input and output 2 x 2sbf/t; SwiGLU (Shazeer 2020): gate and up outputs 4sbf/t + product 2sbf/t;
///   MoE (top-k routing): router probabilities 4sbE (fp32, assumed), the k dispatched copies of every token's input
///   2sbkh (gathered over the expert-TP group, balanced routing assumed; the experts' outputs are not kept since
///   Megatron-Core 0.13 applies the routing probabilities inside the experts' activation function), expert inner
///   activations as the MLP's with s*b*k tokens and the expert f, plus shared experts as dense MLPs.
/// For a GPT layer (GELU, MHA, dropout, unfused attention, f = 4h) this is exactly Korthikanti's Table 2:
///   sbh(34 + 5as/h) unparallelised; sbh(10 + 24/t + 5as/(ht)) with TP; sbh/t(34 + 5as/h) with TP + SP.
/// Selective recompute drops what its modules recompute (Megatron-Core recompute_modules): core_attn the score terms
/// (the 5as/h term, or the statistics); layernorm the two norm outputs (2 x 2sbh, over t with SP); mlp the dense
/// MLP's inner tensors; moe the whole MoE block beyond its input; moe_act the experts' activation output;
/// shared_experts the shared experts' inner tensors; mla_up_proj MLA's up-projected queries, keys and values. Full
/// recompute keeps only the layer input, 2sbh (2sbh/t with sequence parallelism).
double layer_activation_bytes(const workload::ModelSpec& model, const ActivationShape& shape);

/// Parameters one GPU of pipeline rank `pipeline_rank` holds: its layers' weights cut by tp (expert weights also by
/// ep), norms and routers replicated, the word embedding (padded_vocab * h / tp, plus learned positions) on the first
/// stage, the output layer on the last (a copy of the tied embedding when pp > 1, as Megatron-LM keeps one).
struct ParamsPerGpu {
  double dense = 0;   // replicated over dp*cp: ZeRO shards them over dp*cp
  double expert = 0;  // replicated over dp*cp/ep: ZeRO shards them over the expert-data-parallel group
  double total() const { return dense + expert; }
};
ParamsPerGpu params_per_gpu(const workload::ModelSpec& model, const Layout& layout, int pipeline_rank);

/// Micro-batches whose activations pipeline rank `pipeline_rank` holds at its peak, per model chunk (vpp entries).
/// The peak is found by replaying the rank's forward/backward order with each chunk weighted by its layers:
///  - GPipe (Huang et al. 2019): all m forwards precede the backwards: m per chunk.
///  - 1F1B (Narayanan et al. SC21, Sec. 2.2): p - r - 1 warm-up forwards, then one forward per backward:
///    min(p - r, m) micro-batches; Korthikanti Sec. 4.2.3: the first stage holds p.
///  - Interleaved 1F1B (Megatron-LM forward_backward_pipelining_with_interleaving): (p - r - 1) * 2 + (v - 1) * p
///    warm-up forwards (all m * v of them when m == p), chunk of the k-th forward (k mod pv) / p, backwards in reverse
///    chunk order; the peak is after warm-up plus one forward. Uniform chunks give the first stage
///    L(1 + (p - 1)/(pv)) layer-micro-batches, Korthikanti Sec. 4.2.3's interleaving factor.
///  - ZB-H1 (Qi et al. ICLR 2024, Sec. 2.1): W passes delayed so that every stage holds as many micro-batches as the
///    first: min(p, m) on every rank, the first stage's 1F1B peak (a micro-batch waiting for its W counted whole).
std::vector<int> micro_batches_held(const Layout& layout, Schedule schedule, int pipeline_rank);

/// Memory of one GPU of pipeline rank `pipeline_rank` (0 = first stage). Weights, gradients and optimizer states in
/// mixed precision (Rajbhandari et al. 2020, "ZeRO", Sec. 3.1; Megatron-LM's bf16 default, docs "Distributed
/// Optimizer": 18 bytes per parameter, 6 + 12/d with the distributed optimizer):
///   2 bytes bf16 weights + 4 bytes fp32 main gradients (Megatron-LM accumulates and reduces bf16 gradients in fp32:
///   "bfloat16 requires gradient accumulation and all-reduce to be done in fp32", arguments.py) + 12 bytes fp32
///   master weights, Adam m and v. ZeRO-1 or the distributed optimizer shards the 12 over d = dp*cp (Megatron shards
///   over the data-parallel-with-context group), ZeRO-2 also the 4, ZeRO-3 also the 2.
/// Activations: layer_activation_bytes times the layers of micro_batches_held, plus, with recomputation, the one layer
/// being recomputed (its full activations minus what is stored), plus the activation gradients one MLP's backward
/// holds at its peak (memory.cpp, gradient_working_bytes).
/// Buffers: options.runtime_reserve; per micro-batch in flight, the embedding's dropout mask on the first stage and the
/// final norm's and output layer's inputs and the fp32 logits (4sbV/t, padded V) on the last (Korthikanti Sec. 4.3);
/// and, as documented assumptions in memory.cpp, pipeline receive buffers, the sequence-parallel all-gather, the MoE
/// all-to-all and ZeRO-3's gathered layers.
/// Preconditions: `layout` comes from resolve_layout of the same model and config, and seq_len is the one resolved.
MemoryBreakdown memory_per_gpu(const workload::ModelSpec& model, const Layout& layout, const ParallelConfig& config,
                               int seq_len, int pipeline_rank, const MemoryOptions& options = {});

/// The worst pipeline rank (largest total; the lowest rank among equals).
MemoryBreakdown peak_memory(const workload::ModelSpec& model, const Layout& layout, const ParallelConfig& config,
                            int seq_len, const MemoryOptions& options = {});

/// Bytes one layer's attention holds for context parallelism's key/value exchange (parallel.cp_comm_type), beyond the
/// attention of an unsplit sequence: `tokens` local tokens (s/cp x micro-batch), `kv_heads` key/value heads per rank
/// as the attention call receives them, `element_bytes` per 16-bit tensor element (4 in fp32 training). 0 without
/// context parallelism. Sources in cp_exchange.cpp.
double cp_exchange_bytes(const workload::ModelSpec& model, const Layout& layout, CpCommType type, double tokens,
                         double kv_heads, double element_bytes);

/// Whether the breakdown fits in `capacity` bytes of HBM.
bool fits(const MemoryBreakdown& memory, base::Bytes capacity);

}  // namespace sim::parallel
