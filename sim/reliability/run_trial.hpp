// sim/reliability/run_trial.hpp: one trial of a training run as a timeline on the engine (failures, recovery,
// progress).
#pragma once
#include "sim/reliability/run_inputs.hpp"
#include "sim/base/units.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/results/run_result.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sim::reliability {

/// One failure component as a trial uses it: its arrival law over the job's instances and what it does.
struct ComponentPlan {
  std::string name;
  hardware::FailureEffect effect = hardware::FailureEffect::Crash;
  bool exponential = true;
  int instances = 1;
  double mean_gap_s = 0;       // exponential: the superposition of n Poisson instances is Poisson with mean MTBF / n
  double weibull_shape = 1;    // Weibull: per-instance renewal processes
  double weibull_scale_s = 0;  // scale = MTBF / Gamma(1 + 1/shape), so that the mean is the MTBF
  int nodes_affected = 0;      // nodes taken out to repair (0: nothing to repair, e.g. a software bug)
  double repair_mean_s = 0;
  base::Time detect;          // detection delay of its effect
  double rollback_steps = 0;  // loss spike: roll back to a checkpoint at least this many steps before its onset
  bool thinned = true;        // arrivals thinned by the fraction of the job's nodes still in it (not job scope)
  bool sampled = true;        // arrivals drawn from its law; false when a trace replays the failures
};

/// Everything derived once per Monte Carlo run and shared read-only by all trials.
struct RunPlan {
  std::vector<ComponentPlan> components;
  /// A replayed trace (RunInputs::trace): each event's time from the start in integer nanoseconds and its component's
  /// index, in time order, repeated every trace_span_ns; empty and 0 without one. Integers, so that a repetition's
  /// first event never lands before the previous one's last (a review: in doubles, an event a nanosecond before the
  /// span's end was scheduled in the past after 92 repetitions).
  std::vector<std::pair<std::int64_t, std::size_t>> trace;
  std::int64_t trace_span_ns = 0;
  JobShape job;
  base::Time step0;                 // healthy step time
  double interval_steps = 0;        // steps between checkpoints (whole steps, at least 1)
  double asked_interval_steps = 0;  // the same before an asynchronous interval is raised to one durable write
  base::Time interval;              // interval_steps x step0: the compute time between checkpoints, as used
  base::Time blocking;              // training stops this long per checkpoint (write, or snapshot when async)
  base::Time durable_lag;           // async: the background write after the snapshot; 0 when synchronous
  base::Time drain_write;           // a straggler drain writes a full checkpoint before the restart
  base::Time restart;               // scheduling + initialisation
  base::Time node_swap;             // a failed node swapped for a spare, before the restart
  base::Time load;                  // checkpoint load
  bool steps_mode = true;
  double total_steps = 0;
  base::Time window;
  base::Time failure_free;  // total_steps x step0 (steps mode) or the window
  base::Time horizon;       // steps mode: a trial not done by then never finishes
  base::Duration mtbf;      // analytic job MTBF (all components)
  int spares = 0;
  OnSparesExhausted when_spares_exhausted = OnSparesExhausted::Wait;
  int min_dp_replicas = 1;
  bool exponential_repair = true;
  double straggler_slowdown = 1.5;
  int stall_interruptions = 1000;
  std::size_t max_timeline_events = 2000;
  CheckpointPolicy policy = CheckpointPolicy::Daly;
  bool async = false;
  base::Time write;
};

/// Derives the plan: per-component arrival laws, the checkpoint interval the policy gives for the job MTBF (Young or
/// Daly with delta = the blocking time; an asynchronous interval is at least the durable write, so that a snapshot
/// never starts before the previous write is durable), the horizon. Throws base::ConfigError for inputs outside the
/// simulator's range (a run longer than 200 years). `step0` is the healthy step time.
RunPlan make_plan(const RunInputs& in, base::Time step0);

/// The step-time callback behind a lock and a cache: called at most once per state, never concurrently.
class StepTimes {
 public:
  explicit StepTimes(const StepTimeFn& fn) : fn_(fn) {}
  base::Time get(const ClusterState& s);

 private:
  const StepTimeFn& fn_;
  std::mutex mutex_;
  std::map<ClusterState, base::Time> cache_;
};

/// A per-thread cache in front of StepTimes for the states a trial can be in: {k missing replicas, straggler or not}.
class LocalStepTimes {
 public:
  LocalStepTimes(StepTimes& shared, int dp, double straggler_slowdown);
  base::Time get(int missing_dp_replicas, bool straggler);

 private:
  StepTimes& shared_;
  double slowdown_;
  std::vector<base::Time> cache_;  // index 2 k + straggler; negative: not asked yet
};

/// What one trial produced. Times are integer nanoseconds; the accounting parts sum to `wall` exactly.
struct TrialResult {
  bool finished = false;    // steps mode: all steps done; window mode: reached the window's end
  std::string stop_reason;  // why it did not finish
  base::Time wall;
  double final_steps = 0;    // progress kept at the end
  double progress_made = 0;  // all progress made, kept or thrown away
  double lost_steps = 0;     // progress thrown away by rollbacks
  std::int64_t productive_ns = 0, checkpoint_ns = 0, detection_ns = 0, restart_ns = 0, lost_work_ns = 0, waiting_ns = 0,
               degraded_ns = 0, drain_ns = 0;
  std::int64_t durable_checkpoints = 0;
  std::vector<std::int64_t> interruptions;          // per component
  std::vector<double> lost_gpu_hours;               // per component: downtime, lost work and slowdown it caused
  std::vector<results::RunTimelineEvent> timeline;  // only when recorded
};

/// Runs trial `trial` of a run seeded with `seed` (failure streams "failures.<component>", repair streams
/// "repairs.<component>", each indexed by the trial). `record` keeps the event timeline. When `cancel` is set, the
/// trial checks it every few thousand events and, once it is true, stops at once with `stop_reason` "cancelled"
/// (the caller discards such a result): a trial with millions of interruptions ends within milliseconds of a Ctrl-C.
TrialResult run_trial(const RunPlan& plan, LocalStepTimes& steps, std::uint64_t seed, std::uint64_t trial, bool record,
                      const std::atomic<bool>* cancel = nullptr);

}  // namespace sim::reliability
