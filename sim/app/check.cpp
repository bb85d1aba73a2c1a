// sim/app/check.cpp: `trainsim check`'s evaluation of one scenario: its `expect` section and its baseline.
//
// Each scenario is stepped (replica fidelity); the Monte Carlo run (the scenario's trials and seed) runs only when a
// run-level metric is checked. Expectations bound any result field by its JSON path in the step or run result
// (trainsim.step/1, trainsim.run/1; "step_time" finds "step_time_s"). A baseline file holds, per metric, a value, its
// unit, tolerances and a direction; a metric fails when it is worse than the baseline by more than atol + rtol*|value|,
// and an improvement beyond that passes and says so. "within_best" compares the scenario's replica step time with the
// planner's fastest configuration under the same constraints (scenario::plan_problem with every parallel field but the
// global batch free, objective time, no run level). Seams: result lookup by path, baselines, the checker.
#include "sim/app/check.hpp"

#include "sim/app/run.hpp"
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/base/table.hpp"
#include "sim/planner/planner.hpp"
#include "sim/results/metric_paths.hpp"
#include "sim/scenario/plan_setup.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

#ifndef TRAINSIM_VERSION
#define TRAINSIM_VERSION "0.0.0-dev"
#endif

namespace sim::app {

using base::fmt;
using base::pct;
using results::Json;

namespace {

constexpr std::string_view kBaselineSchema = "trainsim.baseline/1";

// ---- result lookup by JSON path -----------------------------------------------------------------------------------

/// A step or run result, parsed back for lookups by dotted path ("memory_gib.total").
class ResultView {
 public:
  explicit ResultView(const Json& j) : doc_(base::JsonDocument::parse_text(j.dump(-1), "result")) {}

  /// The path as found: exact, or with a unit suffix on the first segment ("step_time" -> "step_time_s").
  std::optional<std::string> resolve(const std::string& path) const {
    const auto dot = path.find('.');
    const std::string head = path.substr(0, dot), tail = dot == std::string::npos ? "" : path.substr(dot);
    for (std::string_view suffix : results::kMetricUnitSuffixes)
      if (const std::string p = head + std::string(suffix) + tail; kind(p) != base::JsonReader::Kind::Missing) return p;
    return std::nullopt;
  }

  /// A number (booleans as 0/1) at `path`; nullopt when missing, null or not a number.
  std::optional<double> number(const std::string& path) const {
    base::Diagnostics diag("result");
    auto leaf = parent(path, diag);
    if (!leaf) return std::nullopt;
    const std::string key = last(path);
    const auto k = leaf->kind(key);
    if (k == base::JsonReader::Kind::Bool) {
      bool b = false;
      leaf->required(key, b);
      return b ? 1.0 : 0.0;
    }
    if (k != base::JsonReader::Kind::Integer && k != base::JsonReader::Kind::Number) return std::nullopt;
    double v = 0;
    if (!leaf->required(key, v)) return std::nullopt;
    return v;
  }

  std::vector<std::string> leaves() const {
    base::Diagnostics diag("result");
    return doc_.root(diag).leaf_paths();
  }

 private:
  static std::string last(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
  }
  std::optional<base::JsonReader> parent(const std::string& path, base::Diagnostics& diag) const {
    std::optional<base::JsonReader> cur = doc_.root(diag);
    std::size_t start = 0;
    for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
      const std::string seg = path.substr(start, dot - start);
      if (cur->kind(seg) != base::JsonReader::Kind::Object) return std::nullopt;
      auto next = cur->optional_object(seg);
      cur.emplace(*next);
      start = dot + 1;
    }
    return cur;
  }
  base::JsonReader::Kind kind(const std::string& path) const {
    base::Diagnostics diag("result");
    auto leaf = parent(path, diag);
    return leaf ? leaf->kind(last(path)) : base::JsonReader::Kind::Missing;
  }

