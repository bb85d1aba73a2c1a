// sim/scenario/expect_section.cpp: the scenario's `expect` section: bounds on result fields, checked against the
// step and run results' metric paths.
#include "sim/scenario/expect_section.hpp"

#include "sim/base/quantity.hpp"
#include "sim/results/metric_paths.hpp"

#include <optional>
#include <string>

namespace sim::scenario::detail {

using base::JsonReader;

namespace {

/// An expectation bound written as a number or a quantity string ("12 s", "25M USD", "70 GiB", "5%"); `unit` says
/// which unit the value is in ("s", "USD", "GiB"), empty for a plain number or a percentage.
std::optional<double> read_bound(JsonReader& in, std::string_view key, std::string& unit) {
  const auto kind = in.kind(key);
  in.accept(key);  // known, read or not: an unknown key beside it is told that min and max are what is accepted
  if (kind == JsonReader::Kind::Missing) return std::nullopt;
  if (kind == JsonReader::Kind::Integer || kind == JsonReader::Kind::Number) {
    double v = 0;
    if (in.required(key, v)) return v;
    return std::nullopt;
  }
  std::string text;
  if (!in.required(key, text)) return std::nullopt;
  unit = "s";
  if (auto t = base::parse_time(text)) return t.value->seconds();
  unit = "USD";
  if (auto m = base::parse_money(text)) return m.value->usd;
  unit = "GiB";
  if (auto b = base::parse_bytes(text)) return b.value->gib();
  unit.clear();
  if (auto f = base::parse_fraction(text)) return *f.value;
  in.error(key, "\"" + text + "\" is not a bound; write a number, a time (\"12 s\"), an amount (\"25M USD\"), " +
                    "a size (\"70 GiB\") or a percentage (\"5%\")");
  return std::nullopt;
}

}  // namespace

/// The run result's by_cause groups are keyed by the failure components' names (and run_setup's loss_spike).
std::vector<Expectation> parse_expect(JsonReader& in, const std::vector<hardware::FailureComponentSpec>& components,
                                      bool loss_spikes) {
  std::vector<std::string> causes(loss_spikes ? 1 : 0, "loss_spike");
  for (const auto& c : components)
    causes.push_back(c.name);
  std::vector<Expectation> out;
  std::string first_unknown;  // the first carries the accepted list; after ten, only a count
  int unknown = 0;
  for (const auto& metric : in.keys()) {
    Expectation e;
    e.metric = metric;
    if (metric != "fits" && metric != "within_best" && !results::resolve_metric(metric, causes)) {
      if (++unknown > 10) continue;
      const std::string hint = base::did_you_mean(metric, results::all_metric_paths(causes));
      in.error(metric, "\"" + metric.substr(0, 200) + "\" is not a field of the step or run result" +
                           (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") + "; accepted: " +
                           (first_unknown.empty() ? "within_best, " + results::metric_paths_text()
                                                  : "as for /expect/" + first_unknown));
      if (first_unknown.empty()) first_unknown = metric.substr(0, 200);
      continue;
    }
    if (metric == "fits") {
      bool b = false;
      if (in.required(metric, b)) e.equals = b;
    } else if (metric == "within_best") {
      double f = 0;
      if (in.required_fraction(metric, f)) e.within_best = f;
    } else if (auto bounds = in.required_object(metric)) {
      std::string min_unit, max_unit;
      e.min = read_bound(*bounds, "min", min_unit);
      e.max = read_bound(*bounds, "max", max_unit);
      e.unit = e.min ? min_unit : max_unit;
      bounds->finish();
      if (e.min && e.max && min_unit != max_unit) bounds->error("min and max must be written in the same unit");
      // Only when neither is written: a bound that did not parse has its own error (one error per cause).
      if (!bounds->has("min") && !bounds->has("max")) bounds->error("needs \"min\", \"max\" or both");
      if (e.min && e.max && *e.min > *e.max) bounds->error("min is greater than max");
    }
    out.push_back(std::move(e));
  }
  if (unknown > 10) in.error("and " + std::to_string(unknown - 10) + " more metrics that are not result fields");
  return out;
}

}  // namespace sim::scenario::detail
