// sim/cli/cmd_plan.cpp: `trainsim plan`: search the parallel strategies of a scenario, rank them, Pareto front.
#include "sim/app/plan.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/quantity.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/shard_file.hpp"
#include "sim/base/table.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/scenario/plan_setup.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

namespace sim::cli {
namespace {

using results::Json;

struct PlanArgs {
  std::string scenario;
  std::string objective = "time";
  int top = 10;
  std::vector<int> gpus;
  std::vector<std::string> free;
  int threads = 0;
  int trials = 200;
  bool json = false;
  std::string out;  // with --shard-index: the shard file to write (default stdout)
  bool shard = false;
  int shard_index = 0;
  int shard_count = 0;
};

/// What plan's result depends on besides the scenario (a shard's inputs fingerprint and its header's "work"): every
/// option but --threads, which changes nothing.
Json plan_params(const PlanArgs& a) {
  Json p = Json::object();
  p["objective"] = a.objective;
  p["top"] = a.top;
  Json gpus = Json::array();
  for (int g : a.gpus)
    gpus.push_back(g);
  p["gpus"] = std::move(gpus);
  Json free = Json::array();
  for (const auto& f : a.free)
    free.push_back(f);
  p["free"] = std::move(free);
  p["trials"] = a.trials;
  return p;
}

planner::PlanOptions plan_options(const PlanArgs& a) {
  planner::PlanOptions opt;
  opt.objective = a.objective == "cost"   ? planner::Objective::Cost
                  : a.objective == "risk" ? planner::Objective::Risk
                                          : planner::Objective::Time;
  opt.top_k = a.top;
  opt.gpus = a.gpus;
  opt.free = a.free;
  opt.threads = thread_count(a.threads);
  opt.run_trials = a.trials;
  return opt;
}

std::string days(const std::optional<planner::RunEstimate>& r, bool p90) {
  if (!r) return "-";
  const double d = p90 ? r->time_to_train_p90_days : r->time_to_train_mean_days;
  return std::isfinite(d) ? fmt(d, 1) : std::string("never");
}

std::string money(const std::optional<planner::RunEstimate>& r) {
  if (!r) return "-";
  return std::isfinite(r->cost_mean_usd) ? base::format_money({r->cost_mean_usd}) : std::string("unbounded");
}

/// How a run stands against the scenario's deadline and budget: "met", or what it misses and in how many trials.
std::string constraints(const std::optional<planner::RunEstimate>& r) {
  if (!r || (!r->p_deadline_miss && !r->p_budget_overrun)) return "-";
  std::string out;
  if (r->p_deadline_miss.value_or(0) > planner::kConstraintRisk)
    out = "deadline " + fmt(100 * *r->p_deadline_miss, 0) + "%";
  if (r->p_budget_overrun.value_or(0) > planner::kConstraintRisk)
    out += (out.empty() ? "budget " : ", budget ") + fmt(100 * *r->p_budget_overrun, 0) + "%";
  return out.empty() ? "met" : out;
}

/// Memory above this fraction of the GPU's is marked: trainsim's peaks are up to 18% below published ones
/// (docs/memory-validation.md), so such a candidate may not fit (a user trial: a top pick at 79.638 of 79.647 GiB).
constexpr double kTightMemory = 0.95;

bool tight(const planner::Candidate& c) {
  return c.step.memory.capacity > 0 && c.step.memory.total > kTightMemory * c.step.memory.capacity;
}

void candidate_table(const planner::PlanResult& r, const std::vector<int>& rows, std::ostream& out) {
  Table t({"#",        "gpus",      "tp",        "pp",     "vpp", "cp",      "ep",   "dp",       "mb",   "gbs",   "sp",
           "schedule", "recompute", "optimizer", "step s", "MFU", "GiB/GPU", "days", "p90 days", "cost", "misses"});
  for (int i : rows) {
    const auto& c = r.candidates[static_cast<std::size_t>(i)];
    const auto& L = c.layout;
    t.add({std::to_string(i + 1),
           std::to_string(c.gpus),
           std::to_string(L.tp),
           std::to_string(L.pp),
           std::to_string(L.vpp),
           std::to_string(L.cp),
           std::to_string(L.ep),
           std::to_string(L.dp),
           std::to_string(L.micro_batch),
           std::to_string(c.parallel.global_batch),
           c.parallel.sequence_parallel && L.tp > 1 ? "yes" : "no",
           parallel::to_string(c.parallel.schedule),
           parallel::to_string(c.parallel.recompute),
           sharding(c.parallel),
           fmt(c.step.step_time.seconds(), 3),
           pct(c.step.mfu),
           fmt(c.step.memory.total, 1) + (tight(c) ? "!" : ""),
           days(c.run, false),
           days(c.run, true),
           money(c.run),
           constraints(c.run)});
  }
  t.print(out);
}

/// The note under the ranked table when a listed candidate is marked "!" (tight()).
void tight_memory_note(const planner::PlanResult& r, const std::vector<int>& rows, std::ostream& out) {
  if (std::any_of(rows.begin(), rows.end(), [&](int i) { return tight(r.candidates[static_cast<std::size_t>(i)]); }))
    out << "GiB/GPU !: over " << fmt(100 * kTightMemory, 0)
        << "% of the GPU's memory; trainsim's peaks are up to 18% below published ones (docs/memory-validation.md), "
           "so such a layout may run out of memory: prefer one with headroom, or add recomputation\n";
}

/// What each rule that pruned points says, one line each: the ids alone told a user nothing (a user trial), and only
/// layer-passes was documented.
void explain_pruned(const planner::PlanResult& r, std::ostream& out) {
  for (const auto& [id, count] : r.infeasible) {
    if (id == "out of memory") {
      out << "  out of memory: the worst pipeline stage's peak memory per GPU exceeds the GPU's (trainsim step "
             "shows the breakdown)\n";
      continue;
    }
    for (const auto& rule : parallel::layout_rules())
      if (id == rule.id) out << "  " << rule.id << ": " << rule.description << "\n";
  }
}

void print_plan(const planner::PlanResult& r, const scenario::Scenario& s, const PlanArgs& a, std::ostream& out) {
  std::string sizes;
  for (int g : r.gpus)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(g);
  out << "plan            " << base::printable(s.name) << "  (objective " << planner::to_string(r.objective) << ", "
      << sizes << " GPUs)\n";
  out << "searched        " << r.evaluated << (r.evaluated == 1 ? " configuration: " : " configurations: ")
      << r.feasible << " feasible (analytic; " << r.dominated << " of them dominated in time and memory), "
      << r.replica_evaluated << " at replica fidelity, " << r.run_evaluated << " through the run level (" << a.trials
      << " trials each)\n";
  if (!r.infeasible.empty()) {
    out << "pruned          ";
    for (std::size_t i = 0; i < r.infeasible.size(); ++i)
      out << (i ? ", " : "") << r.infeasible[i].first << " " << r.infeasible[i].second;
    out << "\n";
    explain_pruned(r, out);
  }
  if (r.candidates.empty()) return;  // nothing feasible: no table (the command says why on stderr)
  // What each objective ranks by, as a column of the table below.
  // Time is the step time x the steps to the same target: with the global batch free, batches reach it in different
  // numbers of steps (found by a user trial: "by time" ranked 3.8 s above 2.0 s steps, by the days it implied).
  const bool batches_differ = std::any_of(r.candidates.begin(), r.candidates.end(),
                                          [](const planner::Candidate& c) { return c.relative_steps != 1.0; });
  const char* ranked_by = r.objective == planner::Objective::Risk   ? ": p90 days"
                          : r.objective == planner::Objective::Cost ? ": mean cost"
                          : batches_differ ? ": step time x the steps to the same target (the global batch's E(B))"
                                           : ": step time";
  out << "\nbest " << std::min<std::size_t>(r.candidates.size(), static_cast<std::size_t>(a.top)) << " by "
      << planner::to_string(r.objective)
      << (r.run_evaluated > 0 || r.objective == planner::Objective::Time ? ranked_by : "")
      << " (step at replica fidelity; MFU in model FLOPs; memory of the worst pipeline stage; gbs: global batch in "
         "sequences; days and cost: mean over the run-level trials, failures included)\n";
  std::vector<int> top;
  for (int i = 0; i < static_cast<int>(r.candidates.size()) && i < a.top; ++i)
    top.push_back(i);
  candidate_table(r, top, out);
  tight_memory_note(r, top, out);
  // The scenario's deadline and budget, as the run level judged them: whether any candidate meets them (those that
  // do are ranked first). A fixed duration has no deadline to miss (a review found "6 of the 6 meet it" said of one).
  const auto judged = [&](auto field) {
    return std::any_of(r.candidates.begin(), r.candidates.end(),
                       [&](const planner::Candidate& c) { return c.run && (*c.run.*field).has_value(); });
  };
  const bool deadline = s.cost.deadline && judged(&planner::RunEstimate::p_deadline_miss);
  const bool budget = s.cost.budget && judged(&planner::RunEstimate::p_budget_overrun);
  if (s.cost.deadline && !deadline && r.run_evaluated > 0)
    out << "cost.deadline does not apply to a fixed duration (training.duration): the run lasts that long\n";
  if ((deadline || budget) && r.run_evaluated > 0) {
    std::string what;
    // As given: one decimal, or two where one would round it (19.05 d read as 19.1 d, a user trial).
    const double d = s.cost.deadline ? s.cost.deadline->days() : 0.0;
    if (deadline) what = "deadline " + fmt(d, std::abs(d * 10 - std::round(d * 10)) > 1e-9 ? 2 : 1) + " d";
    if (budget) what += (what.empty() ? "budget " : ", budget ") + base::format_money(*s.cost.budget);
    const auto meeting = std::count_if(r.candidates.begin(), r.candidates.end(), [](const planner::Candidate& c) {
      return c.run && planner::meets_constraints(*c.run);
    });
    out << what << ": ";
    if (meeting > 0) {
      out << meeting << " of the " << r.candidates.size() << " run-level candidates meet "
          << (deadline && budget ? "both" : "it")
          << " in at least 90% of trials, ranked first; misses: in how many trials the others miss "
          << (deadline && budget ? "which" : "it") << "\n";
    } else {
      double fastest = INFINITY, cheapest = INFINITY;
      for (const auto& c : r.candidates)
        if (c.run) {
          fastest = std::min(fastest, c.run->time_to_train_p90_days);
          cheapest = std::min(cheapest, c.run->cost_p90_usd);
        }
      out << "none of the " << r.candidates.size() << " run-level candidates meets "
          << (deadline && budget ? "both" : "it")
          << " in 90% of trials (misses: in how many trials each misses it; fewer misses rank first);";
      if (deadline) out << " the shortest p90 is " << (std::isfinite(fastest) ? fmt(fastest, 1) + " d" : "never");
      if (budget)
        out << (deadline ? " and" : "") << " the lowest p90 cost "
            << (std::isfinite(cheapest) ? base::format_money({cheapest}) : std::string("unbounded"));
      out << ": relax the "
          << (deadline && budget ? "deadline or the budget"
              : deadline         ? "deadline"
                                 : "budget")
          << ", or plan other cluster sizes (--gpus)\n";
    }
  }
  // A searched batch (--free global_batch or all) trains to the scenario's target loss, not its token count: say so
  // where a listed candidate's batch differs from the scenario's.
  if (std::any_of(top.begin(), top.end(), [&](int i) {
        return r.candidates[static_cast<std::size_t>(i)].parallel.global_batch != s.parallel.global_batch;
      })) {
    out << "gbs other than the scenario's " << s.parallel.global_batch
        << ": days and cost are for the tokens that batch needs to reach the loss the scenario's batch reaches on its "
           "tokens (McCandlish et al. 2018: E(B) = E_min(1 + B/B_noise))";
    // Each such candidate's token count, so that `trainsim run` with its batch and tokens reproduces its days (a user
    // trial had to derive 13.66T for gbs 512 itself).
    std::string listed;
    for (int i : top) {
      const auto& c = r.candidates[static_cast<std::size_t>(i)];
      if (c.parallel.global_batch == s.parallel.global_batch || !c.run || c.run->tokens <= 0) continue;
      listed += std::string(listed.empty() ? ": " : ", ") + "#" + std::to_string(i + 1) + " (gbs " +
                std::to_string(c.parallel.global_batch) + ") " + base::format_count(base::Count{c.run->tokens}) +
                " tokens";
    }
    out << listed << "\n";
  }
  out << "\nMegatron-LM flags\n";
  for (int i : top) {
    const auto& c = r.candidates[static_cast<std::size_t>(i)];
    const std::string rank = std::to_string(i + 1);
    out << std::string(rank.size() < 3 ? 3 - rank.size() : 0, ' ') << rank << "  "
        << megatron_flags_line(c.megatron_flags, c.parallel.schedule) << "\n";
  }
  if (!r.pareto.empty()) {
    out << "\nPareto front, "
        << (r.run_evaluated > 0 ? "expected time to train vs expected cost" : "step time vs GPU-hours per step")
        << " (# is the rank above)\n";
    candidate_table(r, r.pareto, out);
  }
}

/// What plan prints once it has its result, whether one process computed it, shards merged or MPI processes.
int emit_plan(const planner::PlanResult& r, const scenario::Scenario& s, const PlanArgs& a, const Options& o,
              std::ostream& out, std::ostream& err) {
  if (a.json || o.format == "json") {
    out << app::plan_json(r, a.top, s).dump() << '\n';
  } else if (o.format == "md" || o.format == "csv") {  // the ranked candidates alone, as a Markdown or CSV table
    std::vector<int> top;
    for (int i = 0; i < static_cast<int>(r.candidates.size()) && i < a.top; ++i)
      top.push_back(i);
    candidate_table(r, top, out);
  } else {
    print_plan(r, s, a, out);
  }
  // NVLink domains that are no power of two (NVL72's 72 GPUs), filled one after another, split some power-of-two
  // groups at their boundaries, which the plans above then pay for or avoid: say how a job keeps them whole.
  const int domain = s.hardware.nvlink.domain, node = std::max(1, s.cluster.gpus_per_node);
  int whole = 1;
  while (2 * whole <= domain)
    whole *= 2;
  if (!o.quiet && whole < domain && whole % node == 0 && whole > node && s.cluster.gpus > domain)
    err << "note: NVLink domains of " << domain << " GPUs are filled one after another, so a tensor-, expert- or "
        << "data-parallel group of a power of two above " << (domain & -domain)
        << " GPUs can cross a domain's boundary and run over "
        << "the network; set cluster.nvlink_domain " << whole << " (" << whole / node << " of each domain's "
        << domain / node << " nodes) to plan for a job placed so that every such group stays inside one\n";
  if (r.candidates.empty()) {
    err << "infeasible: no configuration of " << base::printable(s.name) << " is feasible; pruned:";
    for (const auto& [rule, count] : r.infeasible)
      err << " [" << rule << "] " << count;
    err << "\n";
    return kExitInfeasible;
  }
  return kExitOk;
}

int plan_command(const PlanArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const distributed::Group& group = *o.group;
  if (a.shard && (a.shard_count < 1 || a.shard_index < 0 || a.shard_index >= a.shard_count))
    throw base::ConfigError("--shard-index", "",
                            std::to_string(a.shard_index) + " with --shard-count " + std::to_string(a.shard_count) +
                                "; accepted: 0 <= I < N, N >= 1 (shards with no short-list entry are fine)");
  const auto s = load_scenario_or_default(a.scenario, o);
  if (const auto w = missing_price_warning(s)) {
    if (a.objective == "cost") throw base::ConfigError("--objective", "", "cost ranks by price, but " + *w);
    if (!o.quiet && group.is_root()) err << "warning: " << *w << "\n";
  }
  planner::PlanOptions opt = plan_options(a);
  opt.threads = thread_count(a.threads, group.local_size());
  auto fixed = planner::FixedFields::from_keys(s.parallel_fixed);
  fixed.unfix(a.free);
  const bool quiet = o.quiet || !group.is_root();
  if (!quiet && fixed.any() && a.free.empty())
    err << "plan: keeping the parallel fields " << base::printable(s.name)
        << " fixes; --free all (or --free tp,pp,...) searches them\n";
  ProgressBar bar(err, o.progress, quiet, "configs");
  opt.progress = [&bar](int done, int total) { bar.update(done, total); };
  // In an MPI job every process screens alike and the farm shares the simulations out (dynamic load balancing);
  // every process gets every result, so every process assembles the same plan and the root prints it.
  if (group.size() > 1) opt.farm = group_farm(group, [&bar](int done, int total) { bar.update(done, total); });
  if (a.shard) {
    const auto shard = planner::plan_shard(scenario::plan_problem(s, opt), opt, a.shard_index, a.shard_count);
    if (!group.is_root()) return kExitOk;
    write_shard("plan", a.scenario, o, a.shard_index, a.shard_count, plan_params(a), plan_params(a),
                {planner::to_json(shard)}, a.out, out, err);
    return kExitOk;
  }
  const auto r = app::evaluate_plan(s, opt);
  if (!group.is_root()) return kExitOk;
  return emit_plan(r, s, a, o, out, err);
}

}  // namespace

int merge_plan_shards(const std::vector<ShardFile>& shards, const MergeArgs& m, const Options& o, std::ostream& out,
                      std::ostream& err) {
  // The options the shards ran with, from the first header (read_shard_set checked that all have the same inputs).
  const ShardFile& first = shards.front();
  PlanArgs a;
  {
    base::Diagnostics diag(first.path + ":1");
    auto w = first.work(diag);
    w.required_enum("objective", a.objective, {"time", "cost", "risk"});
    w.required("top", a.top, base::Range::between(1, 1000));
    w.optional("gpus", a.gpus, base::Range::between(1, 1'000'000));
    w.optional("free", a.free);
    w.required("trials", a.trials, base::Range::between(1, 100'000));
    w.finish();
    diag.throw_if_any();
  }
  a.threads = m.threads;
  a.json = m.json;
  if (!m.out.empty())
    throw base::ConfigError("--out", "", "plan writes no report files; merge plan shards without --out");
  const auto s = load_shards_scenario(shards, m, o, "plan", plan_params(a));
  const planner::PlanOptions opt = plan_options(a);
  const auto problem = scenario::plan_problem(s, opt);
  std::vector<planner::PlanShard> parts;
  for (const ShardFile& f : shards) {
    if (f.payload.size() != 1)
      throw base::ConfigError(f.path, "", std::to_string(f.payload.size()) + " payload lines; a plan shard has 1");
    auto doc = f.payload_document(0);
    base::Diagnostics diag(doc.origin());
    auto r = doc.root(diag);
    auto part = planner::plan_shard_from_json(r, problem);
    diag.throw_if_any();
    if (part.index != f.header.shard_index || part.count != f.header.shard_count)
      throw base::ConfigError(doc.origin(), "/index",
                              "shard " + std::to_string(part.index) + " of " + std::to_string(part.count) +
                                  " where the header says " + std::to_string(f.header.shard_index) + " of " +
                                  std::to_string(f.header.shard_count));
    parts.push_back(std::move(part));
  }
  const auto r = planner::merge_plan_shards(problem, opt, std::move(parts));
  return emit_plan(r, s, a, o, out, err);
}

void add_plan_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand("plan", "Search the parallel strategies of a scenario; rank by time, cost or risk");
  auto a = std::make_shared<PlanArgs>();
  cmd->add_option("scenario", a->scenario, "Scenario file (default: the built-in default scenario)");
  cmd->add_option("--objective", a->objective,
                  "time (step time; with the global batch free, step time x the steps its batch needs to the same "
                  "target), cost (expected cost of the run, failures included) or risk (p90 time to train)")
      ->check(CLI::IsMember({"time", "cost", "risk"}))
      ->capture_default_str();
  cmd->add_option("--top", a->top, "Candidates to show")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--gpus", a->gpus, "Cluster sizes to search, e.g. 512,1024,2048 (default: the scenario's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--free", a->free,
                  "Parallel fields to search although the scenario gives them: all, or e.g. tp,pp,micro_batch "
                  "(searched: micro-batches up to 16, cp up to 32, ZeRO-3 without pipelines; the scenario's own "
                  "micro-batch, cp and ZeRO stage always)")
      ->delimiter(',');
  cmd->add_option("--threads", a->threads, "Worker threads (default: all cores); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--trials", a->trials, "Monte Carlo trials per finalist at the run level")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "JSON result (schema trainsim.plan/1), same as --format json");
  cmd->add_option("--out", a->out, "With --shard-index: the shard file to write (default: stdout)")->type_name("FILE");
  auto* index = cmd->add_option("--shard-index", a->shard_index,
                                "Simulate only shard I of --shard-count N of the replica short list and write it as "
                                "JSON lines for trainsim merge (docs/scale-out.md)")
                    ->type_name("I");
  auto* count =
      cmd->add_option("--shard-count", a->shard_count, "Number of shards the short list is split into")->type_name("N");
  index->needs(count);
  count->needs(index);
  commands.push_back({cmd,
                      [a, index, &o](std::ostream& out, std::ostream& err) {
                        a->shard = index->count() > 0;
                        if (!a->shard && !a->out.empty())
                          throw base::ConfigError("--out", "", "plan writes a file only with --shard-index");
                        return plan_command(*a, o, out, err);
                      },
                      /*uses_group=*/true});
}

}  // namespace sim::cli