  base::JsonDocument doc_;
};

/// The unit of a result field, from the contract's naming ("_s" seconds, "_days", "_h", "_usd", "_gib").
std::string unit_of(const std::string& path) {
  auto has = [&](std::string_view suffix) {
    for (std::size_t p = path.find(suffix); p != std::string::npos; p = path.find(suffix, p + 1))
      if (p + suffix.size() == path.size() || path[p + suffix.size()] == '.') return true;
    return false;
  };
  if (has("tokens_per_s")) return "tokens/s";
  if (has("tflops_per_gpu")) return "TFLOP/s";
  if (has("_days")) return "d";
  if (has("_s")) return "s";
  if (has("_h")) return "h";
  if (has("_usd")) return "USD";
  if (has("_gib")) return "GiB";
  return "";
}

std::string show(double v, const std::string& unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::string(buf) + (unit.empty() ? "" : " " + unit);
}

// ---- baselines --------------------------------------------------------------------------------------------------

struct BaselineMetric {
  std::string path;
  double value = 0;
  std::string unit;
  double rtol = 0.01;
  double atol = 0;
  bool lower_is_better = true;
};

struct Baseline {
  std::string scenario;
  std::vector<BaselineMetric> metrics;
  std::string description;  // a hand-written note, kept when the baseline is rewritten
};

/// Why a baseline value recorded in `m.unit` cannot be compared with the field `path` names (no conversion is
/// guessed), or "": check and validate refuse it alike.
std::string unit_mismatch(const BaselineMetric& m, const std::string& path) {
  const std::string unit = unit_of(path);
  if (m.unit == unit) return "";  // "" is a plain number's unit, not "any" (a review: 3292.22 as step_time_s "")
  return "\"" + m.unit + "\" is not the unit of " + path + " (" +
         (unit.empty() ? "a plain number: write \"\"" : "write \"" + unit + "\"") + ")";
}

Baseline parse_baseline(const base::JsonDocument& doc) {
  base::Diagnostics diag(doc.origin());
  base::JsonReader in = doc.root(diag);
  Baseline b;
  std::string schema;
  if (in.required("schema", schema) && schema != kBaselineSchema)
    in.error("schema", "\"" + schema + "\" is not accepted; expected \"" + std::string(kBaselineSchema) + "\"");
  in.required("scenario", b.scenario);
  std::string ignored;
  in.optional("trainsim", ignored);  // the version that wrote it
  in.optional("description", b.description);
  if (auto m = in.required_object("metrics")) {
    for (const auto& key : m->keys()) {
      auto e = m->required_object(key);
      if (!e) continue;
      BaselineMetric x;
      x.path = key;
      // Every trainsim result metric is zero or more (times, rates, fractions, sizes, costs, counts).
      if (e->required("value", x.value) && x.value < 0)
        e->error("value", show(x.value, "") + " is negative; every trainsim result metric is zero or more");
      // The unit and both tolerances are part of the file (docs/ci.md), not defaults: a baseline without them was
      // checked at rtol 0.01, half what --update-baseline writes for run-level metrics, without a word (a user trial).
      e->required("unit", x.unit);
      e->required("rtol", x.rtol, base::Range::between(0, 10));
      // An absolute tolerance at most 10x the value, as rtol is at most 10 (found by a user trial: atol 1e308 switched
      // the regression gate off). A zero value takes any tolerance up to 1e6 in its unit; a negative value is refused
      // above, and its tolerance is not compared with it.
      if (e->required("atol", x.atol, base::Range::at_least(0)) && x.value >= 0 &&
          x.atol > std::max(10 * x.value, 1e6 * (x.value == 0)))
        e->error("atol", show(x.atol, "") + " is more than 10x the value " + show(x.value, "") +
                             "; a tolerance that wide disables the check (rtol is at most 10 too)");
      std::string direction = "lower_is_better";
      e->required_enum("direction", direction, {"lower_is_better", "higher_is_better"});
      x.lower_is_better = direction == "lower_is_better";
      e->finish();
      b.metrics.push_back(std::move(x));
    }
    if (b.metrics.empty() && diag.empty()) m->error("no metrics; expected e.g. {\"mfu\": {\"value\": 0.41, ...}}");
  }
  in.finish();
  diag.throw_if_any();
  return b;
}

std::string baseline_text(const Baseline& b) {
  Json j = Json::object();
  j["schema"] = std::string(kBaselineSchema);
  j["scenario"] = b.scenario;
  if (!b.description.empty()) j["description"] = b.description;
  j["trainsim"] = TRAINSIM_VERSION;
  Json& m = j["metrics"];
  m = Json::object();
  // In path order, however the metrics were gathered: rewriting the same values rewrites the same bytes.
  std::vector<const BaselineMetric*> sorted;
  for (const auto& x : b.metrics)
    sorted.push_back(&x);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* z) { return a->path < z->path; });
  for (const BaselineMetric* p : sorted) {
    const BaselineMetric& x = *p;
    Json& e = m[x.path];
    e["value"] = x.value;
    e["unit"] = x.unit;
    e["rtol"] = x.rtol;
    e["atol"] = x.atol;
    e["direction"] = x.lower_is_better ? "lower_is_better" : "higher_is_better";
  }
  return j.dump() + "\n";
}

