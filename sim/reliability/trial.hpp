// sim/reliability/trial.hpp: one trial of the run level as an engine component (class Trial), shared by the two files
// that define it: run_trial.cpp (construction, the event loop, failure arrivals, recovery) and trial_running.cpp
// (progress while running, checkpoints, phases and the end of the trial). Internal to sim/reliability.
#pragma once
#include "sim/base/assert.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/rng.hpp"
#include "sim/engine/component.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/reliability/run_trial.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace sim::reliability::detail {

using base::Time;
using hardware::FailureEffect;
using hardware::FailureScope;

using reliability::kMaxHorizonS;  // run_inputs.hpp
// "Never": no failures, or a checkpoint-free run. 90 years, so that a clock at the 200-year horizon plus one interval
// still fits the integer-ns clock (an interval of 1e15 steps overflowed it: negative checkpoint time, issue 10).
constexpr double kMaxIntervalS = 90.0 * 365.25 * 86400.0;

inline std::int64_t ceil_ns(double ns) {
  return static_cast<std::int64_t>(std::ceil(ns));
}

/// Standard normal by Box-Muller (one value per call, from two uniforms of `rng`).
inline double normal(base::Rng& rng) {
  constexpr double kTwoPi = 6.283185307179586;
  return std::sqrt(-2.0 * std::log(rng.uniform_open0())) * std::cos(kTwoPi * rng.uniform());
}

