// sim/scenario/sensitivity.cpp: a scenario's cost inputs and the one-at-a-time reruns behind the tornado chart.
#include "sim/scenario/sensitivity.hpp"

#include "sim/workload/params.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace sim::scenario {

namespace {

base::Time scaled(base::Time t, double f) {
  return base::Time{static_cast<std::int64_t>(std::llround(static_cast<double>(t.ns) * f))};
}

}  // namespace

cost::CostInputs cost_inputs(const Scenario& s) {
  cost::CostInputs ci;
  ci.gpus = s.cluster.gpus;
  const int per_node = std::max(1, s.cluster.gpus_per_node);
  ci.nodes = (s.cluster.gpus + per_node - 1) / per_node;
  ci.gpu_hour = s.cost.gpu_hour.value_or(base::Money{});
  ci.deadline = s.cost.deadline;
  ci.budget = s.cost.budget;
  ci.pricing = s.cost.pricing;
  ci.owned = s.cost.owned;
  ci.energy = s.cost.energy;
  ci.storage = s.cost.storage;
  ci.price_source = s.cost.price_source;
  // 16-bit weights plus fp32 master weights and Adam moments: 14 bytes per parameter (Rajbhandari et al. 2020,
  // Sec. 3.1), the checkpoint size run_setup.cpp uses for write and load times.
  const double params = workload::count_params(s.model).total(s.model.layers);
  ci.storage.checkpoint = base::Bytes{static_cast<std::int64_t>(std::llround(params * 14.0))};
  return ci;
}

int sensitivity_trials(int trials) {
  return std::clamp(trials, 1, 200);
}

std::vector<cost::SensitivityRow> run_sensitivity(const reliability::RunInputs& base, const cost::CostInputs& ci,
                                                  const SensitivityOptions& o) {
  constexpr int kRuns = 9;  // baseline + 4 inputs x 2 directions (price needs no rerun)
  int run_index = 0;
  struct Point {
    double cost_usd = 0, days = 0;
  };
  auto simulate = [&](const reliability::RunInputs& in, const cost::CostInputs& c) {
    const int offset = run_index++ * o.trials;
    reliability::ProgressCallback progress;
    if (o.progress) progress = [&o, offset](int done, int) { o.progress(offset + done, kRuns * o.trials); };
    const auto run = reliability::run_monte_carlo(in, o.trials, o.seed, o.threads, progress);
    const auto cost = cost::run_cost(run, c);
    return std::pair{run, Point{cost.p50_usd, run.work == "window" ? run.window_days : run.time_to_train_days.p50}};
  };
  // Not a structured binding: clang 14 (the fuzz preset) cannot capture one in the lambdas below.
  const auto base_result = simulate(base, ci);
  const auto& base_run = base_result.first;
  const auto& base_point = base_result.second;

  std::vector<cost::SensitivityRow> rows;
  auto row = [&](std::string name, const std::function<void(reliability::RunInputs&, double)>& move) {
    cost::SensitivityRow r;
    r.parameter = std::move(name);
    r.base_cost_usd = base_point.cost_usd;
    r.base_days = base_point.days;
    for (const double f : {1.0 - o.delta, 1.0 + o.delta}) {
      reliability::RunInputs in = base;
      move(in, f);
      const Point p = simulate(in, ci).second;
      (f < 1.0 ? r.low_cost_usd : r.high_cost_usd) = p.cost_usd;
      (f < 1.0 ? r.low_days : r.high_days) = p.days;
    }
    rows.push_back(std::move(r));
  };
  row("failure rates", [](reliability::RunInputs& in, double f) {
    for (auto& c : in.components)
      c.mtbf.s /= f;  // rate x f
  });
  row("checkpoint write time", [](reliability::RunInputs& in, double f) {
    in.checkpoint.write = scaled(in.checkpoint.write, f);
    in.checkpoint.snapshot = scaled(in.checkpoint.snapshot, f);
  });
  row("restart time", [](reliability::RunInputs& in, double f) {
    in.restart = scaled(in.restart, f);
    in.checkpoint.load = scaled(in.checkpoint.load, f);
  });
  row("achieved MFU", [](reliability::RunInputs& in, double f) {
    const reliability::StepTimeFn fn = in.step_time;
    in.step_time = [fn, f](const reliability::ClusterState& st) {
      const base::Time t = fn(st);
      return t == base::Time::max() ? t : scaled(t, 1.0 / f);
    };
  });
  {
    cost::SensitivityRow r;
    r.parameter = "price";
    r.base_cost_usd = base_point.cost_usd;
    r.base_days = r.low_days = r.high_days = base_point.days;
    r.low_cost_usd = cost::run_cost(base_run, cost::with_price_scaled(ci, 1.0 - o.delta)).p50_usd;
    r.high_cost_usd = cost::run_cost(base_run, cost::with_price_scaled(ci, 1.0 + o.delta)).p50_usd;
    rows.push_back(std::move(r));
  }
  cost::sort_by_swing(rows);
  return rows;
}

}  // namespace sim::scenario
