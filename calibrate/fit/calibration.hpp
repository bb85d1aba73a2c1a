// calibrate/fit/calibration.hpp: every fit over one set of measurements, and the hardware profile they produce.
#pragma once
#include "calibrate/fit/fit_collectives.hpp"
#include "calibrate/fit/fit_gemm.hpp"
#include "calibrate/fit/fit_hbm.hpp"
#include "calibrate/fit/measurement.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/results/json.hpp"

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace calibrate::fit {

struct Calibration {
  std::vector<AlphaBeta> collectives;
  std::vector<GemmFit> gemm;
  HbmFits hbm;
  /// The base profile's efficiency section and the fitted one (unfitted fields keep the base values).
  sim::hardware::Efficiency base_efficiency;
  sim::hardware::Efficiency efficiency;
  /// Fitted fields of the "efficiency" section ("gemm", "gemm_isolated", "gemm_k_half", "tile_m", "tile_n", "hbm",
  /// "nvlink", "network", "nvls"), in that order, with their provenance text.
  std::vector<std::string> fitted;
  /// Latencies fitted against the simulator (fit_with_model), written where set; the rest keep the base profile's.
  sim::hardware::LatencySpec latency;
  std::vector<std::string> latency_fitted;        // "nvlink", "base.all_reduce", ... in the order fitted
  std::map<std::string, std::string> provenance;  // "efficiency.gemm" -> source
  std::vector<std::string> notes;                 // points left out, values clamped
  // Where the measurements came from (for provenance and the report).
  std::string device;
  std::string context;  // "NVIDIA H100 80GB HBM3, driver 550.54.15, CUDA 13.0, NCCL 2.21.5, measured 2025-01-12"
  int measurements = 0;
};

/// Fits everything the measurements support against the base profile (its peaks, SM count, HBM, NVLink and NIC
/// bandwidths, tiles and kernel overhead) and decides the profile's new efficiency values:
///   gemm, gemm_k_half, tile_m, tile_n  from the bf16 GEMM fit (else fp16, else the first dtype measured);
///   hbm      the STREAM (copy and triad) bandwidth over the profile's HBM bandwidth;
///   nvlink   the all-reduce (else the first collective fitted) bus bandwidth over NVLink / the NVLink bandwidth;
///   network  the same over the network / (NIC bandwidth x NICs per GPU).
/// A fraction above 1 (NVLink SHARP reductions beat the per-direction link rate, or the base profile's links are
/// too slow) is refused with the fit and its R^2, never clamped: the profile holds only what was fitted.
/// `sources` are the measurement files, named in the provenance. Throws FitError when the measurements are
/// inconsistent (several GPU models, an SM count other than the base profile's, a GPU model the log names that is not
/// the base profile's unless `allow_other_gpu`) or no group can be fitted.
struct CalibrateOptions {
  bool allow_other_gpu = false;  // fit measurements of one GPU model onto the profile of another (--allow-other-gpu)
};
Calibration calibrate(std::span<const Measurement> measurements, const sim::hardware::HardwareProfile& base,
                      const std::vector<std::string>& sources, const CalibrateOptions& options = {});

/// The GPU family a device name or a profile name gives ("NVIDIA A100-SXM4-80GB" -> "a100", "h100-sxm5-80gb" ->
/// "h100"); empty when it names none trainsim knows.
std::string gpu_family(std::string_view name);

/// The base profile (its parsed document) with the fitted efficiency values and one provenance entry per fitted
/// field, renamed `name`. A base "efficiency" provenance entry is split into one entry per field it still covers.
/// The text is checked by parsing it back as a hardware profile with no provenance gaps (a failure is a trainsim bug).
std::string fitted_profile_text(sim::base::JsonDocument base_doc, const Calibration& c, const std::string& name);

/// The fit as JSON: {"schema": "trainsim.calibration/1", "collectives": {op: {scope: {alpha_us, busbw_gbps, r2,
/// points, ...}}}, "gemm": {dtype: {...}}, "hbm": {...} | null, "efficiency": {...}, "notes": [...]}.
sim::results::Json calibration_json(const Calibration& c);

}  // namespace calibrate::fit
