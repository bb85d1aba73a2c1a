// sim/workload/layer_costs.hpp: the kernels and communication of one layer's forward and backward on one GPU.
#pragma once
#include "sim/workload/model_spec.hpp"

#include <string>
#include <utility>
#include <vector>

namespace sim::workload {

/// How FP8 linear layers find their scales, which decides the bytes their casts move (Micikevicius et al., "FP8
/// Formats for Deep Learning", arXiv:2209.05433; NVIDIA Transformer Engine docs, "Using FP8 with Transformer
/// Engine": delayed scaling keeps an amax history, current scaling measures each tensor before casting it).
enum class Fp8Scaling {
  None,     // 16-bit GEMMs
  Delayed,  // scale from the amax history (Transformer Engine's DelayedScaling, Megatron-Core's default recipe)
  Current,  // scale from this tensor's amax (TE Float8CurrentScaling, torchao "tensorwise", blockwise, MXFP8): one
            // more read of the 16-bit tensor before the cast
  Rowwise,  // torchao's "rowwise": the current-scaling casts, but after the sequence-parallel all-gather, which stays
            // 16-bit ("rowwise with bfloat16 all-gather", torchao/float8/README.md's training benchmarks; torchtitan
            // issue 845, "ensure rowwise scaling uses bf16 all_gather"): float8 all-gather is tensorwise-only
};

/// How the loss runs over the vocabulary-parallel logits, which decides the bytes its memory-bound kernels move per
/// logit (output_work; scenario training.cross_entropy).
enum class CrossEntropy {
  Fused,  // a fused loss kernel (Megatron-Core / NeMo --cross-entropy-loss-fusion, Transformer Engine's, torch.compile)
  Unfused,  // Megatron-Core's vocab_parallel_cross_entropy without the fusion: Megatron-LM's default
  Upcast,   // PyTorch eager cross_entropy on an fp32 copy of the logits (TorchTitan without torch.compile)
};

/// How one GPU slices a layer: micro-batch, sequence, and the parallel dimensions that cut the layer itself.
struct LayerShape {
  int micro_batch = 1;
  int seq_len = 2048;  // the full trained sequence; context parallelism divides it
  int tp = 1;
  int cp = 1;
  int ep = 1;
  /// Tensor parallelism of the routed experts (Megatron-Core --expert-tensor-parallel-size; 0: tp). Below tp ("MoE
  /// parallel folding") each rank routes its own sequence-parallel shard of the tokens, gathered over expert_tp ranks
  /// only, and the expert-parallel all-to-all spans tensor-parallel ranks.
  int expert_tp = 0;
  bool sequence_parallel = false;
  bool flash_attention = true;     // fused attention (Dao et al. 2022): no s x s score matrix in memory
  bool causal = true;              // causal mask: a fused kernel skips the masked half of the score blocks
  bool dropout = false;            // hidden dropout: a mask on each residual add (GPT-era Megatron 0.1; Llama none)
  bool attention_dropout = false;  // dropout on the attention probabilities: kernels of its own when unfused
  /// PyTorch eager mode (no torch.compile, no Transformer Engine): RMSNorm, RoPE and SwiGLU run as separate aten ops
  /// with fp32 intermediates, moving several times the bytes of their fused kernels (layer_costs.cpp, eager_*).
  bool eager_kernels = false;
  /// Keys and values copied to every query head before the attention call (TorchTitan's Llama: repeat_kv before
  /// SDPA), so context parallelism moves heads/kv_heads times the grouped keys and values.
  bool repeated_kv = false;
  CrossEntropy loss = CrossEntropy::Fused;
  /// Sequence parallelism on [batch, sequence, hidden] activations sharded along the sequence (PyTorch DTensor's
  /// Shard(1), TorchTitan): with more than one sequence per micro-batch the gathered dimension is not the outermost,
  /// so each all-gather's output and each reduce-scatter's input is rearranged by one copy (layer_costs.cpp,
  /// sp_layout_copy). Megatron-Core keeps [sequence, batch, hidden] and gathers in place (false, the default).
  bool sp_batch_first = false;
  /// MoE routing: tokens routed to the busiest expert-parallel rank over the mean (>= 1; 1 balanced). Every rank waits
  /// for the busiest at the combine, so its expert GEMMs, activation and received all-to-all volume set the layer's
  /// time (scenario training.moe_imbalance).
  double moe_imbalance = 1;
  Fp8Scaling fp8 = Fp8Scaling::None;  // FP8 linear layers (Transformer Engine, torchao float8): their casts
  /// FP8 MoE dispatch (parallel.moe_dispatch_dtype "fp8"; only with fp8 linears and ep > 1): the tokens are cast
  /// before the dispatch, which moves FP8 with one fp32 scale per 128 channels, as does the combine's backward; the
  /// combine and the dispatch's backward stay 16-bit (DeepSeek-V3, arXiv:2412.19437 Sec. 3.3.4).
  bool moe_dispatch_fp8 = false;
  /// Bytes per activation element the layer's memory-bound kernels and tensor-, context- and expert-parallel
  /// collectives move: 2 for 16-bit training (FP8 GEMMs keep 16-bit activations), 4 for fp32 / tf32
  /// (hardware::tensor_bytes). PyTorch eager mode's fp32-intermediate constants (eager_kernels) stay as measured.
  double act_bytes = 2;
  /// The output layer's and embedding's vocabulary slice per tensor-parallel rank; 0: vocab / tp. Megatron-LM pads a
  /// vocabulary that tp does not divide (execution::layer_shape sets the padded slice: parallel::padded_vocab).
  double vocab_per_rank = 0;
};

enum class KernelKind {
  Gemm,       // dense matrix multiply: m x k times k x n, `batch` times
  Attention,  // fused flash attention (forward or backward)
  Memory,     // memory-bound elementwise / normalisation / softmax kernels: `bytes` moved
};

/// One GPU kernel: what the hardware model needs to time it.
struct Kernel {
  KernelKind kind = KernelKind::Memory;
  const char* name = "";
  double m = 0, n = 0, k = 0, batch = 1;  // GEMM shape
  double flops = 0;                       // executed FLOPs (causal attention halves them for fused kernels)
  double bytes = 0;                       // HBM traffic of memory-bound kernels
  bool attention_core = false;            // part of scores/softmax/context (recomputed by selective recompute)
  bool fp8 = false;            // a GEMM whose operands are FP8 (timed at the FP8 rate); else it runs in 16 bits
  bool fp8_cast = false;       // a cast of a GEMM operand to FP8 (its backward counterpart is emitted per GEMM)
  bool backward = false;       // a fused attention kernel's backward pass (timed at the backward's rate)
  bool mirror_once = false;    // a layout copy beside a collective: its backward mirror moves the same bytes, not twice
  double backward_bytes = -1;  // a memory kernel's backward mirror where the forward moved FP8; negative: 2 x bytes
  bool causal = true;          // a fused attention call with a causal mask (else timed at the non-causal rate)
  int calls = 1;               // launches the kernel stands for (context parallelism's cp - 1 unmasked calls)
};

enum class CommKind {
  TpAllReduce,       // tensor-parallel all-reduce (no sequence parallelism)
  TpAllGather,       // sequence parallelism: all-gather before a tensor-parallel block
  TpReduceScatter,   // sequence parallelism: reduce-scatter after it
  CpExchange,        // context parallelism: ring exchange of keys and values
  EpAllToAll,        // expert parallelism: token dispatch or combine
  EtpAllGather,      // MoE parallel folding: all-gather of a sequence-parallel shard over the expert-TP group
  EtpReduceScatter,  // its mirror after the experts
};
const char* to_string(CommKind k);

/// A segment of a pass: a run of kernels on the compute stream, or one collective that synchronises a group.
struct Segment {
  bool is_comm = false;
  std::vector<Kernel> kernels;  // compute segment
  CommKind comm = CommKind::TpAllReduce;
  double comm_bytes = 0;  // collective payload per rank (the "n" of the collective formulas)
  /// The backward mirror's payload where it differs from this one (an FP8 all-gather whose mirror moves the 16-bit
  /// input gradient; FP8 MoE dispatch, whose combine's mirror moves FP8 gradients); negative: the same.
  double backward_bytes = -1;
  std::string label;  // "attn", "mlp", ... for traces
};

/// One pass of one layer: its segments in order, and FLOP counts by the two conventions.
struct PassWork {
  std::vector<Segment> segments;
  double model_flops = 0;     // FLOPs by the model convention (counted per GEMM; attention non-causal)
  double executed_flops = 0;  // FLOPs the kernels execute (hardware count)
};

/// Everything one GPU does for one transformer layer and one micro-batch.
struct LayerWork {
  PassWork forward;
  PassWork backward_input;   // activation gradients ("B" of zero-bubble schedules)
  PassWork backward_weight;  // weight gradients ("W")
  PassWork recompute;        // forward work redone before backward (empty without recomputation)
};

/// Full: the whole forward again; Selective: Megatron's core attention (nothing with a fused kernel); Op: PyTorch's
/// per-operator selective checkpointing (TorchTitan's "op" policy; parallel_config.hpp).
enum class RecomputeMode { None, Selective, Full, Op };

/// Per-GEMM accounting of a transformer layer (dense or MoE) on one GPU:
///   attention: QKV projection m = b*s/cp tokens, k = h, n = (a/t + 2*max(1, g/t))*d  (GQA, Ainslie et al. 2023;
///   tp divides g, resolve_layout's kv-heads-tp; the max(1, ...) is MLA's); scores and context 2 * 2*b*(a/t)*(s/cp)*s*d
///   each; output projection k = a*d/t, n = h; MLP 2 (GELU) or 3 (SwiGLU) matrices of h x f/t; MoE: router h x E, top_k
///   routed tokens spread over E/ep local experts.
/// Backward GEMMs cost twice the forward (input and weight gradients, Narayanan et al. SC21 Sec. 5.1); fused
/// attention backward 2.5x its forward (it recomputes the scores: Dao et al. 2022, Sec. 3.1).
/// Tensor-parallel communication per layer: 2 all-reduces forward and 2 backward (Shoeybi et al. 2019, Fig. 3), or
/// with sequence parallelism an all-gather and a reduce-scatter in place of each (Korthikanti et al. 2022, Sec. 4.2.2).
/// Megatron-Core's selective recomputation modules (--recompute-modules; parallel::RecomputeModule names them), by
/// what each runs again before the backward: core_attn the unfused attention core (nothing with a fused kernel),
/// layernorm the two norms, mlp a dense layer's MLP, moe the whole MoE block (router, permutation, dispatch and
/// combine, experts), moe_act the experts' (or a dense MLP's) activation function, mla_up_proj MLA's up projections
/// and RoPE, shared_experts the shared experts' MLP. Source: Megatron-LM
/// megatron/core/transformer/transformer_config.py (recompute_modules) and the modules' CheckpointWithoutOutput
/// wrappers.
struct RecomputeSet {
  bool core_attn = true;  // Megatron-Core's default module list is ["core_attn"]
  bool layernorm = false;
  bool mlp = false;
  bool moe = false;
  bool moe_act = false;
  bool mla_up_proj = false;
  bool shared_experts = false;
};

LayerWork layer_work(const ModelSpec& m, const LayerShape& s, RecomputeMode recompute,
                     const RecomputeSet& modules = {});

/// One linear layer y = x W (x: m x k, W: k x n) as the layers' own linears are counted: its forward GEMM (with the
/// FP8 cast of x under s.fp8), its input-gradient GEMM and its weight-gradient GEMM (with the cast of the output
/// gradient). For checks against published per-linear microbenchmarks.
LayerWork linear_work(const LayerShape& s, double m, double n, double k);

/// The input embedding on the first pipeline stage (a vocab-parallel lookup plus its tensor-parallel all-reduce).
LayerWork embedding_work(const ModelSpec& m, const LayerShape& s);
/// The final norm, output projection and cross-entropy loss on the last stage (logits in fp32 for the loss).
LayerWork output_work(const ModelSpec& m, const LayerShape& s);
/// Bytes per logit the loss moves in its forward and its backward (memory-bound kernels; see CrossEntropy), its logits
/// sharded over tensor-parallel ranks or not, and already fp32 (fp32 / tf32 training) or 16-bit.
std::pair<double, double> cross_entropy_bytes(CrossEntropy loss, bool vocab_parallel, bool fp32_logits);
/// A multi-token-prediction module's own work (DeepSeek-V3, arXiv:2412.19437, Sec. 2.2): the shifted tokens'
/// embedding, the two RMSNorms and their concatenation projected from 2h to h. Its transformer layer is a layer's
/// work and its prediction head the output layer's (shared with the main model); the step plan runs the three on
/// the last stage after the output layer.
LayerWork mtp_projection_work(const ModelSpec& m, const LayerShape& s);

/// Model FLOPs of one iteration for the whole model: 3 x the forward FLOPs of every layer's GEMMs and attention,
/// attention counted without the causal saving (the convention of Narayanan et al. SC21 Eq. 3, whose dense-GPT
/// closed form is 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)) and which this reproduces exactly for GPT).
double model_flops_per_iteration(const ModelSpec& m, int seq_len, double sequences);

}  // namespace sim::workload
