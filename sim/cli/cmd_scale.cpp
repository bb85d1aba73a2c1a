// sim/cli/cmd_scale.cpp: `trainsim scale`: the same model at several cluster sizes, each with the planner's best
// parallel strategy, through the step and the whole run: how speed, interruptions, goodput and cost change with
// size (issue 11's scaling study).
#include "sim/base/quantity.hpp"
#include "sim/app/run.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/base/table.hpp"
#include "sim/scenario/plan_setup.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <memory>

namespace sim::cli {
namespace {

struct ScaleArgs {
  std::string scenario;
  std::vector<int> gpus;
  int trials = 200;
  bool trials_given = false;  // the default is no request of the user's
  int threads = 0;
  bool json = false;
};

struct Row {
  int gpus = 0;
  parallel::ParallelConfig parallel;
  std::string megatron_flags;  // the planner's, for the configuration as planned
  StepOutcome step;
  RunOutcome run;
};

int scale_command(const ScaleArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const auto base = load_scenario_or_default(a.scenario, o);
  if (const auto w = missing_price_warning(base)) err << "warning: " << *w << "\n";
  if (a.gpus.empty()) throw base::ConfigError("--gpus", "", "give the cluster sizes to compare, e.g. --gpus 64,512");
  for (int g : a.gpus)
    if (g < 1) throw base::ConfigError("--gpus", "", std::to_string(g) + ": a cluster size is a positive GPU count");
  // Each size once, in the order given; at most kMaxSizes (a user trial: the same size 10,000 times planned and ran
  // each, about two hours, where `plan` searches each size once).
  constexpr std::size_t kMaxSizes = 64;
  std::vector<int> sizes;
  for (int g : a.gpus)
    if (std::find(sizes.begin(), sizes.end(), g) == sizes.end()) sizes.push_back(g);
  if (sizes.size() > kMaxSizes)
    throw base::ConfigError("--gpus", "",
                            std::to_string(sizes.size()) + " cluster sizes: at most " + std::to_string(kMaxSizes) +
                                " in one command (each is a plan and a run)");
  if (sizes.size() < a.gpus.size() && !o.quiet)
    err << "note: --gpus names a size more than once; each is simulated once\n";
  // What the planner chooses at each size, or the scenario's trial count bounds, is not the user's to set here: said,
  // not dropped without a word (a tester's trial: --set parallel.tp=4 and --trials 500 changed nothing).
  for (const auto& set : o.sets) {
    const std::string key = set.substr(0, set.find('='));
    for (const auto& f : planner::FixedFields::names())
      if (f != "global_batch" && key == "parallel." + f && !o.quiet)
        err << "note: --set " << key << " is not used: scale plans every parallel field but the global batch at each "
            << "size (trainsim run or plan --gpus keeps a layout of yours)\n";
  }
  if (a.trials_given && a.trials > base.reliability.trials && !o.quiet)
    err << "note: --trials " << a.trials << ": each size runs at most the scenario's " << base.reliability.trials
        << " trials (reliability.trials)\n";
  std::vector<Row> rows;
  std::vector<scenario::Scenario> scenarios;  // each size's, with the planner's layout
  for (int g : sizes) {
    // The planner's best strategy at this size by time to the target: every parallel field free but the global
    // batch, so that each size trains the scenario's tokens on its batch ("all" would free the batch too, and the
    // planner would trade it for McCandlish's token efficiency, which `plan --free global_batch` answers).
    planner::PlanOptions po;
    po.objective = planner::Objective::Time;
    po.top_k = 1;
    po.gpus = {g};
    for (const auto& f : planner::FixedFields::names())
      if (f != "global_batch") po.free.push_back(f);
    po.threads = thread_count(a.threads);
    po.run_candidates = 1;  // the run level below replaces the planner's short estimate
    po.run_trials = 1;
    ProgressBar plan_bar(err, o.progress, o.quiet, "configs at " + std::to_string(g) + " GPUs");
    po.progress = [&plan_bar](int done, int total) { plan_bar.update(done, total); };
    auto sized = base;
    sized.cluster.gpus = g;
    sized.parallel.dp.reset();
    const auto planned = scenario::plan_scenario(sized, po);
    if (planned.candidates.empty()) {
      err << "scale: nothing fits on " << g << " GPUs:";
      for (const auto& [why, n] : planned.infeasible)
        err << " " << why << " " << n << ";";
      err << "\n";
      return kExitInfeasible;
    }
    Row r;
    r.gpus = g;
    sized.parallel = planned.candidates.front().parallel;
    auto evaluated = evaluate_step(sized, execution::StepOptions{});
    if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated))
      return print_infeasible(*bad, sized, err);
    r.step = std::get<StepOutcome>(evaluated);
    r.parallel = sized.parallel;
    r.megatron_flags = planned.candidates.front().megatron_flags;
    rows.push_back(std::move(r));
    scenarios.push_back(std::move(sized));
  }
  // The sizes share the bound one command simulates (a review: each size was checked against all of it, so 64 sizes
  // could run 64 times as long); checked before any size's trials run.
  double work = 0;
  for (std::size_t i = 0; i < rows.size(); ++i)
    work += reliability::interruptions_per_trial(app::run_inputs(scenarios[i], rows[i].step),
                                                 rows[i].step.result.step_time) *
            std::min(a.trials, scenarios[i].reliability.trials);
  if (work > reliability::kMaxRunInterruptions) {
    char all[32];
    std::snprintf(all, sizeof all, "%.3g", work);
    throw base::ConfigError("--trials", "",
                            "the " + std::to_string(rows.size()) + " sizes' trials simulate about " + all +
                                " interruptions in all, beyond the 1e+10 one command simulates (about 20 minutes on "
                                "two cores); give fewer trials or sizes, or check the failure rates");
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ProgressBar bar(err, o.progress, o.quiet, "trials at " + std::to_string(rows[i].gpus) + " GPUs");
    const int trials = std::min(a.trials, scenarios[i].reliability.trials);
    rows[i].run =
        evaluate_run(scenarios[i], rows[i].step, trials, scenarios[i].reliability.seed, thread_count(a.threads), bar);
  }

