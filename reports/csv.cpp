// reports/csv.cpp: result.csv, one header row and one value row of the key metrics (RFC 4180).
#include "reports/format.hpp"
#include "reports/report.hpp"
#include "sim/base/printable.hpp"

#include <cmath>
#include <cstdio>
#include <functional>

namespace reports {

namespace {

/// Shortest form that reads back to a double of 10 significant digits; empty when undefined, "inf" when unbounded.
std::string number(double v) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}
std::string number(std::optional<double> v) {
  return v ? number(*v) : std::string();
}

/// A user-provided text cell: control bytes become visible escapes (base::printable: no raw escape sequence or
/// line break reaches a terminal that shows the file); a leading = + - @ would make spreadsheets evaluate it as a
/// formula (OWASP "CSV Injection"), so it gets a leading apostrophe; then RFC 4180 quoting.
std::string text(const std::string& raw) {
  const std::string s = sim::base::printable(raw);
  if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos) return csv_field("'" + s);
  return csv_field(s);
}

using Cell = std::pair<const char*, std::function<std::string(const ReportInput&)>>;

const std::vector<Cell>& cells() {
  static const std::vector<Cell> c = {
      {"scenario", [](const ReportInput& in) { return text(in.scenario_name); }},
      {"source", [](const ReportInput& in) { return text(in.scenario_source); }},
      {"trainsim_version", [](const ReportInput& in) { return text(in.trainsim_version); }},
      {"seed", [](const ReportInput& in) { return std::to_string(in.seed); }},
      {"trials", [](const ReportInput& in) { return std::to_string(in.run.trials); }},
      {"gpus", [](const ReportInput& in) { return std::to_string(in.gpus); }},
      {"step_time_s", [](const ReportInput& in) { return number(in.step.step_time.seconds()); }},
      {"tokens_per_s", [](const ReportInput& in) { return number(in.step.tokens_per_s); }},
      {"mfu", [](const ReportInput& in) { return number(in.step.mfu); }},
      {"memory_gib", [](const ReportInput& in) { return number(in.step.memory.total); }},
      {"memory_capacity_gib", [](const ReportInput& in) { return number(in.step.memory.capacity); }},
      {"time_to_train_p50_days", [](const ReportInput& in) { return number(in.run.time_to_train_days.p50); }},
      {"time_to_train_p90_days", [](const ReportInput& in) { return number(in.run.time_to_train_days.p90); }},
      {"time_to_train_mean_days", [](const ReportInput& in) { return number(in.run.time_to_train_days.mean); }},
      {"goodput_p50", [](const ReportInput& in) { return number(in.run.goodput.p50); }},
      {"interruptions_mean", [](const ReportInput& in) { return number(in.run.interruptions_mean); }},
      {"job_mtbf_h", [](const ReportInput& in) { return number(in.run.job_mtbf_h); }},
      {"lost_gpu_hours_mean", [](const ReportInput& in) { return number(in.run.lost_gpu_hours_mean); }},
      {"checkpoint_interval_s", [](const ReportInput& in) { return number(in.run.checkpoint.interval_s); }},
      {"checkpoint_overhead_fraction",
       [](const ReportInput& in) { return number(in.run.checkpoint.overhead_fraction); }},
      {"cost_mean_usd", [](const ReportInput& in) { return number(in.cost.mean_usd); }},
      {"cost_p50_usd", [](const ReportInput& in) { return number(in.cost.p50_usd); }},
      {"cost_p90_usd", [](const ReportInput& in) { return number(in.cost.p90_usd); }},
      {"cost_cvar95_usd", [](const ReportInput& in) { return number(in.cost.cvar95_usd); }},
      {"failures_cost_mean_usd", [](const ReportInput& in) { return number(in.cost.failures_usd_mean); }},
      {"cost_per_failure_mean_usd", [](const ReportInput& in) { return number(in.cost.per_failure_mean_usd); }},
      {"energy_cost_mean_usd", [](const ReportInput& in) { return number(in.cost.energy_usd_mean); }},
      {"storage_cost_mean_usd", [](const ReportInput& in) { return number(in.cost.storage_usd_mean); }},
      {"p_deadline_miss", [](const ReportInput& in) { return number(in.cost.p_deadline_miss); }},
      {"p_budget_overrun", [](const ReportInput& in) { return number(in.cost.p_budget_overrun); }},
      {"deadline_days", [](const ReportInput& in) { return number(in.deadline_days); }},
      {"budget_usd", [](const ReportInput& in) { return number(in.budget_usd); }},
      {"pricing", [](const ReportInput& in) { return text(in.cost.pricing); }},
      {"recommendation_rule", [](const ReportInput& in) { return text(recommend(in).rule); }},
      {"recommendation", [](const ReportInput& in) { return text(recommend(in).action); }},
      {"input_hashes",
       [](const ReportInput& in) {
         std::string all;
         for (const auto& h : in.hashes)
           all += (all.empty() ? "" : "; ") + h.what + " " + h.algorithm + ":" + h.hex;
         return text(all);
       }},
      // Appended after the first release's columns, so that readers by position keep working.
      {"time_to_train_p10_days", [](const ReportInput& in) { return number(in.run.time_to_train_days.p10); }},
      {"cost_p10_usd", [](const ReportInput& in) { return number(in.cost.p10_usd); }},
  };
  return c;
}

}  // namespace

std::vector<std::string> csv_columns() {
  std::vector<std::string> out;
  for (const auto& [name, _] : cells())
    out.emplace_back(name);
  return out;
}

std::string render_csv(const ReportInput& in) {
  std::string header, values;
  for (const auto& [name, value] : cells()) {
    if (!header.empty()) {
      header += ',';
      values += ',';
    }
    header += name;
    values += value(in);
  }
  return header + "\r\n" + values + "\r\n";
}

}  // namespace reports
