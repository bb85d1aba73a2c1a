// sim/reliability/monte_carlo.cpp: the trial pool, exact order-independent accumulation, and the run summary.
#include "sim/reliability/monte_carlo.hpp"

#include "sim/reliability/run_trial.hpp"
#include "sim/base/errors.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
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
  s.checkpoint.write_s = in.checkpoint.write.seconds();
  s.checkpoint.snapshot_s = in.checkpoint.async ? in.checkpoint.snapshot.seconds() : 0.0;
  s.checkpoint.load_s = in.checkpoint.load.seconds();
  s.checkpoint.async = in.checkpoint.async;
  s.checkpoint.overhead_fraction =
      a.wall_ns > 0 ? static_cast<double>(a.checkpoint_ns) / static_cast<double>(a.wall_ns) : 0.0;
  s.checkpoint.durable_mean = mean_of(a.durable, n);

  results::TimeAccounting& t = s.accounting;
  t.wall_s = mean_of(a.wall_ns, n, 1e9);
  t.productive_s = mean_of(a.productive_ns, n, 1e9);
  t.checkpoint_s = mean_of(a.checkpoint_ns, n, 1e9);
  t.detection_s = mean_of(a.detection_ns, n, 1e9);
  t.restart_s = mean_of(a.restart_ns, n, 1e9);
  t.lost_work_s = mean_of(a.lost_work_ns, n, 1e9);
  t.waiting_for_repair_s = mean_of(a.waiting_ns, n, 1e9);
  t.degraded_s = mean_of(a.degraded_ns, n, 1e9);
  t.drain_s = mean_of(a.drain_ns, n, 1e9);

  s.never_finished = a.never;
  s.never_finished_reason = a.first_never_reason;
  return s;
}

}  // namespace

results::RunSummary run_monte_carlo(const RunInputs& in, int trials, std::uint64_t seed, int threads,
                                    const ProgressCallback& progress) {
  std::vector<base::Diagnostic> problems = check_inputs(in);
  if (trials < 1) problems.push_back({"reliability", "/trials", "must be at least 1, found " + std::to_string(trials)});
  if (!problems.empty()) throw base::ConfigError(std::move(problems));

  StepTimes step_times(in.step_time);
  const base::Time step0 = step_times.get(ClusterState{});
  if (step0 <= base::Time::zero() || step0 == base::Time::max())
    throw base::ConfigError("reliability", "/step_time", "the healthy step time must be positive and finite");
  const RunPlan plan = make_plan(in, step0);
  threads = std::clamp(threads, 1, trials);
  const int sample = in.sample_trial < trials ? in.sample_trial : -1;

  std::vector<Accumulator> accumulators(static_cast<std::size_t>(threads), Accumulator(plan));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  std::vector<results::RunTimelineEvent> sample_timeline;
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable cv;
  int done = 0;  // guarded by mutex
  int reported = -1;

  const auto worker = [&](std::size_t w) {
    try {
      LocalStepTimes local(step_times, in.job.dp, in.straggler_slowdown);
      for (;;) {
        if (stop.load(std::memory_order_relaxed)) return;
        const int i = next.fetch_add(1, std::memory_order_relaxed);
        if (i >= trials) return;
        TrialResult r = run_trial(plan, local, seed, static_cast<std::uint64_t>(i), i == sample);
        accumulators[w].add(r, i);
        if (i == sample) sample_timeline = std::move(r.timeline);  // one trial, one writer
        {
          const std::lock_guard lock(mutex);
          ++done;
        }
        cv.notify_one();
      }
    } catch (...) {
      errors[w] = std::current_exception();
      stop = true;
      cv.notify_one();
    }
  };

  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(threads));
    for (std::size_t w = 0; w < static_cast<std::size_t>(threads); ++w)
      pool.emplace_back(worker, w);
    try {
      std::unique_lock lock(mutex);
      while (done < trials && !stop) {
        cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done >= trials || stop.load(); });
        if (progress && done != reported) {
          reported = done;
          const int now_done = done;
          lock.unlock();
          progress(now_done, trials);
          lock.lock();
        }
      }
    } catch (...) {
      stop = true;  // the jthreads join as the pool goes out of scope
      throw;
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  if (progress && reported != trials) progress(trials, trials);

  Accumulator total(plan);
  for (const Accumulator& a : accumulators)
    total.merge(a);
  results::RunSummary s = summarise(in, plan, total, trials, seed);
  s.sample_trial = sample;
  s.sample_timeline = std::move(sample_timeline);
  return s;
}

}  // namespace sim::reliability
