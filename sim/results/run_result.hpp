// sim/results/run_result.hpp: the result of a run-level Monte Carlo simulation, and its JSON (trainsim.run/1).
#pragma once
#include "sim/base/units.hpp"
#include "sim/results/json.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace sim::results {

/// Counts of values in fixed bins, so that statistics over any number of trials take constant memory and merging
/// two histograms (integer additions) gives the same result in any order. Log-spaced bins bound the relative error
/// of a quantile by half a bin's ratio; linear bins bound the absolute error by half a bin's width.
class Histogram {
 public:
  Histogram() = default;
  /// `bins` bins of equal ratio between lo > 0 and hi.
  static Histogram log_spaced(double lo, double hi, int bins);
  /// `bins` bins of equal width between lo and hi.
  static Histogram linear(double lo, double hi, int bins);

  /// Values below lo count in an underflow bin, values at or above hi (and +infinity) in an overflow bin.
  void add(double x);
  /// Adds another histogram of the same layout.
  void merge(const Histogram& other);

  std::int64_t count() const { return count_; }
  std::int64_t overflow() const { return overflow_; }
  /// The q-quantile (nearest rank: the smallest value with at least ceil(q n) values at or below it), as the
  /// midpoint of its bin (geometric midpoint for log bins); lo for the underflow bin, +infinity for the overflow bin,
  /// NaN when empty.
  double quantile(double q) const;
  /// Fraction of values above x, exact at bin edges (for risk: P(time to train > deadline)); NaN when empty.
  double fraction_above(double x) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  /// The largest relative (log bins) or absolute (linear bins) error of a quantile inside [lo, hi).
  double resolution() const;
  /// The empirical CDF at the bin edges, for plots: (lo, fraction below lo), then for each bin (its upper edge,
  /// fraction of values below that edge). Overflow values are never counted, so the last fraction is 1 - overflow/n.
  /// Empty when no value was added.
  std::vector<std::pair<double, double>> cdf() const;
  /// The exact state, for sharded runs: (bin, count) of every non-empty bin, bin -1 the underflow and bins() the
  /// overflow; add_count() on a histogram of the same layout restores it.
  std::vector<std::pair<int, std::int64_t>> nonzero_bins() const;
  /// Adds `n` values to bin `bin` (-1 underflow, bins() overflow); false when the bin does not exist or n < 0.
  bool add_count(int bin, std::int64_t n);
  /// The smallest and largest finite value added (min > max when none was): quantiles are clamped to them and
  /// fraction_above reads them, so that trials that all fall in one bin (a run without failures, one trial) give
  /// their own value, not the bin's midpoint (a user trial: 100 identical trials finishing at 201.365 d had a p50 of
  /// 201.421 d and a 95% chance of missing a 201.37 d deadline). widen() restores them in a sharded run.
  double min() const { return min_; }
  double max() const { return max_; }
  void widen(double lo, double hi);
  /// Up to kExactValues values are also kept as they are, and while every value added is kept, quantile() and
  /// fraction_above() read them: a run of a few hundred or thousand trials gets its trials' own percentiles and
  /// the exact fraction of them that misses a deadline (a user trial: 3 trials, two of which missed a deadline,
  /// gave 0.92 from the bins). nullptr once more were added (or a shard's counts were restored without them).
  static constexpr std::size_t kExactValues = 10000;
  const std::vector<double>* exact() const { return exact_ok_ ? &exact_ : nullptr; }
  /// A shard's kept values; false unless they are as many as the counts restored.
  bool restore_exact(std::vector<double> values);
  /// The kept values as one text of shortest round-trip numbers ("inf" for a trial that never finished), and back
  /// (false, with the reason, for a word that is no number or a count that is not the histogram's).
  std::string exact_text() const;
  bool restore_exact_text(const std::string& text, std::string& why);

 private:
  int bin_of(double x) const;  // -1 underflow, bins() overflow
  double lower_edge(int bin) const;
  int bins() const { return static_cast<int>(counts_.size()); }

  double lo_ = 0, hi_ = 1;
  bool log_ = false;
  double scale_ = 1;  // bins per unit of x (linear) or of ln x (log)
  std::vector<std::int64_t> counts_;
  std::int64_t underflow_ = 0, overflow_ = 0, count_ = 0;
  double min_ = std::numeric_limits<double>::infinity(), max_ = -std::numeric_limits<double>::infinity();
  std::vector<double> exact_;
  bool exact_ok_ = true;
  std::vector<double> sorted_exact() const;
};

/// Mean and percentiles over trials. +infinity (a trial that never finished) serialises as null.
struct Quantiles {
  double mean = 0;
  double p10 = 0, p50 = 0, p90 = 0, p99 = 0;
};

/// One entry of the sample trial's timeline (for the report).
struct RunTimelineEvent {
  base::Time at;
  std::string kind;   // crash|hang|sdc|straggler|maintenance (a failure arrives), detected, restart, resume, ...
  std::string cause;  // the failure component's name, or empty
};

