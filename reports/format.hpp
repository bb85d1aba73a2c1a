// reports/format.hpp: number formatting and derived figures shared by the report renderers (internal to reports/).
#pragma once
#include "reports/report.hpp"

#include <string>
#include <utility>
#include <vector>

namespace reports::detail {

std::string fixed(double v, int digits);        // "%.*f"; "n/a" for NaN, "never"-free: callers handle infinity
std::string usd(double v);                      // "$11.49M", "$61.9k", "$555"; "unbounded" for +inf, "n/a" for NaN
std::string days(double d);                     // "187.0 d"; "never" for +inf, "n/a" for NaN
std::string percent(double f, int digits = 1);  // 0.4213 -> "42.1%"; "n/a" for NaN
std::string seconds(double s);                  // "8.912 s", "145 ms"
std::string minutes(double s);                  // an interval in seconds: "6.6 min", "58.4 h"
/// `part` as a share of the mean cost: "12.3% of cost", or "the cost is unbounded" (a run that never finishes).
std::string share_of_cost(double part_usd, double mean_usd);

/// One labelled part of the step time, in display order, with its colour.
struct Part {
  std::string label;
  double seconds = 0;
  std::string colour;
};
std::vector<Part> step_parts(const sim::results::StepBreakdown& b);

/// The cost waterfall to draw: the cost model's when it gave one, else compute / checkpoints / failures by cause
/// derived from the run's time accounting at the burn rate (then energy and storage are absent).
std::vector<std::pair<std::string, double>> waterfall(const ReportInput& in);

/// Failure causes sorted by lost GPU-hours, largest first (ties by name).
std::vector<sim::results::CauseSummary> causes_by_cost(const sim::results::RunSummary& r);
/// Mean cost of one interruption of `cause` from the cost summary; NaN when not given.
double per_failure_usd(const sim::cost::CostSummary& c, const std::string& cause);

}  // namespace reports::detail
