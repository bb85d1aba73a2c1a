// sim/reliability/monte_carlo.cpp: the trial pool, exact order-independent accumulation, and the run summary.
#include "sim/reliability/monte_carlo.hpp"

#include "sim/reliability/checkpoint_policy.hpp"
#include "sim/reliability/run_trial.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace sim::reliability {
namespace {

__extension__ using Int128 = __int128;  // GCC/Clang extension (as in sim/base/rng.hpp); silences -Wpedantic

constexpr double kGoodputScale = 1e15;  // goodput <= 1 in fixed point: exact sums, 1e-15 resolution
constexpr double kGpuHourScale = 1e6;   // lost GPU-hours in micro GPU-hours
constexpr int kTimeBins = 8192;         // log-spaced over [failure-free time, horizon]: 100x in 8,192 bins, 0.03%
constexpr int kGoodputBins = 10000;     // linear over [0, 1]: 5e-5

/// Sums over trials that do not depend on the order trials are added in: integers only.
struct Accumulator {
  explicit Accumulator(const RunPlan& plan)
      : interruptions(plan.components.size(), 0),
        lost_gpu_uh(plan.components.size(), 0),
        goodput_hist(results::Histogram::linear(0.0, 1.0 + 1e-12, kGoodputBins)),
        steps_mode(plan.steps_mode) {
    if (steps_mode)
      time_hist = results::Histogram::log_spaced(
          plan.failure_free.days(), std::max(plan.horizon.days(), plan.failure_free.days() * 1.0001), kTimeBins);
  }

  void add(const TrialResult& r, int trial) {
    ++trials;
    wall_ns += r.wall.ns;
    productive_ns += r.productive_ns;
    checkpoint_ns += r.checkpoint_ns;
    detection_ns += r.detection_ns;
    restart_ns += r.restart_ns;
    lost_work_ns += r.lost_work_ns;
    waiting_ns += r.waiting_ns;
    degraded_ns += r.degraded_ns;
    drain_ns += r.drain_ns;
    durable += r.durable_checkpoints;
    const double goodput = r.wall.ns > 0 ? static_cast<double>(r.productive_ns) / static_cast<double>(r.wall.ns) : 1.0;
    goodput_fp += std::llround(goodput * kGoodputScale);
    goodput_hist.add(goodput);
    for (std::size_t c = 0; c < interruptions.size(); ++c) {
      interruptions[c] += r.interruptions[c];
      lost_gpu_uh[c] += std::llround(r.lost_gpu_hours[c] * kGpuHourScale);
    }
    if (steps_mode) time_hist.add(r.finished ? r.wall.days() : std::numeric_limits<double>::infinity());
    if (!r.finished) {
      ++never;
      if (trial < first_never_trial) {
        first_never_trial = trial;
        first_never_reason = r.stop_reason;
      }
    }
  }

  void merge(const Accumulator& o) {
    trials += o.trials;
    wall_ns += o.wall_ns;
    productive_ns += o.productive_ns;
    checkpoint_ns += o.checkpoint_ns;
    detection_ns += o.detection_ns;
    restart_ns += o.restart_ns;
    lost_work_ns += o.lost_work_ns;
    waiting_ns += o.waiting_ns;
    degraded_ns += o.degraded_ns;
    drain_ns += o.drain_ns;
    durable += o.durable;
    goodput_fp += o.goodput_fp;
    goodput_hist.merge(o.goodput_hist);
    if (steps_mode) time_hist.merge(o.time_hist);
    for (std::size_t c = 0; c < interruptions.size(); ++c) {
      interruptions[c] += o.interruptions[c];
      lost_gpu_uh[c] += o.lost_gpu_uh[c];
    }
    never += o.never;
    if (o.first_never_trial < first_never_trial) {
      first_never_trial = o.first_never_trial;
      first_never_reason = o.first_never_reason;
    }
  }

