// sim/cli/cmd_compare.cpp: `trainsim compare A B`: two scenarios (simulated here) or two result files, side by side.
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/base/quantity.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/base/table.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>

namespace sim::cli {

using results::Json;

namespace {

struct CompareArgs {
  std::string a, b;
  int trials = 0;  // 0: each scenario's
  std::int64_t seed = -1;
  int threads = 0;
  bool json = false;
};

/// One compared quantity: its path in result.json (the key of the JSON output), its table label and text format.
struct MetricSpec {
  const char* key;
  const char* label;
  int digits;
  double scale;  // table value = JSON value x scale (e.g. fractions as percent)
  const char* unit;
};

constexpr MetricSpec kMetrics[] = {
    {"step.step_time_s", "step time", 3, 1.0, "s"},
    {"step.tokens_per_s", "tokens/s", 0, 1.0, ""},
    {"step.mfu", "MFU", 1, 100.0, "%"},
    {"time_to_train_days.p50", "time to train p50", 1, 1.0, "d"},
    {"time_to_train_days.p90", "time to train p90", 1, 1.0, "d"},
    {"goodput.mean", "goodput mean", 1, 100.0, "%"},
    {"goodput.p50", "goodput p50", 1, 100.0, "%"},
    {"interruptions.mean", "interruptions", 1, 1.0, ""},
    {"checkpoint.interval_s", "checkpoint interval", 1, 1.0 / 60.0, "min"},
    {"cost_usd.mean", "cost mean", 0, 1.0, "USD"},
    {"cost_usd.p50", "cost p50", 0, 1.0, "USD"},
    {"cost_usd.p90", "cost p90", 0, 1.0, "USD"},
    {"cost_usd.cvar95", "cost CVaR95", 0, 1.0, "USD"},
    {"deadline_days", "deadline", 1, 1.0, "d"},
    {"p_deadline_miss", "P(miss deadline)", 1, 100.0, "%"},
    {"budget_usd", "budget", 0, 1.0, "USD"},
    {"p_budget_overrun", "P(over budget)", 1, 100.0, "%"},
};
constexpr std::size_t kMetricCount = std::size(kMetrics);

/// One side of the comparison: where it came from and its values (nullopt: null in the file, or absent).
struct Side {
  std::string source;  // the path
  std::string name;    // the scenario's name
  std::string kind;    // "scenario" (simulated here) | "result"
  std::array<std::optional<double>, kMetricCount> values;
  int trials = 0;    // of its Monte Carlo; 0: not known (a step only, an older result file)
  std::string work;  // "steps" (trains to the end of its tokens) | "window" (a fixed duration) | "" (not known)
};

std::optional<double> read_number_or_null(base::JsonReader& r, std::string_view key) {
  const auto k = r.kind(key);
  if (k == base::JsonReader::Kind::Missing || k == base::JsonReader::Kind::Null) {
    r.accept(key);
    return std::nullopt;
  }
  double v = 0;
  if (r.required(key, v)) return v;
  return std::nullopt;
}

/// What a trainsim.run/1 value can be: every compared field is zero or more, goodput and probabilities at most 1.
/// Returns what is wrong with `v` as the field `key`, empty when nothing is.
std::string number_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}
std::string impossible(std::string_view key, double v) {
  if (v < 0) return number_text(v) + " is negative; a trainsim.run/1 result has no negative " + std::string(key);
  const bool fraction = key.starts_with("goodput.") || key.starts_with("p_");
  if (fraction && v > 1) return number_text(v) + " is above 1; " + std::string(key) + " is a fraction in [0, 1]";
  return "";
}

/// A `trainsim.run/1` file, read strictly for the fields compared (other fields are allowed: it is a result). Values
/// no run can produce (a negative time, a goodput above 1, a p50 above its p90) are refused, not compared.
Side read_result(const base::JsonDocument& doc) {
  Side side;
  side.source = doc.origin();
  side.kind = "result";
  base::Diagnostics diag(doc.origin());
  base::JsonReader root = doc.root(diag);
  root.optional("scenario", side.name);
  root.optional("trials", side.trials);
  std::set<std::string> missing;
  if (root.kind("work") == base::JsonReader::Kind::Object)
    if (auto work = root.required_object("work")) work->optional("mode", side.work);
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const std::string_view key = kMetrics[i].key;
    const auto dot = key.find('.');
    if (dot == std::string_view::npos) {
      side.values[i] = read_number_or_null(root, key);
      if (const auto why = side.values[i] ? impossible(key, *side.values[i]) : ""; !why.empty()) root.error(key, why);
      continue;
    }
    const std::string_view object = key.substr(0, dot);
    // Absent from older files: cost_usd.cvar95 (before issue 5), the step's fields (a run of a merged shard file).
    const bool optional_field = key == "cost_usd.cvar95" || object == "step";
    if (root.kind(object) == base::JsonReader::Kind::Null) continue;  // e.g. cost_usd null: no cost model
    if (optional_field && root.kind(object) == base::JsonReader::Kind::Missing) continue;
    // A missing object is reported once, not once per field compared in it (a tester's trial: /goodput twice).
    if (root.kind(object) == base::JsonReader::Kind::Missing && !missing.insert(std::string(object)).second) continue;
    auto sub = root.required_object(object);
    if (!sub) continue;
    const std::string_view member = key.substr(dot + 1);
    if (!optional_field && !sub->has(member)) {
      sub->error(member, "missing: a trainsim.run/1 result has it");
      continue;
    }
    side.values[i] = read_number_or_null(*sub, member);
    if (const auto why = side.values[i] ? impossible(key, *side.values[i]) : ""; !why.empty()) sub->error(member, why);
  }
  // Quantiles of one distribution rise with their level.
  for (std::size_t i = 0; i + 1 < kMetricCount; ++i) {
    const std::string_view lo = kMetrics[i].key, hi = kMetrics[i + 1].key;
    if (!lo.ends_with(".p50") || !hi.ends_with(".p90") || lo.substr(0, lo.size() - 4) != hi.substr(0, hi.size() - 4))
      continue;
    if (side.values[i] && side.values[i + 1] && *side.values[i] > *side.values[i + 1])
      diag.add("/" + std::string(lo.substr(0, lo.find('.'))) + "/p50",
               "p50 = " + number_text(*side.values[i]) + " is above p90 = " + number_text(*side.values[i + 1]) +
                   "; quantiles of one distribution never decrease");
  }
  diag.throw_if_any();
  if (side.name.empty()) side.name = doc.origin();
  return side;
}

