// sim/reliability/monte_carlo.hpp: many seeded trials of a training run on a thread pool, summarised in constant
// memory.
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/results/run_result.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace sim::reliability {

/// Called on the calling thread about ten times a second while trials run, and once at the end, with the trials
/// done and the total. It may throw to cancel the run (workers stop after their current trial; the exception
/// propagates out of run_monte_carlo).
using ProgressCallback = std::function<void(int done, int total)>;

/// Runs `trials` trials of the run described by `in` on `threads` threads (at least 1) and summarises them.
/// Trial i draws only from streams seeded by (seed, i), and every statistic is an order-independent exact sum
/// (integer nanoseconds, fixed-point fractions) or a fixed-bin histogram, so the summary is identical for any thread
/// count and its memory does not grow with `trials`. Percentiles come from histograms: time to train in 8,192
/// log-spaced bins between the failure-free time and the horizon (within 0.03%), goodput in 10,000 bins over
/// [0, 1] (within 5e-5). Throws base::ConfigError for unusable inputs (see check_inputs); a run that cannot finish
/// is a result (RunSummary::never_finished), not an error.
results::RunSummary run_monte_carlo(const RunInputs& in, int trials, std::uint64_t seed, int threads,
                                    const ProgressCallback& progress = {});

/// A slice of a Monte Carlo run, trials [first, first + count) of `trials`, as exact order-independent sums: slices
/// computed anywhere (shards of a job array, MPI ranks) and merged give the summary one process gives, bit for bit.
class RunPartial {
 public:
  RunPartial(RunPartial&&) noexcept;
  RunPartial& operator=(RunPartial&&) noexcept;
  ~RunPartial();
  int trials() const;
  int first() const;
  int count() const;
  std::uint64_t seed() const;
  /// The exact state as JSON (128-bit sums as decimal strings, non-empty histogram bins only).
  results::Json to_json() const;
  /// Reads what to_json() wrote, for the run `in` describes; problems go to the reader's diagnostics, and a plan
  /// that does not match (another scenario's failure components) is reported.
  static RunPartial from_json(base::JsonReader& r, const RunInputs& in);
  /// Adds `next`, the slice of the same run that starts where this one ends, so that this slice holds both: slices
  /// fold one by one in constant memory. Throws base::ConfigError for a slice of another run or one that does not
  /// follow this one.
  void append(const RunPartial& next);

  struct State;

 private:
  explicit RunPartial(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
  friend RunPartial run_monte_carlo_slice(const RunInputs&, int, int, int, std::uint64_t, int, const ProgressCallback&);
  friend results::RunSummary summarise_partials(const RunInputs&, const std::vector<RunPartial>&);
};

/// Runs trials [first, first + count) of a `trials`-trial run; trial i draws from streams seeded by (seed, i) only.
/// `progress` counts the slice's trials.
RunPartial run_monte_carlo_slice(const RunInputs& in, int trials, int first, int count, std::uint64_t seed, int threads,
                                 const ProgressCallback& progress = {});
/// Merges slices that tile [0, trials) exactly once (any order) into the run's summary; throws base::ConfigError
/// for a gap, an overlap, or slices of different runs.
results::RunSummary summarise_partials(const RunInputs& in, const std::vector<RunPartial>& parts);

}  // namespace sim::reliability
