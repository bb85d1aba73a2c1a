// FP8 linear layers against published per-linear microbenchmarks (issue 17, FP8's real costs): the forward and
// backward of one linear, bf16 against FP8 with current scaling, timed as the step model times a layer's linears
// (workload::linear_work, execution::kernel_time) on the built-in 700 W H100 profile.
//
// Source: pytorch/ao pull request 2185 (2025-05-08, "Microbenchmarking float8 linear": H100, torch.compile, torchao's
// row-wise recipe, whose backward runs cuBLAS's tensor-wise kernel and rescales its output, use_fast_accum True), the
// linears of Llama 3 70B under TP 8 at M = 16384 tokens. Published speed-ups (bf16 time over fp8 time): attn.wqkv
// (M 16384, K 8192, N 1280) 1.112, attn.w0 (16384, 1024, 8192) 1.426, ffn.w13 (16384, 8192, 7168) 1.730, ffn.w2
// (16384, 3584, 8192) 1.711.
//
// trainsim times the casts of torchao's tensor-wise and row-wise recipes alike (an amax read, then a cast with its
// transposed copy, per GEMM input and per output gradient); what sets the row-wise recipe apart in training, its 16-bit
// sequence-parallel all-gather (Fp8Scaling::Rowwise), has no place in a one-GPU linear, timed here as Current. Counting
// the row-wise recipe's own passes instead (each operand cast along both axes, the backward's fp32 output rescaled: 18
// B per input element and 10 per output-gradient element) made these four linears 22-39% slower than measured
// (2026-12-03), so the measured casts are cheaper than a pass-by-pass count and the row-wise recipe keeps the
// current-scaling cost. The remaining gap of TorchTitan's row-wise runs is elsewhere (docs/validation.md).
#include "sim/execution/layer_timing.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace {

using sim::workload::Fp8Scaling;

/// Seconds of one linear's forward, input-gradient and weight-gradient kernels, timed as a step plan times them
/// (execution::kernel_time: FP8 GEMMs at the FP8 rate when training in FP8).
double linear_seconds(const sim::hardware::HardwareProfile& hw, Fp8Scaling recipe, double m, double n, double k) {
  sim::workload::LayerShape s;
  s.fp8 = recipe;
  sim::execution::StepInputs in;
  in.hardware = &hw;
  in.dtype = recipe == Fp8Scaling::None ? sim::hardware::Dtype::Bf16 : sim::hardware::Dtype::Fp8;
  const auto w = sim::workload::linear_work(s, m, n, k);
  double seconds = 0;
  for (const auto* pass : {&w.forward, &w.backward_input, &w.backward_weight})
    for (const auto& seg : pass->segments)
      for (const auto& kernel : seg.kernels)
        seconds += sim::execution::kernel_time(in, kernel).seconds();
  return seconds;
}

TEST(Fp8Linear, SpeedUpsOfTorchaoMicrobenchmarks) {
  // Isolated kernels, not a training loop: the profile's GEMM factors are training-loop ones (power cap, other kernels
  // interleaved), so the microbenchmark is timed with the isolated figures the project measures them against: BF16
  // 0.87 of peak asymptotically (OpenXLA's measured H100 tables, tests/validation/fit_result.json,
  // sm_90_bf16.isolated_efficiency), FP8 0.81 of peak at 8192^3 (compute_model.hpp's cuBLASLt cross-check), that is
  // 0.81 x (8192 + k_half) / 8192 asymptotically under the fitted k half-point.
  auto hw = sim::scenario::load_hardware("h100-sxm5-80gb");
  hw.efficiency.gemm = 0.87;
  hw.efficiency.gemm_fp8 = 0.81 * (8192.0 + hw.efficiency.gemm_k_half) / 8192.0;
  struct Case {
    const char* name;
    double m, k, n, published;
  };
  const Case cases[] = {{"attn.wqkv", 16384, 8192, 1280, 1.112},
                        {"attn.w0", 16384, 1024, 8192, 1.426},
                        {"ffn.w13", 16384, 8192, 7168, 1.730},
                        {"ffn.w2", 16384, 3584, 8192, 1.711}};
  std::printf("%-10s %22s %10s %10s %8s\n", "linear", "M, K, N", "published", "trainsim", "error");
  double worst = 0, sum = 0;
  for (const auto& c : cases) {
    const double speedup =
        linear_seconds(hw, Fp8Scaling::None, c.m, c.n, c.k) / linear_seconds(hw, Fp8Scaling::Current, c.m, c.n, c.k);
    const double err = speedup / c.published - 1;
    worst = std::max(worst, std::fabs(err));
    sum += std::fabs(err);
    std::printf("%-10s %8.0f, %5.0f, %5.0f %10.3f %10.3f %+7.1f%%\n", c.name, c.m, c.k, c.n, c.published, speedup,
                100 * err);
  }
  std::printf("mean error %.1f%%, worst %.1f%%\n", 100 * sum / 4, 100 * worst);
  // Measured 2026-12-03: -18.1% (w0, K = 1024) to +12.3% (wqkv, N = 1280), mean 11.4%.
  EXPECT_LE(worst, 0.20) << "FP8 linears no longer price their GEMMs and casts as measured";
}

}  // namespace