/// Looks up a value of the run JSON we just produced (and its step's) by its dotted key.
std::optional<double> metric_of(const RunOutcome& r, const results::StepResult& step, std::string_view key) {
  const auto& s = r.run;
  const auto& c = r.cost;
  auto finite = [](double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; };
  if (key == "step.step_time_s") return finite(step.step_time.seconds());
  if (key == "step.tokens_per_s") return finite(step.tokens_per_s);
  if (key == "step.mfu") return finite(step.mfu);
  if (key == "time_to_train_days.p50") return finite(s.time_to_train_days.p50);
  if (key == "time_to_train_days.p90") return finite(s.time_to_train_days.p90);
  if (key == "goodput.mean") return finite(s.goodput.mean);
  if (key == "goodput.p50") return finite(s.goodput.p50);
  if (key == "interruptions.mean") return finite(s.interruptions_mean);
  if (key == "checkpoint.interval_s") return finite(s.checkpoint.interval_s);
  if (key == "cost_usd.mean") return finite(c.mean_usd);
  if (key == "cost_usd.p50") return finite(c.p50_usd);
  if (key == "cost_usd.p90") return finite(c.p90_usd);
  if (key == "cost_usd.cvar95") return finite(c.cvar95_usd);
  if (key == "p_deadline_miss") return c.p_deadline_miss;
  if (key == "p_budget_overrun") return c.p_budget_overrun;
  if (key == "deadline_days") return c.deadline_days;
  if (key == "budget_usd") return c.budget_usd;
  return std::nullopt;
}

