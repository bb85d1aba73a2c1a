// sim/cost/cost.cpp: compute price (rented or owned), energy and storage of a run, its waterfall, and its risks.
#include "sim/cost/cost.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

namespace sim::cost {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// rate x amount, where a zero rate stays zero even over an unbounded amount (a free cluster that never finishes).
double times(double rate, double amount) {
  return rate == 0.0 ? 0.0 : rate * amount;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

struct PerUnit {
  std::string_view unit;
  double factor;  // USD per written unit x factor = USD per base unit
};

/// "<amount> USD/<unit>": the amount as parse_money reads it, then a unit from `units`.
base::Parsed<double> parse_unit_price(std::string_view text, std::span<const PerUnit> units, std::string_view example) {
  base::Parsed<double> out;
  std::string accepted;
  for (const auto& u : units)
    accepted += (accepted.empty() ? "USD/" : ", USD/") + std::string(u.unit);
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    out.error = quoted(text) + " has no unit; write e.g. " + quoted(example) + " (accepted: " + accepted + ")";
    return out;
  }
  const auto money = base::parse_money(text.substr(0, slash));
  if (!money) {
    out.error = money.error;
    return out;
  }
  const std::string_view unit = trim(text.substr(slash + 1));
  for (const auto& u : units) {
    if (u.unit != unit) continue;
    out.value = money.value->usd * u.factor;
    return out;
  }
  out.error = quoted(text) + ": unknown unit " + quoted(unit) + " (accepted: " + accepted + ")";
  return out;
}

}  // namespace

const char* to_string(Pricing p) {
  return p == Pricing::Owned ? "owned" : "rented";
}

double burn_usd_per_hour(const CostInputs& in) {
  if (in.pricing == Pricing::Rented) return in.gpus * in.gpu_hour.usd;
  // Straight-line depreciation of the purchase price over the hours the hardware is used.
  const double used_hours = in.owned.amortisation_years * kHoursPerYear * in.owned.utilisation;
  return used_hours > 0 ? in.nodes * in.owned.node_price.usd / used_hours : 0.0;
}

CostInputs with_price_scaled(CostInputs in, double factor) {
  in.gpu_hour.usd *= factor;
  in.owned.node_price.usd *= factor;
  return in;
}

double tail_mean(const results::Histogram& h, double q) {
  const std::int64_t n = h.count();
  if (n <= 0) return kNan;
  // A trial that never finished (the overflow bin) is among the worst: the tail is unbounded, whichever ranks are
  // sampled below (a user trial: 1 of 1,000,000 trials never finished, mean cost unbounded, CVaR95 0.036 USD).
  if (h.overflow() > 0) return kInf;
  // The worst k = ceil((1-q) n) values have nearest ranks n-k+1 .. n; quantile((r - 0.5) / n) is the value of rank r.
  const auto k =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((1.0 - q) * static_cast<double>(n) - 1e-9)));
  // The trials' own times where the histogram keeps them: the mean of the worst k. They are summed in ascending order:
  // the kept values arrive in the order the threads finished their trials, and nth_element leaves the tail in an order
  // that follows it, so an unsorted sum differed in its last bit from run to run (a user trial, 2 threads).
  if (const auto* exact = h.exact(); exact && static_cast<std::int64_t>(exact->size()) == n) {
    std::vector<double> v = *exact;
    std::nth_element(v.begin(), v.begin() + (n - k), v.end());
    std::sort(v.begin() + (n - k), v.end());
    double sum = 0;
    for (auto it = v.begin() + (n - k); it != v.end(); ++it)
      sum += *it;
    return sum / static_cast<double>(k);
  }
  const std::int64_t first = n - k + 1;
  const std::int64_t samples = std::min<std::int64_t>(k, 2000);
  double sum = 0;
  for (std::int64_t i = 0; i < samples; ++i) {
    const std::int64_t r = first + i * k / samples;
    const double v = h.quantile((static_cast<double>(r) - 0.5) / static_cast<double>(n));
    if (std::isinf(v)) return kInf;
    sum += v;
  }
  return sum / static_cast<double>(samples);
}

