// sim/execution/replay.hpp: (internal to sim/execution) the components of a replayed step: GPUs with their
// streams (replay_gpu.cpp), parallel groups' rendezvous and the flow-level network (step_sim.cpp), and the replay
// that wires them on the engine. Split from step_sim.cpp along that seam: what one GPU does vs how they meet.
#pragma once
#include "sim/execution/step_breakdown.hpp"
#include "sim/execution/step_sim.hpp"

#include "sim/collectives/collective.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/parallel/schedule.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sim::execution::replay {

using base::Time;
using detail::Category;
using parallel::OpKind;
using parallel::PipeOp;
using enum detail::Category;

class Replay;
class Gpu;
class Group;

/// A data-parallel collective as a GPU's DP stream queues it: its closed-form time, and what to lower into flows.
struct DpWork {
  Time duration;
  collectives::Op op = collectives::Op::AllReduce;
  base::Bytes bytes;
  base::Bytes expert_bytes;  // the routed experts' gradients, over the expert-data-parallel groups after `bytes`
  Time expert_duration;      // their closed form (for groups that reach beyond one data-parallel group)
};

/// Runs collectives as flows on the topology: each phase waits its latency, starts one flow per transfer, and ends
/// when its last flow completes (max-min fair sharing among everything in flight, sim/network).
class Network final : public engine::Component {
 public:
  Network(engine::Simulator& sim, const topology::Topology& topo)
      : Component(sim, "network"), topo_(topo), cost_(topo), flows_(topo) {}
  void run(collectives::Op op, const std::vector<topology::GpuId>& group, base::Bytes bytes, Group& owner);
  /// Hybrid sharding's gradient reduction: a reduce-scatter in every copy's group at once, then each shard's
  /// all-reduce across the copies, all groups' transfers of a phase sharing the network.
  void run_hybrid(const std::vector<std::vector<topology::GpuId>>& shards,
                  const std::vector<std::vector<topology::GpuId>>& replicas, base::Bytes bytes, Group& owner);
  /// A bucket with routed experts' gradients: `op` over the whole data-parallel group, then over every
  /// expert-data-parallel group of its members at once.
  void run_with_experts(collectives::Op op, const std::vector<topology::GpuId>& group, base::Bytes bytes,
                        const std::vector<std::vector<topology::GpuId>>& experts, base::Bytes expert_bytes,
                        Group& owner);
  void handle(std::uint64_t arg) override;
  std::vector<std::string> pending_work() const override {
    if (flows_.active() == 0) return {};
    return {std::to_string(flows_.active()) + " flows in flight"};
  }

 private:
  static constexpr std::uint64_t kPhaseStart = 1, kCompletion = 2;
  struct Job {
    std::vector<collectives::Phase> phases;
    std::size_t phase = 0;
    int outstanding = 0;
    Group* owner = nullptr;
  };
  std::size_t new_job(Group& owner);
  /// Appends `op` over each of `groups` as the same phases (the slowest latency), their transfers side by side.
  void side_by_side(std::vector<collectives::Phase>& phases, collectives::Op op,
                    const std::vector<std::vector<topology::GpuId>>& groups, base::Bytes bytes);
  void start_phase(std::size_t job);
  void start_flows(std::size_t job);
  void reschedule();

  const topology::Topology& topo_;
  collectives::CollectiveCostModel cost_;  // the algorithm choice of every lowering, its buffers reused
  network::FlowModel flows_;
  std::vector<Job> jobs_;
  std::vector<std::size_t> free_jobs_;
  std::vector<std::size_t> job_of_slot_;
  std::uint64_t generation_ = 0;
};

