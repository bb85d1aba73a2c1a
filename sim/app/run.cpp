// sim/app/run.cpp: a scenario's run (Monte Carlo, cost, sensitivity) on top of its step, and its JSON.
#include "sim/app/run.hpp"

#include "sim/base/errors.hpp"
#include "sim/base/quantity.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/trial.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace sim::app {

reliability::RunInputs run_inputs(const scenario::Scenario& s, const StepOutcome& step) {
  auto in = scenario::run_inputs(s, step.plan, step.result.step_time);
  // Errors name the scenario's keys, not the run level's (found by user trials: `--set training.tokens=1e19` was
  // blamed on "reliability: /work/total_steps", a failure rate too high for the spare pool on "/spares").
  auto scenario_path = [](const std::string& path) -> std::string {
    if (path == "/work/total_steps") return "/training/tokens";
    if (path == "/work/window") return "/training/duration";
    if (path == "/checkpoint/snapshot") return "/reliability/checkpoint/snapshot_bandwidth";
    if (path.starts_with("/trace")) return "/reliability/failures" + path;
    for (const char* key : {"/spares", "/node_swap", "/detection", "/straggler_slowdown", "/checkpoint/"})
      if (path.starts_with(key)) return "/reliability" + path;
    return path;
  };
  if (auto problems = reliability::check_inputs(in); !problems.empty()) {
    for (auto& p : problems) {
      p.file = s.source;
      p.path = scenario_path(p.path);
    }
    throw base::ConfigError(std::move(problems));
  }
  if (in.total_steps && *in.total_steps * step.result.step_time.seconds() > reliability::kMaxHorizonS) {
    char days[32], step_s[32];  // %g: 1e300 tokens gave a 300-digit day count (a user trial)
    std::snprintf(days, sizeof days, "%.3g", *in.total_steps * step.result.step_time.seconds() / 86400.0);
    std::snprintf(step_s, sizeof step_s, "%.4g", step.result.step_time.seconds());
    throw base::ConfigError(s.source, "/training/tokens",
                            std::string("takes ") + days + " days without a failure at " + step_s +
                                " s per step, beyond the simulator's range of 200 years; train fewer tokens or "
                                "simulate a window (training.duration)");
  }
  return in;
}

void check_run_work(const scenario::Scenario& s, const reliability::RunInputs& in, base::Time step, int trials,
                    const std::string& trials_from, bool report, int shards) {
  const double per_trial = reliability::interruptions_per_trial(in, step);
  // The report's what-if reruns: one at the base and eight with an input moved +-20% (scenario::run_sensitivity).
  const double reruns = report ? 9 * 1.2 * scenario::sensitivity_trials(trials) : 0.0;
  const double per_command = std::ceil(static_cast<double>(trials) / std::max(1, shards)) + reruns;
  if (per_trial * per_command <= reliability::kMaxRunInterruptions) return;
  const double room = reliability::kMaxRunInterruptions / per_trial - reruns;
  const auto most = static_cast<long long>(std::max(1.0, std::floor(room)) * std::max(1, shards));
  char per[32], all[32], bound[32];
  std::snprintf(per, sizeof per, "%.3g", per_trial);
  std::snprintf(all, sizeof all, "%.3g", per_trial * per_command);
  std::snprintf(bound, sizeof bound, "%.0e", reliability::kMaxRunInterruptions);
  const std::string why =
      std::to_string(trials) + " trials" + (shards > 1 ? " over " + std::to_string(shards) + " shards" : "") +
      " of about " + per +
      " interruptions each (the job's failure rate over the time it trains, failures' cost included)" +
      (report ? ", with the report's what-if reruns," : "") + " simulate " + all + (shards > 1 ? " per shard" : "") +
      ", beyond the " + bound + " one command simulates (about 20 minutes on two cores); give " + std::to_string(most) +
      " trials or fewer, or check the failure rates";
  if (trials_from.empty()) throw base::ConfigError(s.source, "/reliability/trials", why);
  throw base::ConfigError(trials_from, "", why);
}

namespace {

scenario::SensitivityOptions sensitivity_options(int trials, std::uint64_t seed, int threads) {
  scenario::SensitivityOptions so;
  so.trials = scenario::sensitivity_trials(trials);
  so.seed = seed;
  so.threads = threads;
  return so;
}

}  // namespace

