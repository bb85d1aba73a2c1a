// sim/reliability/checkpoint_policy.cpp: the closed forms of Young (1974) and Daly (2006).
#include "sim/reliability/checkpoint_policy.hpp"

#include "sim/base/assert.hpp"

#include <cmath>

namespace sim::reliability {

const char* to_string(CheckpointPolicy p) {
  switch (p) {
    case CheckpointPolicy::Fixed:
      return "fixed";
    case CheckpointPolicy::Young:
      return "young";
    case CheckpointPolicy::Daly:
      return "daly";
  }
  return "?";
}

std::optional<CheckpointPolicy> checkpoint_policy_from_string(std::string_view s) {
  for (auto p : {CheckpointPolicy::Fixed, CheckpointPolicy::Young, CheckpointPolicy::Daly})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

base::Duration young_interval(base::Duration delta, base::Duration mtbf) {
  SIM_ASSERT(delta.s >= 0 && mtbf.s > 0, "Young's interval needs delta >= 0 and M > 0");
  return base::Duration{std::sqrt(2.0 * delta.s * mtbf.s)};  // Young (1974)
}

base::Duration daly_interval(base::Duration delta, base::Duration mtbf) {
  SIM_ASSERT(delta.s >= 0 && mtbf.s > 0, "Daly's interval needs delta >= 0 and M > 0");
  if (delta.s >= 2.0 * mtbf.s) return mtbf;  // Daly (2006): beyond the perturbation series' range
  const double x = delta.s / (2.0 * mtbf.s);
  // Daly (2006), Eq. for the higher-order optimum: sqrt(2 delta M) [1 + sqrt(x)/3 + x/9] - delta, x = delta/(2M).
  return base::Duration{std::sqrt(2.0 * delta.s * mtbf.s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta.s};
}

base::Duration daly_expected_wall_time(base::Duration solve, base::Duration interval, base::Duration delta,
                                       base::Duration restart, base::Duration mtbf) {
  SIM_ASSERT(interval.s > 0 && mtbf.s > 0, "Daly's wall time needs a positive interval and M");
  const double m = mtbf.s;
  // Daly (2006): T_w = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau. expm1 keeps precision when tau + delta << M.
  return base::Duration{m * std::exp(restart.s / m) * std::expm1((interval.s + delta.s) / m) * solve.s / interval.s};
}

base::Duration checkpoint_interval(CheckpointPolicy policy, base::Duration fixed, base::Duration delta,
                                   base::Duration mtbf) {
  switch (policy) {
    case CheckpointPolicy::Fixed:
      return fixed;
    case CheckpointPolicy::Young:
      return young_interval(delta, mtbf);
    case CheckpointPolicy::Daly:
      return daly_interval(delta, mtbf);
  }
  return fixed;
}

}  // namespace sim::reliability
