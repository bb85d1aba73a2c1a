// sim/execution/step_sim.cpp: GPU streams, collective rendezvous and pipeline transfers on the engine (the replica and
// full replays; the closed forms are analytic_step.cpp).
#include "sim/execution/step_sim.hpp"

#include "sim/execution/step_breakdown.hpp"

#include "sim/collectives/collective.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/parallel/schedule.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>

namespace sim::execution {

using base::Time;
using parallel::OpKind;
using parallel::PipeOp;

const char* to_string(Fidelity f) {
  switch (f) {
    case Fidelity::Analytic:
      return "analytic";
    case Fidelity::Replica:
      return "replica";
    case Fidelity::Full:
      return "full";
  }
  return "?";
}

using detail::Category;
using enum detail::Category;
using detail::finish_result;

namespace {

class Replay;
class Gpu;
class Group;

/// A data-parallel collective as a GPU's DP stream queues it: its closed-form time, and what to lower into flows.
struct DpWork {
  Time duration;
  collectives::Op op = collectives::Op::AllReduce;
  base::Bytes bytes;
};

/// Runs collectives as flows on the topology: each phase waits its latency, starts one flow per transfer, and ends
/// when its last flow completes (max-min fair sharing among everything in flight, sim/network).
class Network final : public engine::Component {
 public:
  Network(engine::Simulator& sim, const topology::Topology& topo)
      : Component(sim, "network"), topo_(topo), flows_(topo) {}
  void run(collectives::Op op, const std::vector<topology::GpuId>& group, base::Bytes bytes, Group& owner);
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
  void start_phase(std::size_t job);
  void start_flows(std::size_t job);
  void reschedule();

  const topology::Topology& topo_;
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
  std::size_t arrived_ = 0;
  Time duration_;
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
  void enqueue_bucket(const DpWork& w);
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
  State state_ = State::Ready;
  Category cat_ = kIdle;
  Time since_;
  Time op_start_;
  Time end_;
  std::array<Time, kCategories> acc_{};
  std::vector<std::uint8_t> fwd_ready_, bwd_ready_;