/// What a new baseline records: the step's time, MFU and memory; the run's time to train, goodput and cost when the
/// scenario checks run-level metrics anyway. The simulator is deterministic: tolerances allow model refinements, not
/// noise (run-level ones allow for a different trial count).
std::vector<BaselineMetric> default_metrics(bool with_run) {
  std::vector<BaselineMetric> m = {{"step_time_s", 0, "s", 0.01, 0, true},
                                   {"mfu", 0, "", 0.01, 0, false},
                                   {"memory_gib.total", 0, "GiB", 0.01, 0, true}};
  if (with_run) {
    m.push_back({"time_to_train_days.p50", 0, "d", 0.02, 0, true});
    m.push_back({"goodput.p50", 0, "", 0.02, 0, false});
    m.push_back({"cost_usd.p50", 0, "USD", 0.02, 0, true});
  }
  return m;
}

// ---- checking one scenario ----------------------------------------------------------------------------------------

using Status = CheckStatus;
using Row = CheckRow;

class Checker {
 public:
  Checker(const CheckOptions& a, const Progress& progress) : a_(a), progress_(progress) {}

  CheckReport check(const std::string& path) {
    const auto t0 = std::chrono::steady_clock::now();
    CheckReport rep;
    rep.file = path;
    rep.name = std::filesystem::path(path).stem().string();
    try {
      run(path, rep);
    } catch (const base::ConfigError& e) {
      // The scenario's own name where the file gives one, as when it loads (a CI system tracks the testsuite by it;
      // found by a user trial: a bad expect section renamed it after the file).
      if (rep.name == std::filesystem::path(path).stem().string()) {
        try {
          if (const auto name = base::JsonDocument::parse_file(path).top_level_string("name"); name && !name->empty())
            rep.name = *name;
        } catch (const base::ConfigError&) {  // unreadable: the file's stem stays
        }
      }
      // A baseline that could not be written was not updated (a user trial: "3 updated" beside the refusal).
      // It says so in its own rows, since the summary line no longer calls every skip "does not fit" (a user trial).
      for (auto& row : rep.rows)
        if (row.status == Status::Updated) {
          row.status = Status::Skipped;
          row.message = "not updated: the baseline file could not be written (the error below says why)";
        }
      for (const auto& d : e.items())
        rep.rows.push_back({"input", "", "", Status::Error, d.to_string()});
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  }

 private:
  void run(const std::string& path, CheckReport& rep) {
    const auto s = scenario::load_scenario(path, a_.overrides);
    rep.name = s.name;
    auto evaluated = evaluate_step(s, execution::StepOptions{});
    if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) {
      std::string why;
      for (const auto& i : *bad)
        why += (why.empty() ? "" : "; ") + ("[" + i.rule + "] " + i.reason);
      rep.rows.push_back({"feasible", "no", "yes", Status::Failed, "the configuration is infeasible: " + why});
      return;
    }
    const auto& step = std::get<StepOutcome>(evaluated);
    // The baseline first (to know whether the run is needed, and which checks a configuration that does not fit
    // leaves unevaluated), then every metric looked up once.
    std::optional<Baseline> baseline;
    std::string baseline_path;
    bool new_baseline = false;
    if (!a_.baseline_dir.empty()) {
      baseline_path =
          (std::filesystem::path(a_.baseline_dir) / (std::filesystem::path(path).stem().string() + ".json")).string();
      std::error_code ec;
      const bool exists = std::filesystem::exists(baseline_path, ec);
      if (ec) throw base::ConfigError(baseline_path, "", "cannot read the baseline: " + ec.message());
      if (exists) {
        baseline = parse_baseline(base::JsonDocument::parse_file(baseline_path));
        if (baseline->scenario != s.name && !a_.update_baseline)
          throw base::ConfigError(baseline_path, "/scenario",
                                  "the baseline is for scenario \"" + baseline->scenario + "\", not \"" + s.name +
                                      "\" (" + path + "); give its own baseline, or rewrite it with --update-baseline");
      } else if (a_.update_baseline) {
        new_baseline = true;
      } else {
        throw base::ConfigError(baseline_path, "",
                                "no baseline for scenario " + path + "; create it with trainsim check " + path +
                                    " --baseline " + a_.baseline_dir + " --update-baseline");
      }
    }
    // A configuration that does not fit would crash the job: it fails the check, whatever else is expected, unless
    // the scenario states that it does not fit ("fits": false, a check of the memory model itself).
    const bool expects_no_fit = std::any_of(s.expect.begin(), s.expect.end(), [](const scenario::Expectation& e) {
      return e.equals && e.metric == "fits" && !*e.equals;
    });
    if (!step.result.fits && !expects_no_fit) {
      rep.rows.push_back({"fits", "false", "true", Status::Failed,
                          "does not fit in memory: " + fmt(step.result.memory.total, 1) + " of " +
                              fmt(step.result.memory.capacity, 1) + " GiB per GPU (weights " +
                              fmt(step.result.memory.params, 1) + ", gradients " + fmt(step.result.memory.grads, 1) +
                              ", optimizer " + fmt(step.result.memory.optimizer, 1) + ", activations " +
                              fmt(step.result.memory.activations, 1) + ", buffers " +
                              fmt(step.result.memory.buffers, 1) + " GiB); no other metric evaluated"});
      skip_the_rest(s, baseline, rep, "the configuration does not fit in memory");
      return;
    }
    own_step_s_ = step.result.step_time.seconds();
    step_.emplace(step_json(step.result, s));
    run_.reset();

    bool needs_run = false;
    for (const auto& e : s.expect)
      if (!e.equals && !e.within_best && !step_->resolve(e.metric)) needs_run = true;
    if (new_baseline) baseline = Baseline{s.name, default_metrics(needs_run), ""};
    if (baseline)
      for (const auto& m : baseline->metrics)
        if (!step_->resolve(m.path)) needs_run = true;
    if (needs_run) {
      if (!step.result.fits) {
        rep.rows.push_back({"fits", "false", "true", Status::Failed,
                            "does not fit in memory (" + fmt(step.result.memory.total, 1) + " of " +
                                fmt(step.result.memory.capacity, 1) +
                                " GiB per GPU); run-level metrics not evaluated"});
        skip_the_rest(s, baseline, rep, "the configuration does not fit in memory");
        return;
      }
      const auto r = evaluate_run(s, step, s.reliability.trials, s.reliability.seed, a_.threads, progress_);
      run_.emplace(r.json);
    }

    for (const auto& e : s.expect)
      rep.rows.push_back(expectation(e, s, step.result.fits));
    // Nothing stated and no baseline: what was checked is that the configuration is feasible and fits, and the row
    // says so (an empty table read as "0 ok" passed a scenario whose expectations were forgotten, unremarked).
    if (s.expect.empty() && !baseline) {
      rep.rows.push_back({"fits", "true", "true", Status::Ok,
                          "only feasibility and fit were checked: the scenario states no expectations (no or an "
                          "empty \"expect\" section) and no --baseline was given"});
      return;
    }
    if (!baseline) return;
    for (auto& m : baseline->metrics)
      rep.rows.push_back(compare(m, baseline_path, new_baseline));
    if (a_.update_baseline) {
      baseline->scenario = s.name;
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(baseline_path).parent_path(), ec);
      if (ec) throw base::ConfigError(a_.baseline_dir, "", "cannot create the baseline folder: " + ec.message());
      base::write_file_atomic(baseline_path, baseline_text(*baseline), /*may_replace_input=*/true);
      rep.baseline_written = baseline_path;
    }
  }

  /// What a configuration that does not fit leaves unevaluated, as skipped rows named as when they are evaluated, so
  /// that a CI system tracking each check's history by name sees them skipped, not deleted (found by a user trial).
  void skip_the_rest(const scenario::Scenario& s, const std::optional<Baseline>& baseline, CheckReport& rep,
                     const std::string& why) const {
    std::vector<std::string> causes;
    for (const auto& c : s.reliability.components)
      causes.push_back(c.name);
    for (const auto& e : s.expect) {
      if (e.equals) continue;  // the fits row above
      if (e.within_best) {
        rep.rows.push_back({"within_best", "", "<= " + pct(*e.within_best) + " slower than the best", Status::Skipped,
                            "not evaluated: " + why});
        continue;
      }
      const std::string path = results::resolve_metric(e.metric, causes).value_or(e.metric);
      rep.rows.push_back({path, "", bounds_of(e, path, s.source).expected, Status::Skipped, "not evaluated: " + why});
    }
    if (baseline)
      for (const auto& m : baseline->metrics)
        rep.rows.push_back({"baseline " + m.path, "", "", Status::Skipped, "not evaluated: " + why});
  }

  /// "3 of 20 trials never finish", or empty: a run-level number is then null, and a check on it fails (not bad input).
  std::string never_finished() const {
    const auto n = run_ ? run_->number("never_finished.trials") : std::nullopt;
    return !n || *n <= 0 ? "" : fmt(*n, 0) + " of " + fmt(*run_->number("trials"), 0) + " trials never finish";
  }

  /// A metric in the step result, else the run's (nullopt: trials never finished); a path in neither is bad input.
  std::pair<std::string, std::optional<double>> lookup(const std::string& metric, const std::string& where,
                                                       const std::string& at) const {
    for (const ResultView* v : {&*step_, run_ ? &*run_ : nullptr}) {
      if (!v) continue;
      if (auto p = v->resolve(metric)) {
        if (auto x = v->number(*p)) return {*p, *x};
        // Null as trials never finished: the time to train, and its cost where priced (not a missing deadline).
        const bool priced = v->number("cost_usd.burn_per_hour").has_value();
        if (v != &*step_ && !never_finished().empty() &&
            (p->starts_with("time_to_train_days.") || (p->starts_with("cost_usd.") && priced)))
          return {*p, std::nullopt};
        throw base::ConfigError(where, at,
                                "\"" + metric + "\": the result has no number there (null: e.g. no price or deadline)");
      }
    }
    std::vector<std::string> all = step_->leaves();
    if (run_)
      for (auto& l : run_->leaves())
        all.push_back(std::move(l));
    const std::string hint = base::did_you_mean(metric, all);
    throw base::ConfigError(where, at,
                            "\"" + metric + "\" is not a field of the step or run result" +
                                (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") +
                                "; write a JSON path such as mfu, step_time_s, memory_gib.total, "
                                "time_to_train_days.p90, goodput.p50, cost_usd.p90");
  }

  struct Bounds {
    double lo, hi;
    std::string expected;  // "in [a, b]", ">= a", "<= b", in the field's unit
  };
  /// An expectation's bounds in the unit of the field `path` names; bounds in another unit are bad input.
  static Bounds bounds_of(const scenario::Expectation& e, const std::string& path, const std::string& source) {
    const std::string unit = unit_of(path);
    // Bounds written with a unit ("60 d", "25M USD", "70 GiB") are converted to the field's unit.
    double factor = 1;
    if (!e.unit.empty()) {
      const bool time_ok = e.unit == "s" && (unit == "s" || unit == "d" || unit == "h");
      if (!time_ok && e.unit != unit)
        throw base::ConfigError(source, "/expect/" + e.metric,
                                // Times are kept in seconds: "0.8 d" is "a time", not "s" the user never wrote.
                                "the bounds are " + (e.unit == "s" ? std::string("a time") : "in " + e.unit) + " but " +
                                    path + " is " + (unit.empty() ? "a plain number" : "in " + unit) +
                                    "; write the bounds as plain numbers or in its unit");
      factor = unit == "d" ? 1.0 / 86400 : unit == "h" ? 1.0 / 3600 : 1.0;
    }
    const double inf = std::numeric_limits<double>::infinity();
    const double lo = e.min ? *e.min * factor : -inf;
    const double hi = e.max ? *e.max * factor : inf;
    std::string expected;
    if (e.min && e.max) {
      expected = "in [" + show(lo, unit) + ", " + show(hi, unit) + "]";
    } else if (e.min) {
      expected = ">= " + show(lo, unit);
    } else {
      expected = "<= " + show(hi, unit);
    }
    return {lo, hi, expected};
  }

  Row expectation(const scenario::Expectation& e, const scenario::Scenario& s, bool fits) {
    const std::string where = s.source + ": /expect/" + e.metric;
    if (e.equals) {
      const bool ok = fits == *e.equals;
      return {"fits", fits ? "true" : "false", *e.equals ? "true" : "false", ok ? Status::Ok : Status::Failed,
              ok ? ""
                 : std::string("fits = ") + (fits ? "true" : "false") + ", expected " + (*e.equals ? "true" : "false")};
    }
    if (e.within_best) return within_best(*e.within_best, s);
    const auto [path, value] = lookup(e.metric, s.source, "/expect/" + e.metric);
    const std::string unit = unit_of(path);
    const auto [lo, hi, expected] = bounds_of(e, path, s.source);
    if (!value) return {path, "never", expected, Status::Failed, path + ": " + never_finished()};
    const double v = *value;
    const bool ok = v >= lo && v <= hi;
    return {path, show(v, unit), expected, ok ? Status::Ok : Status::Failed,
            ok ? "" : path + " = " + show(v, unit) + ", expected " + expected};
  }

  /// The scenario's own replica step time against the planner's fastest configuration under the same constraints:
  /// the same model, cluster, global batch, sequence length and precision, every parallel field searched (objective
  /// time, step level only: the ranking of that objective needs no Monte Carlo).
  Row within_best(double fraction, const scenario::Scenario& s) {
    planner::PlanOptions opt;
    opt.objective = planner::Objective::Time;
    opt.top_k = 1;
    // Every searchable parallel field but the global batch: a different batch trains differently (and the planner
    // then ranks by time to a target loss, not by step time).
    for (const auto& f : planner::FixedFields::names())
      if (f != "global_batch") opt.free.push_back(f);
    opt.threads = a_.threads;
    opt.progress = progress_;  // the search's configurations on the bar (a user trial: minutes with nothing shown)
    const auto plan = planner::plan(scenario::plan_problem(s, opt, /*with_run_level=*/false), opt);
    const std::string expected = "<= " + pct(fraction) + " slower than the best";
    if (plan.candidates.empty())
      return {"within_best", "", expected, Status::Failed,
              "the planner found no feasible configuration to compare with"};
    const auto& best = plan.candidates.front();
    const double own = own_step_s_, top = best.step.step_time.seconds();
    const double gap = own / top - 1;
    const std::string value = pct(gap) + " (" + show(own, "s") + " vs " + show(top, "s") + ")";
    if (gap <= fraction) return {"within_best", value, expected, Status::Ok, ""};
    const auto& c = best.parallel;
    return {"within_best", value, expected, Status::Failed,
            "step time " + show(own, "s") + " is " + pct(gap) + " slower than the planner's best " + show(top, "s") +
                " (tp " + std::to_string(c.tp) + " pp " + std::to_string(c.pp) + " dp " +
                std::to_string(c.dp.value_or(0)) + " cp " + std::to_string(c.cp) + " ep " + std::to_string(c.ep) +
                " vpp " + std::to_string(c.vpp) + ", micro-batch " + std::to_string(c.micro_batch) + ", recompute " +
                parallel::to_string(c.recompute) + ", zero " + std::to_string(c.zero_stage) + "); allowed " +
                pct(fraction)};
  }

  Row compare(BaselineMetric& m, const std::string& baseline_path, bool new_baseline) {
    const auto [path, value] = lookup(m.path, baseline_path, "/metrics/" + m.path);
    const std::string unit = unit_of(path);
    const std::string check = "baseline " + m.path;
    if (!value && a_.update_baseline)  // nothing to record, and a regression from any baseline
      throw base::ConfigError(baseline_path, "/metrics/" + m.path, never_finished() + ": no value to record");
    if (!value) return {check, "never", show(m.value, unit), Status::Failed, m.path + ": " + never_finished()};
    const double v = *value;
    if (a_.update_baseline) {
      const std::string before = new_baseline ? "(new)" : show(m.value, m.unit.empty() ? unit : m.unit);
      m.path = path;
      m.value = v;
      m.unit = unit;
      return {check, show(v, unit), before, Status::Updated, ""};
    }
    // A value recorded in another unit cannot be compared with the result's (no conversion is guessed).
    if (const std::string wrong = unit_mismatch(m, path); !wrong.empty())
      throw base::ConfigError(baseline_path, "/metrics/" + m.path + "/unit",
                              wrong +
                                  "; record the value in the result's own unit or rewrite it with "
                                  "--update-baseline");
    const double tol = m.atol + m.rtol * std::abs(m.value);
    const double worse = m.lower_is_better ? v - m.value : m.value - v;  // > 0: worse
    char rel[48];
    // A baseline of zero has no relative change: the absolute one instead.
    if (m.value != 0)
      std::snprintf(rel, sizeof rel, "%+.2f%%", 100.0 * ((v - m.value) / std::abs(m.value)));  // 1e308: -100%, not -inf
    else
      std::snprintf(rel, sizeof rel, "%+.6g from 0", v);
    const std::string expected = show(m.value, unit) + " (" + (m.lower_is_better ? "lower" : "higher") +
                                 " is better, tol " + show(tol, unit) + ")";
    if (worse > tol)
      return {check, show(v, unit) + " (" + rel + ")", expected, Status::Failed,
              m.path + " regressed: " + show(v, unit) + " vs baseline " + show(m.value, unit) + " (" + rel +
                  "; allowed " + show(tol, unit) + " = atol + rtol*|baseline|)"};
    if (-worse > tol) return {check, show(v, unit) + " (" + rel + ")", expected, Status::Improved, ""};
    return {check, show(v, unit) + " (" + rel + ")", expected, Status::Ok, ""};
  }

  const CheckOptions& a_;
  const Progress& progress_;
  std::optional<ResultView> step_;
  std::optional<ResultView> run_;
  double own_step_s_ = 0;
};

}  // namespace

