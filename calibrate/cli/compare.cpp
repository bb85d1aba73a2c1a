// calibrate/cli/compare.cpp: `trainsim-calibrate compare`: nccl-tests measurements beside sim/collectives' prediction.
#include "calibrate/cli/compare.hpp"

#include "calibrate/fit/compare.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/errors.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/table.hpp"
#include "sim/results/json.hpp"
#include "sim/scenario/step_setup.hpp"

#include <cstdio>

namespace calibrate::cli {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string count_line(const char* what, int within, int total, double worst) {
  if (total == 0) return std::string(what) + ": no such sizes in the log";
  return std::string(what) + ": " + std::to_string(within) + " of " + std::to_string(total) + " (worst " +
         fixed(worst * 100, 1) + "%)";
}

}  // namespace

sim::scenario::Scenario cluster_scenario(const std::string& scenario_path, const std::string& hardware) {
  std::vector<sim::scenario::Override> overrides;
  if (!hardware.empty()) overrides.push_back({"hardware", hardware});
  return scenario_path.empty() ? sim::scenario::load_default_scenario(overrides)
                               : sim::scenario::load_scenario(scenario_path, overrides);
}

int compare_command(const CompareArgs& a, std::ostream& out, std::ostream& err) {
  const auto imported = fit::import_nccl_tests(a.log, {});
  for (const auto& n : imported.notes)
    err << "note: " << n << '\n';
  const auto groups = fit::log_groups(imported.records);
  if (groups.empty())
    throw sim::base::ConfigError(a.log, "", "no collective measurements in the log; expected nccl-tests output");
  const auto s = cluster_scenario(a.scenario, a.hardware);
  const auto cluster = sim::scenario::topology_config(s);
  const auto algorithm = *sim::collectives::algorithm_from_string(a.algorithm);  // CLI11 checked the name

  std::vector<fit::Comparison> all;
  for (const auto& g : groups) {
    const auto predicted = fit::predict_group(g, cluster, s.hardware.latency.base, algorithm, a.log);
    all.push_back(fit::compare(g, predicted, a.tolerance));
  }

  if (a.json) {
    using sim::results::Json;
    Json j = Json::object();
    j["schema"] = "trainsim.collective-compare/1";
    j["log"] = a.log;
    j["hardware"] = s.hardware.name;
    j["algorithm"] = a.algorithm;
    j["tolerance"] = a.tolerance;
    Json runs = Json::array();
    for (const auto& c : all) {
      Json r = Json::object();
      r["op"] = fit::to_string(c.group.op);
      r["ranks"] = c.group.ranks;
      r["nodes"] = c.group.nodes;
      Json sizes = Json::array();
      for (const auto& z : c.sizes) {
        Json row = Json::object();
        row["size_bytes"] = z.size.n;
        row["measured_us"] = z.measured_us;
        row["predicted_us"] = z.predicted_us;
        row["time_ratio"] = z.time_ratio;
        row["measured_busbw_gbps"] = z.measured_busbw;
        row["predicted_busbw_gbps"] = z.predicted_busbw;
        row["busbw_ratio"] = z.busbw_ratio;
        row["algorithm"] = z.algorithm;
        row["off"] = z.off;
        sizes.push_back(std::move(row));
      }
      r["sizes"] = std::move(sizes);
      r["large"]["sizes"] = c.large;
      r["large"]["busbw_within_15pct"] = c.large_within;
      r["large"]["max_error"] = c.large_max_error;
      r["small"]["sizes"] = c.small;
      r["small"]["time_within_25pct"] = c.small_within;
      r["small"]["max_error"] = c.small_max_error;
      runs.push_back(std::move(r));
    }
    j["runs"] = std::move(runs);
    out << j.dump() << '\n';
    return sim::cli::kExitOk;
  }

  for (const auto& c : all) {
    out << a.log << ": " << fit::to_string(c.group.op) << " over " << c.group.ranks << " ranks"
        << (c.group.nodes > 0 ? " on " + std::to_string(c.group.nodes) + " hosts" : std::string(", hosts not named"))
        << "; predicted with " << s.hardware.name << ", algorithm " << a.algorithm << "\n";
    sim::cli::Table t({"size (B)", "measured us", "predicted us", "time ratio", "measured busbw", "predicted busbw",
                       "busbw ratio", "algorithm", ""});
    std::string off;
    for (const auto& z : c.sizes) {
      t.add({std::to_string(z.size.n), fixed(z.measured_us, 2), fixed(z.predicted_us, 2), fixed(z.time_ratio, 3),
             fixed(z.measured_busbw, 2), fixed(z.predicted_busbw, 2), fixed(z.busbw_ratio, 3), z.algorithm,
             z.off ? "off" : ""});
      if (z.off) off += (off.empty() ? "" : ", ") + std::to_string(z.size.n);
    }
    t.print(out);
    out << "sizes off by more than " << fixed(a.tolerance * 100, 0) << "% in time: " << (off.empty() ? "none" : off)
        << "\n"
        << count_line("busbw within 15% at >= 64 MiB", c.large_within, c.large, c.large_max_error) << "\n"
        << count_line("time within 25% at <= 1 MiB", c.small_within, c.small, c.small_max_error) << "\n\n";
  }
  return sim::cli::kExitOk;
}

}  // namespace calibrate::cli