  std::int64_t trials = 0;
  Int128 wall_ns = 0, productive_ns = 0, checkpoint_ns = 0, detection_ns = 0, restart_ns = 0, lost_work_ns = 0,
         waiting_ns = 0, degraded_ns = 0, drain_ns = 0, durable = 0, goodput_fp = 0;
  std::vector<std::int64_t> interruptions;
  std::vector<Int128> lost_gpu_uh;
  results::Histogram goodput_hist;
  results::Histogram time_hist;  // steps mode only
  bool steps_mode = true;
  int never = 0;
  int first_never_trial = std::numeric_limits<int>::max();
  std::string first_never_reason;
};

double mean_of(Int128 sum, std::int64_t n, double scale = 1.0) {
  return static_cast<double>(sum) / scale / static_cast<double>(n);
}

/// A mean time, never below zero: the trials' parts are whole nanoseconds that sum exactly to their wall time, and a
/// part can carry a few nanoseconds of another's rounding (a user trial read degraded -2.6e-15 d, printed -0.0).
double mean_time_s(Int128 sum_ns, std::int64_t n) {
  return std::max(0.0, mean_of(sum_ns, n, 1e9));
}

results::RunSummary summarise(const RunInputs& in, const RunPlan& plan, const Accumulator& a, int trials,
                              std::uint64_t seed) {
  results::RunSummary s;
  const std::int64_t n = a.trials;
  s.trials = trials;
  s.seed = seed;
  s.work = plan.steps_mode ? "steps" : "window";
  s.total_steps = plan.total_steps;
  s.window_days = plan.steps_mode ? 0.0 : plan.window.days();
  s.step_time_s = plan.step0.seconds();
  s.failure_free_days = plan.failure_free.days();
  s.horizon_days = plan.horizon.days();

  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (plan.steps_mode) {
    const double inf = std::numeric_limits<double>::infinity();
    s.time_to_train_days = {.mean = a.never > 0 ? inf : mean_of(a.wall_ns, n, 86400e9),
                            .p10 = a.time_hist.quantile(0.10),
                            .p50 = a.time_hist.quantile(0.50),
                            .p90 = a.time_hist.quantile(0.90),
                            .p99 = a.time_hist.quantile(0.99)};
    s.time_to_train_hist = a.time_hist;
  } else {
    s.time_to_train_days = {.mean = nan, .p10 = nan, .p50 = nan, .p90 = nan, .p99 = nan};
  }
  s.goodput = {.mean = mean_of(a.goodput_fp, n, kGoodputScale),
               .p10 = a.goodput_hist.quantile(0.10),
               .p50 = a.goodput_hist.quantile(0.50),
               .p90 = a.goodput_hist.quantile(0.90),
               .p99 = nan};

  std::int64_t total_interruptions = 0;
  double lost_total = 0;
  for (std::size_t c = 0; c < plan.components.size(); ++c) {
    results::CauseSummary cs;
    cs.name = plan.components[c].name;
    cs.effect = hardware::to_string(plan.components[c].effect);
    cs.interruptions_mean = static_cast<double>(a.interruptions[c]) / static_cast<double>(n);
    cs.lost_gpu_hours_mean = mean_of(a.lost_gpu_uh[c], n, kGpuHourScale);
    total_interruptions += a.interruptions[c];
    lost_total += cs.lost_gpu_hours_mean;
    s.causes.push_back(std::move(cs));
  }
  s.interruptions_mean = static_cast<double>(total_interruptions) / static_cast<double>(n);
  s.job_mtbf_h = plan.mtbf.hours();
  s.job_mtbf_h_simulated = total_interruptions > 0
                               ? static_cast<double>(a.wall_ns) / 3600e9 / static_cast<double>(total_interruptions)
                               : std::numeric_limits<double>::infinity();
  s.lost_gpu_hours_mean = lost_total;

  s.checkpoint.policy = to_string(plan.policy);
  s.checkpoint.interval_s = plan.interval.seconds();
  s.checkpoint.interval_steps = plan.interval_steps;
  s.checkpoint.asked_interval_steps = plan.asked_interval_steps;
  s.checkpoint.past_the_run = plan.steps_mode && plan.interval >= plan.failure_free;
  // Without failures an optimum interval is "never" (the simulator's range stands in for it): no number, as for the
  // optimum below (a user trial found 2.84e9 s, about 90 years, in the JSON).
  if (plan.policy != CheckpointPolicy::Fixed && !std::isfinite(plan.mtbf.s))
    s.checkpoint.interval_s = s.checkpoint.interval_steps = std::numeric_limits<double>::quiet_NaN();
  // Daly's optimum beside the interval used, and the expected wall time the difference costs (Daly 2006's closed form:
  // the restart factor e^{R/M} and the solve time cancel in the ratio).
  if (std::isfinite(plan.mtbf.s) && plan.mtbf.s > 0) {
    const double m = plan.mtbf.s, delta = plan.blocking.seconds();
    double opt = daly_interval(base::Duration{delta}, plan.mtbf).s;
    if (in.checkpoint.async) opt = std::max(opt, in.checkpoint.write.seconds());
    auto wall_per_compute = [&](double tau) { return std::expm1((tau + delta) / m) / tau; };
    s.checkpoint.optimum_interval_s = opt;
    s.checkpoint.wall_vs_optimum =
        plan.interval.seconds() > 0 ? wall_per_compute(plan.interval.seconds()) / wall_per_compute(opt) - 1 : 0.0;
    // No checkpoint past the run's compute: Daly's closed form has no meaning there (1.6e+210% for 1000 days).
    if (s.checkpoint.past_the_run) s.checkpoint.wall_vs_optimum = std::numeric_limits<double>::quiet_NaN();
  } else {
    s.checkpoint.optimum_interval_s = std::numeric_limits<double>::quiet_NaN();
    s.checkpoint.wall_vs_optimum = std::numeric_limits<double>::quiet_NaN();
  }
  s.checkpoint.write_s = in.checkpoint.write.seconds();
  s.checkpoint.snapshot_s = in.checkpoint.async ? in.checkpoint.snapshot.seconds() : 0.0;
  s.checkpoint.load_s = in.checkpoint.load.seconds();
  s.checkpoint.async = in.checkpoint.async;
  s.checkpoint.write_basis = in.checkpoint.write_basis;
  s.checkpoint.load_basis = in.checkpoint.load_basis;
  s.checkpoint.snapshot_basis = in.checkpoint.snapshot_basis;
  s.spares = in.spares;
  s.on_spares_exhausted = to_string(in.when_spares_exhausted);
  s.checkpoint.overhead_fraction =
      a.wall_ns > 0 ? static_cast<double>(a.checkpoint_ns) / static_cast<double>(a.wall_ns) : 0.0;
  s.checkpoint.durable_mean = mean_of(a.durable, n);

  results::TimeAccounting& t = s.accounting;
  t.wall_s = mean_time_s(a.wall_ns, n);
  t.productive_s = mean_time_s(a.productive_ns, n);
  t.checkpoint_s = mean_time_s(a.checkpoint_ns, n);
  t.detection_s = mean_time_s(a.detection_ns, n);
  t.restart_s = mean_time_s(a.restart_ns, n);
  t.lost_work_s = mean_time_s(a.lost_work_ns, n);
  t.waiting_for_repair_s = mean_time_s(a.waiting_ns, n);
  t.degraded_s = mean_time_s(a.degraded_ns, n);
  t.drain_s = mean_time_s(a.drain_ns, n);

  s.never_finished = a.never;
  s.never_finished_reason = a.first_never_reason;
  return s;
}

std::string int128_text(Int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  std::string out;
  while (v != 0) {
    const int digit = static_cast<int>(v % 10);
    out.push_back(static_cast<char>('0' + (neg ? -digit : digit)));
    v /= 10;
  }
  if (neg) out.push_back('-');
  return {out.rbegin(), out.rend()};
}

bool parse_int128(const std::string& text, Int128& out) {
  if (text.empty() || text.size() > 40) return false;
  std::size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return false;
  Int128 v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  out = text[0] == '-' ? -v : v;
  return true;
}

/// Checks the inputs and derives the plan every trial shares.
RunPlan checked_plan(const RunInputs& in, int trials) {
  std::vector<base::Diagnostic> problems = check_inputs(in);
  if (trials < 1) problems.push_back({"reliability", "/trials", "must be at least 1, found " + std::to_string(trials)});
  if (!problems.empty()) throw base::ConfigError(std::move(problems));
  StepTimes step_times(in.step_time);
  const base::Time step0 = step_times.get(ClusterState{});
  if (step0 <= base::Time::zero() || step0 == base::Time::max())
    throw base::ConfigError("reliability", "/step_time", "the healthy step time must be positive and finite");
  return make_plan(in, step0);
}

}  // namespace

