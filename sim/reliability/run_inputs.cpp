// sim/reliability/run_inputs.cpp: derived job shape, failure-domain sizes, input checks and the analytic job MTBF.
#include "sim/reliability/run_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <limits>
#include <string>

namespace sim::reliability {
namespace {

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

constexpr int kDefaultNodesPerLeaf = 32;  // topology default: 32 NIC ports per leaf, one rail per node
constexpr int kDefaultNodesPerRack = 4;   // topology default (TopologyConfig::nodes_per_rack)

}  // namespace

JobShape JobShape::make(int gpus, int gpus_per_node, int dp, int nodes_per_switch, int nodes_per_rack) {
  JobShape j;
  j.gpus = gpus;
  j.gpus_per_node = gpus_per_node;
  j.dp = dp;
  if (gpus <= 0 || gpus_per_node <= 0 || dp <= 0) return j;  // check_inputs reports it
  j.nodes = ceil_div(gpus, gpus_per_node);
  j.gpus_per_replica = gpus / dp;
  j.nodes_per_switch = std::min(j.nodes, nodes_per_switch > 0 ? nodes_per_switch : kDefaultNodesPerLeaf);
  j.switches = ceil_div(j.nodes, j.nodes_per_switch);
  j.nodes_per_rack = std::min(j.nodes, nodes_per_rack > 0 ? nodes_per_rack : kDefaultNodesPerRack);
  j.racks = ceil_div(j.nodes, j.nodes_per_rack);
  return j;
}

int instances(const JobShape& job, hardware::FailureScope scope) {
  switch (scope) {
    case hardware::FailureScope::Gpu:
      return job.gpus;
    case hardware::FailureScope::Node:
      return job.nodes;
    case hardware::FailureScope::Rack:
      return job.racks;
    case hardware::FailureScope::Switch:
      return job.switches;
    case hardware::FailureScope::Job:
      return 1;
  }
  return 1;
}

int nodes_affected(const JobShape& job, hardware::FailureScope scope) {
  switch (scope) {
    case hardware::FailureScope::Gpu:
      return 1;
    case hardware::FailureScope::Node:
      return 1;
    case hardware::FailureScope::Rack:
      return job.nodes_per_rack;
    case hardware::FailureScope::Switch:
      return job.nodes_per_switch;
    case hardware::FailureScope::Job:
      return 0;
  }
  return 0;
}

base::Time DetectionDelays::of(hardware::FailureEffect effect) const {
  switch (effect) {
    case hardware::FailureEffect::Crash:
      return crash;
    case hardware::FailureEffect::Hang:
      return hang;
    case hardware::FailureEffect::Sdc:
      return sdc;
    case hardware::FailureEffect::Straggler:
      return straggler;
    case hardware::FailureEffect::Maintenance:
      return maintenance;
    case hardware::FailureEffect::LossSpike:
      return loss_spike;
  }
  return crash;
}

const char* to_string(OnSparesExhausted s) {
  switch (s) {
    case OnSparesExhausted::Wait:
      return "wait";
    case OnSparesExhausted::Shrink:
      return "shrink";
  }
  return "?";
}

std::vector<base::Diagnostic> check_inputs(const RunInputs& in) {
  std::vector<base::Diagnostic> out;
  const auto bad = [&out](std::string path, std::string message) {
    out.push_back({"reliability", std::move(path), std::move(message)});
  };
  const JobShape& j = in.job;
  if (j.gpus <= 0) bad("/job/gpus", "must be positive, found " + std::to_string(j.gpus));
  if (j.gpus_per_node <= 0) bad("/job/gpus_per_node", "must be positive, found " + std::to_string(j.gpus_per_node));
  if (j.dp <= 0 || (j.gpus > 0 && j.gpus % std::max(1, j.dp) != 0))
    bad("/job/dp", std::to_string(j.dp) + " replicas do not divide " + std::to_string(j.gpus) + " GPUs");
  if (j.gpus > 0 && j.dp > 0 && j.gpus_per_replica * j.dp != j.gpus)
    bad("/job/gpus_per_replica", "must be gpus / dp; build the shape with JobShape::make");
  if (j.nodes <= 0 || j.nodes_per_switch <= 0 || j.switches <= 0 || j.nodes_per_rack <= 0 || j.racks <= 0)
    bad("/job", "nodes, switches and racks must be positive; build the shape with JobShape::make");
  std::unordered_map<std::string_view, std::size_t> first;  // each name's first component: one error per name
  for (std::size_t i = 0; i < in.components.size(); ++i) {
    const auto& c = in.components[i];
    const std::string at = "/components/" + std::to_string(i);
    if (c.name.empty()) bad(at + "/name", "must not be empty");
    if (!(c.mtbf.s > 0) || !std::isfinite(c.mtbf.s)) bad(at + "/mtbf", "must be a positive, finite duration");
    if (!c.exponential && !(c.weibull_shape > 0)) bad(at + "/distribution", "Weibull shape must be positive");
    if (!(c.repair.s >= 0) || !std::isfinite(c.repair.s)) bad(at + "/repair", "must be a finite duration >= 0");
    // Found by a user trial: a pairwise check gave n^2 lines (4.5 million for 3,000 copies of one component).
    if (const auto [it, fresh] = first.emplace(c.name, i); !fresh && it->second != static_cast<std::size_t>(-1)) {
      bad(at + "/name", "\"" + c.name + "\" appears twice (first at /components/" + std::to_string(it->second) + ")");
      it->second = static_cast<std::size_t>(-1);
    }
  }
  if (in.total_steps.has_value() == in.window.has_value())
    bad("/work", "give exactly one of a number of steps (train until done) or a window (simulate a duration)");
  if (in.total_steps && !(*in.total_steps > 0 && std::isfinite(*in.total_steps)))
    bad("/work/total_steps", "must be positive");
  if (in.window && !(*in.window > base::Time::zero())) bad("/work/window", "must be positive");
  if (!in.step_time) bad("/step_time", "no step-time callback");
  const CheckpointSpec& ck = in.checkpoint;
  if (ck.policy == CheckpointPolicy::Fixed && ck.interval <= base::Time::zero() && !(ck.interval_steps >= 1))
    bad("/checkpoint/interval", "a fixed policy needs an interval > 0 (a time or at least one step)");
  if (!(ck.interval_steps >= 0 && ck.interval_steps <= 1e9))
    bad("/checkpoint/interval_steps", "steps between checkpoints must be 0 (not given) to 1e9");
  if (ck.write < base::Time::zero()) bad("/checkpoint/write", "must be >= 0");
  if (ck.async && (ck.snapshot < base::Time::zero() || ck.snapshot > ck.write))
    bad("/checkpoint/snapshot", "must lie between 0 and the durable write time");
  if (ck.load < base::Time::zero()) bad("/checkpoint/load", "must be >= 0");
  if (in.restart < base::Time::zero()) bad("/restart", "must be >= 0");
  if (in.node_swap < base::Time::zero()) bad("/node_swap", "must be >= 0");
  const DetectionDelays& d = in.detection;
  if (d.crash < base::Time::zero() || d.hang < base::Time::zero() || d.sdc < base::Time::zero() ||
      d.straggler < base::Time::zero() || d.maintenance < base::Time::zero() || d.loss_spike < base::Time::zero())
    bad("/detection", "delays must be >= 0");
  if (!(in.straggler_slowdown >= 1.0)) bad("/straggler_slowdown", "must be >= 1");
  if (in.spares < 0) bad("/spares", "must be >= 0");
  if (in.min_dp_replicas < 1 || in.min_dp_replicas > std::max(1, j.dp))
    bad("/min_dp_replicas", "must lie between 1 and dp");
  if (!(in.horizon_factor >= 1.0)) bad("/horizon_factor", "must be >= 1");
  if (in.trace) {
    const FailureTrace& t = *in.trace;
    if (!(t.span_s > 0) || !std::isfinite(t.span_s)) bad("/trace/span", "must be a positive, finite duration");
    if (t.events.size() > kMaxTraceEvents)
      bad("/trace/events", std::to_string(t.events.size()) + " events; at most " + std::to_string(kMaxTraceEvents));
    for (std::size_t i = 0; i < t.events.size() && i < kMaxTraceEvents; ++i) {
      const auto& e = t.events[i];
      const std::string at = "/trace/events/" + std::to_string(i);
      if (!(e.at_s >= 0 && e.at_s < t.span_s)) bad(at + "/at", "must lie in [0, span)");
      if (i > 0 && e.at_s < t.events[i - 1].at_s) bad(at + "/at", "events must be in time order");
      const auto it = first.find(e.component);
      if (it == first.end() || it->second == static_cast<std::size_t>(-1) || it->second >= t.replaces)
        bad(at + "/component", "\"" + e.component + "\" is not a failure component the trace replaces");
    }
  }
  if (in.stall_interruptions < 1) bad("/stall_interruptions", "must be >= 1");
  return out;
}

bool replaced_by_trace(const RunInputs& in, std::size_t i) {
  return in.trace && i < in.trace->replaces;
}

namespace {

/// Failures per second of the components whose arrivals are drawn (all of them without a trace).
double drawn_rate(const RunInputs& in) {
  double rate = 0;
  for (std::size_t i = 0; i < in.components.size(); ++i)
    if (const auto& c = in.components[i]; c.mtbf.s > 0 && !replaced_by_trace(in, i))
      rate += instances(in.job, c.scope) / c.mtbf.s;
  return rate;
}

}  // namespace

double job_failure_rate(const RunInputs& in) {
  double rate = drawn_rate(in);
  if (in.trace && in.trace->span_s > 0) rate += static_cast<double>(in.trace->events.size()) / in.trace->span_s;
  return rate;
}

base::Duration job_mtbf(const RunInputs& in) {
  const double rate = job_failure_rate(in);
  return base::Duration{rate > 0 ? 1.0 / rate : std::numeric_limits<double>::infinity()};
}

namespace {

/// How much longer than its failure-free time a run trains to its steps: Daly's expected wall time per unit of work
/// (daly_expected_wall_time, checkpoint_policy.hpp) at the job's MTBF, the blocking part of a checkpoint, the restart
/// and checkpoint load as the restart time, and the scenario's interval (Daly's optimum for "auto", as the run takes
/// it). Infinite where e^{(tau + delta + R)/M} passes e^700: such a run does not finish (interruptions_per_trial counts
/// it at its stall). A user trial: loss spikes every step were counted at the failure-free time's 2.4e5 interruptions,
/// where a trial simulates 4.3 million.
double wall_per_work(const RunInputs& in, base::Time step0) {
  const double rate = job_failure_rate(in);
  if (!(rate > 0)) return 1.0;
  const base::Duration mtbf{1.0 / rate}, delta{in.checkpoint.blocking().seconds()},
      restart{in.restart.seconds() + in.checkpoint.load.seconds()};
  const base::Duration fixed{in.checkpoint.interval_steps > 0 ? in.checkpoint.interval_steps * step0.seconds()
                                                              : in.checkpoint.interval.seconds()};
  const base::Duration tau{std::max(checkpoint_interval(in.checkpoint.policy, fixed, delta, mtbf).s, step0.seconds())};
  if (!(tau.s > 0)) return 1.0;
  if ((tau.s + delta.s + restart.s) / mtbf.s > 700) return std::numeric_limits<double>::infinity();
  return std::max(1.0, daly_expected_wall_time(tau, tau, delta, restart, mtbf).s / tau.s);
}

}  // namespace

double interruptions_per_trial(const RunInputs& in, base::Time step0) {
  // A run that cannot finish stalls after stall_interruptions in a row without a durable checkpoint; one that finishes
  // late is cut at horizon_factor x its failure-free time (a review: a 30-day interval against a one-hour MTBF was
  // counted at the event cap, 5e6 per trial, where each trial stalls at 1,000).
  const double factor = in.total_steps ? wall_per_work(in, step0) : 1.0;
  if (std::isinf(factor) && !in.trace)
    return std::min(static_cast<double>(in.stall_interruptions), kMaxTrialEvents / 2);
  const double span_s = in.total_steps ? *in.total_steps * step0.seconds() * std::min(factor, in.horizon_factor)
                        : in.window    ? in.window->seconds()
                                       : 0.0;
  if (!in.trace || !(in.trace->span_s > 0)) return std::min(job_failure_rate(in) * span_s, kMaxTrialEvents / 2);
  // A trace's count is exact: whole repetitions, then the events of the last partial one (a review: the mean rate let
  // a log bunched at its start pass the guard with a fraction of the events it replays).
  const FailureTrace& t = *in.trace;
  const double reps = std::floor(span_s / t.span_s), rest = span_s - reps * t.span_s;
  const auto in_rest = std::upper_bound(t.events.begin(), t.events.end(), rest,
                                        [](double x, const TraceEvent& e) { return x < e.at_s; }) -
                       t.events.begin();
  return std::min(reps * static_cast<double>(t.events.size()) + static_cast<double>(in_rest) + drawn_rate(in) * span_s,
                  kMaxTrialEvents / 2);
}

double mean_nodes_in_repair(const RunInputs& in) {
  double mean = 0;
  if (in.trace && in.trace->span_s > 0) {
    std::unordered_map<std::string_view, const hardware::FailureComponentSpec*> by_name;
    for (const auto& c : in.components)
      by_name.emplace(c.name, &c);
    for (const auto& e : in.trace->events)
      if (const auto it = by_name.find(e.component); it != by_name.end() && it->second->repair.s > 0)
        mean += nodes_affected(in.job, it->second->scope) * it->second->repair.s / in.trace->span_s;  // L = lambda W
  }
  for (std::size_t i = 0; i < in.components.size(); ++i)
    if (const auto& c = in.components[i]; c.mtbf.s > 0 && c.repair.s > 0 && !replaced_by_trace(in, i))
      mean += instances(in.job, c.scope) / c.mtbf.s * nodes_affected(in.job, c.scope) * c.repair.s;  // L = lambda W
  return mean;
}

int auto_spares(const RunInputs& in) {
  const double mean = mean_nodes_in_repair(in);
  if (!(mean > 0) || !std::isfinite(mean)) return 0;
  // Past a few hundred the Poisson law is normal to well within one node (and exp(-mean) would underflow):
  // the 0.99 quantile is mean + 2.326 sqrt(mean).
  // Clamped before the cast: a component failing every nanosecond gives a mean past any int (found by a user trial:
  // the pool came out negative).
  if (mean > 400)
    return static_cast<int>(
        std::min(std::ceil(mean + 2.326 * std::sqrt(mean)), static_cast<double>(std::max(0, in.job.nodes))));
  // Smallest k with P(N <= k) >= 0.99 for N ~ Poisson(mean), summed term by term (mean is at most a few hundred).
  double term = std::exp(-mean), cdf = term;
  int k = 0;
  while (cdf < 0.99 && k < 1'000'000) {
    ++k;
    term *= mean / k;
    cdf += term;
  }
  return std::min(k, std::max(0, in.job.nodes));
}

}  // namespace sim::reliability
