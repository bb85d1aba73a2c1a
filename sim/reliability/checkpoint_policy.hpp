// sim/reliability/checkpoint_policy.hpp: checkpoint interval policies (fixed, Young, Daly) and Daly's expected wall
// time.
#pragma once
#include "sim/base/units.hpp"

#include <optional>
#include <string_view>

namespace sim::reliability {

/// How the compute time between two checkpoints is chosen.
enum class CheckpointPolicy {
  Fixed,  // the interval given by the user
  Young,  // Young (1974): sqrt(2 delta M)
  Daly,   // Daly (2006) higher-order optimum; what a scenario's "auto" means
};
const char* to_string(CheckpointPolicy p);
std::optional<CheckpointPolicy> checkpoint_policy_from_string(std::string_view s);

/// Young's first-order optimum compute time between checkpoints, for checkpoint cost `delta` and job MTBF `mtbf`:
///   T = sqrt(2 delta M)
/// Source: J. W. Young, "A first order approximation to the optimum checkpoint interval", Comm. ACM 17(9):530-531,
/// 1974 (shared/validation/reliability_public.json: formulas.young_1974). Assumes delta << M; ignores restart.
base::Duration young_interval(base::Duration delta, base::Duration mtbf);

/// Daly's higher-order optimum compute time between checkpoints:
///   T = sqrt(2 delta M) [1 + (1/3) sqrt(delta / (2M)) + (1/9) (delta / (2M))] - delta   for delta < 2M,
///   T = M                                                                            otherwise.
/// Source: J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", Future
/// Generation Computer Systems 22(3):303-312, 2006 (reliability_public.json: formulas.daly_2006_higher_order).
/// Daly's examples with delta = 5 min: M = 24 h -> 117 min, 6 h -> 57 min, 15 min -> 9.1 min.
base::Duration daly_interval(base::Duration delta, base::Duration mtbf);

/// Daly's expected wall-clock time to complete `solve` of compute with exponential failures of mean `mtbf`,
/// checkpoints of cost `delta` every `interval` of compute, and restart time `restart` (failures may strike during
/// restarts and checkpoints; detection is instant):
///   T_w = M e^{R/M} (e^{(tau + delta)/M} - 1) T_s / tau
/// Source: Daly (2006), as restated in reliability_public.json: formulas.daly_expected_walltime. Used as the oracle of
/// the run-level simulator's goodput.
base::Duration daly_expected_wall_time(base::Duration solve, base::Duration interval, base::Duration delta,
                                       base::Duration restart, base::Duration mtbf);

/// The interval a policy gives: `fixed` for Fixed, else Young's or Daly's optimum for `delta` and `mtbf`.
base::Duration checkpoint_interval(CheckpointPolicy policy, base::Duration fixed, base::Duration delta,
                                   base::Duration mtbf);

}  // namespace sim::reliability