/// Gamma(shape a, scale 1). Marsaglia and Tsang, "A simple method for generating gamma variables", ACM TOMS 26(3),
/// 2000; for a < 1, Gamma(a) = Gamma(a + 1) U^(1/a) (ibid., Sec. 6).
inline double gamma_variate(base::Rng& rng, double a) {
  if (a < 1.0) return gamma_variate(rng, a + 1.0) * std::pow(rng.uniform_open0(), 1.0 / a);
  const double d = a - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.uniform_open0();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

inline std::string fmt(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

/// One trial as an engine component. The job is either Running (progress accrues at the current step rate;
/// checkpoints are laid out arithmetically between events, in progress space: one every interval_steps after the
/// checkpoint the job last resumed from) or down in one phase of recovery. Failure arrivals come from one stream
/// per component and are observed, never pushed into the step level (STYLE.md E10): the step level is consulted
/// only for the step time of a cluster state.
class Trial final : public engine::Component {
 public:
  Trial(engine::Simulator& sim, const RunPlan& plan, LocalStepTimes& steps, std::uint64_t seed, std::uint64_t trial,
        bool record, const std::atomic<bool>* cancel);
  TrialResult run();
  void handle(std::uint64_t arg) override;

 private:
  // A realistic trial needs thousands of events (Llama 3's 54 days: 419 interruptions, a few events each; a month on
  // 131,072 GPUs: tens of thousands). Ten million means failures far faster than any step: stop, as never finished.
  static constexpr auto kMaxTrialEvents = static_cast<std::uint64_t>(reliability::kMaxTrialEvents);
  enum class Phase : std::uint8_t { Running, Detecting, Draining, Waiting, Restarting, Done };
  enum class Kind : std::uint64_t {
    Failure = 1,
    PhaseEnd,
    Complete,
    SdcDetect,
    StragglerDetect,
    RepairDone,
    TraceFailure
  };
  static constexpr int kKindShift = 56;
  static constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << kKindShift) - 1;
  static std::uint64_t pack(Kind k, std::uint64_t payload) {
    return (static_cast<std::uint64_t>(k) << kKindShift) | (payload & kPayloadMask);
  }

  struct Source {
    base::Rng rng;         // arrivals and thinning
    base::Rng repair_rng;  // repair times
    double next_s = std::numeric_limits<double>::infinity();
    std::vector<double> heap;  // Weibull: each instance's next failure time, a min-heap
  };

  // A stretch of the run resumed from one checkpoint: checkpoints lie at anchor + k * interval_steps, k >= 1, and
  // those up to durable_k are durable (valid rollback targets for silent data corruption).
  struct Epoch {
    double anchor = 0;
    std::int64_t durable_k = 0;
  };

  // ---------------------------------------------------------------- failure arrivals

  void init_source(std::size_t c);
  void advance_source(std::size_t c);
  void schedule_source(std::size_t c, double horizon_s);
  void schedule_trace(std::uint64_t n);
  void on_arrival(std::size_t c, bool sampled);
  void interrupt(std::size_t c);
  void corrupt(std::size_t c);
  void slow_down(std::size_t c);
  void on_sdc_detected(std::uint64_t payload);
  void on_straggler_detected(std::uint64_t gen);
  void on_repair_done(int nodes);

  // ---------------------------------------------------------------- recovery

  void take_out_nodes(std::size_t c, int nodes);
  /// Nodes a running job computes on: all but the missing ones, or a shrunk job's remaining replicas'.
  int nodes_in_use() const;
  void decide();
  void on_phase_end();

  // ---------------------------------------------------------------- running and checkpoints

  void resume_running();
  void set_rate();
  void schedule_completion();
  double boundary(std::int64_t k) const;
  double time_to_reach(double target) const;
  void advance_to(Time t);
  void skip_whole_cycles(Time t);
  void account_running(std::int64_t dt, double gained);
  void make_durable(std::int64_t k);
  void stop_running(std::size_t cause);
  void discard_running();
  void add_lost(double steps, std::size_t cause);
  double newest_durable_at_or_below(double p) const;
  void clear_corruption();
  double current_progress() const;

  // ---------------------------------------------------------------- phases and the end

  void enter(Phase ph, Time end);
  void enter_keep_start(Time end);

  // Books the time spent in the current down phase, to its category and to the failure that caused it.
  void close_phase() { close_phase_at(now()); }

  void close_phase_at(Time t);
  void on_complete();
  void stall();
  void stop(bool finished, std::string reason, Time t);
  void record(const char* kind, const std::string& cause);

  const RunPlan& plan_;
  LocalStepTimes& steps_;
  bool record_;
  const std::atomic<bool>* cancel_;
  std::vector<Source> sources_;
  TrialResult result_;
  double gpu_hours_per_ns_ = 0;
  double step0_ns_ = 0;

  Phase phase_ = Phase::Restarting;
  Time phase_start_;
  Time phase_end_;
  std::uint64_t phase_gen_ = 0;
  std::size_t down_cause_ = 0;
  std::size_t shrink_cause_ = static_cast<std::size_t>(-1);  // the failure whose nodes the shrunk job lacks
  std::size_t node_cause_ = static_cast<std::size_t>(-1);    // the failure that last sent nodes to repair

  // Running: the cursor.
  Time run_t_;
  double run_p_ = 0;
  double step_ns_ = 1;
  std::uint64_t run_gen_ = 0;
  std::int64_t next_k_ = 1;
  bool in_block_ = false;
  std::int64_t block_k_ = 0;
  Time block_end_;
  bool pending_ = false;  // an asynchronous write in flight
  std::int64_t pending_k_ = 0;
  Time pending_done_;
  std::int64_t running_ns_ = 0;
  double durable_p_ = 0;  // newest durable checkpoint
  double restore_ = 0;    // where the next resume starts
  double drain_p_ = 0;
  std::vector<Epoch> epochs_;
  int interruptions_since_durable_ = 0;

  bool corrupt_ = false;
  double corrupt_since_ = 0;
  std::uint64_t sdc_clears_ = 0;
  std::vector<std::size_t> stragglers_;
  std::uint64_t straggler_gen_ = 0;

  int pool_ = 0;           // spare nodes ready
  int missing_nodes_ = 0;  // nodes out of the job and not replaced
  int missing_replicas_ = 0;
};

}  // namespace sim::reliability::detail
