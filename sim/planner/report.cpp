// sim/planner/report.cpp: a plan's candidates as Megatron-LM flags (sim/parallel's one writer), its Pareto front and
// its JSON (trainsim.plan/1).
#include "sim/planner/planner.hpp"

#include "sim/parallel/megatron_flags.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace sim::planner {

std::string megatron_flags(const PlanProblem& problem, const parallel::ParallelConfig& c,
                           const parallel::Layout& layout) {
  return parallel::megatron_parallel_line(
      parallel::megatron_args(c, layout, *problem.model, problem.seq_len, problem.dtype));
}

std::vector<int> pareto_front(const std::vector<std::pair<double, double>>& points) {
  std::vector<int> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return points[static_cast<std::size_t>(a)] < points[static_cast<std::size_t>(b)];
  });
  // Sweep by x ascending: a point is on the front when its y is below every y seen so far (equal points: the first).
  std::vector<int> front;
  bool any = false;
  double best_y = 0;
  for (int i : order) {
    const double y = points[static_cast<std::size_t>(i)].second;
    if (!any || y < best_y) {
      front.push_back(i);
      best_y = y;
      any = true;
    }
  }
  return front;
}

std::vector<int> pareto_front_within(const std::vector<std::pair<double, double>>& points, double x_margin) {
  std::vector<int> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  // By y, then x, then index: every point before one has no larger y, so it is dominated when the smallest x seen so
  // far is below its own by the margin, or when the point before it is the same point (the first of equals stays).
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& pa = points[static_cast<std::size_t>(a)];
    const auto& pb = points[static_cast<std::size_t>(b)];
    return pa.second != pb.second ? pa.second < pb.second : pa.first < pb.first;
  });
  std::vector<int> kept;
  double best_x = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& p = points[static_cast<std::size_t>(order[k])];
    const bool repeat = k > 0 && points[static_cast<std::size_t>(order[k - 1])] == p;
    if (!repeat && !(best_x <= p.first * (1.0 - x_margin))) kept.push_back(order[k]);
    best_x = std::min(best_x, p.first);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

namespace {

results::Json candidate_json(const Candidate& c, int rank) {
  using results::Json;
  Json j = Json::object();
  j["rank"] = rank;
  j["gpus"] = c.gpus;
  Json& p = j["parallel"];
  p["tp"] = c.layout.tp;
  p["pp"] = c.layout.pp;
  p["dp"] = c.layout.dp;
  p["cp"] = c.layout.cp;
  p["ep"] = c.layout.ep;
  p["vpp"] = c.layout.vpp;
  p["sequence_parallel"] = c.parallel.sequence_parallel && c.layout.tp > 1;
  p["zero_stage"] = c.parallel.zero_stage;
  p["distributed_optimizer"] = c.parallel.distributed_optimizer;
  p["recompute"] = parallel::to_string(c.parallel.recompute);
  p["micro_batch"] = c.layout.micro_batch;
  p["global_batch"] = c.parallel.global_batch;
  p["schedule"] = parallel::to_string(c.parallel.schedule);
  // The uneven split the search chose where the layers do not divide over the stages (or the scenario's own).
  p["account_for_embedding_in_pipeline_split"] = c.parallel.account_for_embedding;
  p["account_for_loss_in_pipeline_split"] = c.parallel.account_for_loss;
  if (!c.parallel.layers_per_stage.empty()) {
    Json split = Json::array();
    for (int l : c.parallel.layers_per_stage)
      split.push_back(l);
    p["layers_per_stage"] = std::move(split);
  }
  j["megatron_flags"] = c.megatron_flags;
  Json step = results::to_json(c.step);
  step["analytic_step_time_s"] = c.analytic_step_time.seconds();
  // Optimiser steps to the scenario's target loss relative to its own batch, and the step time at equal progress.
  step["relative_steps"] = c.relative_steps;
  step["time_to_target_per_scenario_step_s"] = c.step.step_time.seconds() * c.relative_steps;
  j["step"] = std::move(step);
  if (c.run) {
    Json r = Json::object();
    r["trials"] = c.run->trials;
    r["time_to_train_days"]["mean"] = c.run->time_to_train_mean_days;
    r["time_to_train_days"]["p90"] = c.run->time_to_train_p90_days;
    r["cost_usd"]["mean"] = c.run->cost_mean_usd;
    r["cost_usd"]["p90"] = c.run->cost_p90_usd;
    r["goodput"]["mean"] = c.run->goodput_mean;
    if (c.run->tokens > 0) r["tokens"] = c.run->tokens;
    // The scenario's deadline and budget (as `trainsim run` gives them), and whether this run meets both at p90.
    if (c.run->p_deadline_miss) r["p_deadline_miss"] = *c.run->p_deadline_miss;
    if (c.run->p_budget_overrun) r["p_budget_overrun"] = *c.run->p_budget_overrun;
    if (c.run->p_deadline_miss || c.run->p_budget_overrun) r["meets_constraints"] = meets_constraints(*c.run);
    j["run"] = std::move(r);
  } else {
    j["run"] = Json();
  }
  return j;
}

}  // namespace

results::Json to_json(const PlanResult& r, int top_k) {
  using results::Json;
  Json j = Json::object();
  j["schema"] = "trainsim.plan/1";
  j["objective"] = to_string(r.objective);
  Json gpus = Json::array();
  for (int g : r.gpus)
    gpus.push_back(g);
  j["gpus"] = std::move(gpus);
  j["evaluated"] = r.evaluated;
  j["feasible"] = r.feasible;
  j["dominated"] = r.dominated;
  j["replica_evaluated"] = r.replica_evaluated;
  j["run_evaluated"] = r.run_evaluated;
  Json inf = Json::object();
  for (const auto& [rule, count] : r.infeasible)
    inf[rule] = count;
  j["infeasible"] = std::move(inf);
  Json cands = Json::array();
  for (std::size_t i = 0; i < r.candidates.size() && static_cast<int>(i) < top_k; ++i)
    cands.push_back(candidate_json(r.candidates[i], static_cast<int>(i) + 1));
  j["candidates"] = std::move(cands);
  Json front = Json::array();
  for (int i : r.pareto)
    front.push_back(candidate_json(r.candidates[static_cast<std::size_t>(i)], i + 1));
  j["pareto"] = std::move(front);
  return j;
}

}  // namespace sim::planner