struct RunPartial::State {
  State(RunPlan p, int trials_, int first_, int count_, std::uint64_t seed_)
      : plan(std::move(p)), acc(plan), trials(trials_), first(first_), count(count_), seed(seed_) {}
  RunPlan plan;
  Accumulator acc;
  int trials, first, count;
  std::uint64_t seed;
  int sample = -1;  // the sample trial when this slice holds it
  std::vector<results::RunTimelineEvent> sample_timeline;
};

RunPartial::RunPartial(std::unique_ptr<State> s) : s_(std::move(s)) {}
RunPartial::RunPartial(RunPartial&&) noexcept = default;
RunPartial& RunPartial::operator=(RunPartial&&) noexcept = default;
RunPartial::~RunPartial() = default;
int RunPartial::trials() const {
  return s_->trials;
}
int RunPartial::first() const {
  return s_->first;
}
int RunPartial::count() const {
  return s_->count;
}
std::uint64_t RunPartial::seed() const {
  return s_->seed;
}

results::Json RunPartial::to_json() const {
  using results::Json;
  const Accumulator& a = s_->acc;
  Json j = Json::object();
  j["trials"] = s_->trials;
  j["first"] = s_->first;
  j["count"] = s_->count;
  j["seed"] = int128_text(s_->seed);
  Json sums = Json::object();
  const std::pair<const char*, Int128> fields[] = {
      {"wall_ns", a.wall_ns},           {"productive_ns", a.productive_ns}, {"checkpoint_ns", a.checkpoint_ns},
      {"detection_ns", a.detection_ns}, {"restart_ns", a.restart_ns},       {"lost_work_ns", a.lost_work_ns},
      {"waiting_ns", a.waiting_ns},     {"degraded_ns", a.degraded_ns},     {"drain_ns", a.drain_ns},
      {"durable", a.durable},           {"goodput_fp", a.goodput_fp}};
  for (const auto& [name, v] : fields)
    sums[name] = int128_text(v);
  j["sums"] = std::move(sums);
  Json causes = Json::array();
  for (std::size_t c = 0; c < a.interruptions.size(); ++c) {
    Json k = Json::object();
    k["name"] = s_->plan.components[c].name;
    k["interruptions"] = a.interruptions[c];
    k["lost_gpu_uh"] = int128_text(a.lost_gpu_uh[c]);
    causes.push_back(std::move(k));
  }
  j["causes"] = std::move(causes);
  const auto bins = [](const results::Histogram& h) {
    Json arr = Json::array();
    for (const auto& [bin, n] : h.nonzero_bins()) {
      Json e = Json::object();
      e["bin"] = bin;
      e["count"] = n;
      arr.push_back(std::move(e));
    }
    return arr;
  };
  j["goodput_bins"] = bins(a.goodput_hist);
  j["time_bins"] = a.steps_mode ? bins(a.time_hist) : Json::array();
  // The finite values' range (Histogram::min/max), which quantiles are clamped to: null when none was added.
  const auto range = [](const results::Histogram& h) {
    if (!(h.min() <= h.max())) return Json();
    Json o = Json::object();
    o["min"] = h.min();
    o["max"] = h.max();
    return o;
  };
  j["goodput_range"] = range(a.goodput_hist);
  j["time_range"] = a.steps_mode ? range(a.time_hist) : Json();
  // The values a small run keeps (Histogram::exact_text): null once the histogram no longer keeps them.
  const auto values = [](const results::Histogram& h) { return h.exact() ? Json(h.exact_text()) : Json(); };
  j["goodput_values"] = values(a.goodput_hist);
  j["time_values"] = a.steps_mode ? values(a.time_hist) : Json();
  j["never"] = a.never;
  j["first_never_trial"] = a.never > 0 ? Json(a.first_never_trial) : Json();
  j["first_never_reason"] = a.first_never_reason;
  j["sample_trial"] = s_->sample;
  Json tl = Json::array();
  for (const auto& e : s_->sample_timeline) {
    Json k = Json::object();
    k["at_ns"] = e.at.ns;
    k["kind"] = e.kind;
    k["cause"] = e.cause;
    tl.push_back(std::move(k));
  }
  j["sample_timeline"] = std::move(tl);
  return j;
}

