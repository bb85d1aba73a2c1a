// sim/hardware/compute_model.hpp: how long a kernel takes on a GPU (GEMM roofline with wave quantisation,
// memory-bound kernels at achieved HBM bandwidth) and what fraction of link bandwidth collectives achieve.
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/base/units.hpp"

#include <optional>

namespace sim::hardware {

struct GpuSpec;
enum class Dtype;

/// Four optional attention rates of one kernel class and mask: the forward's and the backward's asymptotic fraction
/// of the 16-bit peak, and the sequence lengths at half of each (profile keys PREFIX, PREFIX_backward,
/// PREFIX_seq_half, PREFIX_backward_seq_half).
struct AttentionRates {
  std::optional<double> forward, backward, seq_half, backward_seq_half;
};

/// Achieved-versus-peak factors of one GPU generation. The profile's "efficiency" section sets them (calibration
/// fits them); each default below states where it comes from.
struct Efficiency {
  /// Fraction of dense peak that a large, well-shaped GEMM sustains inside a training loop (clocks under power
  /// cap, other kernels interleaved). Default 0.70: between A100's ~0.8 in isolated cuBLAS runs and the ~0.55-0.6
  /// end-to-end hardware utilisation of Megatron-LM (Narayanan et al. SC21, Table 1); calibration replaces it.
  double gemm = 0.70;
  /// The same for FP8 GEMMs, as a fraction of the FP8 dense peak. FP8 tensor cores draw more power per clock, so a
  /// power-capped GPU in a training loop sustains a smaller fraction of the FP8 peak than of the BF16 one; an isolated
  /// cuBLASLt FP8 8192^3 GEMM reaches ~1,610 of 1,979 TFLOP/s on H100 SXM (0.81; public cross-check report of
  /// 2026-05, test_gpu_scripts/reports_cublaslt_fp8_crosscheck_20260524.md). Default: `gemm` (no separate fit).
  std::optional<double> gemm_fp8;
  /// Fraction of the dense BF16 peak an isolated large GEMM reaches (a microbenchmark at the GPU's free clocks:
  /// Hopper 0.87, Blackwell 0.78, fitted by trainsim-validation-fit to OpenXLA's measured GEMM tables). Where it is
  /// set, the profile's attention* efficiencies are isolated-kernel measurements too, and a training loop runs
  /// attention at gemm / gemm_isolated of them: the same loss (clocks under the power cap, other kernels interleaved)
  /// that takes a GEMM from its isolated rate to `gemm`, applied to the other tensor-core kernels on the same clocks.
  /// No number of its own is fitted for attention. Unset (the default): attention runs at the profile's rates.
  std::optional<double> gemm_isolated;
  /// Output tile of the GEMM kernels (m x n), for wave quantisation over the SMs (NVIDIA, "Matrix Multiplication
  /// Background User's Guide", Sec. "Wave Quantization").
  int tile_m = 128;
  int tile_n = 128;
  /// Inner dimension at which a GEMM reaches half its asymptotic efficiency (pipeline fill/drain of the k-loop).
  double gemm_k_half = 32;
  /// Fraction of peak of fused attention kernels' forward pass at long sequences (FlashAttention-2 reaches 50-73% of
  /// A100 peak forward, Dao 2023). A pass over sequences of length s (the shorter of the query and key lengths of one
  /// call) runs at  attention x s / (s + attention_seq_half): short sequences leave the tiles and SMs partly idle,
  /// as the measured kernels show (tests/validation/attention_microbenchmarks.json, fitted by trainsim-validation-fit).
  double attention = 0.55;
  /// The backward pass's asymptotic fraction of peak (it recomputes the scores and runs five matrix products with
  /// atomic dQ updates, slower per FLOP than the forward). Default: `attention`.
  std::optional<double> attention_backward;
  /// Sequence length at which the forward / backward pass reaches half its asymptotic rate. Default 0 (no length
  /// dependence).
  double attention_seq_half = 0;
  std::optional<double> attention_backward_seq_half;  // default: attention_seq_half
  /// The same four for FlashAttention-2-class kernels (PyTorch SDPA's flash backend, Triton flash attention), which do
  /// not use Hopper's asynchronous tensor-core instructions: "FlashAttention-2 achieves only 35% utilization on H100"
  /// (Shah et al., "FlashAttention-3", arXiv:2407.08608, Sec. 1), against 75% for FlashAttention-3 and cuDNN's fused
  /// attention. Each defaults to its fused counterpart (Ampere and older: the two are the same kernel). Profile keys
  /// attention_flash2, attention_flash2_backward, attention_flash2_seq_half, attention_flash2_backward_seq_half.
  AttentionRates flash2;
  /// The same rates for a call without a causal mask, which runs faster per executed FLOP: no diagonal tiles, no
  /// rows of unequal length to balance over the SMs (cuDNN's forward at 16k tokens: 595 against 539 TFLOP/s causal;
  /// FlashAttention-3 paper, attention_microbenchmarks.json). Context parallelism's calls off the diagonal are such
  /// calls (each rank's queries against another rank's keys). Each defaults to its causal counterpart above. Profile
  /// keys attention_noncausal* and attention_flash2_noncausal*.
  AttentionRates noncausal;
  AttentionRates flash2_noncausal;
  /// Fraction of HBM bandwidth achieved by memory-bound kernels (STREAM-like kernels reach ~80-90%).
  double hbm = 0.80;
  /// Fixed cost per kernel launch.
  base::Time kernel_overhead{4000};
  /// Fraction of per-direction NVLink bandwidth that NCCL collectives achieve as bus bandwidth.
  double nvlink = 0.78;
  /// Fraction of NIC line rate that NCCL collectives achieve as bus bandwidth across nodes.
  double network = 0.92;
  /// Fraction of per-direction NVLink bandwidth that an NVLink SHARP (NVLS) all-reduce sustains on each GPU's link,
  /// counting the n (k+1)/k bytes a GPU moves each way in a domain of k (sim/collectives/collective.hpp). Default
  /// 0.69: "on 8 GPUs, you should reach a peak busBw of ~480GB/s (algbw ~275GB/s)" on H100 (S. Jeaugey, NCCL
  /// maintainer, https://github.com/NVIDIA/nccl-tests/issues/212, 2024-05-06): 275 x 9/8 / 450 = 0.69. The same
  /// fraction reproduces the algbw of 258 GB/s measured with NCCL_ALGO=NVLS on 5 H100s
  /// (https://github.com/NVIDIA/nccl/issues/1455): 0.69 x 450 x 5/6 = 259. Used only where nvlink.sharp is set;
  /// 0.1 to 1 (below 0.1 NVLS never beats a ring).
  double nvls = 0.69;

