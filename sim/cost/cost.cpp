// sim/cost/cost.cpp: rented-cluster cost arithmetic and deadline/budget risk.
#include "sim/cost/cost.hpp"

namespace sim::cost {

CostSummary rented_cost(const results::RunSummary& run, const CostInputs& in) {
  CostSummary c;
  c.burn_usd_per_hour = in.gpus * in.gpu_hour.usd;
  const double per_day = c.burn_usd_per_hour * 24.0;
  c.mean_usd = run.time_to_train_days.mean * per_day;
  c.p50_usd = run.time_to_train_days.p50 * per_day;
  c.p90_usd = run.time_to_train_days.p90 * per_day;
  c.failures_usd_mean = run.lost_gpu_hours_mean * in.gpu_hour.usd;
  c.per_failure_mean_usd = run.interruptions_mean > 0 ? c.failures_usd_mean / run.interruptions_mean : 0.0;
  for (const auto& cause : run.causes) {
    const double per =
        cause.interruptions_mean > 0 ? cause.lost_gpu_hours_mean * in.gpu_hour.usd / cause.interruptions_mean : 0.0;
    c.per_failure_usd.emplace_back(cause.name, per);
  }
  if (run.time_to_train_hist.count() > 0) {
    if (in.deadline) c.p_deadline_miss = run.time_to_train_hist.fraction_above(in.deadline->days());
    if (in.budget && per_day > 0) c.p_budget_overrun = run.time_to_train_hist.fraction_above(in.budget->usd / per_day);
  }
  return c;
}

void add_cost_json(results::Json& j, const CostSummary& c) {
  results::Json& cost = j["cost_usd"];
  cost = results::Json::object();
  cost["mean"] = c.mean_usd;
  cost["p50"] = c.p50_usd;
  cost["p90"] = c.p90_usd;
  cost["burn_per_hour"] = c.burn_usd_per_hour;
  cost["failures_mean"] = c.failures_usd_mean;
  results::Json& per = j["cost_per_failure_usd"];
  per = results::Json::object();
  per["mean"] = c.per_failure_mean_usd;
  results::Json by = results::Json::object();
  for (const auto& [name, usd] : c.per_failure_usd)
    by[name] = usd;
  per["by_cause"] = std::move(by);
  j["p_deadline_miss"] = c.p_deadline_miss ? results::Json(*c.p_deadline_miss) : results::Json();
  j["p_budget_overrun"] = c.p_budget_overrun ? results::Json(*c.p_budget_overrun) : results::Json();
}

}  // namespace sim::cost
