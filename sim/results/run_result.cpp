// sim/results/run_result.cpp: fixed-bin histograms and the run result's JSON, per the contract in DESIGN.md.
#include "sim/results/run_result.hpp"

#include "sim/base/assert.hpp"
#include "sim/base/table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace sim::results {

Histogram Histogram::log_spaced(double lo, double hi, int bins) {
  SIM_ASSERT(lo > 0 && hi > lo && bins > 0, "log-spaced histogram needs 0 < lo < hi and bins > 0");
  Histogram h;
  h.lo_ = lo;
  h.hi_ = hi;
  h.log_ = true;
  h.scale_ = bins / std::log(hi / lo);
  h.counts_.assign(static_cast<std::size_t>(bins), 0);
  return h;
}

Histogram Histogram::linear(double lo, double hi, int bins) {
  SIM_ASSERT(hi > lo && bins > 0, "linear histogram needs lo < hi and bins > 0");
  Histogram h;
  h.lo_ = lo;
  h.hi_ = hi;
  h.log_ = false;
  h.scale_ = bins / (hi - lo);
  h.counts_.assign(static_cast<std::size_t>(bins), 0);
  return h;
}

int Histogram::bin_of(double x) const {
  if (x < lo_) return -1;
  if (!(x < hi_)) return bins();  // also +infinity and NaN
  const double pos = log_ ? std::log(x / lo_) * scale_ : (x - lo_) * scale_;
  return std::clamp(static_cast<int>(pos), 0, bins() - 1);
}

double Histogram::lower_edge(int bin) const {
  if (bin <= 0) return lo_;
  if (bin >= bins()) return hi_;
  return log_ ? lo_ * std::exp(bin / scale_) : lo_ + bin / scale_;
}

void Histogram::add(double x) {
  const int b = bin_of(x);
  if (std::isfinite(x)) widen(x, x);
  if (exact_ok_ && exact_.size() < kExactValues) {
    exact_.push_back(x);
  } else if (exact_ok_) {
    exact_ok_ = false;
    std::vector<double>().swap(exact_);
  }
  ++count_;
  if (b < 0) {
    ++underflow_;
  } else if (b >= bins()) {
    ++overflow_;
  } else {
    ++counts_[static_cast<std::size_t>(b)];
  }
}

std::vector<std::pair<int, std::int64_t>> Histogram::nonzero_bins() const {
  std::vector<std::pair<int, std::int64_t>> out;
  if (underflow_ > 0) out.emplace_back(-1, underflow_);
  for (int b = 0; b < bins(); ++b)
    if (counts_[static_cast<std::size_t>(b)] > 0) out.emplace_back(b, counts_[static_cast<std::size_t>(b)]);
  if (overflow_ > 0) out.emplace_back(bins(), overflow_);
  return out;
}

void Histogram::widen(double lo, double hi) {
  min_ = std::min(min_, lo);
  max_ = std::max(max_, hi);
}

bool Histogram::restore_exact(std::vector<double> values) {
  if (static_cast<std::int64_t>(values.size()) != count_ || values.size() > kExactValues) return false;
  exact_ = std::move(values);
  exact_ok_ = true;
  return true;
}

std::string Histogram::exact_text() const {
  std::string text;
  char buf[32];
  // Ascending, so that a shard's text does not depend on the order in which its threads finished their trials.
  for (double x : sorted_exact()) {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
    text.append(text.empty() ? "" : " ").append(ec == std::errc{} ? std::string(buf, end) : std::string("nan"));
  }
  return text;
}

bool Histogram::restore_exact_text(const std::string& text, std::string& why) {
  std::vector<double> v;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find(' ', at), text.size());
    double x = 0;
    const auto [p, ec] = std::from_chars(text.data() + at, text.data() + end, x);
    if (ec != std::errc{} || p != text.data() + end) {
      why = "\"" + text.substr(at, end - at) + "\" is not a number";
      return false;
    }
    // A trial's value is inside the range the shard states, or +inf (a trial that never finished: Monte Carlo writes
    // it so); a user trial merged a "nan" and a -1e308 with exit 0, and the merged risk moved.
    if (std::isnan(x) ||
        (x != std::numeric_limits<double>::infinity() && (std::isinf(x) || (min_ <= max_ && (x < min_ || x > max_))))) {
      why = "\"" + text.substr(at, end - at) + "\" is neither within the shard's range nor a trial that never finished";
      return false;
    }
    v.push_back(x);
    at = end + 1;
  }
  if (!restore_exact(std::move(v))) why = "does not hold one value per trial";
  return why.empty();
}

std::vector<double> Histogram::sorted_exact() const {
  std::vector<double> v = exact_;
  std::sort(v.begin(), v.end());
  return v;
}

