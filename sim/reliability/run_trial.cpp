// sim/reliability/run_trial.cpp: the trial timeline: failure arrivals, detection, checkpoints, restarts, repairs.
// Seam: this file holds the run plan, the step-time caches and class Trial's construction, event loop, failure
// arrivals and recovery; trial_running.cpp holds its progress while running, checkpoints, phases and the end.
#include "sim/reliability/run_trial.hpp"

#include "sim/reliability/trial.hpp"

#include <string_view>
#include <unordered_map>

namespace sim::reliability {

namespace {

using base::Time;
using detail::ceil_ns;
using detail::fmt;
using detail::kMaxHorizonS;
using detail::kMaxIntervalS;
using detail::Trial;
using hardware::FailureEffect;
using hardware::FailureScope;

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
    cp.sampled = !replaced_by_trace(in, p.components.size());
    p.components.push_back(std::move(cp));
  }
  if (in.trace) {
    std::unordered_map<std::string_view, std::size_t> index;
    for (std::size_t i = 0; i < in.components.size(); ++i)
      index.emplace(in.components[i].name, i);
    p.trace_span_ns = std::max<std::int64_t>(1, Time::from_seconds(in.trace->span_s).ns);
    p.trace.reserve(in.trace->events.size());
    for (const auto& e : in.trace->events)
      if (const auto it = index.find(e.component); it != index.end())
        p.trace.emplace_back(std::min(Time::from_seconds(e.at_s).ns, p.trace_span_ns - 1), it->second);
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
  if (in.checkpoint.policy == CheckpointPolicy::Fixed && in.checkpoint.interval_steps > 0)
    steps = in.checkpoint.interval_steps;
  p.asked_interval_steps = steps;
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

namespace detail {

Trial::Trial(engine::Simulator& sim, const RunPlan& plan, LocalStepTimes& steps, std::uint64_t seed,
             std::uint64_t trial, bool record, const std::atomic<bool>* cancel)
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

TrialResult Trial::run() {
  const double horizon_s = plan_.horizon.seconds();
  for (std::size_t c = 0; c < sources_.size(); ++c) {
    if (!plan_.components[c].sampled) continue;
    init_source(c);
    schedule_source(c, horizon_s);
  }
  schedule_trace(0);
  epochs_.push_back(Epoch{0.0, 0});
  restore_ = 0;
  resume_running();
  // The cancel flag is read every 4,096 events: a relaxed atomic load is cheap, but not free at 1e8 events/s.
  std::uint32_t polls = 0;
  bool cancelled = false;
  const engine::RunResult rr = simulator().run(
      engine::RunLimits{.until = plan_.horizon, .max_events = kMaxTrialEvents, .stop_when = [this, &polls, &cancelled] {
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
      // A horizon cut to the simulator's 200 years is the run's length, not its failures (a user trial: a 201-year
      // run was told that "at these failure rates the run stalls").
      const bool capped = plan_.horizon.seconds() >= kMaxHorizonS * (1 - 1e-12);
      stop(false,
           std::string(capped ? "not finished within the simulator's range of 200 years, "
                              : "not finished within the "
                                "horizon of ") +
               fmt(plan_.horizon.days()) + " days (" + fmt(plan_.horizon.seconds() / plan_.failure_free.seconds()) +
               " x the failure-free time" +
               (capped ? ": the run is too long to simulate; train fewer tokens or simulate a window)" : ")") +
               "; progress " + fmt(100.0 * current_progress() / plan_.total_steps) + "%",
           plan_.horizon);
    } else {
      stop(true, "", plan_.window);
    }
  }
  return std::move(result_);
}

void Trial::handle(std::uint64_t arg) {
  const auto kind = static_cast<Kind>(arg >> kKindShift);
  const std::uint64_t payload = arg & kPayloadMask;
  switch (kind) {
    case Kind::Failure:
      on_arrival(static_cast<std::size_t>(payload), true);
      break;
    case Kind::TraceFailure: {
      schedule_trace(payload + 1);
      on_arrival(plan_.trace[payload % plan_.trace.size()].second, false);
      break;
    }
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

void Trial::init_source(std::size_t c) {
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

void Trial::advance_source(std::size_t c) {
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

void Trial::schedule_source(std::size_t c, double horizon_s) {
  const double t = sources_[c].next_s;
  if (t <= horizon_s) schedule_at(Time::from_seconds(t), pack(Kind::Failure, c));
}

// The trace's event `n` counted over its repetitions: event n % size of repetition n / size.
void Trial::schedule_trace(std::uint64_t n) {
  if (plan_.trace.empty()) return;
  const std::uint64_t size = plan_.trace.size();
  const auto rep = static_cast<std::int64_t>(n / size);
  // Past the horizon (at most 200 years, and the span at least 1 ns) nothing is scheduled. Compared before adding, so
  // that neither rep x span nor the sum overflows (a 200-year span on a 200-year window sums to 400 years).
  if (rep > plan_.horizon.ns / plan_.trace_span_ns) return;
  const std::int64_t start = rep * plan_.trace_span_ns;  // at most the horizon
  const std::int64_t at = plan_.trace[n % size].first;
  if (at <= plan_.horizon.ns - start) schedule_at(Time{start + at}, pack(Kind::TraceFailure, n));
}

void Trial::on_arrival(std::size_t c, bool sampled) {
  const ComponentPlan& cp = plan_.components[c];
  // Thinning keeps the stream aligned whatever the state: a uniform is drawn for every arrival. A failure of a
  // part the job no longer holds (its node is out, not replaced) does not reach the job.
  const double u = sources_[c].rng.uniform();
  // Which node, in [0, nodes): those in use first, then idle, then out. A logged failure (a trace's) happened to a
  // part the job held: it hits one of the nodes still there (a user trial: a second failure while the first node was
  // out was absorbed by it in 1 trial in 8, though the log has two).
  const double present = static_cast<double>(plan_.job.nodes - missing_nodes_);
  const double hit = u * (sampled ? plan_.job.nodes : present);
  const bool reaches_job = !cp.thinned || hit < present;
  if (sampled) {
    advance_source(c);
    schedule_source(c, plan_.horizon.seconds());
  }
  if (!reaches_job) return;
  // A shrunk job runs on the nodes of its remaining replicas: a failure of a healthy node it left idle sends that
  // node to repair but stops nothing.
  if (cp.thinned && missing_replicas_ > 0 && phase_ == Phase::Running && hit >= static_cast<double>(nodes_in_use())) {
    take_out_nodes(c, cp.nodes_affected);
    return;
  }
  // A loss spike comes from training itself (its rate is per optimiser step): none while the job is down.
  if (cp.effect == FailureEffect::LossSpike && phase_ != Phase::Running) return;

  if (phase_ == Phase::Running) advance_to(now());
  // Counted once, when it interrupts work: a crash of a job already down (being detected, or waiting for repairs)
  // only takes its part out; corruption needs a running job; a restart or a drain in progress is work it stops.
  // A straggler stops nothing when it starts (the job runs on, slower): it is counted when its drain, or the restart
  // it makes start over, stops work (on_straggler_detected); one swapped out at another failure's restart is never
  // counted (a user trial: it was counted at onset though nothing stopped, and the count depended on timing).
  const bool corrupting = cp.effect == FailureEffect::Sdc || cp.effect == FailureEffect::LossSpike;
  const bool slows = cp.effect == FailureEffect::Straggler;
  const bool interrupts = !slows && (phase_ == Phase::Running ||
                                     (!corrupting && (phase_ == Phase::Restarting || phase_ == Phase::Draining)));
  if (interrupts) ++result_.interruptions[c];
  if (interrupts || (slows && phase_ == Phase::Running)) record(hardware::to_string(cp.effect), cp.name);
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
void Trial::interrupt(std::size_t c) {
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
void Trial::corrupt(std::size_t c) {
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
void Trial::slow_down(std::size_t c) {
  const bool first = stragglers_.empty();
  stragglers_.push_back(c);
  if (first && phase_ == Phase::Running) set_rate();
  schedule_at(now() + plan_.components[c].detect, pack(Kind::StragglerDetect, straggler_gen_));
}

void Trial::on_sdc_detected(std::uint64_t payload) {
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

void Trial::on_straggler_detected(std::uint64_t gen) {
  if (gen != straggler_gen_ || stragglers_.empty()) return;  // already swapped out by a restart
  if (phase_ == Phase::Running) {
    // Drain: write a checkpoint of the current state (nothing is lost), then restart without the slow node.
    advance_to(now());
    drain_p_ = run_p_;
    discard_running();
    restore_ = durable_p_;
    down_cause_ = stragglers_.front();
    ++result_.interruptions[down_cause_];
    record("drain", plan_.components[down_cause_].name);
    enter(Phase::Draining, now() + plan_.drain_write);
  } else if (phase_ == Phase::Restarting) {
    ++result_.interruptions[stragglers_.front()];
    close_phase();  // swap the slow node in, restart over
    decide();
  }
}

void Trial::on_repair_done(int nodes) {
  pool_ += nodes;
  record("repaired", "");
  // A shrunk job takes its replicas back once the pool covers every node it lacks: it drains (a checkpoint of the
  // current state, nothing lost) and restarts at full size, as an elastic launcher re-forms the job when nodes
  // return (torchrun's rendezvous with --max-nodes). Until then it runs shrunk.
  if (phase_ == Phase::Running && missing_replicas_ > 0 && pool_ >= missing_nodes_) {
    advance_to(now());
    drain_p_ = run_p_;
    discard_running();
    restore_ = durable_p_;
    down_cause_ = shrink_cause_;
    record("drain", "scale up");
    enter(Phase::Draining, now() + plan_.drain_write);
    return;
  }
  // Back while a shrunk restart is under way: the restart starts over at full size (the launcher's rendezvous
  // re-forms with the returning nodes), not shrunk until some later repair (a user trial: 15 min repairs left a 70B
  // run on half its replicas for weeks).
  const bool shrunk_restart = phase_ == Phase::Restarting && missing_replicas_ > 0 && pool_ >= missing_nodes_;
  if (phase_ != Phase::Waiting && !shrunk_restart) return;
  close_phase();
  decide();
}

int Trial::nodes_in_use() const {
  const long long gpus = static_cast<long long>(plan_.job.dp - missing_replicas_) * plan_.job.gpus_per_replica;
  return static_cast<int>((gpus + plan_.job.gpus_per_node - 1) / plan_.job.gpus_per_node);
}

// The nodes of a failed part leave the job for repair; they come back into the spare pool.
void Trial::take_out_nodes(std::size_t c, int nodes) {
  nodes = std::min(nodes, plan_.job.nodes - missing_nodes_);
  if (nodes <= 0) return;
  missing_nodes_ += nodes;
  node_cause_ = c;
  const ComponentPlan& cp = plan_.components[c];
  const double repair_s =
      plan_.exponential_repair ? sources_[c].repair_rng.exponential(cp.repair_mean_s) : cp.repair_mean_s;
  if (now().seconds() + repair_s > plan_.horizon.seconds()) return;  // back after the end: irrelevant
  schedule_at(now() + Time::from_seconds(repair_s), pack(Kind::RepairDone, static_cast<std::uint64_t>(nodes)));
}

// After detection (or a drain): swap in spares, then restart, shrink or wait.
void Trial::decide() {
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
      // Not running: no replica count stands, and the next decide() compares its drop with none (a review: a stale
      // count kept the shrink charged to a failure whose node was back).
      missing_replicas_ = 0;
      record("waiting_for_repair", "");
      enter(Phase::Waiting, Time::max());
      return;
    }
  }
  // Running shrunk is charged to the failure whose nodes went to repair, not to whatever stopped the job last: a
  // software crash while shrunk restarts the job shrunk again, and took over the cost of the shrink (a user trial:
  // 11.6 times its own cost per failure). Only a deeper shrink changes the cause.
  if (drop > missing_replicas_) shrink_cause_ = node_cause_;
  missing_replicas_ = drop;
  record(drop > 0 ? "restart_shrunk" : "restart", "");
  // A swapped-in spare joins before the restart (eviction, warm standby in, health check).
  enter(Phase::Restarting, now() + (fill > 0 ? plan_.node_swap : Time::zero()) + plan_.restart + plan_.load);
}

void Trial::on_phase_end() {
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
}  // namespace detail

TrialResult run_trial(const RunPlan& plan, LocalStepTimes& steps, std::uint64_t seed, std::uint64_t trial, bool record,
                      const std::atomic<bool>* cancel) {
  engine::Simulator sim;
  Trial t(sim, plan, steps, seed, trial, record, cancel);
  return t.run();
}

}  // namespace sim::reliability