/// A parallel group's rendezvous: a collective starts when its last member arrives and ends `duration` later.
/// Members run identical programs, so the k-th arrival of each member belongs to the same collective.
class Group final : public engine::Component {
 public:
  enum class Channel : std::uint8_t { Compute, Dp };
  Group(engine::Simulator& sim, std::string name, Channel channel, Network* network)
      : Component(sim, std::move(name)), channel_(channel), network_(network) {}
  void add_member(Gpu* g, topology::GpuId gpu_id) {
    members_.push_back(g);
    ids_.push_back(gpu_id);
  }
  std::size_t size() const { return members_.size(); }
  /// Hybrid sharding: the members' ids by copy's group and by shard (each across the copies); a reduce-scatter then
  /// runs as both (Network::run_hybrid).
  void set_hybrid(std::vector<std::vector<topology::GpuId>> shards,
                  std::vector<std::vector<topology::GpuId>> replicas) {
    shards_ = std::move(shards);
    replicas_ = std::move(replicas);
  }
  /// The members' ids by expert-data-parallel group, where those differ from the data-parallel group and each lies
  /// within it (otherwise the experts' reduction takes its closed-form time after the flows).
  void set_expert_groups(std::vector<std::vector<topology::GpuId>> groups) { experts_ = std::move(groups); }
  void arrive(Time duration) {
    if (arrived_ == 0) duration_ = duration;
    duration_ = std::max(duration_, duration);
    if (++arrived_ < members_.size()) return;
    schedule_after(duration_, 0);
  }
  /// A data-parallel collective: as flows when the replay has a network, else its closed-form time.
  void arrive(const DpWork& w) {
    if (network_ == nullptr) {
      arrive(w.duration);
      return;
    }
    if (++arrived_ < members_.size()) return;
    if (!shards_.empty() && w.op == collectives::Op::ReduceScatter) {
      network_->run_hybrid(shards_, replicas_, w.bytes, *this);
      return;
    }
    if (w.expert_bytes.n > 0 && !experts_.empty()) {
      network_->run_with_experts(w.op, ids_, w.bytes, experts_, w.expert_bytes, *this);
      return;
    }
    tail_ = w.expert_bytes.n > 0 ? w.expert_duration : Time::zero();
    if (w.bytes.n == 0) {
      schedule_after(std::exchange(tail_, Time::zero()), 0);
      return;
    }
    network_->run(w.op, ids_, w.bytes, *this);
  }
  void handle(std::uint64_t) override { complete(); }
  /// The collective finished: every member continues.
  void complete();
  std::vector<std::string> pending_work() const override {
    if (arrived_ == 0) return {};
    return {std::to_string(arrived_) + " of " + std::to_string(members_.size()) + " members arrived at a collective"};
  }

 private:
  Channel channel_;
  Network* network_;
  std::vector<Gpu*> members_;
  std::vector<topology::GpuId> ids_;
  std::vector<std::vector<topology::GpuId>> shards_, replicas_, experts_;
  std::size_t arrived_ = 0;
  Time duration_;
  Time tail_;  // the experts' closed-form reduction, still to run after the flows
};

/// One simulated GPU: a compute stream walking its pipeline program, and a data-parallel stream for gradients.
class Gpu final : public engine::Component {
 public:
  // Event kinds in the low bits of the event argument.
  static constexpr std::uint64_t kSegmentDone = 0, kForwardInput = 1, kBackwardInput = 2, kSelfTimedDone = 3,
                                 kDpSelfDone = 4;

  Gpu(engine::Simulator& sim, Replay& replay, int id, int rank, double slowdown, bool record)
      : Component(sim, "gpu" + std::to_string(id)),
        replay_(replay),
        id_(id),
        rank_(rank),
        slowdown_(slowdown),
        record_(record) {}

  void set_groups(Group* tp, Group* cp, Group* ep, Group* dp) {
    tp_ = tp;
    cp_ = cp;
    ep_ = ep;
    dp_ = dp;
  }
  void set_neighbours(Gpu* prev, Gpu* next) {
    prev_ = prev;
    next_ = next;
  }
  void start();
  void handle(std::uint64_t arg) override;
  void collective_done() { segment_done(); }
  void dp_done();
  std::vector<std::string> pending_work() const override;

  int id() const { return id_; }
  Time end_time() const { return end_; }
  bool done() const { return state_ == State::Done; }
  const std::array<Time, kCategories>& accounted() const { return acc_; }

