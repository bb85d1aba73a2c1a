// sim/cost/cost.hpp: money and risk of a simulated run (rented GPU-hours; energy and storage come with issue 5).
#pragma once
#include "sim/base/units.hpp"
#include "sim/results/json.hpp"
#include "sim/results/run_result.hpp"

#include <optional>

namespace sim::cost {

struct CostInputs {
  int gpus = 0;
  base::Money gpu_hour;                // rented price per GPU-hour
  std::optional<base::Time> deadline;  // wall-clock time to train
  std::optional<base::Money> budget;
};

struct CostSummary {
  double mean_usd = 0, p50_usd = 0, p90_usd = 0;
  double burn_usd_per_hour = 0;                                 // the whole cluster, idle or not
  double failures_usd_mean = 0;                                 // lost GPU-hours of every cause, at the price
  double per_failure_mean_usd = 0;                              // over every interruption
  std::vector<std::pair<std::string, double>> per_failure_usd;  // mean cost of one interruption, by cause
  std::optional<double> p_deadline_miss;
  std::optional<double> p_budget_overrun;
};

/// Cost of a run on rented GPUs: the cluster is paid for its whole wall time, detection, restarts and repair waits
///   included: cost = gpus x price x wall time. A cause's cost per failure = its lost GPU-hours x price / its
///   interruptions. Deadline and budget risks read the time-to-train distribution (a budget is a wall-time limit at
///   the burn rate). Energy, storage and owned-cluster amortisation are not modelled yet (issue 5).
CostSummary rented_cost(const results::RunSummary& run, const CostInputs& in);

/// Fills the contract's cost fields of a `trainsim.run/1` object.
void add_cost_json(results::Json& run_json, const CostSummary& c);

}  // namespace sim::cost