RunPartial RunPartial::from_json(base::JsonReader& r, const RunInputs& in) {
  int trials = 0, first = 0, count = 0;
  std::string seed_text;
  r.required("trials", trials, base::Range::at_least(1));
  r.required("first", first, base::Range::at_least(0));
  r.required("count", count, base::Range::at_least(0));
  r.required("seed", seed_text);
  Int128 seed = 0;
  if (!parse_int128(seed_text, seed) || seed < 0 || seed > Int128{std::numeric_limits<std::uint64_t>::max()})
    r.error("seed", "\"" + seed_text + "\" is not an unsigned 64-bit integer");
  if (static_cast<std::int64_t>(first) + count > trials) r.error("count", "first + count exceeds trials");
  auto state = std::make_unique<State>(checked_plan(in, std::max(trials, 1)), trials, first, count,
                                       static_cast<std::uint64_t>(seed));
  Accumulator& a = state->acc;
  a.trials = count;
  if (auto sums = r.required_object("sums")) {
    const std::pair<const char*, Int128*> fields[] = {
        {"wall_ns", &a.wall_ns},           {"productive_ns", &a.productive_ns}, {"checkpoint_ns", &a.checkpoint_ns},
        {"detection_ns", &a.detection_ns}, {"restart_ns", &a.restart_ns},       {"lost_work_ns", &a.lost_work_ns},
        {"waiting_ns", &a.waiting_ns},     {"degraded_ns", &a.degraded_ns},     {"drain_ns", &a.drain_ns},
        {"durable", &a.durable},           {"goodput_fp", &a.goodput_fp}};
    for (const auto& [name, out] : fields) {
      std::string text;
      if (sums->required(name, text) && !parse_int128(text, *out))
        sums->error(name, "\"" + text + "\" is not an integer");
      if (*out < 0) sums->error(name, "\"" + text + "\" is negative");
    }
    // What a real slice satisfies (a tampered or corrupted one usually does not): the parts of the wall time sum to
    // it exactly, no trial outlasts the horizon, and goodput is at most 1 per trial.
    const Int128 parts = a.productive_ns + a.checkpoint_ns + a.detection_ns + a.restart_ns + a.lost_work_ns +
                         a.waiting_ns + a.degraded_ns + a.drain_ns;
    if (parts != a.wall_ns) sums->error("wall_ns", "is not the sum of its parts: a damaged or edited shard");
    if (a.wall_ns > Int128{count} * Int128{state->plan.horizon.ns} + Int128{count})
      sums->error("wall_ns", "is longer than " + std::to_string(count) + " trials can last (the horizon)");
    if (a.goodput_fp > Int128{count} * static_cast<Int128>(kGoodputScale))
      sums->error("goodput_fp", "is more than a goodput of 1 per trial");
    sums->finish();
  }
  auto causes = r.object_array("causes", true);
  if (causes.size() != a.interruptions.size()) {
    r.error("causes", std::to_string(causes.size()) + " causes, but this run has " +
                          std::to_string(a.interruptions.size()) + " failure components: a shard of another scenario?");
  } else {
    for (std::size_t c = 0; c < causes.size(); ++c) {
      std::string name, lost;
      causes[c].required("name", name);
      if (name != state->plan.components[c].name)
        causes[c].error("name", "\"" + name + "\" where this run has \"" + state->plan.components[c].name + "\"");
      causes[c].required("interruptions", a.interruptions[c], base::Range::at_least(0));
      if (causes[c].required("lost_gpu_uh", lost) && !parse_int128(lost, a.lost_gpu_uh[c]))
        causes[c].error("lost_gpu_uh", "\"" + lost + "\" is not an integer");
      causes[c].finish();
    }
  }
  const auto read_bins = [&r](const char* key, results::Histogram& h) {
    for (auto& e : r.object_array(key, true)) {
      int bin = 0;
      std::int64_t n = 0;
      if (e.required("bin", bin) && e.required("count", n) && !h.add_count(bin, n))
        e.error("bin", "bin " + std::to_string(bin) + " with count " + std::to_string(n) + " does not fit");
      e.finish();
    }
  };
  read_bins("goodput_bins", a.goodput_hist);
  read_bins("time_bins", a.time_hist);
  const auto read_range = [&r](const char* key, results::Histogram& h) {
    if (r.kind(key) == base::JsonReader::Kind::Null) {
      r.accept(key);
      return;
    }
    auto o = r.optional_object(key);
    if (!o) return r.required_object(key), void();
    double lo = 0, hi = 0;
    if (o->required("min", lo) && o->required("max", hi)) {
      if (lo <= hi)
        h.widen(lo, hi);
      else
        o->error("max", "is below min: a damaged or edited shard");
    }
    o->finish();
  };
  read_range("goodput_range", a.goodput_hist);
  read_range("time_range", a.time_hist);
  const auto read_values = [&r](const char* key, results::Histogram& h) {
    std::string text, why;
    if (r.kind(key) == base::JsonReader::Kind::Null) {
      r.accept(key);
    } else if (r.required(key, text) && !h.restore_exact_text(text, why)) {
      r.error(key, why + ": a damaged or edited shard");
    }
  };
  read_values("goodput_values", a.goodput_hist);
  read_values("time_values", a.time_hist);
  r.required("never", a.never, base::Range::at_least(0));
  if (r.kind("first_never_trial") == base::JsonReader::Kind::Null) {
    r.accept("first_never_trial");
  } else {
    r.required("first_never_trial", a.first_never_trial, base::Range::at_least(0));
  }
  r.required("first_never_reason", a.first_never_reason);
  r.required("sample_trial", state->sample, base::Range::at_least(-1));
  // Counts a real slice of `count` trials has (found by a user trial: bins of 1e15 trials, a `never` of a million
  // and a sample trial outside the slice merged with exit 0): one goodput per trial, one finishing time per trial
  // that finished, no more unfinished trials than trials, the sample one of the slice's own.
  if (a.goodput_hist.count() != count)
    r.error("goodput_bins", "hold " + std::to_string(a.goodput_hist.count()) + " trials, but the slice has " +
                                std::to_string(count) + ": a damaged or edited shard");
  if (a.never > count) r.error("never", "exceeds the slice's " + std::to_string(count) + " trials");
  // Every trial has a time, +inf for one that never finished (Accumulator::add): a shard with unfinished trials had
  // been refused here as counting them twice (found while testing merge's value check).
  if (a.steps_mode && a.time_hist.count() != count)
    r.error("time_bins", "hold " + std::to_string(a.time_hist.count()) + " trials, but the slice has " +
                             std::to_string(count) + ": a damaged or edited shard");
  if (state->sample != -1 && (state->sample < first || state->sample >= first + count))
    r.error("sample_trial", std::to_string(state->sample) + " is not a trial of this slice (" + std::to_string(first) +
                                " to " + std::to_string(first + count - 1) + ")");
  for (auto& e : r.object_array("sample_timeline", true)) {
    results::RunTimelineEvent ev;
    e.required("at_ns", ev.at.ns);
    e.required("kind", ev.kind);
    e.required("cause", ev.cause);
    e.finish();
    state->sample_timeline.push_back(std::move(ev));
  }
  r.finish();
  return RunPartial(std::move(state));
}