/// A scenario, simulated with run-level Monte Carlo (its own trials and seed unless overridden).
std::variant<Side, int> simulate(const std::string& path, const CompareArgs& a, const Options& o, std::ostream& err) {
  const auto s = scenario::load_scenario(path, overrides_of(o));
  if (const auto w = missing_price_warning(s)) err << "warning: " << base::printable(path) << ": " << *w << "\n";
  auto evaluated = evaluate_step(s, execution::StepOptions{});
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& step = std::get<StepOutcome>(evaluated);
  if (!step.result.fits) {
    err << "infeasible: " << base::printable(s.name) << " does not fit in memory (" << fmt(step.result.memory.total, 1)
        << " of " << fmt(step.result.memory.capacity, 1) << " GiB per GPU)\n";
    return static_cast<int>(kExitInfeasible);
  }
  Side side;
  side.source = path;
  side.name = s.name;
  side.kind = "scenario";
  // A step's scenario (neither training.tokens nor training.duration: a step has no length, issue 17) is compared on
  // its step; the run's rows read "-" (a user trial: compare refused two scenarios that `step` runs).
  if (!s.training.tokens && !s.training.duration) {
    if (!o.quiet)
      err << "note: " << base::printable(path)
          << ": no training.tokens or training.duration; compared on its step only (a run needs one)\n";
    const std::string_view step_keys[] = {"step.step_time_s", "step.tokens_per_s", "step.mfu"};
    for (std::size_t i = 0; i < kMetricCount; ++i)
      if (std::find(std::begin(step_keys), std::end(step_keys), kMetrics[i].key) != std::end(step_keys))
        side.values[i] = metric_of(RunOutcome{}, step.result, kMetrics[i].key);
    return side;
  }
  const int trials = a.trials > 0 ? a.trials : s.reliability.trials;
  const std::uint64_t seed = a.seed >= 0 ? static_cast<std::uint64_t>(a.seed) : s.reliability.seed;
  ProgressBar bar(err, o.progress, o.quiet);
  const auto r = evaluate_run(s, step, trials, seed, thread_count(a.threads), bar);
  side.trials = trials;
  side.work = r.run.work;
  for (std::size_t i = 0; i < kMetricCount; ++i)
    side.values[i] = metric_of(r, step.result, kMetrics[i].key);
  return side;
}

std::variant<Side, int> load_side(const std::string& path, const CompareArgs& a, const Options& o, std::ostream& err) {
  const auto doc = base::JsonDocument::parse_file(path);
  const auto schema = doc.top_level_string("schema");
  if (schema && *schema == "trainsim.scenario/1") return simulate(path, a, o, err);
  if (schema && *schema == "trainsim.run/1") return read_result(doc);
  throw base::ConfigError(path, "/schema",
                          (schema ? "\"" + *schema + "\" cannot be compared" : std::string("missing \"schema\"")) +
                              "; expected \"trainsim.scenario/1\" (simulated) or \"trainsim.run/1\" (a result.json)");
}

std::optional<double> delta_of(const std::optional<double>& x, const std::optional<double>& y) {
  if (!x || !y) return std::nullopt;
  return *y - *x;
}
std::optional<double> delta_pct_of(const std::optional<double>& x, const std::optional<double>& y) {
  if (!x || !y || *x == 0.0) return std::nullopt;
  return 100.0 * (*y - *x) / std::abs(*x);
}

Json number_or_null(const std::optional<double>& v) {
  return v ? Json(*v) : Json();
}