RunOutcome finish_run(const scenario::Scenario& s, const StepOutcome& step, const reliability::RunInputs& in,
                      results::RunSummary run, int threads, const Progress& progress, bool sensitivity,
                      const base::TaskFarm& farm) {
  RunOutcome o;
  o.run = std::move(run);
  const cost::CostInputs ci = scenario::cost_inputs(s);
  o.cost = cost::run_cost(o.run, ci);
  o.json = results::to_json(o.run, step_json(step.result, s));
  o.json["scenario"] = s.name;
  cost::add_cost_json(o.json, o.cost);
  if (sensitivity) {
    auto so = sensitivity_options(o.run.trials, o.run.seed, threads);
    so.progress = progress;
    so.farm = farm;
    o.sensitivity = scenario::run_sensitivity(in, ci, so);
    cost::add_sensitivity_json(o.json, o.sensitivity, so.delta, so.trials);
  }
  // Provenance, as the main job's result.json has it: run --json, run --out and merge write the same JSON (found by a
  // user trial: only the main job's had it).
  results::Json resolved = scenario_json(s);
  resolved["reliability"]["trials"] = o.run.trials;  // the run's own, which --trials and --seed set
  resolved["reliability"]["seed"] = static_cast<std::int64_t>(o.run.seed);
  // The run level's settings as the run used them, defaults included (a user trial found restart, swap, detection and
  // repair times printed nowhere, though restart alone moved goodput 4.6 points).
  auto& rel = resolved["reliability"];
  const auto secs = [](base::Time t) { return static_cast<double>(t.ns) / 1e9; };  // 120, not 120.00000000000001
  rel["restart_s"] = secs(in.restart);
  rel["node_swap_s"] = secs(in.node_swap);
  rel["detection_s"]["crash"] = secs(in.detection.crash);
  rel["detection_s"]["hang"] = secs(in.detection.hang);
  rel["detection_s"]["straggler"] = secs(in.detection.straggler);
  rel["detection_s"]["sdc"] = secs(in.detection.sdc);
  rel["straggler_slowdown"] = in.straggler_slowdown;
  rel["spares"] = o.run.spares;
  rel["spares_from"] = s.reliability.spares ? "given" : "auto";
  rel["on_spares_exhausted"] = o.run.on_spares_exhausted;
  results::Json repair = results::Json::object(), mtbf = results::Json::object();
  for (const auto& c : in.components) {
    repair[c.name] = c.repair.hours();
    mtbf[c.name] = c.mtbf.hours();  // per instance of its scope (a user trial: a changed MTBF left the hash alone)
  }
  rel["repair_h"] = std::move(repair);
  rel["mtbf_h"] = std::move(mtbf);
  // Checkpoints as the run used them (trial 43: the report's configuration showed none of them): the policy, the
  // interval the scenario gave, and the storage rates behind "auto" write and load times (the times themselves are the
  // result's `checkpoint` object).
  const auto& ck = s.reliability.checkpoint;
  auto& cj = rel["checkpoint"];
  cj["interval"] = ck.auto_interval        ? results::Json("auto (Daly)")
                   : ck.interval_steps > 0 ? results::Json(std::to_string(ck.interval_steps) + " steps")
                                           : results::Json(base::format_time(ck.interval));
  cj["async"] = ck.async;
  cj["write_from"] = ck.write ? "given" : "bytes and bandwidth";
  cj["load_from"] = ck.load ? "given" : "bytes and bandwidth";
  cj["write_bandwidth_gb_s"] = ck.storage.write.bytes_per_s / 1e9;
  cj["read_bandwidth_gb_s"] = ck.storage.read.bytes_per_s / 1e9;
  cj["node_bandwidth_gb_s"] = ck.storage.per_node.bytes_per_s / 1e9;
  cj["snapshot_bandwidth_gb_s"] = ck.storage.snapshot.bytes_per_s / 1e9;
  cj["storage_bandwidth_gb_s"] = s.data.storage_bandwidth.bytes_per_s / 1e9;
  if (const auto& t = s.reliability.trace) {
    rel["failure_trace"]["source"] = t->source;
    rel["failure_trace"]["events"] = static_cast<std::int64_t>(t->events.size());
    rel["failure_trace"]["span_days"] = t->span_s / 86400.0;
  }
  o.resolved_scenario = resolved;
  o.json["resolved_scenario"] = std::move(resolved);
  return o;
}

void share_sensitivity(const scenario::Scenario& s, const reliability::RunInputs& in, int trials, std::uint64_t seed,
                       int threads, const base::TaskFarm& farm) {
  auto so = sensitivity_options(trials, seed, threads);
  so.farm = farm;
  scenario::run_sensitivity(in, scenario::cost_inputs(s), so);
}

RunOutcome evaluate_run(const scenario::Scenario& s, const StepOutcome& step, int trials, std::uint64_t seed,
                        int threads, const Progress& progress, bool sensitivity) {
  const auto in = run_inputs(s, step);
  check_run_work(s, in, step.result.step_time, trials, trials == s.reliability.trials ? "" : "--trials", sensitivity);
  auto run = reliability::run_monte_carlo(in, trials, seed, threads, progress);
  return finish_run(s, step, in, std::move(run), threads, progress, sensitivity);
}

}  // namespace sim::app