void RunPartial::append(const RunPartial& next) {
  State& a = *s_;
  const State& b = *next.s_;
  if (b.trials != a.trials || b.seed != a.seed || b.acc.interruptions.size() != a.acc.interruptions.size())
    throw base::ConfigError("merge", "",
                            "slices of different runs: " + std::to_string(b.trials) + " trials, seed " +
                                std::to_string(b.seed) + " after " + std::to_string(a.trials) + " trials, seed " +
                                std::to_string(a.seed));
  if (b.first != a.first + a.count)
    throw base::ConfigError("merge", "",
                            "trials from " + std::to_string(b.first) + " cannot follow trials [" +
                                std::to_string(a.first) + ", " + std::to_string(a.first + a.count) + ")");
  a.acc.merge(b.acc);
  a.count += b.count;
  if (b.sample >= 0) {
    a.sample = b.sample;
    a.sample_timeline = b.sample_timeline;
  }
}

RunPartial run_monte_carlo_slice(const RunInputs& in, int trials, int first, int count, std::uint64_t seed, int threads,
                                 const ProgressCallback& progress) {
  const RunPlan plan = checked_plan(in, trials);
  if (first < 0 || count < 0 || static_cast<std::int64_t>(first) + count > trials)
    throw base::ConfigError("reliability", "/shard",
                            "trials [" + std::to_string(first) + ", " + std::to_string(first + count) +
                                ") are not inside [0, " + std::to_string(trials) + ")");
  StepTimes step_times(in.step_time);
  threads = std::clamp(threads, 1, std::max(count, 1));
  const int sample = in.sample_trial < trials ? in.sample_trial : -1;
  auto state = std::make_unique<RunPartial::State>(plan, trials, first, count, seed);
  if (sample >= first && sample < first + count) state->sample = sample;

  // One accumulator and one step-time cache per worker of the executor (base/parallel_for.hpp); the accumulators hold
  // integer sums and histograms, so merging them does not depend on which worker ran which trial.
  const int workers = base::worker_count(count, threads, 1);
  std::vector<Accumulator> accumulators(static_cast<std::size_t>(workers), Accumulator(plan));
  std::vector<std::optional<LocalStepTimes>> locals(static_cast<std::size_t>(workers));
  std::vector<results::RunTimelineEvent> sample_timeline;
  // Called about ten times a second whatever the trials do: a cancelling callback (Ctrl-C) is heard while one long
  // trial runs, and the executor's stop flag then ends that trial too.
  const std::function<void(int, int)> report = progress ? std::function<void(int, int)>(progress) : nullptr;
  base::parallel_for(count, workers, 1, report, [&](int w, int k, const std::atomic<bool>& stop) {
    auto& local = locals[static_cast<std::size_t>(w)];
    if (!local) local.emplace(step_times, in.job.dp, in.straggler_slowdown);
    const int i = first + k;
    TrialResult r = run_trial(plan, *local, seed, static_cast<std::uint64_t>(i), i == sample, &stop);
    if (stop.load(std::memory_order_relaxed)) return;  // cancelled: the result may be a partial trial
    accumulators[static_cast<std::size_t>(w)].add(r, i);
    if (i == sample) sample_timeline = std::move(r.timeline);  // one trial, one writer
  });

  for (const Accumulator& a : accumulators)
    state->acc.merge(a);
  state->sample_timeline = std::move(sample_timeline);
  return RunPartial(std::move(state));
}

