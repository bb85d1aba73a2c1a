// sim/cost/sensitivity.hpp: tornado data: p50 cost and time to train when one input moves by +-20%.
#pragma once
#include "sim/results/json.hpp"

#include <string>
#include <vector>

namespace sim::cost {

/// One input moved down (low) and up (high) by the same relative amount, everything else as the base run. Costs and
/// days are p50s of Monte Carlo runs with the same trials and seed as the base (common random numbers), so the
/// differences come from the input, not from sampling noise.
struct SensitivityRow {
  std::string parameter;  // "failure rates", "checkpoint write time", "restart time", "price", "achieved MFU"
  double low_cost_usd = 0, high_cost_usd = 0;
  double low_days = 0, high_days = 0;
  double base_cost_usd = 0, base_days = 0;  // the unmoved run at the same (reduced) trial count
};

/// Largest cost swing |high - low| first (then the largest days swing, then by name: a deterministic order).
void sort_by_swing(std::vector<SensitivityRow>& rows);

/// Adds "sensitivity": [{"parameter", "low_cost_usd", "high_cost_usd", "low_days", "high_days", "base_cost_usd",
/// "base_days"}] to a `trainsim.run/1` object, in the rows' order.
void add_sensitivity_json(results::Json& run_json, const std::vector<SensitivityRow>& rows, double delta, int trials);

}  // namespace sim::cost