CostSummary run_cost(const results::RunSummary& run, const CostInputs& in) {
  CostSummary c;
  c.pricing = to_string(in.pricing);
  c.price_source = in.price_source;
  c.burn_usd_per_hour = burn_usd_per_hour(in);
  const double gpu_hour_usd = in.gpus > 0 ? c.burn_usd_per_hour / in.gpus : 0.0;
  const auto& a = run.accounting;
  const double acc_days = a.wall_s / 86400.0;

  // Energy of the mean trial: busy hours at full node power, waiting hours at the idle fraction, times PUE.
  const double busy_h = (a.productive_s + a.checkpoint_s + a.lost_work_s + a.degraded_s + a.drain_s) / 3600.0;
  const double idle_h = (a.detection_s + a.restart_s + a.waiting_for_repair_s) / 3600.0;
  const double kwh =
      in.nodes * in.energy.node_power.watts / 1000.0 * in.energy.pue * (busy_h + in.energy.idle_fraction * idle_h);
  const double energy_usd = in.energy.billed ? kwh * in.energy.usd_per_kwh : 0.0;
  const double energy_per_day = acc_days > 0 ? energy_usd / acc_days : 0.0;
  const double mwh_per_day = acc_days > 0 ? kwh / 1000.0 / acc_days : 0.0;
  // Storage: the kept checkpoints for every day of the run.
  const double storage_gb = static_cast<double>(in.storage.checkpoint.n) / 1e9 * in.storage.checkpoints_kept;
  const double storage_per_day = storage_gb * in.storage.usd_per_gb_month / kDaysPerMonth;

  const double per_day = c.burn_usd_per_hour * 24.0 + energy_per_day + storage_per_day;
  c.usd_per_wall_day = per_day;
  const bool window = run.work == "window";
  // A fixed window is paid for to its end: a trial that stalls (or meets the event cap) keeps its cluster, failing and
  // recovering, until then (a user trial: a 365-day window stalled after 1.4 days was costed for the 1.4 days). The
  // days after the stall are not spread over the causes or phases: the waterfall shows them on their own.
  const double wall_days = window ? std::max(acc_days, run.window_days) : run.time_to_train_days.mean;
  c.mean_usd = times(per_day, wall_days);
  c.energy_usd_mean = times(energy_per_day, wall_days);
  c.storage_usd_mean = times(storage_per_day, wall_days);
  c.energy_mwh_mean = times(mwh_per_day, wall_days);
  if (window) {
    c.p10_usd = c.p50_usd = c.p90_usd = c.cvar95_usd = c.mean_usd;
  } else {
    c.p10_usd = times(per_day, run.time_to_train_days.p10);
    c.p50_usd = times(per_day, run.time_to_train_days.p50);
    c.p90_usd = times(per_day, run.time_to_train_days.p90);
    c.cvar95_usd =
        run.time_to_train_hist.count() > 0 ? times(per_day, tail_mean(run.time_to_train_hist, 0.95)) : c.p90_usd;
  }

  c.failures_usd_mean = run.lost_gpu_hours_mean * gpu_hour_usd;
  c.per_failure_mean_usd = run.interruptions_mean > 0 ? c.failures_usd_mean / run.interruptions_mean : 0.0;
  for (const auto& cause : run.causes) {
    const double per =
        cause.interruptions_mean > 0 ? cause.lost_gpu_hours_mean * gpu_hour_usd / cause.interruptions_mean : 0.0;
    c.per_failure_usd.emplace_back(cause.name, per);
  }

  // Waterfall of the mean cost: the compute bill split by where the wall time went, then energy and storage. Each
  // cause's GPU-hours cover its detection, restart, lost work, repair waits and degraded running (run_trial.cpp).
  if (std::isfinite(wall_days) && acc_days > 0) {
    // 1 unless the summary's mean and its accounting disagree; a window's days past a stall are not scaled in.
    const double k = window ? 1.0 : wall_days / acc_days;
    const double compute = c.burn_usd_per_hour * a.productive_s / 3600.0 * k;
    const double checkpoints = c.burn_usd_per_hour * a.checkpoint_s / 3600.0 * k;
    std::vector<std::pair<std::string, double>> causes;
    double causes_usd = 0;
    for (const auto& cause : run.causes) {
      const double usd = cause.lost_gpu_hours_mean * gpu_hour_usd * k;
      if (usd <= 0) continue;
      causes.emplace_back("failure: " + cause.name, usd);
      causes_usd += usd;
    }
    std::stable_sort(causes.begin(), causes.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    const double residual = c.burn_usd_per_hour * 24.0 * wall_days - compute - checkpoints - causes_usd;
    c.waterfall_usd.emplace_back("compute", compute);
    c.waterfall_usd.emplace_back("checkpoints", checkpoints);
    c.waterfall_usd.insert(c.waterfall_usd.end(), causes.begin(), causes.end());
    if (std::abs(residual) > 1e-6 * std::max(1.0, c.mean_usd))
      c.waterfall_usd.emplace_back(
          window && run.never_finished > 0 ? "stalled until the window's end" : "unattributed downtime", residual);
    c.waterfall_usd.emplace_back("energy", c.energy_usd_mean);
    c.waterfall_usd.emplace_back("storage", c.storage_usd_mean);
  }

  const auto& hist = run.time_to_train_hist;
  if (in.deadline) c.deadline_days = in.deadline->days();
  if (in.budget) c.budget_usd = in.budget->usd;
  // A fixed duration (training.duration) has one cost, so the budget is exceeded or not; a deadline does not apply.
  if (window && in.budget && std::isfinite(c.mean_usd)) c.p_budget_overrun = c.mean_usd > in.budget->usd ? 1.0 : 0.0;
  if (!window && hist.count() > 0) {
    if (in.deadline) c.p_deadline_miss = hist.fraction_above(in.deadline->days());
    if (in.budget && per_day > 0) c.p_budget_overrun = hist.fraction_above(in.budget->usd / per_day);
  }
  return c;
}

base::Parsed<double> parse_energy_price(std::string_view text) {
  static constexpr std::array kUnits{PerUnit{"kWh", 1.0}, PerUnit{"MWh", 1e-3}};
  return parse_unit_price(text, kUnits, "0.08 USD/kWh");
}

base::Parsed<double> parse_storage_price(std::string_view text) {
  static constexpr std::array kUnits{PerUnit{"GB-month", 1.0}, PerUnit{"TB-month", 1e-3}};
  return parse_unit_price(text, kUnits, "0.023 USD/GB-month");
}

base::Parsed<double> parse_years(std::string_view text) {
  base::Parsed<double> out;
  if (auto d = base::parse_duration(text)) {
    out.value = d.value->hours() / kHoursPerYear;
    return out;
  }
  const std::string_view t = trim(text);
  for (std::string_view suffix : {"years", "year", "yr", "y"}) {
    if (!t.ends_with(suffix)) continue;
    const std::string_view number = trim(t.substr(0, t.size() - suffix.size()));
    double v = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (number.empty() || ec != std::errc() || ptr != number.data() + number.size()) break;
    if (!std::isfinite(v) || v <= 0) {
      out.error = quoted(text) + " must be a positive number of years";
      return out;
    }
    out.value = v;
    return out;
  }
  out.error = quoted(text) + " is not a period; write years (\"5 y\") or a time (\"1826 d\")";
  return out;
}

void add_cost_json(results::Json& j, const CostSummary& c) {
  results::Json& cost = j["cost_usd"];
  cost = results::Json::object();
  cost["mean"] = c.mean_usd;
  cost["p10"] = c.p10_usd;
  cost["p50"] = c.p50_usd;
  cost["p90"] = c.p90_usd;
  cost["cvar95"] = c.cvar95_usd;
  cost["burn_per_hour"] = c.burn_usd_per_hour;
  cost["per_wall_day"] = c.usd_per_wall_day;
  cost["failures_mean"] = c.failures_usd_mean;
  cost["energy_mean"] = c.energy_usd_mean;
  cost["energy_mwh_mean"] = c.energy_mwh_mean;
  cost["storage_mean"] = c.storage_usd_mean;
  cost["pricing"] = c.pricing;
  cost["price_source"] = c.price_source;
  results::Json waterfall = results::Json::array();
  for (const auto& [label, usd] : c.waterfall_usd) {
    results::Json item = results::Json::object();
    item["label"] = label;
    item["usd"] = usd;
    waterfall.push_back(std::move(item));
  }
  cost["waterfall"] = std::move(waterfall);
  results::Json& per = j["cost_per_failure_usd"];
  per = results::Json::object();
  per["mean"] = c.per_failure_mean_usd;
  results::Json by = results::Json::object();
  for (const auto& [name, usd] : c.per_failure_usd)
    by[name] = usd;
  per["by_cause"] = std::move(by);
  j["p_deadline_miss"] = c.p_deadline_miss ? results::Json(*c.p_deadline_miss) : results::Json();
  j["p_budget_overrun"] = c.p_budget_overrun ? results::Json(*c.p_budget_overrun) : results::Json();
  j["deadline_days"] = c.deadline_days ? results::Json(*c.deadline_days) : results::Json();
  j["budget_usd"] = c.budget_usd ? results::Json(*c.budget_usd) : results::Json();
}

}  // namespace sim::cost
