// calibrate/bench/stats.hpp: outlier rejection for timed samples (standard library only, unit-tested on CPU).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace calibrate::bench {

struct RobustMean {
  double mean = 0;  // of the kept samples
  int kept = 0;
  int rejected = 0;  // samples beyond the threshold (a clock dip, another process, a page fault)
};

/// Mean of the samples within 3 scaled median absolute deviations of the median (the Hampel identifier: Leys et al.,
/// "Detecting outliers: Do not use standard deviation around the mean, use absolute deviation around the median",
/// J. Exp. Social Psychology 2013; 1.4826 scales the MAD to a normal standard deviation). With a MAD of 0 (identical
/// samples) everything is kept.
inline RobustMean robust_mean(std::vector<double> samples) {
  RobustMean r;
  if (samples.empty()) return r;
  auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
  };
  const double median = median_of(samples);
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double s : samples)
    deviations.push_back(std::fabs(s - median));
  const double limit = 3.0 * 1.4826 * median_of(deviations);
  double sum = 0;
  for (double s : samples) {
    if (limit > 0 && std::fabs(s - median) > limit) {
      ++r.rejected;
      continue;
    }
    sum += s;
    ++r.kept;
  }
  r.mean = sum / r.kept;
  return r;
}

}  // namespace calibrate::bench
