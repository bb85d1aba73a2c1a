// calibrate/fit/fit_gemm.hpp: GEMM efficiency of trainsim's compute model fitted to measured GEMM times.
#pragma once
#include "calibrate/fit/measurement.hpp"
#include "sim/hardware/profile.hpp"

#include <span>
#include <string>
#include <vector>

namespace calibrate::fit {

/// The fitted parameters of sim/hardware/compute_model.hpp's gemm_time for one dtype:
///   t = max(2mnk*batch / (peak * gemm * wave(tile_m, tile_n, SMs) * k/(k + gemm_k_half)), bytes / (hbm_bw * hbm))
///       + kernel_overhead
/// With the tiles fixed, the compute branch is linear in two unknowns: with X = 2mnk*batch / (peak * wave) (the
/// time at full efficiency),  t - overhead = X * (1/gemm) + (X/k) * (gemm_k_half/gemm).  Tiles are chosen among
/// 64/128/256 x 64/128/256 by the smallest weighted residual (the base profile's tiles unless another pair is 2%
/// better): the wave quantisation of the measured shapes tells them apart (NVIDIA, "Matrix Multiplication Background
/// User's Guide", Sec. "Wave Quantization").
struct GemmFit {
  sim::hardware::Dtype dtype = sim::hardware::Dtype::Bf16;
  double efficiency = 0;      // the profile's efficiency.gemm
  double k_half = 0;          // efficiency.gemm_k_half
  bool k_half_fitted = true;  // false: the measured k range was too narrow and the base value was kept
  int tile_m = 128, tile_n = 128;
  double r2 = 0;       // of the linear fit (weighted, relative)
  double rms_rel = 0;  // of gemm_time with the fitted parameters against every fitted point
  double max_rel = 0;
  std::string worst;         // label and shape of the point with max_rel
  int points = 0;            // compute-bound points fitted
  int excluded = 0;          // memory- or launch-bound points left out
  sim::base::FlopRate best;  // fastest measured rate
};

/// Fits one dtype. `gpu` and `base` come from the base profile (peak, SM count, HBM bandwidth, tiles, overhead);
/// `hbm_fraction` is the HBM efficiency to judge which points are memory-bound (the fitted one when available).
/// Throws FitError when fewer than 3 compute-bound points remain or the fit is inconsistent (faster than peak).
GemmFit fit_gemm_dtype(sim::hardware::Dtype dtype, std::span<const Measurement> points,
                       const sim::hardware::GpuSpec& gpu, const sim::hardware::Efficiency& base, double hbm_fraction,
                       std::vector<std::string>& notes);

/// Fits every dtype present among the GEMM measurements that the base profile has a peak for.
std::vector<GemmFit> fit_gemm(std::span<const Measurement> measurements, const sim::hardware::GpuSpec& gpu,
                              const sim::hardware::Efficiency& base, double hbm_fraction,
                              std::vector<std::string>& notes);

}  // namespace calibrate::fit