  // Gradient buckets waiting for the data-parallel stream, from dp_head_ on. A vector, not a std::deque: a deque's
  // first block (512 bytes) was a third of each simulated GPU's memory at full fidelity.
  std::vector<DpWork> dp_queue_;
  std::size_t dp_head_ = 0;
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

// ---- Group ------------------------------------------------------------------------------------------------------

void Group::complete() {
  arrived_ = 0;
  for (Gpu* g : members_) {
    if (channel_ == Channel::Compute) {
      g->collective_done();
    } else {
      g->dp_done();
    }
  }
}

// ---- Gpu --------------------------------------------------------------------------------------------------------

std::size_t Gpu::ready_index(int mb, int chunk) const {
  return static_cast<std::size_t>(mb) * static_cast<std::size_t>(replay_.plan().vpp()) +
         static_cast<std::size_t>(chunk);
}

const OpWork& Gpu::work(const PipeOp& op) const {
  const StageWork& st = replay_.plan().stage(op.chunk, rank_);
  switch (op.kind) {
    case OpKind::Forward:
      return st.forward;
    case OpKind::Backward:
      return st.backward;
    case OpKind::BackwardInput:
      return st.backward_input;
    case OpKind::BackwardWeight:
      return st.backward_weight;
  }
  return st.forward;
}

void Gpu::enter(State s, Category cat) {
  acc_[static_cast<std::size_t>(cat_)] += now() - since_;
  since_ = now();
  state_ = s;
  cat_ = cat;
}

void Gpu::start() {
  const auto slots = static_cast<std::size_t>(replay_.plan().micro_batches() * replay_.plan().vpp());
  fwd_ready_.assign(slots, 0);
  bwd_ready_.assign(slots, 0);
  since_ = now();
  begin_op();
}

void Gpu::begin_op() {
  const auto& prog = replay_.program(rank_);
  if (op_ == prog.size()) {
    maybe_finish();
    return;
  }
  const PipeOp& op = prog[op_];
  const int vs = parallel::virtual_stage(op.chunk, rank_, replay_.plan().pp());
  bool ready = true;
  if (op.kind == OpKind::Forward && vs > 0) ready = fwd_ready_[ready_index(op.micro_batch, op.chunk)] != 0;
  if ((op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput) && vs < replay_.last_stage())
    ready = bwd_ready_[ready_index(op.micro_batch, op.chunk)] != 0;
  if (!ready) {
    if (state_ != State::WaitingInput) enter(State::WaitingInput, kPpWait);
    return;
  }
  op_start_ = now();
  seg_ = 0;
  run_segment();
}

void Gpu::run_segment() {
  const PipeOp& op = replay_.program(rank_)[op_];
  const OpWork& w = work(op);
  if (seg_ == w.segments.size()) {
    end_op();
    return;
  }
  const TimedSegment& s = w.segments[seg_];
  switch (s.kind) {
    case SegKind::Compute: {
      enter(State::Computing, kCompute);
      const double stretched = static_cast<double>(s.duration.ns) * slowdown_;
      schedule_after(Time{static_cast<std::int64_t>(stretched + 0.5)}, kSegmentDone);
      return;
    }
    case SegKind::Tp:
      enter(State::Collective, kTp);
      if (tp_ != nullptr) {
        tp_->arrive(s.duration);
      } else {
        schedule_after(s.duration, kSelfTimedDone);  // lockstep: the peers arrive together
      }
      return;
    case SegKind::Cp:
      enter(State::Collective, kCp);
      if (cp_ != nullptr) {
        cp_->arrive(s.duration);
      } else {
        schedule_after(s.duration, kSelfTimedDone);
      }
      return;
    case SegKind::Dp:
      enter(State::Collective, kDp);
      schedule_after(s.duration, kSelfTimedDone);  // the exposed part of a prefetched ZeRO-3 gather: timed
      return;
    case SegKind::Ep:
      enter(State::Collective, kEp);
      if (replay_.full() && ep_ != nullptr) {
        ep_->arrive(s.duration);
      } else {
        schedule_after(s.duration, kSelfTimedDone);  // replica: the other replicas are symmetric
      }
      return;
  }
}

void Gpu::segment_done() {
  const PipeOp& op = replay_.program(rank_)[op_];
  const OpWork& w = work(op);
  const TimedSegment& s = w.segments[seg_];
  if (s.kind != SegKind::Compute)
    record(
        s.kind == SegKind::Tp   ? 1
        : s.kind == SegKind::Cp ? 4
        : s.kind == SegKind::Dp ? 3
                                : 5,
        [&]() -> const std::string& { return replay_.plan().labels[s.label]; }, since_, now());
  // Gradient buckets become ready during the last micro-batch's gradient pass of each chunk (ZeRO >= 2: during
  // every micro-batch's).
  const bool grad_op = replay_.plan().schedule == parallel::Schedule::ZeroBubbleH1 ? op.kind == OpKind::BackwardWeight
                                                                                   : op.kind == OpKind::Backward;
  if (grad_op && (replay_.plan().dp_every_micro_batch || op.micro_batch == replay_.plan().micro_batches() - 1)) {
    for (const auto& b : replay_.plan().stage(op.chunk, rank_).buckets)
      if (b.ready_after == static_cast<int>(seg_))
        enqueue_bucket({b.duration,
                        replay_.plan().dp_reduce_scatter ? collectives::Op::ReduceScatter : collectives::Op::AllReduce,
                        b.bytes});
  }
  ++seg_;
  run_segment();
}

void Gpu::end_op() {
  const PipeOp& op = replay_.program(rank_)[op_];
  const auto& plan = replay_.plan();
  const int pp = plan.pp();
  const int vs = parallel::virtual_stage(op.chunk, rank_, pp);
  record(
      0,
      [&] {
        return std::string(parallel::to_string(op.kind)) + std::to_string(op.micro_batch) +
               (plan.vpp() > 1 ? ".c" + std::to_string(op.chunk) : "");
      },
      op_start_, now());
  const Time arrive = now() + plan.p2p;
  if (op.kind == OpKind::Forward && vs < replay_.last_stage()) {
    const int to = vs + 1;  // on the next rank; from the last rank it wraps to rank 0, next chunk
    const std::uint64_t arg =
        kForwardInput | static_cast<std::uint64_t>(op.micro_batch) << 8 | static_cast<std::uint64_t>(to / pp) << 40;
    simulator().schedule_at(arrive, engine::kDefaultPriority, *next_, arg);
    record(
        2, [&] { return "send F" + std::to_string(op.micro_batch); }, now(), arrive);
  }
  if ((op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput) && vs > 0) {
    const int to = vs - 1;
    const std::uint64_t arg =
        kBackwardInput | static_cast<std::uint64_t>(op.micro_batch) << 8 | static_cast<std::uint64_t>(to / pp) << 40;
    simulator().schedule_at(arrive, engine::kDefaultPriority, *prev_, arg);
    record(
        2, [&] { return "send B" + std::to_string(op.micro_batch); }, now(), arrive);
  }
  ++op_;
  enter(State::Ready, kIdle);
  begin_op();
}

void Gpu::handle(std::uint64_t arg) {
  const std::uint64_t kind = arg & 0xff;
  if (kind == kSegmentDone || kind == kSelfTimedDone) {
    if (state_ == State::Optimizer) {
      enter(State::Ready, kIdle);
      ++chunks_optimized_;
      maybe_finish();
      return;
    }
    segment_done();
    return;
  }
  if (kind == kDpSelfDone) {
    dp_done();
    return;
  }
  const int mb = static_cast<int>((arg >> 8) & 0xffffffffULL);
  const int chunk = static_cast<int>(arg >> 40);
  auto& flags = kind == kForwardInput ? fwd_ready_ : bwd_ready_;
  flags[ready_index(mb, chunk)] = 1;
  if (state_ == State::WaitingInput) begin_op();
}

void Gpu::enqueue_bucket(const DpWork& w) {
  dp_queue_.push_back(w);
  if (!dp_busy_) dp_start_next();
}

void Gpu::dp_start_next() {
  if (dp_head_ == dp_queue_.size()) return;
  const DpWork w = dp_queue_[dp_head_++];
  if (dp_head_ == dp_queue_.size()) {
    dp_queue_.clear();
    dp_head_ = 0;
  }
  dp_busy_ = true;
  dp_started_ = now();
  if (replay_.full() && dp_ != nullptr) {
    dp_->arrive(w);
  } else {
    schedule_after(w.duration, kDpSelfDone);
  }
}

void Gpu::dp_done() {
  dp_busy_ = false;
  record(
      3, [&] { return state_ == State::ParamGather ? "param all-gather" : "grad reduce"; }, dp_started_, now());
  if (state_ == State::ParamGather) {
    enter(State::Done, kIdle);
    end_ = now();
    return;
  }
  if (dp_head_ < dp_queue_.size()) {
    dp_start_next();
    return;
  }
  if (state_ == State::WaitingDp) maybe_finish();
}

void Gpu::maybe_finish() {
  if (dp_busy_ || dp_head_ < dp_queue_.size()) {
    if (state_ != State::WaitingDp) enter(State::WaitingDp, kDp);
    return;
  }
  const auto& plan = replay_.plan();
  // Optimizer over this rank's chunks (one step each), then the parameter all-gather of ZeRO >= 1.
  if (chunks_optimized_ < plan.vpp()) {
    const Time t = plan.stage(chunks_optimized_, rank_).optimizer;
    enter(State::Optimizer, kOptimizer);
    const double stretched = static_cast<double>(t.ns) * slowdown_;
    schedule_after(Time{static_cast<std::int64_t>(stretched + 0.5)}, kSegmentDone);
    return;
  }
  Time gather;
  for (int c = 0; c < plan.vpp(); ++c)
    gather += plan.stage(c, rank_).param_gather;
  if (gather > Time::zero()) {
    enter(State::ParamGather, kDp);
    dp_busy_ = true;
    dp_started_ = now();
    if (replay_.full() && dp_ != nullptr) {
      dp_->arrive(gather);
    } else {
      schedule_after(gather, kDpSelfDone);
    }
    return;
  }
  enter(State::Done, kIdle);
  end_ = now();
}

std::vector<std::string> Gpu::pending_work() const {
  if (state_ == State::Done) return {};
  const auto& prog = replay_.program(rank_);
  if (op_ < prog.size()) {
    const PipeOp& op = prog[op_];
    return {std::string("op ") + parallel::to_string(op.kind) + " micro-batch " + std::to_string(op.micro_batch) +
            " chunk " + std::to_string(op.chunk) + (state_ == State::WaitingInput ? " waits for its input" : "")};
  }
  return {"waits for data-parallel gradient reduction"};
}

// ---- Network ----------------------------------------------------------------------------------------------------

void Network::run(collectives::Op op, const std::vector<topology::GpuId>& group, base::Bytes bytes, Group& owner) {
  std::size_t job = 0;
  if (free_jobs_.empty()) {
    job = jobs_.size();
    jobs_.emplace_back();
  } else {
    job = free_jobs_.back();
    free_jobs_.pop_back();
  }
  jobs_[job] = Job{collectives::lower(op, collectives::Algorithm::Auto, group, bytes, topo_), 0, 0, &owner};
  start_phase(job);
}

void Network::start_phase(std::size_t job) {
  Job& j = jobs_[job];
  if (j.phase == j.phases.size()) {
    Group* owner = j.owner;
    j = Job{};
    free_jobs_.push_back(job);
    owner->complete();  // may start further collectives (re-entrant run())
    return;
  }
  const Time latency = j.phases[j.phase].latency;
  if (latency > Time::zero()) {
    schedule_after(latency, kPhaseStart | static_cast<std::uint64_t>(job) << 8);
    return;
  }
  start_flows(job);
}

void Network::start_flows(std::size_t job) {
  int started = 0;
  for (const auto& t : jobs_[job].phases[jobs_[job].phase].transfers) {
    if (t.bytes.n <= 0 || t.src == t.dst) continue;
    const network::FlowId id = flows_.start(now(), topo_.path(t.src, t.dst), t.bytes);
    if (job_of_slot_.size() <= id.slot) job_of_slot_.resize(id.slot + 1, 0);
    job_of_slot_[id.slot] = job;
    ++started;
  }
  jobs_[job].outstanding = started;
  if (started == 0) {
    ++jobs_[job].phase;
    start_phase(job);
    return;
  }
  reschedule();
}

void Network::handle(std::uint64_t arg) {
  if ((arg & 0xff) == kPhaseStart) {
    start_flows(static_cast<std::size_t>(arg >> 8));
    return;
  }
  if ((arg >> 8) != generation_) return;  // superseded by a later re-share
  while (auto next = flows_.next_completion()) {
    if (next->first > now()) break;
    flows_.finish(now(), next->second);
    const std::size_t job = job_of_slot_[next->second.slot];
    if (--jobs_[job].outstanding == 0) {
      ++jobs_[job].phase;
      start_phase(job);
    }
  }
  reschedule();
}

void Network::reschedule() {
  const auto next = flows_.next_completion();
  if (!next) return;
  ++generation_;
  schedule_at(std::max(next->first, now()), kCompletion | generation_ << 8);
}

// ---- Replay -----------------------------------------------------------------------------------------------------

Replay::Replay(const StepPlan& plan, const StepOptions& options) : plan_(plan), options_(options) {
  const auto& L = plan.layout;
  for (int r = 0; r < L.pp; ++r)
    programs_.push_back(parallel::pipeline_ops(plan.schedule, L.pp, L.vpp, L.micro_batches, r));
  const parallel::Placement placement(L, plan.order);
  const int dps = full() ? L.dp : 1;
  // Lockstep: one GPU stands for its tensor- and context-parallel peers (see StepOptions::lockstep_peers).
  const int tps = lockstep() ? 1 : L.tp, cps = lockstep() ? 1 : L.cp;
  const std::size_t replica_gpus = static_cast<std::size_t>(tps) * cps * L.pp;
  auto local = [&](int tp, int cp, int dp, int pp) {
    return ((static_cast<std::size_t>(dp) * L.pp + pp) * cps + cp) * tps + tp;
  };
  gpus_.resize(replica_gpus * static_cast<std::size_t>(dps));
  for (int dp = 0; dp < dps; ++dp)
    for (int pp = 0; pp < L.pp; ++pp)
      for (int cp = 0; cp < cps; ++cp)
        for (int tp = 0; tp < tps; ++tp) {
          const int id = placement.gpu(tp, cp, dp, pp);
          const double slow = static_cast<std::size_t>(id) < options.slowdown.size()
                                  ? options.slowdown[static_cast<std::size_t>(id)]
                                  : 1.0;
          // One GPU per pipeline stage of replica 0: its tensor-parallel peers run in lockstep with it.
          const bool rec = options.record_timeline && dp == 0 && tp == 0;
          gpus_[local(tp, cp, dp, pp)] = std::make_unique<Gpu>(sim_, *this, id, pp, slow, rec);
        }
  if (full() && options.network_flows && plan.topology) network_ = std::make_unique<Network>(sim_, *plan.topology);
  auto make_group = [&](const std::string& name, Group::Channel ch) {
    groups_.push_back(std::make_unique<Group>(sim_, name, ch, ch == Group::Channel::Dp ? network_.get() : nullptr));
    return groups_.back().get();
  };
  std::vector<Group*> tp_of(gpus_.size(), nullptr), cp_of(gpus_.size(), nullptr), ep_of(gpus_.size(), nullptr),
      dp_of(gpus_.size(), nullptr);
  for (int dp = 0; dp < dps; ++dp)
    for (int pp = 0; pp < L.pp; ++pp)
      for (int cp = 0; cp < cps; ++cp) {
        if (tps < 2) break;
        Group* g = make_group("tp-group", Group::Channel::Compute);
        for (int tp = 0; tp < L.tp; ++tp) {
          g->add_member(gpus_[local(tp, cp, dp, pp)].get(), placement.gpu(tp, cp, dp, pp));
          tp_of[local(tp, cp, dp, pp)] = g;
        }
      }
  for (int dp = 0; dp < dps && cps > 1; ++dp)
    for (int pp = 0; pp < L.pp; ++pp)
      for (int tp = 0; tp < tps; ++tp) {
        Group* g = make_group("cp-group", Group::Channel::Compute);
        for (int cp = 0; cp < cps; ++cp) {
          g->add_member(gpus_[local(tp, cp, dp, pp)].get(), placement.gpu(tp, cp, dp, pp));
          cp_of[local(tp, cp, dp, pp)] = g;
        }
      }
  if (full()) {
    for (int pp = 0; pp < L.pp; ++pp)
      for (int tp = 0; tp < L.tp; ++tp) {
        for (int cp = 0; cp < L.cp && L.dp > 1; ++cp) {
          Group* g = make_group("dp-group", Group::Channel::Dp);
          for (int dp = 0; dp < L.dp; ++dp) {
            g->add_member(gpus_[local(tp, cp, dp, pp)].get(), placement.gpu(tp, cp, dp, pp));
            dp_of[local(tp, cp, dp, pp)] = g;
          }
        }
      }
  }
  // Expert-parallel groups as Megatron-Core's expert rank generator builds them (Placement's Dim::Ep: consecutive
  // ranks of the combined (dp, cp) index, or with MoE parallel folding ranks that also span tensor parallelism).
  if (full() && L.ep > 1)
    for (int pp = 0; pp < L.pp; ++pp)
      for (int j = 0; j < L.dp * L.cp; ++j)
        for (int tp = 0; tp < L.tp; ++tp) {
          const auto i = local(tp, j % L.cp, j / L.cp, pp);
          if (ep_of[i] != nullptr) continue;
          Group* g = make_group("ep-group", Group::Channel::Compute);
          for (int member : placement.group(parallel::Dim::Ep, placement.gpu(tp, j % L.cp, j / L.cp, pp))) {
            const parallel::Coord c = placement.coord(member);
            const auto k = local(c.tp, c.cp, c.dp, c.pp);
            g->add_member(gpus_[k].get(), member);
            ep_of[k] = g;
          }
        }
  for (int dp = 0; dp < dps; ++dp)
    for (int pp = 0; pp < L.pp; ++pp)
      for (int cp = 0; cp < cps; ++cp)
        for (int tp = 0; tp < tps; ++tp) {
          const auto i = local(tp, cp, dp, pp);
          gpus_[i]->set_groups(tp_of[i], cp_of[i], ep_of[i], dp_of[i]);
          gpus_[i]->set_neighbours(gpus_[local(tp, cp, dp, (pp + L.pp - 1) % L.pp)].get(),
                                   gpus_[local(tp, cp, dp, (pp + 1) % L.pp)].get());
        }
}

results::StepResult Replay::run() {
  for (auto& g : gpus_)
    g->start();
  const engine::RunResult rr = sim_.run();
  if (rr.deadlocked())
    throw base::InternalError("the step simulation deadlocked (a trainsim bug): " + engine::describe(rr));
  const Gpu* critical = gpus_.front().get();
  for (const auto& g : gpus_) {
    SIM_ASSERT(g->done(), "a GPU did not finish its step");
    if (g->end_time() > critical->end_time() || (g->end_time() == critical->end_time() && g->id() < critical->id()))
      critical = g.get();
  }
  int critical_rank = 0;
  for (std::size_t i = 0; i < gpus_.size(); ++i)
    if (gpus_[i].get() == critical)
      critical_rank =
          static_cast<int>((i / static_cast<std::size_t>(lockstep() ? 1 : plan_.layout.tp * plan_.layout.cp)) %
                           static_cast<std::size_t>(plan_.pp()));
  results::StepResult r = finish_result(plan_, critical->end_time(), critical->accounted(), critical_rank);
  r.fidelity = to_string(options_.fidelity);
  r.simulated_gpus = static_cast<std::int64_t>(gpus_.size());
  r.events = static_cast<std::int64_t>(rr.events);
  r.critical_gpu = critical->id();
  std::sort(spans_.begin(), spans_.end(), [](const results::Span& a, const results::Span& b) {
    return std::tie(a.gpu, a.stream, a.start.ns) < std::tie(b.gpu, b.stream, b.start.ns);
  });
  r.timeline = std::move(spans_);
  return r;
}

}  // namespace

namespace detail {

/// The idle time a schedule inherits even with free pipeline transfers, on pipeline rank `rank`.
Time ideal_bubble(const StepPlan& plan, int rank) {
  Time f, b, bi, w;
  for (int c = 0; c < plan.vpp(); ++c) {
    const StageWork& st = plan.stage(c, rank);
    f += st.forward.total();
    b += st.backward.total();
    bi += st.backward_input.total();
    w += st.backward_weight.total();
  }
  const std::int64_t p1 = plan.pp() - 1;
  if (plan.schedule == parallel::Schedule::ZeroBubbleH1) return std::max(Time::zero(), Time{p1 * (f + bi - w).ns});
  return Time{p1 * (f + b).ns / plan.vpp()};
}

results::StepResult finish_result(const StepPlan& plan, Time step, const std::array<Time, kCategories>& acc,
                                  int critical_rank) {
  results::StepResult r;
  // Input pipeline: loaders prefetch the next batches while the GPUs compute (PyTorch DataLoader prefetch_factor,
  // Megatron's background data iterator), so data costs time only when delivering one iteration's tokens takes
  // longer than the iteration itself: step = max(compute step, tokens / delivered rate).
  if (plan.data_tokens_per_s > 0) {
    const Time fetch = Time::from_seconds(plan.tokens / plan.data_tokens_per_s);
    if (fetch > step) {
      r.breakdown.data_stall = fetch - step;
      step = fetch;
    }
  }
  r.step_time = step;
  const double s = step.seconds();
  r.tokens_per_s = plan.tokens / s;
  r.tflops_per_gpu = plan.model_flops / s / plan.gpus * 1e-12;
  r.mfu = plan.model_flops / (s * plan.gpus * plan.peak.flops_per_s);
  r.hfu = plan.hardware_flops / (s * plan.gpus * plan.peak.flops_per_s);
  auto& b = r.breakdown;
  b.compute = acc[kCompute];
  b.tp_exposed = acc[kTp];
  b.cp_exposed = acc[kCp];
  b.ep_exposed = acc[kEp];
  b.pp_bubble = std::min(acc[kPpWait], ideal_bubble(plan, critical_rank));
  b.pp_exposed = acc[kPpWait] - b.pp_bubble;
  b.dp_exposed = acc[kDp] + acc[kIdle];  // idle only ever holds zero-length gaps between states
  b.optimizer = acc[kOptimizer];
  return r;
}

}  // namespace detail

results::StepResult simulate_step(const StepPlan& plan, const StepOptions& options) {
  if (options.fidelity == Fidelity::Analytic) return analytic_step(plan);
  Replay replay(plan, options);
  return replay.run();
}

}  // namespace sim::execution