  /// Strict parse of an "efficiency" object; absent keys keep the defaults above.
  static Efficiency parse(base::JsonReader& in);
};

/// Time of a GEMM (m x k) x (k x n), `batch` times, on `gpu` in `dtype`:
///   t = max(2mnk*batch / (peak * e_gemm * wave * k/(k + k_half)),  bytes / (hbm_bw * e_hbm)) + overhead
/// where wave = tiles / (ceil(tiles / SMs) * SMs) is the wave-quantisation efficiency and bytes the operands and
/// result in 16-bit (Williams, Waterman, Patterson, "Roofline", CACM 2009).
base::Time gemm_time(const GpuSpec& gpu, Dtype dtype, const Efficiency& e, double m, double n, double k, double batch);
/// The fused attention kernel class (scenario training.attention_kernel).
enum class AttentionKernel {
  Fused,   // cuDNN / FlashAttention-3 / Transformer Engine: the profile's attention* rates
  Flash2,  // FlashAttention-2 class (PyTorch SDPA's flash backend): the attention_flash2* rates
  /// Tri Dao's Triton FlashAttention (flash_attn/flash_attn_triton.py, 2022-23; what MPT's attn_impl "triton" runs,
  /// the only fused kernel llm-foundry's MPT ran with ALiBi): the FlashAttention-2 rates x kTritonOverFlash2.
  Triton,
};
/// A Triton FlashAttention pass runs at half the FlashAttention-2 rate. Sources: the Triton kernel's own docstring
/// ("Overall Triton forward + backward is slightly slower than CUDA forward + backward", the CUDA kernel being
/// FlashAttention-1; Dao-AILab/flash-attention flash_attn/flash_attn_triton.py at 6b5f271c) and FlashAttention-2's
/// "around 2x speedup compared to FlashAttention" (Dao, arXiv:2307.08691, abstract). Published ratios, not fitted.
inline constexpr double kTritonOverFlash2 = 0.5;
/// Which attention kernel runs, for attention_time.
struct AttentionCall {
  AttentionKernel kernel = AttentionKernel::Fused;
  bool backward = false;  // the backward pass (else the forward, also when recomputed)
  double seq = 0;         // sequence length of one call: the shorter of its query and key lengths (0: long)
  bool causal = true;     // a causal mask (else the attention_*noncausal* rates)
};
/// Time of a fused attention kernel of `flops` executed FLOPs:
///   t = flops / (peak_16bit * e_pass * s / (s + s_half_pass) * loop) + overhead
/// with loop = gemm / gemm_isolated where gemm_isolated is set, else 1.
base::Time attention_time(const GpuSpec& gpu, Dtype dtype, const Efficiency& e, double flops,
                          const AttentionCall& call = {});
/// Time of a memory-bound kernel moving `bytes` to and from HBM.
base::Time memory_time(const GpuSpec& gpu, const Efficiency& e, double bytes);

}  // namespace sim::hardware
