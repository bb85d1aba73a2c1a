// sim/execution/step_sim.hpp: one iteration replayed on the discrete-event engine, and its closed-form twin.
#pragma once
#include "sim/execution/step_plan.hpp"
#include "sim/results/step_result.hpp"

#include <functional>
#include <vector>

namespace sim::execution {

enum class Fidelity { Analytic, Replica, Full };
const char* to_string(Fidelity f);

struct StepOptions {
  Fidelity fidelity = Fidelity::Replica;
  /// Full fidelity: per-GPU compute slowdown factors (1.0 = healthy), indexed by GPU id; empty = all healthy.
  std::vector<double> slowdown;
  /// Full fidelity: run data-parallel collectives as flows on the topology (max-min fair sharing of NICs and
  /// switch links among concurrent collectives) instead of their uncontended closed-form times.
  bool network_flows = true;
  /// Record the timeline of tensor-parallel rank 0 of every pipeline stage (and context-parallel rank) of
  /// data-parallel replica 0; tensor-parallel peers run in lockstep with it.
  bool record_timeline = false;
  /// Replica fidelity without slowdowns: simulate one GPU per pipeline stage (and chunk) for its tensor- and
  /// context-parallel peers, which run the same work in lockstep, their collectives as timers. The step time and its
  /// breakdown are the same as replaying every peer (tested); events and simulated_gpus count the GPUs replayed. The
  /// planner's short list uses it (tp x cp times fewer events).
  bool lockstep_peers = false;
  /// Replica and full fidelity: called with the share of the step simulated so far (of the closed form's estimate,
  /// at most 0.99) about 50 times; it may throw to stop the simulation (Ctrl-C). Empty: no report.
  std::function<void(double)> progress = {};
};

/// Simulates one iteration at the requested fidelity. Analytic uses closed forms on the same timed work, replica
/// replays one data-parallel replica (data-parallel and expert-parallel collectives timed on the topology, a
/// data-parallel one beside the other tensor-parallel ranks' where their groups share a leaf), full
/// replays every GPU (every collective a rendezvous of its group, so one slow GPU stretches all it syncs with; data-
/// parallel collectives as flows sharing the topology's links).
/// Memory is filled in by the caller (parallel::memory), not here.
results::StepResult simulate_step(const StepPlan& plan, const StepOptions& options);

/// The closed-form step time (planner fast path and test oracle):
///   1F1B / GPipe:  sum_s (F_s + B_s) + (m - 1) * max_s (F_s + B_s) + 2 (p - 1) t_p2p      (Narayanan et al. SC21)
///   interleaved:   per rank, chunks of 1/v the work: bubble (p - 1)/(v m) of ideal (SC21 Sec. 2.2)
///   ZB-H1:         bubble (p - 1) (F + B - W) instead of (p - 1)(F + B + W) (Qi et al. 2024, Sec. 3)
/// then each rank's data-parallel buckets in order after its last backward, optimizer and parameter gather.
results::StepResult analytic_step(const StepPlan& plan);

}  // namespace sim::execution
