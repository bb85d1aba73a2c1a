// sim/cli/cmd_plan.cpp: `trainsim plan`: search the parallel strategies of a scenario, rank them, Pareto front.
#include "sim/base/errors.hpp"
#include "sim/base/quantity.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/table.hpp"
#include "sim/scenario/plan_setup.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>

namespace sim::cli {
namespace {

struct PlanArgs {
  std::string scenario;
  std::string objective = "time";
  int top = 10;
  std::vector<int> gpus;
  std::vector<std::string> free;
  int threads = 0;
  int trials = 200;
  bool json = false;
};

std::string days(const std::optional<planner::RunEstimate>& r, bool p90) {
  if (!r) return "-";
  const double d = p90 ? r->time_to_train_p90_days : r->time_to_train_mean_days;
  return std::isfinite(d) ? fmt(d, 1) : std::string("never");
}

std::string money(const std::optional<planner::RunEstimate>& r) {
  if (!r) return "-";
  return std::isfinite(r->cost_mean_usd) ? base::format_money({r->cost_mean_usd}) : std::string("unbounded");
}

std::string sharding(const parallel::ParallelConfig& c) {
  const int s = std::max(c.zero_stage, c.distributed_optimizer ? 1 : 0);
  return s == 0 ? "none" : s == 1 ? "distopt" : "zero-" + std::to_string(s);
}

void candidate_table(const planner::PlanResult& r, const std::vector<int>& rows, std::ostream& out) {
  Table t({"#", "gpus", "tp", "pp", "vpp", "cp", "ep", "dp", "mb", "sp", "schedule", "recompute", "optimizer", "step s",
           "MFU", "GiB/GPU", "days", "p90 days", "cost"});
  for (int i : rows) {
    const auto& c = r.candidates[static_cast<std::size_t>(i)];
    const auto& L = c.layout;
    t.add({std::to_string(i + 1), std::to_string(c.gpus), std::to_string(L.tp), std::to_string(L.pp),
           std::to_string(L.vpp), std::to_string(L.cp), std::to_string(L.ep), std::to_string(L.dp),
           std::to_string(L.micro_batch), c.parallel.sequence_parallel && L.tp > 1 ? "yes" : "no",
           parallel::to_string(c.parallel.schedule), parallel::to_string(c.parallel.recompute), sharding(c.parallel),
           fmt(c.step.step_time.seconds(), 3), pct(c.step.mfu), fmt(c.step.memory.total, 1), days(c.run, false),
           days(c.run, true), money(c.run)});
  }
  t.print(out);
}

void print_plan(const planner::PlanResult& r, const scenario::Scenario& s, const PlanArgs& a, std::ostream& out) {
  std::string sizes;
  for (int g : r.gpus)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(g);
  out << "plan            " << s.name << "  (objective " << planner::to_string(r.objective) << ", " << sizes
      << " GPUs)\n";
  out << "searched        " << r.evaluated << (r.evaluated == 1 ? " configuration: " : " configurations: ")
      << r.feasible << " feasible (analytic; " << r.dominated << " of them dominated in time and memory), "
      << r.replica_evaluated << " at replica fidelity, " << r.run_evaluated << " through the run level (" << a.trials
      << " trials each)\n";
  if (!r.infeasible.empty()) {
    out << "pruned          ";
    for (std::size_t i = 0; i < r.infeasible.size(); ++i)
      out << (i ? ", " : "") << r.infeasible[i].first << " " << r.infeasible[i].second;
    out << "\n";
  }
  out << "\nbest " << std::min<std::size_t>(r.candidates.size(), static_cast<std::size_t>(a.top)) << " by "
      << planner::to_string(r.objective)
      << " (step at replica fidelity; MFU in model FLOPs; memory of the worst pipeline stage; days and cost: mean "
         "over the run-level trials, failures included)\n";
  std::vector<int> top;
  for (int i = 0; i < static_cast<int>(r.candidates.size()) && i < a.top; ++i)
    top.push_back(i);
  candidate_table(r, top, out);
  out << "\nMegatron-LM flags\n";
  for (int i : top) {
    const auto& c = r.candidates[static_cast<std::size_t>(i)];
    const std::string rank = std::to_string(i + 1);
    out << std::string(rank.size() < 3 ? 3 - rank.size() : 0, ' ') << rank << "  " << c.megatron_flags;
    if (c.parallel.schedule == parallel::Schedule::GPipe || c.parallel.schedule == parallel::Schedule::ZeroBubbleH1)
      out << "  (schedule " << parallel::to_string(c.parallel.schedule) << ": not a Megatron-LM flag)";
    out << "\n";
  }
  if (!r.pareto.empty()) {
    out << "\nPareto front, "
        << (r.run_evaluated > 0 ? "expected time to train vs expected cost" : "step time vs GPU-hours per step")
        << " (# is the rank above)\n";
    candidate_table(r, r.pareto, out);
  }
}

int plan_command(const PlanArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const auto s = load_scenario_or_default(a.scenario, o);
  planner::PlanOptions opt;
  opt.objective = a.objective == "cost"   ? planner::Objective::Cost
                  : a.objective == "risk" ? planner::Objective::Risk
                                          : planner::Objective::Time;
  opt.top_k = a.top;
  opt.gpus = a.gpus;
  opt.free = a.free;
  opt.threads = thread_count(a.threads);
  opt.run_trials = a.trials;
  auto fixed = planner::FixedFields::from_keys(s.parallel_fixed);
  fixed.unfix(a.free);
  if (!o.quiet && fixed.any() && a.free.empty())
    err << "plan: keeping the parallel fields " << s.name << " fixes; --free all (or --free tp,pp,...) searches them\n";
  ProgressBar bar(err, o.progress, o.quiet, "configs");
  opt.progress = [&bar](int done, int total) { bar.update(done, total); };
  const auto r = scenario::plan_scenario(s, opt);
  if (a.json || o.format == "json") {
    auto j = planner::to_json(r, a.top);
    j["scenario"] = s.name;
    out << j.dump() << '\n';
  } else {
    print_plan(r, s, a, out);
  }
  if (r.candidates.empty()) {
    err << "infeasible: no configuration of " << s.name << " is feasible; pruned:";
    for (const auto& [rule, count] : r.infeasible)
      err << " [" << rule << "] " << count;
    err << "\n";
    return kExitInfeasible;
  }
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand("plan", "Search the parallel strategies of a scenario; rank by time, cost or risk");
  auto a = std::make_shared<PlanArgs>();
  cmd->add_option("scenario", a->scenario, "Scenario file (default: the built-in default scenario)");
  cmd->add_option("--objective", a->objective,
                  "time (step time), cost (expected cost of the run, failures included) or risk (p90 time to train)")
      ->check(CLI::IsMember({"time", "cost", "risk"}))
      ->capture_default_str();
  cmd->add_option("--top", a->top, "Candidates to show")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--gpus", a->gpus, "Cluster sizes to search, e.g. 512,1024,2048 (default: the scenario's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--free", a->free,
                  "Parallel fields to search although the scenario gives them: all, or e.g. tp,pp,micro_batch")
      ->delimiter(',');
  cmd->add_option("--threads", a->threads, "Worker threads (default: all cores); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--trials", a->trials, "Monte Carlo trials per finalist at the run level")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "JSON result (schema trainsim.plan/1), same as --format json");
  commands.push_back({cmd, [a, &o](std::ostream& out, std::ostream& err) { return plan_command(*a, o, out, err); }});
}

}  // namespace sim::cli