bool Histogram::add_count(int bin, std::int64_t n) {
  if (n < 0 || bin < -1 || bin > bins()) return false;
  if (n > 0) {  // counts without their values: restore_exact() may give them back
    exact_ok_ = false;
    exact_.clear();
  }
  if (bin < 0) {
    underflow_ += n;
  } else if (bin == bins()) {
    overflow_ += n;
  } else {
    counts_[static_cast<std::size_t>(bin)] += n;
  }
  count_ += n;
  return true;
}

void Histogram::merge(const Histogram& other) {
  SIM_ASSERT(other.counts_.size() == counts_.size() && other.lo_ == lo_ && other.hi_ == hi_ && other.log_ == log_,
             "merging histograms of different layouts");
  for (std::size_t i = 0; i < counts_.size(); ++i)
    counts_[i] += other.counts_[i];
  underflow_ += other.underflow_;
  overflow_ += other.overflow_;
  count_ += other.count_;
  widen(other.min_, other.max_);
  if (exact_ok_ && other.exact_ok_ && exact_.size() + other.exact_.size() <= kExactValues) {
    exact_.insert(exact_.end(), other.exact_.begin(), other.exact_.end());
  } else {
    exact_ok_ = false;
    std::vector<double>().swap(exact_);
  }
}

double Histogram::quantile(double q) const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  // Nearest rank; the tiny shrink keeps q*n that is an integer up to rounding (0.1 * 200) on that integer.
  const auto rank =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count_) * (1 - 1e-12))));
  if (exact_ok_ && static_cast<std::int64_t>(exact_.size()) == count_)
    return sorted_exact()[static_cast<std::size_t>(std::min(rank, count_) - 1)];
  // A value from a bin, kept inside the values seen.
  const auto seen_range = [this](double v) { return min_ <= max_ ? std::clamp(v, min_, max_) : v; };
  std::int64_t seen = underflow_;
  if (seen >= rank) return seen_range(lo_);
  for (int b = 0; b < bins(); ++b) {
    seen += counts_[static_cast<std::size_t>(b)];
    if (seen < rank) continue;
    return seen_range(log_ ? lo_ * std::exp((b + 0.5) / scale_) : lo_ + (b + 0.5) / scale_);
  }
  return std::numeric_limits<double>::infinity();
}

double Histogram::fraction_above(double x) const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  if (exact_ok_ && static_cast<std::int64_t>(exact_.size()) == count_)
    return static_cast<double>(std::count_if(exact_.begin(), exact_.end(), [x](double v) { return v > x; })) /
           static_cast<double>(count_);
  // Below every value seen: all are above. At or above the largest finite one, only the infinite values are (the
  // overflow bin, when every finite value lies below hi).
  if (min_ <= max_ && x < min_) return 1.0;
  if (min_ <= max_ && x >= max_ && max_ < hi_) return static_cast<double>(overflow_) / static_cast<double>(count_);
  const int b = bin_of(x);
  double above = static_cast<double>(overflow_);
  if (b < 0) return static_cast<double>(count_ - underflow_) / static_cast<double>(count_);  // underflow: below lo
  if (b >= bins()) return above / static_cast<double>(count_);
  for (int i = b + 1; i < bins(); ++i)
    above += static_cast<double>(counts_[static_cast<std::size_t>(i)]);
  // Within x's own bin, values are taken as spread evenly over the part of the bin inside the values seen (in ln x
  // for log bins).
  const double lo = std::max(lower_edge(b), min_), hi = std::min(lower_edge(b + 1), max_);
  if (!(hi > lo)) return above / static_cast<double>(count_);
  const double share = log_ ? std::log(hi / x) / std::log(hi / lo) : (hi - x) / (hi - lo);
  above += share * static_cast<double>(counts_[static_cast<std::size_t>(b)]);
  return above / static_cast<double>(count_);
}

std::vector<std::pair<double, double>> Histogram::cdf() const {
  std::vector<std::pair<double, double>> out;
  if (count_ == 0) return out;
  const double n = static_cast<double>(count_);
  std::int64_t below = underflow_;
  out.reserve(counts_.size() + 1);
  out.emplace_back(lo_, static_cast<double>(below) / n);
  for (int b = 0; b < bins(); ++b) {
    below += counts_[static_cast<std::size_t>(b)];
    out.emplace_back(lower_edge(b + 1), static_cast<double>(below) / n);
  }
  return out;
}

double Histogram::resolution() const {
  return log_ ? std::expm1(0.5 / scale_) : 0.5 / scale_;
}

namespace {

Json quantiles_json(const Quantiles& q, bool with_p99) {
  Json j = Json::object();
  j["mean"] = q.mean;
  j["p10"] = q.p10;
  j["p50"] = q.p50;
  j["p90"] = q.p90;
  if (with_p99) j["p99"] = q.p99;
  return j;
}

}  // namespace