 private:
  enum class State : std::uint8_t {
    Ready,
    Computing,
    Collective,
    WaitingInput,
    WaitingDp,
    Optimizer,
    ParamGather,
    Done
  };

  void enter(State s, Category cat);
  void begin_op();
  void run_segment();
  void segment_done();
  void end_op();
  void maybe_finish();
  /// Whether `op` reduces its gradient buckets (the gradient pass of the last micro-batch; every one with ZeRO >= 2).
  bool reduces_buckets(const PipeOp& op) const;
  /// DualPipeV's W ops: the buckets are cut along its full backward's segments, so a W op releases all of its
  /// chunk's buckets when it ends.
  bool whole_bucket_op(const PipeOp& op) const;
  void enqueue_bucket();
  void dp_start_next();
  /// Adds a span to the timeline when this GPU records one; `name` (a callable returning the label) runs only then, so
  /// that a replay without a timeline builds no strings (they were a third of the planner's replica phase).
  template <class Name>
  void record(std::uint8_t stream, Name&& name, Time start, Time end);
  const OpWork& work(const PipeOp& op) const;
  std::size_t ready_index(int mb, int chunk) const;

  Replay& replay_;
  int id_;
  int rank_;
  double slowdown_;
  bool record_;
  Group* tp_ = nullptr;
  Group* cp_ = nullptr;
  Group* ep_ = nullptr;
  Group* dp_ = nullptr;
  Gpu* prev_ = nullptr;  // same coordinates, previous pipeline rank (rank 0 wraps to the last: interleaving)
  Gpu* next_ = nullptr;  // same coordinates, next pipeline rank (the last wraps to rank 0)

  std::size_t op_ = 0;
  std::size_t seg_ = 0;
  // The op in hand, looked up once when it starts (run_segment and segment_done ran work() and a scan of the stage's
  // buckets on every segment: about a tenth of a replica replay's instructions). Its buckets become ready in list
  // order (ready_after does not decrease), so a cursor finds the next.
  const OpWork* work_ = nullptr;
  const std::vector<DpBucket>* buckets_ = nullptr;  // null when this op releases none segment by segment
  std::size_t bucket_cursor_ = 0;
  State state_ = State::Ready;
  Category cat_ = kIdle;
  Time since_;
  Time op_start_;
  Time end_;
  std::array<Time, kCategories> acc_{};
  std::vector<std::uint8_t> fwd_ready_, bwd_ready_;

  // Gradient buckets waiting for the data-parallel stream: how many are ready, and where the next one is (an op of
  // this rank's program and a bucket of its stage). Buckets become ready in program order, so a cursor is the whole
  // queue: no per-GPU allocation, whose cold memory was the full-fidelity replay's cost at 32k GPUs and beyond.
  std::uint32_t dp_ready_ = 0;
  std::uint32_t dp_op_ = 0;
  std::uint32_t dp_bucket_ = 0;
  bool dp_busy_ = false;
  Time dp_started_;
  int chunks_optimized_ = 0;
};

/// Owns the engine, the GPUs and the groups of one replay.
class Replay {
 public:
  Replay(const StepPlan& plan, const StepOptions& options);
  results::StepResult run();

  const StepPlan& plan() const { return plan_; }
  bool full() const { return options_.fidelity == Fidelity::Full; }
  bool lockstep() const { return !full() && options_.lockstep_peers && options_.slowdown.empty(); }
  const std::vector<PipeOp>& program(int rank) const { return programs_[static_cast<std::size_t>(rank)]; }
  int last_stage() const { return plan_.pp() * plan_.vpp() - 1; }
  void add_span(results::Span s) { spans_.push_back(std::move(s)); }

 private:
  const StepPlan& plan_;
  const StepOptions& options_;
  engine::Simulator sim_;
  std::vector<std::vector<PipeOp>> programs_;
  std::unique_ptr<Network> network_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::vector<results::Span> spans_;
};

template <class Name>
void Gpu::record(std::uint8_t stream, Name&& name, Time start, Time end) {
  if (record_ && start < end) replay_.add_span({id_, stream, std::string(name()), start, end});
}

}  // namespace sim::execution::replay
