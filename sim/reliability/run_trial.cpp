// sim/reliability/run_trial.cpp: the trial timeline: failure arrivals, detection, checkpoints, restarts, repairs.
#include "sim/reliability/run_trial.hpp"

#include "sim/engine/component.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/base/assert.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>

namespace sim::reliability {
namespace {

using base::Time;
using hardware::FailureEffect;
using hardware::FailureScope;

constexpr double kMaxHorizonS = 200.0 * 365.25 * 86400.0;  // the integer-ns clock holds 292 years
// "Never": no failures, or a checkpoint-free run. 90 years, so that a clock at the 200-year horizon plus one interval
// still fits the integer-ns clock (an interval of 1e15 steps overflowed it: negative checkpoint time, issue 10).
constexpr double kMaxIntervalS = 90.0 * 365.25 * 86400.0;

std::int64_t ceil_ns(double ns) {
  return static_cast<std::int64_t>(std::ceil(ns));
}

/// Standard normal by Box-Muller (one value per call, from two uniforms of `rng`).
double normal(base::Rng& rng) {
  constexpr double kTwoPi = 6.283185307179586;
  return std::sqrt(-2.0 * std::log(rng.uniform_open0())) * std::cos(kTwoPi * rng.uniform());
}

/// Gamma(shape a, scale 1). Marsaglia and Tsang, "A simple method for generating gamma variables", ACM TOMS 26(3),
/// 2000; for a < 1, Gamma(a) = Gamma(a + 1) U^(1/a) (ibid., Sec. 6).
double gamma_variate(base::Rng& rng, double a) {
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

std::string fmt(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace

RunPlan make_plan(const RunInputs& in, Time step0) {
  RunPlan p;
  p.job = in.job;
  p.step0 = step0;
  for (const auto& c : in.components) {
    ComponentPlan cp;
    cp.name = c.name;
    cp.effect = c.effect;
    cp.exponential = c.exponential || c.weibull_shape == 1.0;
    cp.instances = instances(in.job, c.scope);
    cp.mean_gap_s = c.mtbf.s / cp.instances;
    cp.weibull_shape = c.weibull_shape;
    cp.weibull_scale_s = c.mtbf.s / std::tgamma(1.0 + 1.0 / c.weibull_shape);  // mean = scale Gamma(1 + 1/k)
    cp.nodes_affected = c.repair.s > 0 ? nodes_affected(in.job, c.scope) : 0;
    cp.repair_mean_s = c.repair.s;
    cp.detect = in.detection.of(c.effect);
    cp.rollback_steps = c.rollback_steps;
    cp.thinned = c.scope != FailureScope::Job;
    p.components.push_back(std::move(cp));
  }
  p.mtbf = job_mtbf(in);
  p.policy = in.checkpoint.policy;
  p.async = in.checkpoint.async;
  p.write = in.checkpoint.write;
  p.blocking = in.checkpoint.blocking();
  p.durable_lag = in.checkpoint.async ? in.checkpoint.write - in.checkpoint.snapshot : Time::zero();
  p.drain_write = in.checkpoint.write;
  p.restart = in.restart;
  p.node_swap = in.node_swap;
  p.load = in.checkpoint.load;

  // The interval: Young's or Daly's optimum for delta = the time a checkpoint stops training. With asynchronous
  // checkpoints that is the snapshot (the background write costs no training time, it only delays durability).
  const double step_s = step0.seconds();
  double tau_s = 0;
  if (in.checkpoint.policy == CheckpointPolicy::Fixed) {
    tau_s = in.checkpoint.interval.seconds();
  } else if (std::isfinite(p.mtbf.s)) {
    tau_s = checkpoint_interval(in.checkpoint.policy, base::Duration{in.checkpoint.interval.seconds()},
                                base::Duration{p.blocking.seconds()}, p.mtbf)
                .s;
  } else {
    tau_s = kMaxIntervalS;  // no failures: no reason to checkpoint
  }
  double steps = std::max(1.0, std::round(tau_s / step_s));
  if (in.checkpoint.async) steps = std::max(steps, std::ceil(in.checkpoint.write.seconds() / step_s));
  p.interval_steps = std::min(steps, std::max(1.0, std::floor(kMaxIntervalS / step_s)));
  p.interval = Time::from_seconds(std::min(p.interval_steps * step_s, kMaxHorizonS));

  p.steps_mode = in.total_steps.has_value();
  if (p.steps_mode) {
    p.total_steps = *in.total_steps;
    const double ff_s = p.total_steps * step_s;
    if (ff_s > kMaxHorizonS)
      throw base::ConfigError("reliability", "/work/total_steps",
                              "the failure-free training time (" + fmt(ff_s / 86400.0) +
                                  " days) exceeds the simulator's range of 200 years");
    p.failure_free = Time::from_seconds(ff_s);
    p.horizon = Time::from_seconds(std::min(ff_s * in.horizon_factor, kMaxHorizonS));
  } else {
    if (in.window->seconds() > kMaxHorizonS)
      throw base::ConfigError("reliability", "/work/window",
                              "a window beyond 200 years is outside the simulator's range");
    p.window = *in.window;
    p.failure_free = p.window;
    p.horizon = p.window;
  }
  p.spares = in.spares;
  p.when_spares_exhausted = in.when_spares_exhausted;
  p.min_dp_replicas = in.min_dp_replicas;
  p.exponential_repair = in.exponential_repair;
  p.straggler_slowdown = in.straggler_slowdown;
  p.stall_interruptions = in.stall_interruptions;
  p.max_timeline_events = in.max_timeline_events;
  return p;
}

Time StepTimes::get(const ClusterState& s) {
  const std::lock_guard lock(mutex_);
  if (auto it = cache_.find(s); it != cache_.end()) return it->second;
  const Time t = fn_(s);
  cache_.emplace(s, t);
  return t;
}

LocalStepTimes::LocalStepTimes(StepTimes& shared, int dp, double straggler_slowdown)
    : shared_(shared), slowdown_(straggler_slowdown), cache_(2 * static_cast<std::size_t>(dp + 1), Time{-1}) {}

Time LocalStepTimes::get(int missing_dp_replicas, bool straggler) {
  Time& slot = cache_[2 * static_cast<std::size_t>(missing_dp_replicas) + (straggler ? 1 : 0)];
  if (slot.ns < 0) slot = shared_.get(ClusterState{missing_dp_replicas, straggler ? slowdown_ : 1.0});
  return slot;
}

namespace {

/// One trial as an engine component. The job is either Running (progress accrues at the current step rate;
/// checkpoints are laid out arithmetically between events, in progress space: one every interval_steps after the
/// checkpoint the job last resumed from) or down in one phase of recovery. Failure arrivals come from one stream
/// per component and are observed, never pushed into the step level (STYLE.md E10): the step level is consulted
/// only for the step time of a cluster state.
class Trial final : public engine::Component {
 public:
  Trial(engine::Simulator& sim, const RunPlan& plan, LocalStepTimes& steps, std::uint64_t seed, std::uint64_t trial,
        bool record, const std::atomic<bool>* cancel)
      : Component(sim, "reliability.trial"),
        plan_(plan),
        steps_(steps),
        record_(record),
        cancel_(cancel),
        pool_(plan.spares) {
    const base::RngStreams streams(seed);
    sources_.reserve(plan.components.size());
    for (const ComponentPlan& c : plan.components)
      sources_.push_back(Source{.rng = streams.stream("failures." + c.name, trial),
                                .repair_rng = streams.stream("repairs." + c.name, trial),
                                .next_s = std::numeric_limits<double>::infinity(),
                                .heap = {}});
    result_.interruptions.assign(plan.components.size(), 0);
    result_.lost_gpu_hours.assign(plan.components.size(), 0.0);
    gpu_hours_per_ns_ = static_cast<double>(plan.job.gpus) / 3.6e12;
    step0_ns_ = static_cast<double>(plan.step0.ns);
  }

  TrialResult run() {
    const double horizon_s = plan_.horizon.seconds();
    for (std::size_t c = 0; c < sources_.size(); ++c) {
      init_source(c);
      schedule_source(c, horizon_s);
    }
    epochs_.push_back(Epoch{0.0, 0});
    restore_ = 0;
    resume_running();
    // The cancel flag is read every 4,096 events: a relaxed atomic load is cheap, but not free at 1e8 events/s.
    std::uint32_t polls = 0;
    bool cancelled = false;
    const engine::RunResult rr = simulator().run(engine::RunLimits{
        .until = plan_.horizon,
        .max_events = kMaxTrialEvents,
        .stop_when = [this, &polls, &cancelled] {
          if (phase_ == Phase::Done) return true;
          if (cancel_ == nullptr || (++polls & 4095U) != 0) return false;
          cancelled = cancel_->load(std::memory_order_relaxed);
          return cancelled;
        }});
    SIM_ASSERT(rr.reason != engine::StopReason::Deadlock, "trial deadlocked");
    if (cancelled) {
      result_.stop_reason = "cancelled";
      return std::move(result_);
    }
    if (rr.reason == engine::StopReason::EventBudget && phase_ != Phase::Done) {
      // Failures arrive so fast that the trial would run for minutes or hours of CPU without getting anywhere.
      stop(false,
           "stopped after " + std::to_string(kMaxTrialEvents / 1000000) + " million events in one trial (job MTBF " +
               fmt(plan_.mtbf.s) + " s against a step of " + fmt(plan_.step0.seconds()) +
               " s): failures arrive faster than the run can make progress",
           now());
    }
    if (phase_ != Phase::Done) {
      // The horizon (steps mode) or the window's end: close the books at exactly that time. (The queue may also have
      // drained first: with no failure before the horizon and a completion beyond it, nothing is left to happen.)
      if (plan_.steps_mode) {
        stop(false,
             "not finished within the horizon of " + fmt(plan_.horizon.days()) + " days (" +
                 fmt(plan_.horizon.seconds() / plan_.failure_free.seconds()) + " x the failure-free time); progress " +
                 fmt(100.0 * current_progress() / plan_.total_steps) + "%",
             plan_.horizon);
      } else {
        stop(true, "", plan_.window);
      }
    }
    return std::move(result_);
  }

  void handle(std::uint64_t arg) override {
    const auto kind = static_cast<Kind>(arg >> kKindShift);
    const std::uint64_t payload = arg & kPayloadMask;
    switch (kind) {
      case Kind::Failure:
        on_arrival(static_cast<std::size_t>(payload));
        break;
      case Kind::PhaseEnd:
        if (payload == phase_gen_) on_phase_end();
        break;
      case Kind::Complete:
        if (payload == run_gen_ && phase_ == Phase::Running) on_complete();
        break;
      case Kind::SdcDetect:
        on_sdc_detected(payload);
        break;
      case Kind::StragglerDetect:
        on_straggler_detected(payload);
        break;
      case Kind::RepairDone:
        on_repair_done(static_cast<int>(payload));
        break;
    }
  }

 private:
  // A realistic trial needs thousands of events (Llama 3's 54 days: 419 interruptions, a few events each; a month on
  // 131,072 GPUs: tens of thousands). Ten million means failures far faster than any step: stop, as never finished.
  static constexpr std::uint64_t kMaxTrialEvents = 10'000'000;
  enum class Phase : std::uint8_t { Running, Detecting, Draining, Waiting, Restarting, Done };
  enum class Kind : std::uint64_t { Failure = 1, PhaseEnd, Complete, SdcDetect, StragglerDetect, RepairDone };
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

  void init_source(std::size_t c) {
    const ComponentPlan& cp = plan_.components[c];
    Source& s = sources_[c];
    if (cp.exponential) {
      s.next_s = s.rng.exponential(cp.mean_gap_s);
      return;
    }
    // Weibull: one renewal process per instance; a failed part is replaced by a new one. The job starts at a random
    // moment of its parts' lives (the fleet has been running): each first failure is drawn from the equilibrium
    // forward-recurrence law, P(X > x) = Q(1/k, (x/scale)^k), i.e. X = scale G^(1/k) with G ~ Gamma(1/k) (Cox,
    // "Renewal Theory", 1962, Sec. 5.2). The process is then stationary: the mean count over any window is exactly
    // instances x window / MTBF, as for exponential components, whatever the shape.
    s.heap.resize(static_cast<std::size_t>(cp.instances));
    for (double& t : s.heap)
      t = cp.weibull_scale_s * std::pow(gamma_variate(s.rng, 1.0 / cp.weibull_shape), 1.0 / cp.weibull_shape);
    std::make_heap(s.heap.begin(), s.heap.end(), std::greater<>{});
    s.next_s = s.heap.front();
  }

  void advance_source(std::size_t c) {
    const ComponentPlan& cp = plan_.components[c];
    Source& s = sources_[c];
    if (cp.exponential) {
      s.next_s += s.rng.exponential(cp.mean_gap_s);
      return;
    }
    std::pop_heap(s.heap.begin(), s.heap.end(), std::greater<>{});
    s.heap.back() += s.rng.weibull(cp.weibull_shape, cp.weibull_scale_s);
    std::push_heap(s.heap.begin(), s.heap.end(), std::greater<>{});
    s.next_s = s.heap.front();
  }

  void schedule_source(std::size_t c, double horizon_s) {
    const double t = sources_[c].next_s;
    if (t <= horizon_s) schedule_at(Time::from_seconds(t), pack(Kind::Failure, c));
  }

  void on_arrival(std::size_t c) {
    const ComponentPlan& cp = plan_.components[c];
    // Thinning keeps the stream aligned whatever the state: a uniform is drawn for every arrival. A failure of a
    // part the job no longer holds (its node is out, not replaced) does not reach the job.
    const double u = sources_[c].rng.uniform();
    const bool reaches_job = !cp.thinned || u * plan_.job.nodes < static_cast<double>(plan_.job.nodes - missing_nodes_);
    advance_source(c);
    schedule_source(c, plan_.horizon.seconds());
    if (!reaches_job) return;
    // A loss spike comes from training itself (its rate is per optimiser step): none while the job is down.
    if (cp.effect == FailureEffect::LossSpike && phase_ != Phase::Running) return;

    if (phase_ == Phase::Running) advance_to(now());
    // Counted once, when it interrupts work: a crash of a job already down (being detected, or waiting for repairs)
    // only takes its part out; corruption needs a running job; a restart or a drain in progress is work it stops.
    const bool corrupting = cp.effect == FailureEffect::Sdc || cp.effect == FailureEffect::LossSpike;
    const bool interrupts = phase_ == Phase::Running ||
                            (!corrupting && (phase_ == Phase::Restarting || phase_ == Phase::Draining));
    if (interrupts) {
      ++result_.interruptions[c];
      record(hardware::to_string(cp.effect), cp.name);
    }
    switch (cp.effect) {
      case FailureEffect::Crash:
      case FailureEffect::Hang:
      case FailureEffect::Maintenance:
        interrupt(c);
        break;
      case FailureEffect::Sdc:
      case FailureEffect::LossSpike:
        corrupt(c);
        break;
      case FailureEffect::Straggler:
        slow_down(c);
        break;
    }
    if (phase_ == Phase::Done || !interrupts) return;
    // Stall: interruptions keep coming and no checkpoint becomes durable in between.
    if (++interruptions_since_durable_ >= plan_.stall_interruptions) stall();
  }

  // A crash, hang or maintenance: the job stops now, notices after the detection delay, then recovers.
  void interrupt(std::size_t c) {
    const ComponentPlan& cp = plan_.components[c];
    take_out_nodes(c, cp.nodes_affected);
    const Time detected = now() + cp.detect;
    switch (phase_) {
      case Phase::Running:
        stop_running(c);
        down_cause_ = c;
        enter(Phase::Detecting, detected);
        break;
      case Phase::Detecting:
        if (detected < phase_end_) enter_keep_start(detected);  // the sooner detection wins
        break;
      case Phase::Restarting:  // the recovery is interrupted: it starts over once this failure is detected
        close_phase();
        down_cause_ = c;
        enter(Phase::Detecting, detected);
        break;
      case Phase::Draining:  // the drain's checkpoint never becomes durable
        close_phase();
        add_lost(drain_p_ - restore_, c);
        down_cause_ = c;
        enter(Phase::Detecting, detected);
        break;
      case Phase::Waiting:
      case Phase::Done:
        break;
    }
  }

  // Silent data corruption: the job runs on, on corrupt state, until a loss spike gives it away. A loss spike works
  // the same way, except that the state to discard starts `rollback_steps` before the spike: PaLM restarted "from a
  // checkpoint roughly 100 steps before the spike started" (Chowdhery et al. 2022, Sec. 5.1).
  void corrupt(std::size_t c) {
    if (phase_ != Phase::Running) return;  // nothing computes while the job is down
    const double onset = std::max(restore_, run_p_ - plan_.components[c].rollback_steps);
    if (!corrupt_) {
      corrupt_ = true;
      corrupt_since_ = onset;
    } else {
      corrupt_since_ = std::min(corrupt_since_, onset);
    }
    schedule_at(now() + plan_.components[c].detect, pack(Kind::SdcDetect, (sdc_clears_ << 16) | c));
  }

  // A straggler: every synchronous step runs at the slowest GPU's speed until it is found and drained.
  void slow_down(std::size_t c) {
    const bool first = stragglers_.empty();
    stragglers_.push_back(c);
    if (first && phase_ == Phase::Running) set_rate();
    schedule_at(now() + plan_.components[c].detect, pack(Kind::StragglerDetect, straggler_gen_));
  }

  void on_sdc_detected(std::uint64_t payload) {
    if (!corrupt_ || (payload >> 16) != sdc_clears_) return;  // a restore already discarded the corrupt state
    const auto c = static_cast<std::size_t>(payload & 0xffff);
    const double target = newest_durable_at_or_below(corrupt_since_);
    clear_corruption();
    take_out_nodes(c, plan_.components[c].nodes_affected);
    record(plan_.components[c].effect == FailureEffect::LossSpike ? "spike_rollback" : "sdc_rollback",
           plan_.components[c].name);
    switch (phase_) {
      case Phase::Running:
        advance_to(now());
        add_lost(run_p_ - target, c);
        discard_running();
        restore_ = target;
        down_cause_ = c;
        decide();
        break;
      case Phase::Draining:  // the drain would write corrupt state
        close_phase();
        add_lost(drain_p_ - target, c);
        restore_ = target;
        decide();
        break;
      case Phase::Restarting:  // it was loading a corrupt checkpoint: load the right one
        close_phase();
        if (target < restore_) add_lost(restore_ - target, c);
        restore_ = std::min(restore_, target);
        decide();
        break;
      case Phase::Detecting:
      case Phase::Waiting:
        if (target < restore_) add_lost(restore_ - target, c);
        restore_ = std::min(restore_, target);
        break;
      case Phase::Done:
        break;
    }
  }

  void on_straggler_detected(std::uint64_t gen) {
    if (gen != straggler_gen_ || stragglers_.empty()) return;  // already swapped out by a restart
    if (phase_ == Phase::Running) {
      // Drain: write a checkpoint of the current state (nothing is lost), then restart without the slow node.
      advance_to(now());
      drain_p_ = run_p_;
      discard_running();
      restore_ = durable_p_;
      down_cause_ = stragglers_.front();
      record("drain", plan_.components[down_cause_].name);
      enter(Phase::Draining, now() + plan_.drain_write);
    } else if (phase_ == Phase::Restarting) {
      close_phase();  // swap the slow node in, restart over
      decide();
    }
  }

  void on_repair_done(int nodes) {
    pool_ += nodes;
    record("repaired", "");
    if (phase_ != Phase::Waiting) return;
    close_phase();
    decide();
  }

  // ---------------------------------------------------------------- recovery

  // The nodes of a failed part leave the job for repair; they come back into the spare pool.
  void take_out_nodes(std::size_t c, int nodes) {
    nodes = std::min(nodes, plan_.job.nodes - missing_nodes_);
    if (nodes <= 0) return;
    missing_nodes_ += nodes;
    const ComponentPlan& cp = plan_.components[c];
    const double repair_s =
        plan_.exponential_repair ? sources_[c].repair_rng.exponential(cp.repair_mean_s) : cp.repair_mean_s;
    if (now().seconds() + repair_s > plan_.horizon.seconds()) return;  // back after the end: irrelevant
    schedule_at(now() + Time::from_seconds(repair_s), pack(Kind::RepairDone, static_cast<std::uint64_t>(nodes)));
  }

  // After detection (or a drain): swap in spares, then restart, shrink or wait.
  void decide() {
    // The restart's health check finds stragglers still in the job: they are swapped like failed nodes.
    for (std::size_t c : stragglers_)
      take_out_nodes(c, plan_.components[c].nodes_affected);
    if (!stragglers_.empty()) {
      stragglers_.clear();
      ++straggler_gen_;
    }
    const int fill = std::min(pool_, missing_nodes_);
    pool_ -= fill;
    missing_nodes_ -= fill;
    int drop = 0;
    if (missing_nodes_ > 0) {
      bool can_shrink = false;
      if (plan_.when_spares_exhausted == OnSparesExhausted::Shrink) {
        // Drop the replicas that lost nodes; where the global batch does not divide over what is left (the step level
        // answers Time::max()), drop more, down to the largest replica count it divides over.
        const int gpus_missing = missing_nodes_ * plan_.job.gpus_per_node;
        drop = (gpus_missing + plan_.job.gpus_per_replica - 1) / plan_.job.gpus_per_replica;
        while (plan_.job.dp - drop >= plan_.min_dp_replicas && steps_.get(drop, false) == Time::max())
          ++drop;
        can_shrink = plan_.job.dp - drop >= plan_.min_dp_replicas;
      }
      if (!can_shrink) {
        record("waiting_for_repair", "");
        enter(Phase::Waiting, Time::max());
        return;
      }
    }
    missing_replicas_ = drop;
    if (drop > 0) shrink_cause_ = down_cause_;
    record(drop > 0 ? "restart_shrunk" : "restart", "");
    // A swapped-in spare joins before the restart (eviction, warm standby in, health check).
    enter(Phase::Restarting, now() + (fill > 0 ? plan_.node_swap : Time::zero()) + plan_.restart + plan_.load);
  }

  void on_phase_end() {
    switch (phase_) {
      case Phase::Detecting:
        close_phase();
        record("detected", plan_.components[down_cause_].name);
        decide();
        break;
      case Phase::Draining:
        close_phase();
        // The drain checkpoint is durable: the job resumes from exactly where it stopped.
        durable_p_ = drain_p_;
        restore_ = drain_p_;
        ++result_.durable_checkpoints;
        interruptions_since_durable_ = 0;
        decide();
        break;
      case Phase::Restarting:
        close_phase();
        resume_running();
        break;
      case Phase::Waiting:
      case Phase::Running:
      case Phase::Done:
        break;
    }
  }

  // ---------------------------------------------------------------- running and checkpoints

  void resume_running() {
    phase_ = Phase::Running;
    run_t_ = now();
    run_p_ = restore_;
    durable_p_ = restore_;
    in_block_ = false;
    pending_ = false;
    next_k_ = 1;
    if (epochs_.empty() || epochs_.back().anchor != restore_ || epochs_.back().durable_k != 0)
      epochs_.push_back(Epoch{restore_, 0});
    if (corrupt_ && restore_ <= corrupt_since_) clear_corruption();  // the corrupt state was discarded
    record("resume", "");
    set_rate();
  }

  // The step rate of the current state; reschedules the completion (steps mode).
  void set_rate() {
    const Time st = steps_.get(missing_replicas_, !stragglers_.empty());
    SIM_ASSERT(st.ns > 0 && st != Time::max(), "the step-time callback gave no usable time for a running state");
    step_ns_ = static_cast<double>(st.ns);
    ++run_gen_;
    schedule_completion();
  }

  void schedule_completion() {
    if (!plan_.steps_mode) return;
    const Time start = in_block_ ? std::max(block_end_, run_t_) : run_t_;
    const double delta = time_to_reach(plan_.total_steps);
    if (delta <= static_cast<double>((plan_.horizon - start).ns))
      schedule_at(start + Time{static_cast<std::int64_t>(delta)}, pack(Kind::Complete, run_gen_));
  }

  double boundary(std::int64_t k) const {
    return epochs_.back().anchor + static_cast<double>(k) * plan_.interval_steps;
  }

  // How long after `start` (the end of the current checkpoint, if one is being written, else now) progress reaches
  // `target` if nothing happens meanwhile, in ns. A double relative to an integer start: absolute times near 1e16 ns
  // would lose whole nanoseconds in a double. Segments between checkpoints are rounded up to whole nanoseconds as
  // advance_to rounds them; a snapshot held up by an unfinished asynchronous write is not foreseen (on_complete then
  // finds the job not quite there and asks again).
  double time_to_reach(double target) const {
    double p = run_p_;
    const double b = boundary(next_k_);
    if (target <= b) return static_cast<double>(ceil_ns((target - p) * step_ns_));
    double t = static_cast<double>(ceil_ns((b - p) * step_ns_));
    // Checkpoints at boundaries next_k_ .. next_k_ + m, all below target; then the last stretch.
    const auto m = static_cast<std::int64_t>(std::ceil((target - b) / plan_.interval_steps)) - 1;
    t += static_cast<double>(m + 1) * static_cast<double>(plan_.blocking.ns);
    t += static_cast<double>(m) * static_cast<double>(ceil_ns(plan_.interval_steps * step_ns_));
    p = boundary(next_k_ + m);
    return t + static_cast<double>(ceil_ns((target - p) * step_ns_));
  }

  // Brings the running job to time t: progress, blocking checkpoints, durable writes, in order.
  void advance_to(Time t) {
    for (;;) {
      if (in_block_) {
        if (t < block_end_) {
          result_.checkpoint_ns += (t - run_t_).ns;
          run_t_ = t;
          return;
        }
        result_.checkpoint_ns += (block_end_ - run_t_).ns;
        run_t_ = block_end_;
        in_block_ = false;
        if (pending_) make_durable(pending_k_);  // it finished before this snapshot began
        pending_ = false;
        if (plan_.async) {
          pending_ = true;
          pending_k_ = block_k_;
          pending_done_ = block_end_ + plan_.durable_lag;
        } else {
          make_durable(block_k_);
        }
        skip_whole_cycles(t);
        continue;
      }
      if (pending_ && pending_done_ <= t) {
        make_durable(pending_k_);
        pending_ = false;
      }
      const double target = boundary(next_k_);
      const Time reach{run_t_.ns + ceil_ns((target - run_p_) * step_ns_)};
      if (reach > t) {
        const std::int64_t dt = (t - run_t_).ns;
        const double gained = static_cast<double>(dt) / step_ns_;
        account_running(dt, gained);
        run_p_ += gained;
        run_t_ = t;
        return;
      }
      account_running((reach - run_t_).ns, target - run_p_);
      run_p_ = target;
      run_t_ = reach;
      // A checkpoint begins. If the previous asynchronous write is still going, the snapshot waits for it.
      in_block_ = true;
      block_k_ = next_k_++;
      const Time start = pending_ ? std::max(reach, pending_done_) : reach;
      block_end_ = start + plan_.blocking;
    }
  }

  // Just after a checkpoint's blocking part: every whole cycle (compute one interval, then checkpoint) that ends
  // by t is laid out at once, so a quiet month costs a few operations, not one loop per checkpoint. Valid when an
  // asynchronous write always finishes within the next stretch of compute (no snapshot ever waits).
  void skip_whole_cycles(Time t) {
    const std::int64_t compute = ceil_ns(plan_.interval_steps * step_ns_);
    const std::int64_t cycle = compute + plan_.blocking.ns;
    if (cycle <= 0 || plan_.durable_lag.ns > compute) return;
    const std::int64_t n = (t - run_t_).ns / cycle;
    if (n <= 0) return;
    account_running(n * compute, static_cast<double>(n) * plan_.interval_steps);
    result_.checkpoint_ns += n * plan_.blocking.ns;
    run_t_ += Time{n * cycle};
    block_k_ += n;
    next_k_ = block_k_ + 1;
    run_p_ = boundary(block_k_);
    if (plan_.async) {
      make_durable(block_k_ - 1);  // finished within the last stretch of compute
      result_.durable_checkpoints += n - 1;
      pending_ = true;
      pending_k_ = block_k_;
      pending_done_ = run_t_ + plan_.durable_lag;
    } else {
      make_durable(block_k_);
      result_.durable_checkpoints += n - 1;
    }
  }

  void account_running(std::int64_t dt, double gained) {
    result_.progress_made += gained;
    running_ns_ += dt;
    if (step_ns_ == step0_ns_) return;
    // Slower than healthy: the extra time is charged to the straggler, else to the failure that shrank the job.
    const double extra = static_cast<double>(dt) - gained * step0_ns_;
    const std::size_t cause = stragglers_.empty() ? shrink_cause_ : stragglers_.front();
    if (cause < result_.lost_gpu_hours.size()) result_.lost_gpu_hours[cause] += extra * gpu_hours_per_ns_;
  }

  void make_durable(std::int64_t k) {
    durable_p_ = boundary(k);
    epochs_.back().durable_k = k;
    ++result_.durable_checkpoints;
    interruptions_since_durable_ = 0;
  }

  // The job stops running: everything since the newest durable checkpoint is lost (an unfinished checkpoint, or an
  // asynchronous write still in flight, never became durable).
  void stop_running(std::size_t cause) {
    add_lost(run_p_ - durable_p_, cause);
    restore_ = durable_p_;
    discard_running();
  }

  void discard_running() {
    in_block_ = false;
    pending_ = false;
    ++run_gen_;  // cancels the pending completion
  }

  void add_lost(double steps, std::size_t cause) {
    if (steps <= 0) return;
    result_.lost_steps += steps;
    result_.lost_gpu_hours[cause] += steps * step0_ns_ * gpu_hours_per_ns_;
  }

  // Newest durable checkpoint at or below progress p: the rollback target of silent data corruption.
  double newest_durable_at_or_below(double p) const {
    for (auto it = epochs_.rbegin(); it != epochs_.rend(); ++it) {
      if (p < it->anchor) continue;
      const auto k =
          std::min(it->durable_k, static_cast<std::int64_t>(std::floor((p - it->anchor) / plan_.interval_steps)));
      return it->anchor + static_cast<double>(k) * plan_.interval_steps;
    }
    return 0.0;
  }

  void clear_corruption() {
    corrupt_ = false;
    ++sdc_clears_;
  }

  double current_progress() const {
    switch (phase_) {
      case Phase::Running:
        return run_p_;
      case Phase::Draining:
        return drain_p_;
      default:
        return restore_;
    }
  }

  // ---------------------------------------------------------------- phases and the end

  void enter(Phase ph, Time end) {
    phase_ = ph;
    phase_start_ = now();
    enter_keep_start(end);
  }

  void enter_keep_start(Time end) {
    phase_end_ = end;
    ++phase_gen_;
    if (end != Time::max()) schedule_at(end, pack(Kind::PhaseEnd, phase_gen_));
  }

  // Books the time spent in the current down phase, to its category and to the failure that caused it.
  void close_phase() { close_phase_at(now()); }

  void close_phase_at(Time t) {
    const std::int64_t dt = (t - phase_start_).ns;
    switch (phase_) {
      case Phase::Detecting:
        result_.detection_ns += dt;
        break;
      case Phase::Draining:
        result_.drain_ns += dt;
        break;
      case Phase::Waiting:
        result_.waiting_ns += dt;
        break;
      case Phase::Restarting:
        result_.restart_ns += dt;
        break;
      case Phase::Running:
      case Phase::Done:
        return;
    }
    result_.lost_gpu_hours[down_cause_] += static_cast<double>(dt) * gpu_hours_per_ns_;
    phase_start_ = t;
  }

  void on_complete() {
    advance_to(now());
    if ((plan_.total_steps - run_p_) * step_ns_ > 1000.0) {  // a snapshot waited for a write: not there yet
      ++run_gen_;
      schedule_completion();
      return;
    }
    run_p_ = plan_.total_steps;
    stop(true, "", now());
  }

  void stall() {
    std::string why = "stalled: " + std::to_string(plan_.stall_interruptions) +
                      " interruptions in a row without a new durable checkpoint";
    const double wall = static_cast<double>(now().ns);
    if (wall > 0 && static_cast<double>(result_.waiting_ns) > 0.5 * wall) {
      why += " (waiting for repairs " + fmt(100.0 * static_cast<double>(result_.waiting_ns) / wall) +
             "% of the time: add spares or allow shrinking)";
    } else {
      why += " (job MTBF " + fmt(plan_.mtbf.hours()) + " h against checkpoint interval " +
             fmt(plan_.interval.seconds() / 60.0) + " min + checkpoint " + fmt(plan_.blocking.seconds() / 60.0) +
             " min + restart " + fmt((plan_.restart + plan_.load).seconds() / 60.0) + " min)";
    }
    stop(false, why, now());
  }

  // Ends the trial at time t and closes the books: the accounting sums to the wall time exactly.
  void stop(bool finished, std::string reason, Time t) {
    if (phase_ == Phase::Running) {
      advance_to(t);
    } else {
      close_phase_at(t);
    }
    result_.final_steps = current_progress();
    phase_ = Phase::Done;
    result_.finished = finished;
    result_.stop_reason = std::move(reason);
    result_.wall = t;
    record(finished ? (plan_.steps_mode ? "finished" : "window_end") : "never_finished", "");
    result_.productive_ns = std::llround(result_.final_steps * step0_ns_);
    result_.lost_work_ns = std::llround(result_.lost_steps * step0_ns_);
    result_.degraded_ns = running_ns_ - result_.productive_ns - result_.lost_work_ns;
  }

  void record(const char* kind, const std::string& cause) {
    if (!record_ || result_.timeline.size() >= plan_.max_timeline_events) return;
    result_.timeline.push_back(results::RunTimelineEvent{now(), kind, cause});
  }

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
  std::size_t shrink_cause_ = static_cast<std::size_t>(-1);

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

}  // namespace

TrialResult run_trial(const RunPlan& plan, LocalStepTimes& steps, std::uint64_t seed, std::uint64_t trial, bool record,
                      const std::atomic<bool>* cancel) {
  engine::Simulator sim;
  Trial t(sim, plan, steps, seed, trial, record, cancel);
  return t.run();
}

}  // namespace sim::reliability
