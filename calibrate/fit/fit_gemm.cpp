// calibrate/fit/fit_gemm.cpp: GEMM efficiency, k half-point and tiles by weighted least squares over gemm_time.
#include "calibrate/fit/fit_gemm.hpp"

#include "calibrate/fit/least_squares.hpp"
#include "sim/hardware/compute_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

namespace calibrate::fit {
namespace {

using sim::hardware::Dtype;
using sim::hardware::Efficiency;
using sim::hardware::GpuSpec;

constexpr std::array kTiles{64, 128, 256};
constexpr double kHuge = 1e30;             // a rate that makes one branch of gemm_time vanish
constexpr double kMemoryBoundShare = 0.9;  // a point whose modelled memory time reaches 90% of its time is left out
constexpr double kLaunchBoundShare = 0.1;  // ... and one whose time is 90% kernel overhead
constexpr double kMinKRange = 4;           // k_max/k_min below this cannot separate gemm from gemm_k_half
constexpr double kTileGain = 0.98;         // other tiles must cut the residual by 2% to replace the base profile's

std::string fmt(double v, int precision = 4) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

std::string shape_of(const Measurement& m) {
  std::string s = std::to_string(m.m) + "x" + std::to_string(m.n) + "x" + std::to_string(m.k);
  if (m.batch > 1) s += " x" + std::to_string(m.batch);
  return m.label.empty() ? s : m.label + " (" + s + ")";
}

struct Point {
  const Measurement* m;
  double t;      // measured seconds
  double t_net;  // minus the kernel overhead gemm_time adds
};

/// Time of a GEMM at full efficiency (gemm = 1, no k penalty, no overhead, no memory bound): 2mnk*batch/(peak*wave),
/// computed by gemm_time itself so that the fit follows the simulator's model exactly.
double full_rate_seconds(const GpuSpec& compute_only, Dtype d, Efficiency e, int tile_m, int tile_n,
                         const Measurement& m) {
  e.gemm = 1.0;
  e.gemm_k_half = 0;
  e.kernel_overhead = sim::base::Time{0};
  e.tile_m = tile_m;
  e.tile_n = tile_n;
  return sim::hardware::gemm_time(compute_only, d, e, static_cast<double>(m.m), static_cast<double>(m.n),
                                  static_cast<double>(m.k), static_cast<double>(m.batch))
      .seconds();
}

struct Candidate {
  int tile_m = 0, tile_n = 0;
  LinearFit fit;
  double efficiency = 0;
  double k_half = 0;
  bool k_half_fitted = true;
};

}  // namespace

GemmFit fit_gemm_dtype(Dtype dtype, std::span<const Measurement> measured, const GpuSpec& gpu, const Efficiency& base,
                       double hbm_fraction, std::vector<std::string>& notes) {
  const std::string group = std::string(sim::hardware::to_string(dtype)) + " GEMMs";
  if (!gpu.peak_for(dtype))
    throw FitError(group + ": the base profile has no " + sim::hardware::to_string(dtype) + " peak");
  GpuSpec compute_only = gpu;  // HBM infinitely fast: gemm_time's compute branch alone
  compute_only.hbm_bandwidth = sim::base::Bandwidth{kHuge};
  GpuSpec memory_only = gpu;  // tensor cores infinitely fast: its memory branch alone
  memory_only.peak[dtype] = sim::base::FlopRate{kHuge};
  Efficiency mem_e = base;
  mem_e.hbm = hbm_fraction;
  mem_e.kernel_overhead = sim::base::Time{0};
  const double overhead = base.kernel_overhead.seconds();

  GemmFit out;
  out.dtype = dtype;
  std::vector<Point> points;
  for (const auto& m : measured) {
    out.best = std::max(out.best, gemm_rate(m));
    const double t_net = m.time.s - overhead;
    const double memory =
        sim::hardware::gemm_time(memory_only, dtype, mem_e, static_cast<double>(m.m), static_cast<double>(m.n),
                                 static_cast<double>(m.k), static_cast<double>(m.batch))
            .seconds();
    if (t_net <= kLaunchBoundShare * m.time.s || memory >= kMemoryBoundShare * t_net) {
      ++out.excluded;
      continue;
    }
    points.push_back({&m, m.time.s, t_net});
  }
  if (out.excluded > 0)
    notes.push_back(group + ": left out " + std::to_string(out.excluded) +
                    " memory- or launch-bound points (they say nothing about the tensor-core efficiency)");
  if (points.size() < 3)
    throw FitError(group + ": " + std::to_string(points.size()) +
                   " compute-bound measurements; the efficiency fit needs at least 3 (large GEMMs of several shapes, "
                   "including some with a small k)");
  double k_min = kHuge, k_max = 0;
  for (const auto& p : points) {
    k_min = std::min(k_min, static_cast<double>(p.m->k));
    k_max = std::max(k_max, static_cast<double>(p.m->k));
  }
  const bool fit_k = k_max / k_min >= kMinKRange;
  if (!fit_k)
    notes.push_back(group + ": k spans only " + fmt(k_min) + ".." + fmt(k_max) +
                    ", too narrow to fit gemm_k_half; kept " + fmt(base.gemm_k_half) + " from the base profile");

  std::vector<double> y;
  for (const auto& p : points)
    y.push_back(p.t_net);
  const auto w = relative_weights(y);

  auto fit_tiles = [&](int tm, int tn) -> std::optional<Candidate> {
    Candidate c;
    c.tile_m = tm;
    c.tile_n = tn;
    std::vector<double> x;
    for (const auto& p : points)
      x.push_back(full_rate_seconds(compute_only, dtype, base, tm, tn, *p.m));
    std::vector<std::vector<double>> rows;
    auto one_column = [&](double k_half) -> std::optional<LinearFit> {
      rows.clear();
      for (std::size_t i = 0; i < points.size(); ++i)
        rows.push_back({x[i] * (1.0 + k_half / static_cast<double>(points[i].m->k))});
      return weighted_least_squares(rows, y, w);
    };
    if (fit_k) {
      for (std::size_t i = 0; i < points.size(); ++i)
        rows.push_back({x[i], x[i] / static_cast<double>(points[i].m->k)});
      auto f = weighted_least_squares(rows, y, w);
      if (!f) return std::nullopt;
      if (f->coef[1] >= 0) {
        c.fit = *f;
        c.efficiency = 1.0 / f->coef[0];
        c.k_half = f->coef[1] / f->coef[0];
        return c;
      }
      // A negative half-point has no meaning (larger k slower): the k-loop costs nothing measurable here.
      auto g = one_column(0.0);
      if (!g) return std::nullopt;
      c.fit = *g;
      c.efficiency = 1.0 / g->coef[0];
      c.k_half = 0;
      return c;
    }
    auto g = one_column(base.gemm_k_half);
    if (!g) return std::nullopt;
    c.fit = *g;
    c.efficiency = 1.0 / g->coef[0];
    c.k_half = base.gemm_k_half;
    c.k_half_fitted = false;
    return c;
  };

  std::optional<Candidate> at_base = fit_tiles(base.tile_m, base.tile_n);
  std::optional<Candidate> best = at_base;
  for (int tm : kTiles)
    for (int tn : kTiles) {
      auto c = fit_tiles(tm, tn);
      if (c && (!best || c->fit.ssr < best->fit.ssr)) best = c;
    }
  if (!best)
    throw FitError(group +
                   ": the measured shapes cannot separate the efficiency from the k half-point; measure "
                   "more shapes");
  Candidate chosen = (at_base && best->fit.ssr >= kTileGain * at_base->fit.ssr) ? *at_base : *best;
  if (chosen.k_half_fitted && chosen.k_half == 0 && fit_k)
    notes.push_back(group + ": the fitted gemm_k_half was negative; set to 0");
  if (!(chosen.efficiency > 0) || chosen.efficiency > 1.0)
    throw FitError(group + ": inconsistent with the base profile: the fitted efficiency is " + fmt(chosen.efficiency) +
                   " of the " + fmt(gpu.peak_for(dtype)->tflops()) + " TFLOP/s peak (fastest measured " +
                   fmt(out.best.tflops()) + " TFLOP/s, R^2 " + fmt(chosen.fit.r2) +
                   "), outside the physical bounds (0, 1]; not written: is the base profile the measured GPU?");

  out.efficiency = chosen.efficiency;
  out.k_half = chosen.k_half;
  out.k_half_fitted = chosen.k_half_fitted;
  out.tile_m = chosen.tile_m;
  out.tile_n = chosen.tile_n;
  out.r2 = chosen.fit.r2;
  out.points = static_cast<int>(points.size());
  // How well the simulator's own gemm_time, with these parameters, reproduces every fitted point.
  Efficiency fitted = base;
  fitted.gemm = out.efficiency;
  fitted.gemm_k_half = out.k_half;
  fitted.tile_m = out.tile_m;
  fitted.tile_n = out.tile_n;
  fitted.hbm = hbm_fraction;
  double sum2 = 0;
  for (const auto& p : points) {
    const double predicted =
        sim::hardware::gemm_time(gpu, dtype, fitted, static_cast<double>(p.m->m), static_cast<double>(p.m->n),
                                 static_cast<double>(p.m->k), static_cast<double>(p.m->batch))
            .seconds();
    const double rel = std::fabs(predicted - p.t) / p.t;
    sum2 += rel * rel;
    if (rel > out.max_rel) {
      out.max_rel = rel;
      out.worst = shape_of(*p.m);
    }
  }
  out.rms_rel = std::sqrt(sum2 / static_cast<double>(points.size()));
  return out;
}

std::vector<GemmFit> fit_gemm(std::span<const Measurement> measurements, const GpuSpec& gpu, const Efficiency& base,
                              double hbm_fraction, std::vector<std::string>& notes) {
  std::map<Dtype, std::vector<Measurement>> by_dtype;
  std::map<std::string, int> unsupported;
  for (const auto& m : measurements) {
    if (m.kind != Kind::Gemm) continue;
    const auto d = sim::hardware::dtype_from_string(m.dtype);
    if (!d || !gpu.peak_for(*d)) {
      ++unsupported[m.dtype];
      continue;
    }
    by_dtype[*d].push_back(m);
  }
  for (const auto& [dtype, count] : unsupported)
    notes.push_back("left out " + std::to_string(count) + " " + dtype +
                    " GEMM measurements: the base profile has no peak for that dtype");
  std::vector<GemmFit> out;
  for (const auto& [dtype, points] : by_dtype)
    out.push_back(fit_gemm_dtype(dtype, points, gpu, base, hbm_fraction, notes));
  return out;
}

}  // namespace calibrate::fit
