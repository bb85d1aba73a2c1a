// sim/scenario/plan_setup.cpp: the planner's problem from a scenario, with the run level as its callback.
#include "sim/scenario/plan_setup.hpp"

#include "sim/base/errors.hpp"
#include "sim/base/quantity.hpp"
#include "sim/cost/cost.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/sensitivity.hpp"
#include "sim/scenario/step_setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

namespace sim::scenario {

planner::PlanProblem plan_problem(const Scenario& s, const planner::PlanOptions& opt, bool with_run_level) {
  // The search enumerates cluster sizes and layouts on healthy fabrics: a failed element is a property of one
  // cluster, not of the sizes a plan compares.
  if (!s.cluster.network.failed.empty())
    throw base::ConfigError(s.source, "/cluster/network/failed",
                            "plan and scale search healthy clusters; remove the failed fabric elements, or compare "
                            "layouts on the degraded cluster with step or run");
  planner::PlanProblem p;
  p.model = &s.model;
  p.hardware = &s.hardware;
  p.topology = topology_config(s);
  p.gpus = opt.gpus.empty() ? std::vector<int>{s.cluster.gpus} : opt.gpus;
  p.seq_len = s.training.seq_len;
  p.dtype = s.training.dtype;
  p.fp8_scaling = s.training.fp8_scaling;
  p.attention_kernel = s.training.attention_kernel;
  p.eager_kernels = s.training.eager_kernels;
  p.repeated_kv = s.training.repeated_kv;
  p.sp_batch_first = s.training.sp_batch_first;
  p.parallel = s.parallel;
  p.fixed = planner::FixedFields::from_keys(s.parallel_fixed);
  if (const auto unknown = p.fixed.unfix(opt.free); !unknown.empty()) {
    std::string accepted = "all";
    for (const auto& n : planner::FixedFields::names())
      accepted += ", " + n;
    throw base::ConfigError("--free", "",
                            "\"" + unknown.front() + "\" is not a searchable parallel field; accepted: " + accepted);
  }
  p.flash_attention = s.memory.fused_attention;
  p.dropout = s.memory.hidden_dropout > 0;
  p.attention_dropout = s.memory.attention_dropout > 0;
  p.memory = s.memory;
  // Token efficiency of other global batches: the scenario's critical batch (given or estimated). In a fixed window
  // there is no target loss to reach: candidates are compared at equal tokens.
  if (s.training.tokens) p.critical_batch_tokens = convergence(s).batch.critical_batch;

  // Cluster sizes: whole nodes (as the scenario loader requires of cluster.gpus) that the topology can build.
  std::vector<base::Diagnostic> problems;
  for (int g : p.gpus) {
    const std::string what = "cluster size " + std::to_string(g) + ": ";
    if (g < 1 || (g > s.cluster.gpus_per_node && g % s.cluster.gpus_per_node != 0)) {
      problems.push_back(
          {"--gpus", "", what + "not a whole number of nodes of " + std::to_string(s.cluster.gpus_per_node) + " GPUs"});
      continue;
    }
    auto tc = p.topology;
    tc.gpus = g;
    for (const auto& d : topology::validate(tc))
      problems.push_back({"--gpus", "", what + "topology field " + d.path + ": " + d.message});
  }
  if (!problems.empty()) throw base::ConfigError(std::move(problems));

  // The run level of a candidate: the scenario with the candidate's cluster size and parallel configuration (its
  // checkpoint shards, its degraded states' steps and batch rule are the candidate's, as `trainsim run` of that
  // layout has them), its failures, checkpoints and price (the common random numbers of one seed make candidates
  // comparable with few trials).
  if (!with_run_level) return p;
  auto by_size = std::make_shared<std::map<int, Scenario>>();
  for (int g : p.gpus) {
    Scenario copy = s;
    copy.cluster.gpus = g;
    by_size->emplace(g, std::move(copy));
  }
  // The run level simulates up to this many finalists (planner::finalists: the best max(run_candidates, top_k) of
  // each size), each with `trials` trials: each gets its share of the one-command bound `trainsim run` holds to
  // (reliability::kMaxRunInterruptions), so a plan of tiny MTBFs or years of training is refused, not run for hours.
  const double finalists =
      static_cast<double>(std::max({1, opt.run_candidates, opt.top_k})) * static_cast<double>(p.gpus.size());
  p.run = [by_size, finalists](const parallel::ParallelConfig& parallel, const execution::StepPlan& plan,
                               const results::StepResult& step, int trials, const std::atomic<bool>& stop) {
    const Scenario& original = by_size->at(plan.gpus);
    Scenario sc = original;
    sc.parallel = parallel;
    auto in = run_inputs(sc, plan, step.step_time, /*simulate_straggler=*/false);
    // Another global batch trains to the scenario's target loss: McCandlish's tokens E(B) for it (issue 11).
    const double b0 = static_cast<double>(original.parallel.global_batch) * original.training.seq_len;
    if (sc.training.tokens && plan.tokens != b0) {
      const double tokens =
          workload::equivalent_tokens(sc.training.tokens->n, b0, plan.tokens, convergence(sc).batch.critical_batch);
      in.total_steps = std::ceil(tokens / plan.tokens);
    }
    if (auto bad = reliability::check_inputs(in); !bad.empty()) {
      for (auto& d : bad)
        d.file = sc.source;
      throw base::ConfigError(std::move(bad));
    }
    if (in.total_steps && *in.total_steps * step.step_time.seconds() > reliability::kMaxHorizonS)
      throw base::ConfigError(sc.source, "/training/tokens",
                              "a candidate (" + std::to_string(plan.gpus) + " GPUs, " +
                                  base::format_time(step.step_time) +
                                  " per step) takes more than the simulator's 200 years without a failure; train "
                                  "fewer tokens or simulate a window (training.duration)");
    if (const double per_trial = reliability::interruptions_per_trial(in, step.step_time);
        per_trial * trials * finalists > reliability::kMaxRunInterruptions) {
      char per[32], bound[32];
      std::snprintf(per, sizeof per, "%.3g", per_trial);
      std::snprintf(bound, sizeof bound, "%.0e", reliability::kMaxRunInterruptions);
      const auto most = static_cast<long long>(
          std::max(1.0, std::floor(reliability::kMaxRunInterruptions / (per_trial * finalists))));
      throw base::ConfigError("--trials", "",
                              std::to_string(trials) + " run-level trials for each of up to " +
                                  std::to_string(std::lround(finalists)) + " finalists, of about " + per +
                                  " interruptions each (a candidate on " + std::to_string(plan.gpus) +
                                  " GPUs: the job's failure rate over the time it trains), go beyond the " + bound +
                                  " one command simulates; give --trials " + std::to_string(most) +
                                  " or fewer, or check the failure rates");
    }
    // Polled about ten times a second while the trials run: an abandoned plan stops this candidate's trials too.
    const auto run = reliability::run_monte_carlo(in, trials, sc.reliability.seed, /*threads=*/1, [&stop](int, int) {
      if (stop.load(std::memory_order_relaxed)) throw planner::Abandoned{};
    });
    // The cost model of `trainsim run` (pricing, energy, storage) for the candidate's cluster size.
    const auto c = cost::run_cost(run, cost_inputs(sc));
    planner::RunEstimate e;
    e.trials = run.trials;
    e.time_to_train_mean_days = run.time_to_train_days.mean;
    e.time_to_train_p90_days = run.time_to_train_days.p90;
    // A fixed duration (training.duration) lasts its window, which the table shows (it read "never", a user trial).
    if (run.work == "window") e.time_to_train_mean_days = e.time_to_train_p90_days = run.window_days;
    e.cost_mean_usd = c.mean_usd;
    e.cost_p90_usd = c.p90_usd;
    e.goodput_mean = run.goodput.mean;
    if (in.total_steps) e.tokens = *in.total_steps * plan.tokens;
    e.p_deadline_miss = c.p_deadline_miss;
    e.p_budget_overrun = c.p_budget_overrun;
    return e;
  };
  return p;
}

planner::PlanResult plan_scenario(const Scenario& s, const planner::PlanOptions& opt) {
  return planner::plan(plan_problem(s, opt), opt);
}

}  // namespace sim::scenario
