// calibrate/fit/fit_hbm.cpp: alpha-beta fit of memory-bound kernels and the HBM efficiency it implies.
#include "calibrate/fit/fit_hbm.hpp"

#include "calibrate/fit/least_squares.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

namespace calibrate::fit {
namespace {

std::string fmt(double v, int precision = 4) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

std::string ops_name(std::span<const MemoryOp> ops) {
  std::string out;
  for (auto op : ops)
    out += (out.empty() ? "" : "+") + std::string(to_string(op));
  return out;
}

}  // namespace

HbmFit fit_hbm_ops(std::span<const Measurement> measurements, std::span<const MemoryOp> ops,
                   const sim::hardware::GpuSpec& gpu) {
  HbmFit out;
  out.ops = ops_name(ops);
  const std::string group = "HBM (" + out.ops + ")";
  std::vector<std::vector<double>> rows;
  std::vector<double> t;
  std::set<std::int64_t> sizes;
  for (const auto& m : measurements) {
    if (m.kind != Kind::Hbm || std::find(ops.begin(), ops.end(), m.memory) == ops.end()) continue;
    if (m.bytes.n < kMinHbmFitBytes) {
      ++out.excluded;
      continue;
    }
    rows.push_back({1.0, static_cast<double>(m.bytes.n)});
    t.push_back(m.time.s);
    sizes.insert(m.bytes.n);
  }
  if (rows.size() < 3 || sizes.size() < 2)
    throw FitError(group + ": " + std::to_string(rows.size()) + " measurements of " + std::to_string(sizes.size()) +
                   " sizes moving at least 256 MiB; the bandwidth fit needs at least 3 of 2 sizes (smaller ones may "
                   "be served from L2)");
  const auto fit = weighted_least_squares(rows, t, relative_weights(t));
  if (!fit) throw FitError(group + ": the measurements cannot separate latency from bandwidth; measure more sizes");
  if (fit->coef[1] <= 0)
    throw FitError(group + ": inconsistent measurements: the time does not grow with the bytes moved");
  out.bandwidth = sim::base::Bandwidth{1.0 / fit->coef[1]};
  out.alpha = sim::base::Duration{fit->coef[0]};
  out.fraction = out.bandwidth.bytes_per_s / gpu.hbm_bandwidth.bytes_per_s;
  if (out.fraction > 1.0)
    throw FitError(group + ": inconsistent with the base profile: " + fmt(out.bandwidth.gbytes_per_s()) +
                   " GB/s measured exceeds its HBM bandwidth of " + fmt(gpu.hbm_bandwidth.gbytes_per_s()) +
                   " GB/s (fit R^2 " + fmt(fit->r2) + "), outside the physical bound; not written: is the base "
                   "profile the measured GPU, and are bytes counted read plus written?");
  out.r2 = fit->r2;
  out.rms_rel = fit->rms_rel;
  out.max_rel = fit->max_rel;
  out.points = static_cast<int>(rows.size());
  return out;
}

HbmFits fit_hbm(std::span<const Measurement> measurements, const sim::hardware::GpuSpec& gpu,
                std::vector<std::string>& notes) {
  HbmFits out;
  std::set<MemoryOp> present;
  for (const auto& m : measurements)
    if (m.kind == Kind::Hbm) present.insert(m.memory);
  if (present.empty()) return out;
  std::vector<MemoryOp> stream;
  for (auto op : {MemoryOp::Copy, MemoryOp::Triad})
    if (present.contains(op)) stream.push_back(op);
  if (stream.empty()) stream.assign(present.begin(), present.end());
  out.stream = fit_hbm_ops(measurements, stream, gpu);
  if (out.stream->excluded > 0)
    notes.push_back("HBM: left out " + std::to_string(out.stream->excluded) +
                    " measurements moving less than 256 MiB (they may be served from L2)");
  if (present.size() == 1) return out;  // the per-op fit would repeat the one above
  for (auto op : present) {
    const std::array one{op};
    try {
      out.per_op.push_back(fit_hbm_ops(measurements, one, gpu));
    } catch (const FitError& e) {
      notes.push_back(std::string("no separate fit: ") + e.what());  // the report only; the profile uses the fit above
    }
  }
  return out;
}

}  // namespace calibrate::fit