CheckReport check_scenario(const std::string& path, const CheckOptions& options, const Progress& progress) {
  return Checker(options, progress).check(path);
}

bool validate_baseline_file(const std::string& path) {
  const auto doc = base::JsonDocument::parse_file(path);
  if (doc.top_level_string("schema") != std::string(kBaselineSchema)) return false;
  // What check would refuse when it compares, without a result: a path that names no field, a unit not the field's
  // (found by a user trial: validate passed what check refused). A cause under a by_cause group depends on the
  // scenario's failure components, which check resolves.
  std::vector<base::Diagnostic> problems;
  for (const auto& m : parse_baseline(doc).metrics) {
    const auto groups = results::by_cause_groups();
    if (std::any_of(groups.begin(), groups.end(),
                    [&](std::string_view g) { return m.path.starts_with(std::string(g) + "."); }))
      continue;
    const auto resolved = results::resolve_metric(m.path, {});
    if (!resolved) {
      problems.push_back(
          {path, "/metrics/" + m.path,
           "\"" + m.path + "\" is not a field of the step or run result; accepted: " + results::metric_paths_text()});
    } else if (const std::string wrong = unit_mismatch(m, *resolved); !wrong.empty()) {
      problems.push_back({path, "/metrics/" + m.path + "/unit", wrong});
    }
  }
  if (!problems.empty()) throw base::ConfigError(std::move(problems));
  return true;
}

}  // namespace sim::app