/// Per failure component: interruptions per trial and GPU-hours they cost (mean over trials).
struct CauseSummary {
  std::string name;
  std::string effect;
  double interruptions_mean = 0;
  double lost_gpu_hours_mean = 0;
};

/// Where the wall time of a trial went (means over trials, in seconds). The parts sum to wall_s.
struct TimeAccounting {
  double wall_s = 0;
  double productive_s = 0;          // progress that was kept, at the healthy step time
  double checkpoint_s = 0;          // blocking checkpoint writes (or snapshots, when asynchronous)
  double detection_s = 0;           // from a failure to its detection, while the job is stopped
  double restart_s = 0;             // scheduling, initialisation and checkpoint load
  double lost_work_s = 0;           // progress thrown away (since the newest durable checkpoint), at healthy speed
  double waiting_for_repair_s = 0;  // no spare left: waiting for repaired nodes
  double degraded_s = 0;            // extra time of running slower than healthy (stragglers, fewer replicas)
  double drain_s = 0;               // checkpoint written to drain a detected straggler
};

struct CheckpointSummary {
  std::string policy;         // fixed | young | daly
  double interval_s = 0;      // compute time between checkpoints, as used (whole steps)
  double interval_steps = 0;  // the same in optimizer steps
  /// Not serialised: the interval asked for, in steps, before an asynchronous one is raised to one durable write;
  /// and whether the interval is past the run's compute (no checkpoint is taken).
  double asked_interval_steps = 0;
  bool past_the_run = false;
  /// Daly's optimum for this job (its MTBF and blocking time; an asynchronous one at least one write), and how much
  /// longer the interval used makes the expected wall time than that optimum, by Daly's closed form (0 under "auto";
  /// NaN / null without failures, where no interval is optimal).
  double optimum_interval_s = 0;
  double wall_vs_optimum = 0;
  double write_s = 0;       // durable write
  double snapshot_s = 0;    // blocking part when asynchronous
  double load_s = 0;        // read at restart
  std::string write_basis;  // bytes and bandwidth behind write_s ("0.99 TB / 111 GB/s aggregate"); not serialised
  std::string load_basis;
  std::string snapshot_basis;  // bytes per GPU and rate behind snapshot_s; not serialised
  bool async = false;
  double overhead_fraction = 0;  // mean checkpoint_s / mean wall_s
  double durable_mean = 0;       // durable checkpoints per trial
};

struct RunSummary {
  int trials = 0;
  std::uint64_t seed = 0;
  std::string work;              // "steps" (train until done) | "window" (simulate a fixed duration)
  double total_steps = 0;        // steps mode
  double window_days = 0;        // window mode
  double step_time_s = 0;        // healthy step time
  double failure_free_days = 0;  // total_steps x healthy step time (steps mode); the window (window mode)
  double horizon_days = 0;       // a trial not done by then never finishes

  Quantiles time_to_train_days;  // steps mode; NaN (null) in window mode
  Quantiles goodput;             // effective training time ratio: productive time / wall time (p99 unused)
  double interruptions_mean = 0;
  std::vector<CauseSummary> causes;  // in the order of the failure components
  double job_mtbf_h = 0;             // analytic: 1 / sum of rates
  double job_mtbf_h_simulated = 0;   // total wall time / total interruptions
  double lost_gpu_hours_mean = 0;    // sum of the causes' lost GPU-hours
  CheckpointSummary checkpoint;
  TimeAccounting accounting;
  int spares = 0;                   // spare nodes of the pool (given, or reliability::auto_spares); not serialised
  std::string on_spares_exhausted;  // "shrink" | "wait"; not serialised

  int never_finished = 0;
  std::string never_finished_reason;  // of the lowest-numbered such trial; empty when all finished
  int sample_trial = 0;
  std::vector<RunTimelineEvent> sample_timeline;

  Histogram time_to_train_hist;  // days, steps mode: for deadline risk (issue 5), not serialised
};

/// What to change when a run spends most of its wall time waiting for repaired nodes, in the words the CLI summary and
/// the report's recommendation share: more spares, and elastic shrinking unless it is on already (then the run waits
/// only where it cannot shrink further: no replica left, or a global batch that does not divide over fewer).
std::string waiting_remedy(const RunSummary& r);

/// The job MTBF and the checkpoint interval as the summaries print them (`digits` after the point): "28.85 h" and
/// "every 3.4 min", or, with no failure modelled (reliability.failures none: an unbounded MTBF and Daly interval),
/// "none (no failures modelled)" and, unless the interval is a fixed one, "none needed (no failures modelled)".
std::string job_mtbf_text(const RunSummary& r, int digits);
std::string checkpoint_interval_text(const RunSummary& r, int digits);

/// The `trainsim run --json` object (schema "trainsim.run/1"), fields in contract order. `step` (the step result's
/// JSON, from the caller) goes after "trials" when given. Cost fields (cost_usd, cost_per_failure_usd,
/// p_deadline_miss, p_budget_overrun) are null until the cost model fills them.
Json to_json(const RunSummary& r, const Json& step = Json());

}  // namespace sim::results