  if (a.json || o.format == "json") {
    results::Json arr = results::Json::array();
    for (const auto& r : rows) {
      results::Json j = results::Json::object();
      j["gpus"] = r.gpus;
      j["parallel"]["tp"] = r.step.inputs.layout.tp;
      j["parallel"]["pp"] = r.step.inputs.layout.pp;
      j["parallel"]["dp"] = r.step.inputs.layout.dp;
      j["parallel"]["cp"] = r.step.inputs.layout.cp;
      j["parallel"]["vpp"] = r.step.inputs.layout.vpp;
      j["parallel"]["micro_batch"] = r.step.inputs.layout.micro_batch;
      j["parallel"]["global_batch"] = r.parallel.global_batch;
      // What else the planner chose, as `plan --json` names it (added after the keys above, which stay as they were).
      j["parallel"]["ep"] = r.step.inputs.layout.ep;
      j["parallel"]["sequence_parallel"] = r.parallel.sequence_parallel && r.step.inputs.layout.tp > 1;
      j["parallel"]["zero_stage"] = r.parallel.zero_stage;
      j["parallel"]["distributed_optimizer"] = r.parallel.distributed_optimizer;
      j["parallel"]["recompute"] = parallel::to_string(r.parallel.recompute);
      j["parallel"]["schedule"] = parallel::to_string(r.parallel.schedule);
      j["megatron_flags"] = r.megatron_flags;
      j["run"] = r.run.json;
      arr.push_back(std::move(j));
    }
    results::Json top = results::Json::object();
    top["schema"] = "trainsim.scale/1";
    top["scenario"] = base.name;
    top["sizes"] = std::move(arr);
    out << top.dump() << '\n';
    return kExitOk;
  }
  out << "scale           " << base::printable(base.name) << ": " << base::printable(base.model.name)
      << ", global batch " << base.parallel.global_batch
      << " (the scenario's) on the planner's best strategy per size, " << rows.front().run.run.trials
      << " trials each\n\n";
  // Every field the planner chose, as `plan` shows them, so that a size's row can be reproduced (the flags below).
  Table t({"GPUs", "tp", "pp", "vpp", "cp", "ep", "dp", "mb", "schedule", "recompute", "optimizer", "step s", "MFU",
           "days p50", "days p90", "interrupts/day", "goodput", "cost p50", "USD/failure"});
  bool any_window = false;
  for (const auto& r : rows) {
    const auto& L = r.step.inputs.layout;
    const auto& run = r.run.run;
    // A scenario with a fixed window (training.duration) has no time to train: its days are the window (a user trial
    // read "never" there, the word for runs that do not finish, and "-" interruptions per day).
    const bool window = run.work != "steps";
    const double days = window ? run.window_days : run.time_to_train_days.mean;
    const auto day_cell = [&](double d) {
      return window ? fmt(run.window_days, 1) + "*" : std::isfinite(d) ? fmt(d, 1) : std::string("never");
    };
    any_window = any_window || window;
    t.add({std::to_string(r.gpus), std::to_string(L.tp), std::to_string(L.pp), std::to_string(L.vpp),
           std::to_string(L.cp), std::to_string(L.ep), std::to_string(L.dp), std::to_string(L.micro_batch),
           parallel::to_string(r.parallel.schedule), parallel::to_string(r.parallel.recompute), sharding(r.parallel),
           fmt(r.step.result.step_time.seconds(), 3), pct(r.step.result.mfu), day_cell(run.time_to_train_days.p50),
           day_cell(run.time_to_train_days.p90),
           std::isfinite(days) && days > 0 ? fmt(run.interruptions_mean / days, 2) : "-", pct(run.goodput.p50),
           std::isfinite(r.run.cost.p50_usd) ? base::format_money({r.run.cost.p50_usd}) : "unbounded",
           base::format_money({r.run.cost.per_failure_mean_usd})});
  }
  t.print(out);
  out << (any_window ? "days: * the scenario's fixed window (training.duration), not a time to train"
                     : "days: time to the scenario's tokens with failures")
      << "; goodput: productive / wall time; USD/failure: mean cost of one interruption (detection, restart, lost "
         "work, repair waits) at the cluster's burn rate\n";
  out << "\nMegatron-LM flags\n";
  for (const auto& r : rows) {
    const std::string g = std::to_string(r.gpus);
    out << std::string(g.size() < 6 ? 6 - g.size() : 0, ' ') << g << "  "
        << megatron_flags_line(r.megatron_flags, r.parallel.schedule) << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_scale_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand("scale", "The same model at several cluster sizes: speed, interruptions, cost");
  auto a = std::make_shared<ScaleArgs>();
  cmd->add_option("scenario", a->scenario, "Scenario file (default: the built-in default scenario)");
  cmd->add_option("--gpus", a->gpus, "Cluster sizes, e.g. --gpus 64,512,4096,16384")->delimiter(',')->required();
  cmd->add_option("--trials", a->trials, "Monte Carlo trials per size (at most the scenario's)")
      ->check(CLI::Range(1, 1'000'000))
      ->each([a](const std::string&) { a->trials_given = true; })
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Worker threads (default: all cores); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--json", a->json, "JSON result (schema trainsim.scale/1), same as --format json");
  commands.push_back({cmd, [a, &o](std::ostream& out, std::ostream& err) { return scale_command(*a, o, out, err); }});
}

}  // namespace sim::cli