results::RunSummary summarise_partials(const RunInputs& in, const std::vector<RunPartial>& parts) {
  if (parts.empty()) throw base::ConfigError("merge", "", "no shards to merge");
  const RunPartial::State& head = *parts.front().s_;
  // Every trial exactly once: sort the slices by their first trial and check they tile [0, trials).
  std::vector<const RunPartial::State*> order;
  for (const auto& p : parts) {
    const RunPartial::State& s = *p.s_;
    if (s.trials != head.trials || s.seed != head.seed)
      throw base::ConfigError("merge", "",
                              "shards of different runs: " + std::to_string(s.trials) + " trials, seed " +
                                  std::to_string(s.seed) + " against " + std::to_string(head.trials) +
                                  " trials, seed " + std::to_string(head.seed));
    order.push_back(&s);
  }
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  int next = 0;
  for (const auto* s : order) {
    if (s->first != next)
      throw base::ConfigError(
          "merge", "",
          s->first < next
              ? "trials from " + std::to_string(s->first) + " are in two shards (give each shard once)"
              : "trials " + std::to_string(next) + " to " + std::to_string(s->first - 1) + " are in no shard");
    next = s->first + s->count;
  }
  if (next != head.trials)
    throw base::ConfigError("merge", "",
                            "trials " + std::to_string(next) + " to " + std::to_string(head.trials - 1) +
                                " are in no shard (a shard is missing)");
  const RunPlan plan = checked_plan(in, head.trials);
  Accumulator total(plan);
  results::RunSummary s;
  int sample = -1;
  std::vector<results::RunTimelineEvent> timeline;
  for (const auto* p : order) {
    if (p->acc.interruptions.size() != total.interruptions.size())
      throw base::ConfigError("merge", "", "a shard of another scenario (different failure components)");
    total.merge(p->acc);
    if (p->sample >= 0) {
      sample = p->sample;
      timeline = p->sample_timeline;
    }
  }
  s = summarise(in, plan, total, head.trials, head.seed);
  s.sample_trial = sample;
  s.sample_timeline = std::move(timeline);
  return s;
}

results::RunSummary run_monte_carlo(const RunInputs& in, int trials, std::uint64_t seed, int threads,
                                    const ProgressCallback& progress) {
  std::vector<RunPartial> one;
  one.push_back(run_monte_carlo_slice(in, trials, 0, trials, seed, threads, progress));
  return summarise_partials(in, one);
}

}  // namespace sim::reliability