Json to_json(const RunSummary& r, const Json& step) {
  Json j = Json::object();
  j["schema"] = "trainsim.run/1";
  j["trials"] = r.trials;
  if (!step.is_null()) j["step"] = step;
  j["time_to_train_days"] = quantiles_json(r.time_to_train_days, true);
  j["goodput"] = quantiles_json(r.goodput, false);
  Json& in = j["interruptions"];
  in["mean"] = r.interruptions_mean;
  Json& in_by = in["by_cause"];
  in_by = Json::object();
  for (const CauseSummary& c : r.causes)
    in_by[c.name] = c.interruptions_mean;
  j["job_mtbf_h"] = r.job_mtbf_h;
  Json& lost = j["lost_gpu_hours"];
  lost["mean"] = r.lost_gpu_hours_mean;
  Json& lost_by = lost["by_cause"];
  lost_by = Json::object();
  for (const CauseSummary& c : r.causes)
    lost_by[c.name] = c.lost_gpu_hours_mean;
  Json& ck = j["checkpoint"];
  ck["interval_s"] = r.checkpoint.interval_s;
  ck["interval_steps"] = r.checkpoint.interval_steps;
  ck["optimum_interval_s"] = r.checkpoint.optimum_interval_s;
  ck["wall_vs_optimum"] = r.checkpoint.wall_vs_optimum;
  ck["overhead_fraction"] = r.checkpoint.overhead_fraction;
  ck["policy"] = r.checkpoint.policy;
  ck["write_s"] = r.checkpoint.write_s;
  ck["async"] = r.checkpoint.async;
  ck["snapshot_s"] = r.checkpoint.snapshot_s;
  ck["load_s"] = r.checkpoint.load_s;
  ck["durable_per_trial"] = r.checkpoint.durable_mean;
  // Issue 5 (the cost model) fills these; null keeps the contract's keys present meanwhile.
  j["cost_usd"] = Json();
  j["cost_per_failure_usd"] = Json();
  j["p_deadline_miss"] = Json();
  j["p_budget_overrun"] = Json();

  // Beyond the contract's fields: how the result came about.
  j["seed"] = static_cast<std::int64_t>(r.seed);
  Json& work = j["work"];
  work["mode"] = r.work;
  if (r.work == "steps") {
    work["total_steps"] = r.total_steps;
  } else {
    work["window_days"] = r.window_days;
  }
  work["step_time_s"] = r.step_time_s;
  work["failure_free_days"] = r.failure_free_days;
  work["horizon_days"] = r.horizon_days;
  j["job_mtbf_h_simulated"] = r.job_mtbf_h_simulated;
  const TimeAccounting& a = r.accounting;
  Json& acc = j["time_accounting_days"];
  acc["wall"] = a.wall_s / 86400.0;
  acc["productive"] = a.productive_s / 86400.0;
  acc["checkpoint"] = a.checkpoint_s / 86400.0;
  acc["detection"] = a.detection_s / 86400.0;
  acc["restart"] = a.restart_s / 86400.0;
  acc["lost_work"] = a.lost_work_s / 86400.0;
  acc["waiting_for_repair"] = a.waiting_for_repair_s / 86400.0;
  acc["degraded"] = a.degraded_s / 86400.0;
  acc["drain"] = a.drain_s / 86400.0;
  Json& never = j["never_finished"];
  never["trials"] = r.never_finished;
  never["reason"] = r.never_finished_reason.empty() ? Json() : Json(r.never_finished_reason);
  Json& sample = j["sample_trial"];
  sample["trial"] = r.sample_trial;
  Json& events = sample["events"];
  events = Json::array();
  for (const RunTimelineEvent& e : r.sample_timeline) {
    Json ev = Json::object();
    ev["t_h"] = e.at.hours();
    ev["kind"] = e.kind;
    ev["cause"] = e.cause.empty() ? Json() : Json(e.cause);
    events.push_back(std::move(ev));
  }
  return j;
}

std::string waiting_remedy(const RunSummary& r) {
  if (r.on_spares_exhausted == "shrink")
    return "add spare nodes (reliability.spares): elastic shrinking is on, but the run cannot shrink further (it "
           "needs a replica left and a global batch that divides over the replicas left)";
  return "add spare nodes (reliability.spares) or allow elastic shrinking (reliability.on_spares_exhausted: "
         "\"shrink\")";
}

namespace {
bool no_failures(const RunSummary& r) {
  return !std::isfinite(r.job_mtbf_h);
}
}  // namespace

std::string job_mtbf_text(const RunSummary& r, int digits) {
  return no_failures(r) ? "none (no failures modelled)" : base::fmt(r.job_mtbf_h, digits) + " h";
}

std::string checkpoint_interval_text(const RunSummary& r, int digits) {
  return no_failures(r) && r.checkpoint.policy != "fixed" ? "none needed (no failures modelled)"
         : r.checkpoint.interval_s < 60.0  // a 1.77 s interval read "every 0.0 min" (a tester's trial)
             ? "every " + base::fmt(r.checkpoint.interval_s, 2) + " s"
             : "every " + base::fmt(r.checkpoint.interval_s / 60.0, digits) + " min";
}

}  // namespace sim::results
