// sim/reliability/trial_running.cpp: class Trial (trial.hpp) while the job runs: progress at the current step rate,
// checkpoints laid out in progress space, durable and lost work; the phases of recovery and the end of the trial.
// Construction, the event loop, failure arrivals and recovery decisions are in run_trial.cpp.
#include "sim/reliability/trial.hpp"

namespace sim::reliability::detail {

void Trial::resume_running() {
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
void Trial::set_rate() {
  const Time st = steps_.get(missing_replicas_, !stragglers_.empty());
  SIM_ASSERT(st.ns > 0 && st != Time::max(), "the step-time callback gave no usable time for a running state");
  step_ns_ = static_cast<double>(st.ns);
  ++run_gen_;
  schedule_completion();
}

void Trial::schedule_completion() {
  if (!plan_.steps_mode) return;
  const Time start = in_block_ ? std::max(block_end_, run_t_) : run_t_;
  const double delta = time_to_reach(plan_.total_steps);
  if (delta <= static_cast<double>((plan_.horizon - start).ns))
    schedule_at(start + Time{static_cast<std::int64_t>(delta)}, pack(Kind::Complete, run_gen_));
}

double Trial::boundary(std::int64_t k) const {
  return epochs_.back().anchor + static_cast<double>(k) * plan_.interval_steps;
}

// How long after `start` (the end of the current checkpoint, if one is being written, else now) progress reaches
// `target` if nothing happens meanwhile, in ns. A double relative to an integer start: absolute times near 1e16 ns
// would lose whole nanoseconds in a double. Segments between checkpoints are rounded up to whole nanoseconds as
// advance_to rounds them; a snapshot held up by an unfinished asynchronous write is not foreseen (on_complete then
// finds the job not quite there and asks again).
double Trial::time_to_reach(double target) const {
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
void Trial::advance_to(Time t) {
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
void Trial::skip_whole_cycles(Time t) {
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

void Trial::account_running(std::int64_t dt, double gained) {
  result_.progress_made += gained;
  running_ns_ += dt;
  if (step_ns_ == step0_ns_) return;
  // Slower than healthy: the extra time is charged to the straggler, else to the failure that shrank the job.
  const double extra = static_cast<double>(dt) - gained * step0_ns_;
  const std::size_t cause = stragglers_.empty() ? shrink_cause_ : stragglers_.front();
  if (cause < result_.lost_gpu_hours.size()) result_.lost_gpu_hours[cause] += extra * gpu_hours_per_ns_;
}

void Trial::make_durable(std::int64_t k) {
  durable_p_ = boundary(k);
  epochs_.back().durable_k = k;
  ++result_.durable_checkpoints;
  interruptions_since_durable_ = 0;
}

// The job stops running: everything since the newest durable checkpoint is lost (an unfinished checkpoint, or an
// asynchronous write still in flight, never became durable).
void Trial::stop_running(std::size_t cause) {
  add_lost(run_p_ - durable_p_, cause);
  restore_ = durable_p_;
  discard_running();
}

void Trial::discard_running() {
  in_block_ = false;
  pending_ = false;
  ++run_gen_;  // cancels the pending completion
}

void Trial::add_lost(double steps, std::size_t cause) {
  if (steps <= 0) return;
  result_.lost_steps += steps;
  result_.lost_gpu_hours[cause] += steps * step0_ns_ * gpu_hours_per_ns_;
}

// Newest durable checkpoint at or below progress p: the rollback target of silent data corruption.
double Trial::newest_durable_at_or_below(double p) const {
  for (auto it = epochs_.rbegin(); it != epochs_.rend(); ++it) {
    if (p < it->anchor) continue;
    const auto k =
        std::min(it->durable_k, static_cast<std::int64_t>(std::floor((p - it->anchor) / plan_.interval_steps)));
    return it->anchor + static_cast<double>(k) * plan_.interval_steps;
  }
  return 0.0;
}

void Trial::clear_corruption() {
  corrupt_ = false;
  ++sdc_clears_;
}

double Trial::current_progress() const {
  switch (phase_) {
    case Phase::Running:
      return run_p_;
    case Phase::Draining:
      return drain_p_;
    default:
      return restore_;
  }
}

void Trial::enter(Phase ph, Time end) {
  phase_ = ph;
  phase_start_ = now();
  enter_keep_start(end);
}

void Trial::enter_keep_start(Time end) {
  phase_end_ = end;
  ++phase_gen_;
  if (end != Time::max()) schedule_at(end, pack(Kind::PhaseEnd, phase_gen_));
}

void Trial::close_phase_at(Time t) {
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

void Trial::on_complete() {
  advance_to(now());
  if ((plan_.total_steps - run_p_) * step_ns_ > 1000.0) {  // a snapshot waited for a write: not there yet
    ++run_gen_;
    schedule_completion();
    return;
  }
  run_p_ = plan_.total_steps;
  stop(true, "", now());
}

void Trial::stall() {
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
void Trial::stop(bool finished, std::string reason, Time t) {
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

void Trial::record(const char* kind, const std::string& cause) {
  if (!record_) return;
  // The last two slots: where the recording stops, and the trial's end, so that a cut timeline never reads as the
  // whole run (a user trial: a 54-day report drawn from 2,000 events that stopped at day 52, without a word).
  const std::string_view k = kind;
  const bool end = k == "finished" || k == "window_end" || k == "never_finished";
  if (!end && result_.timeline.size() + 2 >= plan_.max_timeline_events) {
    if (result_.timeline.empty() || result_.timeline.back().kind != "timeline_truncated")
      result_.timeline.push_back(results::RunTimelineEvent{now(), "timeline_truncated", ""});
    return;
  }
  result_.timeline.push_back(results::RunTimelineEvent{now(), kind, cause});
}
}  // namespace sim::reliability::detail