int compare_command(const CompareArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  auto first = load_side(a.a, a, o, err);
  if (const int* code = std::get_if<int>(&first)) return *code;
  auto second = load_side(a.b, a, o, err);
  if (const int* code = std::get_if<int>(&second)) return *code;
  const Side& A = std::get<Side>(first);
  const Side& B = std::get<Side>(second);
  // What only a simulated scenario takes, given where nothing is simulated, is refused, not dropped (a tester's trial).
  if (A.kind == "result" && B.kind == "result" && (a.trials > 0 || a.seed >= 0 || a.threads > 0 || !o.sets.empty())) {
    err << "error: "
        << (a.trials > 0    ? "--trials"
            : a.seed >= 0   ? "--seed"
            : a.threads > 0 ? "--threads"
                            : "--set")
        << " applies to a scenario, which compare simulates; " << base::printable(A.source) << " and "
        << base::printable(B.source) << " are result files, compared as they are\n";
    return kExitBadInput;
  }

  if (a.json || o.format == "json") {
    Json j = Json::object();
    j["schema"] = "trainsim.compare/1";
    for (const auto& [key, side] : {std::pair{"a", &A}, std::pair{"b", &B}}) {
      Json& sj = j[key];
      sj["source"] = side->source;
      sj["name"] = side->name;
      sj["kind"] = side->kind;
    }
    Json metrics = Json::array();
    for (std::size_t i = 0; i < kMetricCount; ++i) {
      Json m = Json::object();
      m["metric"] = kMetrics[i].key;
      m["a"] = number_or_null(A.values[i]);
      m["b"] = number_or_null(B.values[i]);
      m["delta"] = number_or_null(delta_of(A.values[i], B.values[i]));
      m["delta_pct"] = number_or_null(delta_pct_of(A.values[i], B.values[i]));
      metrics.push_back(std::move(m));
    }
    j["metrics"] = std::move(metrics);
    out << j.dump() << "\n";
    return kExitOk;
  }

  for (const auto& [letter, side] : {std::pair{"A", &A}, std::pair{"B", &B}})
    out << letter << "  " << base::printable(side->name) << "  (" << base::printable(side->source)
        << (side->kind == "scenario" ? ", simulated" : ", result file")
        << (side->trials > 0 ? ", " + std::to_string(side->trials) + " trials" : std::string())
        << (side->work == "window"  ? ", a fixed window"
            : side->work == "steps" ? ", trained to the end"
                                    : "")
        << ")\n";
  out << "\n";
  Table t({"metric", "A", "B", "B - A", "change"});
  // A value (or, with `sign`, a difference) in the metric's unit; differences of fractions are in points.
  auto text = [](const MetricSpec& m, const std::optional<double>& v, bool sign) -> std::string {
    if (!v) return "-";
    const double x = *v * m.scale;
    const std::string plus = sign && x > 0 ? "+" : (x < 0 ? "-" : "");
    const std::string_view unit = m.unit;
    if (unit == "USD") return plus + base::format_money({std::abs(x)});
    if (unit == "%") return plus + fmt(std::abs(x), m.digits) + (sign ? " pts" : "%");
    return plus + fmt(std::abs(x), m.digits) + (unit.empty() ? "" : " " + std::string(unit));
  };
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto& m = kMetrics[i];
    const auto dp = delta_pct_of(A.values[i], B.values[i]);
    const std::string change = dp ? (*dp > 0 ? "+" : "") + fmt(*dp, 1) + "%" : std::string("-");
    t.add({m.label, text(m, A.values[i], false), text(m, B.values[i], false),
           text(m, delta_of(A.values[i], B.values[i]), true), change});
  }
  t.print(out);
  if (!A.work.empty() && !B.work.empty() && A.work != B.work)
    out << "note: one run trains to the end of its tokens and the other simulates a fixed window "
           "(training.duration): their time, cost and interruption rows measure different things\n";
  if (A.trials > 0 && B.trials > 0 && A.trials != B.trials)
    out << "note: A ran " << A.trials << " trials and B " << B.trials
        << ": their quantiles carry different sampling error\n";
  // Probabilities of missing different goals are not a change in risk (a user trial read -100 pts from a 200 d to a
  // 210 d deadline, every other row equal).
  for (const auto& [key, what] : {std::pair{"deadline_days", "deadline"}, std::pair{"budget_usd", "budget"}}) {
    std::size_t i = 0;
    while (std::string_view(kMetrics[i].key) != key)
      ++i;
    if (A.values[i] && B.values[i] && *A.values[i] != *B.values[i])
      out << "note: A and B judge different " << what << "s: their P("
          << (std::string_view(what) == "deadline" ? "miss deadline" : "over budget")
          << ") rows compare different goals, not a change in risk\n";
  }
  return kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare two scenarios (simulated) or two result.json files: time, goodput, cost and risk side by side");
  auto a = std::make_shared<CompareArgs>();
  cmd->add_option("a", a->a, "First scenario or result.json (the baseline)")->required();
  cmd->add_option("b", a->b, "Second scenario or result.json")->required();
  cmd->add_option("--trials", a->trials, "Monte Carlo trials for scenarios (default: each scenario's)")
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--seed", a->seed, "Seed for scenarios (default: each scenario's)")->check(seed_problem, "SEED");
  cmd->add_option("--threads", a->threads, "Worker threads (default: all cores); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--json", a->json, "JSON output (schema trainsim.compare/1), same as --format json");
  commands.push_back({cmd, [a, &o](std::ostream& out, std::ostream& err) { return compare_command(*a, o, out, err); }});
}

}  // namespace sim::cli
