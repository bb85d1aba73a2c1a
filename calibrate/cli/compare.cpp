// calibrate/cli/compare.cpp: `trainsim-calibrate compare`: nccl-tests measurements beside sim/collectives' prediction.
#include "calibrate/cli/compare.hpp"

#include "calibrate/fit/compare.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/builtin.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/exit_code.hpp"
#include "sim/base/table.hpp"
#include "sim/results/json.hpp"
#include "sim/topology/profile_cluster.hpp"

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

sim::base::JsonDocument open_profile(const std::string& name_or_path, const std::string& option) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    return sim::base::JsonDocument::parse_file(name_or_path);
  const std::string builtin = "hardware_profiles/" + name_or_path + ".json";
  if (auto text = sim::base::builtin_text(builtin))
    return sim::base::JsonDocument::parse_text(*text, "<built-in>/" + builtin);
  const auto names = sim::base::builtin_names("hardware_profiles");
  std::string list;
  for (const auto& n : names)
    list += (list.empty() ? "" : ", ") + n;
  const auto hint = sim::base::did_you_mean(name_or_path, names);
  throw sim::base::ConfigError(option, "",
                               "\"" + name_or_path + "\" is not a built-in hardware profile" +
                                   (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") + "; built-in: " + list +
                                   "; or give a path to a .json file");
}

sim::hardware::HardwareProfile load_profile(const std::string& name_or_path, const std::string& option) {
  const auto doc = open_profile(name_or_path, option);
  sim::base::Diagnostics diag(doc.origin());
  auto reader = doc.root(diag);
  auto profile = sim::hardware::HardwareProfile::parse(reader);
  diag.throw_if_any();
  return profile;
}

sim::topology::TopologyConfig profile_cluster(const sim::hardware::HardwareProfile& hw) {
  return sim::topology::profile_cluster(hw, sim::topology::profile_cluster_shape(hw, hw.node.gpus));
}

fit::NcclTestsOptions log_options(const std::string& op, const std::string& scope, int ranks, int nodes,
                                  const std::string& date) {
  fit::NcclTestsOptions o;
  if (!op.empty()) o.op = fit::collective_from_string(op);
  if (!scope.empty()) o.scope = fit::scope_from_string(scope);
  if (ranks > 0) o.ranks = ranks;
  if (nodes > 0) o.nodes = nodes;
  o.date = date;
  return o;
}

int compare_command(const CompareArgs& a, std::ostream& out, std::ostream& err) {
  const auto imported = fit::import_nccl_tests(a.log, log_options(a.op, a.scope, a.ranks, a.nodes, ""));
  for (const auto& n : imported.notes)
    err << "note: " << n << '\n';
  const auto column = *fit::column_from_string(a.measured);  // CLI11 checked the name
  const auto groups = fit::log_groups(imported.records, column);
  if (groups.empty())
    throw sim::base::ConfigError(a.log, "", "no collective measurements in the log; expected nccl-tests output");
  const auto hw = load_profile(a.hardware, "--hardware");
  const auto cluster = profile_cluster(hw);
  const auto algorithm = *sim::collectives::algorithm_from_string(a.algorithm);  // CLI11 checked the name

  std::vector<fit::Comparison> all;
  for (const auto& g : groups) {
    const auto predicted = fit::predict_group(g, cluster, {hw.latency.base, hw.latency.launch}, algorithm, a.log);
    all.push_back(fit::compare(g, predicted, a.tolerance));
  }

  if (a.json) {
    using sim::results::Json;
    Json j = Json::object();
    j["schema"] = "trainsim.collective-compare/1";
    j["log"] = a.log;
    j["hardware"] = hw.name;
    j["algorithm"] = a.algorithm;
    j["tolerance"] = a.tolerance;
    j["measured"] = a.measured;
    j["launch_us"] = static_cast<double>(hw.latency.launch.ns) / 1e3;
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
        row["launch_bound"] = z.launch_bound;
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
    return sim::base::kExitOk;
  }

  for (const auto& c : all) {
    out << a.log << ": " << fit::to_string(c.group.op) << " over " << c.group.ranks << " ranks"
        << (c.group.nodes > 0 ? " on " + std::to_string(c.group.nodes) + " hosts" : std::string(", hosts not named"))
        << "; predicted with " << hw.name << ", algorithm " << a.algorithm << "; measured: " << a.measured
        << (column == fit::Column::Fastest ? " of nccl-tests' out-of-place and in-place columns" : " column") << "\n";
    sim::base::Table t({"size (B)", "measured us", "predicted us", "time ratio", "measured busbw", "predicted busbw",
                        "busbw ratio", "algorithm", ""});
    std::string off;
    for (const auto& z : c.sizes) {
      t.add({std::to_string(z.size.n), fixed(z.measured_us, 2), fixed(z.predicted_us, 2), fixed(z.time_ratio, 3),
             fixed(z.measured_busbw, 2), fixed(z.predicted_busbw, 2), fixed(z.busbw_ratio, 3),
             z.launch_bound ? z.algorithm + " (launch-bound)" : z.algorithm, z.off ? "off" : ""});
      if (z.off) off += (off.empty() ? "" : ", ") + std::to_string(z.size.n);
    }
    t.print(out);
    out << "sizes off by more than " << fixed(a.tolerance * 100, 0) << "% in time: " << (off.empty() ? "none" : off)
        << "\n"
        << count_line("busbw within 15% at >= 64 MiB", c.large_within, c.large, c.large_max_error) << "\n"
        << count_line("time within 25% at <= 1 MiB", c.small_within, c.small, c.small_max_error) << "\n\n";
  }
  return sim::base::kExitOk;
}

}  // namespace calibrate::cli
