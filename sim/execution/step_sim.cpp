// sim/execution/step_sim.cpp: collective rendezvous, the flow-level network and the replay that runs a step on the
// engine (replica and full fidelity); what one GPU does is replay_gpu.cpp, the closed forms analytic_step.cpp.
#include "sim/execution/step_sim.hpp"

#include "sim/execution/replay.hpp"
#include "sim/execution/step_breakdown.hpp"

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

namespace replay {

// ---- Group ------------------------------------------------------------------------------------------------------

void Group::complete() {
  if (tail_ > Time::zero()) {  // the flows are done; the experts' reduction (closed form) follows
    schedule_after(std::exchange(tail_, Time::zero()), 0);
    return;
  }
  arrived_ = 0;
  for (Gpu* g : members_) {
    if (channel_ == Channel::Compute) {
      g->collective_done();
    } else {
      g->dp_done();
    }
  }
}

// ---- Network ----------------------------------------------------------------------------------------------------

std::size_t Network::new_job(Group& owner) {
  std::size_t job = 0;
  if (free_jobs_.empty()) {
    job = jobs_.size();
    jobs_.emplace_back();
  } else {
    job = free_jobs_.back();
    free_jobs_.pop_back();
  }
  jobs_[job] = Job{{}, 0, 0, &owner};
  return job;
}

void Network::run(collectives::Op op, const std::vector<topology::GpuId>& group, base::Bytes bytes, Group& owner) {
  const std::size_t job = new_job(owner);
  jobs_[job].phases = collectives::lower(cost_, op, collectives::Algorithm::Auto, group, bytes, topo_);
  start_phase(job);
}

void Network::side_by_side(std::vector<collectives::Phase>& phases, collectives::Op op,
                           const std::vector<std::vector<topology::GpuId>>& groups, base::Bytes bytes) {
  // Groups of one step run side by side: phase i of each in one phase (the slowest latency), so every transfer in
  // flight shares the links with the others', as they would.
  const std::size_t at = phases.size();
  for (const auto& g : groups) {
    if (g.size() < 2) continue;
    const auto lowered = collectives::lower(cost_, op, collectives::Algorithm::Auto, g, bytes, topo_);
    if (phases.size() < at + lowered.size()) phases.resize(at + lowered.size());
    for (std::size_t i = 0; i < lowered.size(); ++i) {
      auto& into = phases[at + i];
      into.latency = std::max(into.latency, lowered[i].latency);
      into.transfers.insert(into.transfers.end(), lowered[i].transfers.begin(), lowered[i].transfers.end());
    }
  }
}

void Network::run_hybrid(const std::vector<std::vector<topology::GpuId>>& shards,
                         const std::vector<std::vector<topology::GpuId>>& replicas, base::Bytes bytes, Group& owner) {
  const std::size_t job = new_job(owner);
  auto& phases = jobs_[job].phases;
  side_by_side(phases, collectives::Op::ReduceScatter, shards, bytes);
  const std::int64_t shard = shards.empty() ? 1 : static_cast<std::int64_t>(shards.front().size());
  side_by_side(phases, collectives::Op::AllReduce, replicas, base::Bytes{bytes.n / shard});
  start_phase(job);
}

void Network::run_with_experts(collectives::Op op, const std::vector<topology::GpuId>& group, base::Bytes bytes,
                               const std::vector<std::vector<topology::GpuId>>& experts, base::Bytes expert_bytes,
                               Group& owner) {
  const std::size_t job = new_job(owner);
  auto& phases = jobs_[job].phases;
  if (bytes.n > 0) phases = collectives::lower(cost_, op, collectives::Algorithm::Auto, group, bytes, topo_);
  side_by_side(phases, op, experts, expert_bytes);
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
  for (int r = 0; r < L.pp; ++r) {
    programs_.push_back(parallel::pipeline_ops(plan.schedule, L.pp, L.vpp, L.micro_batches, r));
    // DualPipeV's program comes with its pairs marked.
    if (plan.ep_comm_overlap && plan.schedule != parallel::Schedule::DualPipeV)
      parallel::pair_forward_backward(programs_.back());
  }
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
    // Data parallelism with context parallelism (Placement's Dim::DpCp): CP ranks hold the same weights.
    for (int pp = 0; pp < L.pp; ++pp)
      for (int tp = 0; tp < L.tp && L.dp * L.cp > 1; ++tp) {
        Group* g = make_group("dp-group", Group::Channel::Dp);
        // Hybrid sharding (StepPlan::dp_shard): each copy's group of dp_shard x cp ranks, and each shard's group
        // across the copies (same cp rank and position in its copy).
        const int h = plan.dp_shard;
        std::vector<std::vector<topology::GpuId>> shards(h > 0 ? static_cast<std::size_t>(L.dp / h) : 0),
            replicas(h > 0 ? static_cast<std::size_t>(h * L.cp) : 0);
        for (int member : placement.group(parallel::Dim::DpCp, placement.gpu(tp, 0, 0, pp))) {
          const parallel::Coord c = placement.coord(member);
          const auto k = local(c.tp, c.cp, c.dp, c.pp);
          g->add_member(gpus_[k].get(), member);
          dp_of[k] = g;
          if (h == 0) continue;
          shards[static_cast<std::size_t>(c.dp / h)].push_back(member);
          replicas[static_cast<std::size_t>((c.dp % h) * L.cp + c.cp)].push_back(member);
        }
        if (h > 0) g->set_hybrid(std::move(shards), std::move(replicas));
        // The routed experts' gradients: the members' expert-data-parallel groups, where those are not the whole
        // data-parallel group (ep x expert_tp != tp), as flows when each lies within this group. With MoE parallel
        // folding a group may reach into another TP rank's data-parallel group (tp not dividing ep x expert_tp),
        // which this group's rendezvous does not cover: its closed form is taken then (Group::set_expert_groups).
        const int etp = L.expert_tp > 0 ? L.expert_tp : L.tp;
        if (L.ep * etp != L.tp) {
          const auto dp_members = placement.group(parallel::Dim::DpCp, placement.gpu(tp, 0, 0, pp));
          std::vector<std::vector<topology::GpuId>> experts;
          std::vector<bool> seen(dp_members.size(), false);
          bool within = true;
          for (std::size_t a = 0; a < dp_members.size() && within; ++a) {
            if (seen[a]) continue;
            std::vector<topology::GpuId> e;
            for (int m : placement.group(parallel::Dim::Edp, dp_members[a])) {
              const auto at = std::find(dp_members.begin(), dp_members.end(), m);
              within = within && at != dp_members.end();
              if (!within) break;
              seen[static_cast<std::size_t>(at - dp_members.begin())] = true;
              e.push_back(m);
            }
            experts.push_back(std::move(e));
          }
          if (within) g->set_expert_groups(std::move(experts));
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
  engine::RunResult rr;
  if (options_.progress) {
    // In slices of simulated time against the closed form's estimate (the replay lands within a few per cent of
    // it), so that a long full-fidelity step reports progress and can be interrupted between slices.
    const double estimate = std::max(1e-9, analytic_step(plan_).step_time.seconds());
    constexpr int kSlices = 50;
    std::uint64_t events = 0;
    for (int k = 1;; ++k) {
      rr = sim_.run_until(base::Time::from_seconds(estimate * k / kSlices));
      events += rr.events;
      if (rr.reason != engine::StopReason::TimeLimit) break;
      options_.progress(std::min(0.99, static_cast<double>(k) / kSlices));
    }
    rr.events = events;
  } else {
    rr = sim_.run();
  }
  if (rr.deadlocked())
    throw base::InternalError("the step simulation deadlocked (a trainsim bug): " + engine::describe(rr));
  const Gpu* critical = gpus_.front().get();
  for (const auto& g : gpus_) {
    SIM_ASSERT(g->done(), "a GPU did not finish its step");
    if (g->end_time() > critical->end_time() || (g->end_time() == critical->end_time() && g->id() < critical->id()))
      critical = g.get();
  }
  // The breakdown describes the busiest GPU (the most time computing, then in collectives): the bottleneck stage of
  // an uneven pipeline, or a slow GPU (--slowdown), whose work is what the others wait for. The GPU that finishes last
  // (the first stage, in 1F1B) mostly waits for it, so its breakdown would show the bottleneck's work as pipeline
  // wait; and a collective's time on the GPUs that reach it first includes waiting for the slow one, so compute comes
  // first: a GPU waiting in its gradient reduction is not the busiest. Time after its own end is pipeline wait too.
  // Ties: the lowest id.
  const auto busy = [](const Gpu& g) {
    Time t;
    for (int c = 0; c < kCategories; ++c)
      if (c != kPpWait && c != kIdle) t += g.accounted()[static_cast<std::size_t>(c)];
    return std::pair{g.accounted()[kCompute], t};
  };
  const Gpu* described = gpus_.front().get();
  std::size_t described_index = 0;
  for (std::size_t i = 0; i < gpus_.size(); ++i)
    if (busy(*gpus_[i]) > busy(*described) ||
        (busy(*gpus_[i]) == busy(*described) && gpus_[i]->id() < described->id())) {
      described = gpus_[i].get();
      described_index = i;
    }
  const int described_rank = static_cast<int>(
      (described_index / static_cast<std::size_t>(lockstep() ? 1 : plan_.layout.tp * plan_.layout.cp)) %
      static_cast<std::size_t>(plan_.pp()));
  std::array<Time, kCategories> acc = described->accounted();
  acc[kPpWait] += critical->end_time() - described->end_time();
  results::StepResult r = finish_result(plan_, critical->end_time(), acc, described_rank);
  r.fidelity = to_string(options_.fidelity);
  r.simulated_gpus = static_cast<std::int64_t>(gpus_.size());
  r.events = static_cast<std::int64_t>(rr.events);
  r.critical_gpu = described->id();
  std::sort(spans_.begin(), spans_.end(), [](const results::Span& a, const results::Span& b) {
    return std::tie(a.gpu, a.stream, a.start.ns) < std::tie(b.gpu, b.stream, b.start.ns);
  });
  r.timeline = std::move(spans_);
  return r;
}

}  // namespace replay

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
  // DualPipeV: (p - 1)(F&B + B - 3W) per chunk (DeepSeek-V3 report, Table 2), F&B taken as F + B (an upper bound).
  if (plan.schedule == parallel::Schedule::DualPipeV)
    return std::max(Time::zero(), Time{p1 * (f + b * 2 - w * 3).ns / 2});
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
  replay::Replay r(plan, options);
  return r.run();
}

}  // namespace sim::execution
