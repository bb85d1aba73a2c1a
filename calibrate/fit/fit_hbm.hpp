// calibrate/fit/fit_hbm.hpp: effective HBM bandwidth from memory-bound kernel timings.
#pragma once
#include "calibrate/fit/measurement.hpp"
#include "sim/hardware/profile.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace calibrate::fit {

/// Sizes below this many bytes moved are left out: they may be served from L2 (H100 50 MB, B200 126 MB), not HBM.
inline constexpr std::int64_t kMinHbmFitBytes = std::int64_t{256} << 20;

/// t = alpha + bytes / bandwidth for one memory-bound kernel (or several), by weighted least squares with relative
/// weights; `fraction` = bandwidth / the profile's HBM bandwidth is the profile's efficiency.hbm (memory_time of
/// sim/hardware/compute_model.hpp: bytes / (hbm_bw * hbm) + overhead).
struct HbmFit {
  std::string ops;  // "copy+triad", "softmax"
  sim::base::Bandwidth bandwidth;
  double fraction = 0;
  sim::base::Duration alpha;
  double r2 = 0;
  double rms_rel = 0;
  double max_rel = 0;
  int points = 0;
  int excluded = 0;  // below kMinHbmFitBytes
};

/// Fits the points of the given ops together. Throws FitError when fewer than 3 points of 2 sizes remain, or the
/// bandwidth is not positive or exceeds the profile's HBM bandwidth.
HbmFit fit_hbm_ops(std::span<const Measurement> measurements, std::span<const MemoryOp> ops,
                   const sim::hardware::GpuSpec& gpu);

struct HbmFits {
  std::optional<HbmFit> stream;  // copy and triad: the profile's efficiency.hbm
  std::vector<HbmFit> per_op;    // each op with points, for the report
};
/// The STREAM fit (copy and triad; softmax alone when only it was measured) and one fit per op.
HbmFits fit_hbm(std::span<const Measurement> measurements, const sim::hardware::GpuSpec& gpu,
                std::vector<std::string>& notes);

}  // namespace calibrate::fit
