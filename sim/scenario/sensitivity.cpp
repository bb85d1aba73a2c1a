// sim/scenario/sensitivity.cpp: a scenario's cost inputs and the one-at-a-time reruns behind the tornado chart.
#include "sim/scenario/sensitivity.hpp"

#include "sim/base/assert.hpp"
#include "sim/scenario/run_setup.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <string>
#include <system_error>

namespace sim::scenario {

namespace {

base::Time scaled(base::Time t, double f) {
  return base::Time{static_cast<std::int64_t>(std::llround(static_cast<double>(t.ns) * f))};
}

/// An input of the tornado: a rerun's inputs are the base with `apply` at factor 1 - delta (low) or 1 + delta (high).
struct Move {
  const char* parameter;
  std::function<void(reliability::RunInputs&, double)> apply;
};

const std::vector<Move>& moves() {
  static const std::vector<Move> kMoves = {
      {"failure rates",
       [](reliability::RunInputs& in, double f) {
         for (auto& c : in.components)
           c.mtbf.s /= f;  // rate x f
         if (in.trace) {   // a replayed log at f times its rate: the same failures, f times closer together
           in.trace->span_s /= f;
           for (auto& e : in.trace->events)
             e.at_s /= f;
         }
       }},
      {"checkpoint write time",
       [](reliability::RunInputs& in, double f) {
         in.checkpoint.write = scaled(in.checkpoint.write, f);
         in.checkpoint.snapshot = scaled(in.checkpoint.snapshot, f);
       }},
      {"restart time",
       [](reliability::RunInputs& in, double f) {
         in.restart = scaled(in.restart, f);
         in.checkpoint.load = scaled(in.checkpoint.load, f);
       }},
      {"achieved MFU",
       [](reliability::RunInputs& in, double f) {
         const reliability::StepTimeFn fn = in.step_time;
         in.step_time = [fn, f](const reliability::ClusterState& st) {
           const base::Time t = fn(st);
           return t == base::Time::max() ? t : scaled(t, 1.0 / f);
         };
       }},
  };
  return kMoves;
}

/// Doubles as text that reads back to the same bits (shortest round trip; "inf" and "nan" included), for the farm.
std::string encode(const std::vector<double>& values) {
  std::string out;
  char buf[32];
  for (const double v : values) {
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    if (!out.empty()) out += ' ';
    out.append(buf, r.ptr);
  }
  return out;
}

std::vector<double> decode(const std::string& text) {
  std::vector<double> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    double v = 0;
    const auto r = std::from_chars(p, end, v);
    SIM_ASSERT(r.ec == std::errc{}, "a sensitivity task sent back a number that does not read");
    out.push_back(v);
    p = r.ptr < end && *r.ptr == ' ' ? r.ptr + 1 : r.ptr;
  }
  return out;
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
  // The checkpoint's bytes as run_setup.cpp writes and loads them (weights and optimizer states in the scenario's
  // dtypes: 14 bytes per parameter by default, Rajbhandari et al. 2020, Sec. 3.1); the total does not depend on the
  // layout, only where the bytes sit does. It was 14 bytes whatever the dtypes (a user trial: master_weights "none"
  // wrote 6 bytes per parameter and stored 14).
  const reliability::CheckpointShape sh = checkpoint_shape(s, parallel::Layout{});
  ci.storage.checkpoint =
      base::Bytes{static_cast<std::int64_t>(std::llround(sh.params * (sh.weight_bytes + sh.optimizer_bytes)))};
  return ci;
}

int sensitivity_trials(int trials) {
  return std::clamp(trials, 1, 200);
}

std::vector<cost::SensitivityRow> run_sensitivity(const reliability::RunInputs& base, const cost::CostInputs& ci,
                                                  const SensitivityOptions& o) {
  // Task 0 is the baseline (its p50 cost and days, and the p50 cost at the price moved down and up: price needs no
  // rerun, time is unchanged); task 1 + 2r + d is input r moved down (d = 0) or up (d = 1). Every task is a whole
  // Monte Carlo of o.trials trials with o.seed, so its result is the same whichever process or thread count ran it.
  const int runs = 1 + 2 * static_cast<int>(moves().size());
  const auto factor = [&o](int d) { return d == 0 ? 1.0 - o.delta : 1.0 + o.delta; };
  const auto task = [&](int i, const reliability::ProgressCallback& progress) {
    reliability::RunInputs in = base;
    if (i > 0) moves()[static_cast<std::size_t>((i - 1) / 2)].apply(in, factor((i - 1) % 2));
    const auto run = reliability::run_monte_carlo(in, o.trials, o.seed, o.threads, progress);
    std::vector<double> point = {cost::run_cost(run, ci).p50_usd,
                                 run.work == "window" ? run.window_days : run.time_to_train_days.p50};
    if (i == 0)
      for (const int d : {0, 1})
        point.push_back(cost::run_cost(run, cost::with_price_scaled(ci, factor(d))).p50_usd);
    return encode(point);
  };
  std::vector<std::string> texts;
  if (o.farm) {
    texts = o.farm(runs, [&](int i) { return task(i, {}); });
    SIM_ASSERT(static_cast<int>(texts.size()) == runs, "the farm returns one result per task");
  } else {
    for (int i = 0; i < runs; ++i) {
      reliability::ProgressCallback progress;
      if (o.progress) progress = [&o, i, runs](int done, int) { o.progress(i * o.trials + done, runs * o.trials); };
      texts.push_back(task(i, progress));
    }
  }
  std::vector<std::vector<double>> points;
  for (int i = 0; i < runs; ++i) {
    points.push_back(decode(texts[static_cast<std::size_t>(i)]));
    SIM_ASSERT(points.back().size() == (i == 0 ? 4u : 2u), "a sensitivity task's result has its fields");
  }

  const auto& b = points.front();  // p50 cost, p50 days, p50 cost at the lower and the higher price
  const auto row = [&b](std::string parameter, double low_cost, double high_cost, double low_days, double high_days) {
    cost::SensitivityRow r;
    r.parameter = std::move(parameter);
    r.base_cost_usd = b[0];
    r.base_days = b[1];
    r.low_cost_usd = low_cost;
    r.high_cost_usd = high_cost;
    r.low_days = low_days;
    r.high_days = high_days;
    return r;
  };
  std::vector<cost::SensitivityRow> rows;
  for (std::size_t r = 0; r < moves().size(); ++r) {
    const auto& low = points[1 + 2 * r];  // cost, days
    const auto& high = points[2 + 2 * r];
    rows.push_back(row(moves()[r].parameter, low[0], high[0], low[1], high[1]));
  }
  rows.push_back(row("price", b[2], b[3], b[1], b[1]));
  cost::sort_by_swing(rows);
  return rows;
}

}  // namespace sim::scenario
