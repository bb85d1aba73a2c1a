// sim/cost/sensitivity.cpp: ordering and JSON of the tornado rows (the reruns live in sim/scenario/sensitivity.cpp).
#include "sim/cost/sensitivity.hpp"

#include <algorithm>
#include <cmath>

namespace sim::cost {

void sort_by_swing(std::vector<SensitivityRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const SensitivityRow& a, const SensitivityRow& b) {
    const double ca = std::abs(a.high_cost_usd - a.low_cost_usd), cb = std::abs(b.high_cost_usd - b.low_cost_usd);
    if (ca != cb) return ca > cb;
    const double da = std::abs(a.high_days - a.low_days), db = std::abs(b.high_days - b.low_days);
    if (da != db) return da > db;
    return a.parameter < b.parameter;
  });
}

void add_sensitivity_json(results::Json& j, const std::vector<SensitivityRow>& rows, double delta, int trials) {
  results::Json& s = j["sensitivity"];
  s = results::Json::array();
  for (const auto& r : rows) {
    results::Json row = results::Json::object();
    row["parameter"] = r.parameter;
    row["delta"] = delta;
    row["trials"] = trials;
    row["low_cost_usd"] = r.low_cost_usd;
    row["high_cost_usd"] = r.high_cost_usd;
    row["low_days"] = r.low_days;
    row["high_days"] = r.high_days;
    row["base_cost_usd"] = r.base_cost_usd;
    row["base_days"] = r.base_days;
    s.push_back(std::move(row));
  }
}

}  // namespace sim::cost
