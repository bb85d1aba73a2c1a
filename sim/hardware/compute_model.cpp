// sim/hardware/compute_model.cpp: kernel timing on one GPU.
#include "sim/hardware/compute_model.hpp"

#include "sim/hardware/profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sim::hardware {
namespace {

base::Time from_seconds_up(double s) {
  return base::Time{static_cast<std::int64_t>(std::ceil(s * 1e9))};
}

double peak(const GpuSpec& gpu, Dtype dtype) {
  auto p = gpu.peak_for(dtype);
  SIM_ASSERT(p.has_value(), "kernel timed in a dtype the GPU does not support (the scenario check should catch it)");
  return p->flops_per_s;
}

}  // namespace

Efficiency Efficiency::parse(base::JsonReader& in) {
  Efficiency e;
  // At least 0.1% of a peak: below it a kernel's time leaves the integer clock (found by a user trial: attention
  // 1e-300 passed validate and ended run in an internal error).
  const auto frac = base::Range::between(1e-3, 1.0);
  in.optional("gemm", e.gemm, frac);
  double fp8 = 0;
  if (in.optional("gemm_fp8", fp8, frac)) e.gemm_fp8 = fp8;
  double isolated = 0;
  if (in.optional("gemm_isolated", isolated, frac)) {
    // A training loop cannot run a GEMM faster than the isolated kernel; the ratio is a derate, never a boost.
    if (isolated < e.gemm) {
      char msg[160];
      std::snprintf(msg, sizeof msg,
                    "is %.3g, below gemm (%.3g): an isolated GEMM is at least as fast as one in a "
                    "training loop",
                    isolated, e.gemm);
      in.error("gemm_isolated", msg);
    }
    e.gemm_isolated = isolated;
  }
  in.optional("tile_m", e.tile_m, base::Range::between(8, 1024));
  in.optional("tile_n", e.tile_n, base::Range::between(8, 1024));
  in.optional("gemm_k_half", e.gemm_k_half, base::Range::between(0.0, 1e6));
  in.optional("attention", e.attention, frac);
  const auto seq = base::Range::between(0.0, 1e6);
  auto opt = [&in](const char* key, std::optional<double>& slot, const base::Range& range) {
    double v = 0;
    if (in.optional(key, v, range)) slot = v;
  };
  opt("attention_backward", e.attention_backward, frac);
  in.optional("attention_seq_half", e.attention_seq_half, seq);
  opt("attention_backward_seq_half", e.attention_backward_seq_half, seq);
  for (const auto& [prefix, rates] :
       {std::pair{"attention_flash2", &e.flash2}, std::pair{"attention_noncausal", &e.noncausal},
        std::pair{"attention_flash2_noncausal", &e.flash2_noncausal}}) {
    const std::string key = prefix;
    opt(key.c_str(), rates->forward, frac);
    opt((key + "_backward").c_str(), rates->backward, frac);
    opt((key + "_seq_half").c_str(), rates->seq_half, seq);
    opt((key + "_backward_seq_half").c_str(), rates->backward_seq_half, seq);
  }
  in.optional("hbm", e.hbm, frac);
  in.optional("kernel_overhead", e.kernel_overhead, base::Sign::NonNegative);
  in.optional("nvlink", e.nvlink, frac);
  in.optional("network", e.network, frac);
  // Below 0.1 NVLS never beats a ring (set nvlink.sharp false instead); the bound keeps the NVLS phase's bytes at the
  // NVLink rate (collectives::nvls_link_bytes) within 10x of its traffic.
  in.optional("nvls", e.nvls, base::Range::between(0.1, 1.0));
  in.finish();
  return e;
}

base::Time gemm_time(const GpuSpec& gpu, Dtype dtype, const Efficiency& e, double m, double n, double k, double batch) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return base::Time::zero();
  const double flops = 2.0 * m * n * k * batch;
  const double tiles = std::ceil(m / e.tile_m) * std::ceil(n / e.tile_n) * std::ceil(batch);
  const double sms = std::max(1, gpu.sm_count);
  const double waves = std::ceil(tiles / sms);
  const double wave_eff = tiles / (waves * sms);
  const double k_eff = k / (k + e.gemm_k_half);
  const bool low = dtype == Dtype::Fp8 || dtype == Dtype::Fp4;
  const double eff = low ? e.gemm_fp8.value_or(e.gemm) : e.gemm;
  const double t_compute = flops / (peak(gpu, dtype) * eff * wave_eff * k_eff);
  // Operands in their own width (1 byte in FP8), the 16-bit result.
  const double in_bytes = low ? 1.0 : 2.0;
  const double bytes = (in_bytes * (m * k + k * n) + 2.0 * m * n) * batch;
  const double t_memory = bytes / (gpu.hbm_bandwidth.bytes_per_s * e.hbm);
  return from_seconds_up(std::max(t_compute, t_memory)) + e.kernel_overhead;
}

base::Time attention_time(const GpuSpec& gpu, Dtype dtype, const Efficiency& e, double flops,
                          const AttentionCall& call) {
  if (flops <= 0) return base::Time::zero();
  // Fused attention runs in 16-bit even in fp8 recipes (Transformer Engine keeps attention in bf16).
  const Dtype d = dtype == Dtype::Fp8 || dtype == Dtype::Fp4 ? Dtype::Bf16 : dtype;
  // The fused kernel's causal numbers; a FlashAttention-2-class kernel's fall back to them one by one, and a call
  // without a causal mask takes its class's non-causal numbers where the profile has them.
  double eff = call.backward ? e.attention_backward.value_or(e.attention) : e.attention;
  double half = call.backward ? e.attention_backward_seq_half.value_or(e.attention_seq_half) : e.attention_seq_half;
  auto over = [&](const AttentionRates& r) {
    eff = (call.backward ? r.backward : r.forward).value_or(eff);
    half = (call.backward ? r.backward_seq_half : r.seq_half).value_or(half);
  };
  if (call.kernel != AttentionKernel::Fused) over(e.flash2);
  if (!call.causal) over(call.kernel != AttentionKernel::Fused ? e.flash2_noncausal : e.noncausal);
  // s / (s + s_half): the saturation the measured kernels show over sequence length (attention_microbenchmarks.json).
  if (call.seq > 0 && half > 0) eff *= call.seq / (call.seq + half);
  if (call.kernel == AttentionKernel::Triton) eff *= kTritonOverFlash2;
  // Measured isolated, run in a training loop: the GEMMs' loss from isolated to in-loop rate (compute_model.hpp).
  if (e.gemm_isolated) eff *= e.gemm / *e.gemm_isolated;
  return from_seconds_up(flops / (peak(gpu, d) * eff)) + e.kernel_overhead;
}

base::Time memory_time(const GpuSpec& gpu, const Efficiency& e, double bytes) {
  if (bytes <= 0) return base::Time::zero();
  return from_seconds_up(bytes / (gpu.hbm_bandwidth.bytes_per_s * e.hbm)) + e.kernel_overhead;
}

}  // namespace sim::hardware
