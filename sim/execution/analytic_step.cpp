// sim/execution/analytic_step.cpp: the closed-form step (the planner's fast path and the replays' test oracle), on
// the same timed work as the replays: per rank its forward and backward totals, the schedule's formula, then each
// rank's data-parallel buckets after its last backward.
#include "sim/base/assert.hpp"
#include "sim/execution/step_breakdown.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/parallel/schedule.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sim::execution {

using base::Time;
using enum detail::Category;

namespace {

constexpr std::size_t kSegKinds = 5;  // SegKind: Compute, Tp, Cp, Ep, Dp

/// One pass over an operation's segments: their total and the total of each kind (integer nanoseconds, so any
/// grouping of the sums is exact).
struct OpTotals {
  Time all;
  std::array<Time, kSegKinds> by_kind{};
};

OpTotals op_totals(const OpWork& w) {
  OpTotals t;
  for (const auto& s : w.segments)
    t.by_kind[static_cast<std::size_t>(s.kind)] += s.duration;
  for (const Time k : t.by_kind)
    t.all += k;
  return t;
}

struct StageTotals {
  OpTotals forward;
  OpTotals backward;
  OpTotals backward_input;   // zero-bubble only
  OpTotals backward_weight;  // zero-bubble only
};

/// A schedule's programs (parallel::pipeline_ops) played out on each op's total: an op starts when its rank is free and
/// its input is there (the previous virtual stage's forward, the next one's backward, plus a transfer when they are
/// on another rank); paired ops take their paired passes. When each rank's ops end. Linear in the ops; no
/// collectives, as the rest of the closed form. DualPipeV's step, and where ZB-H1's deferred weight-gradient passes
/// and GPipe's backwards bring their buckets under ZeRO >= 2. (Played for 1F1B and interleaving too, the queue of the
/// sweep's worst ZeRO-2 points comes 2 points closer to the replay, at 10-20x the closed form's cost: the planner's
/// screen keeps Lindley's recursion below for them.)
struct PlayedTimes {
  std::vector<Time> ends;  // per rank: its last op's end
  /// Per rank and chunk, the last micro-batch's gradient pass (a full backward, or the W op of a split one): when it
  /// started and ended. Its buckets are ready at start + their offset in a full backward, at its end after a W op.
  std::vector<std::vector<Time>> grad_start, grad_end;
  std::vector<std::vector<bool>> grad_is_w;
  /// Per rank, with `every_pass`: every gradient pass in program order, as (chunk, start).
  std::vector<std::vector<std::pair<int, Time>>> passes;
};

PlayedTimes play_programs(const StepPlan& plan, bool every_pass) {
  const int p = plan.pp(), v = plan.vpp(), m = plan.micro_batches(), last = plan.layout.stages() - 1;
  std::vector<std::vector<parallel::PipeOp>> progs;
  for (int r = 0; r < p; ++r)
    progs.push_back(parallel::pipeline_ops(plan.schedule, p, v, m, r));
  // When each (micro-batch, virtual stage) forward and input-gradient pass ended; max() while not yet run.
  std::vector<Time> fwd(static_cast<std::size_t>(m * (last + 1)), Time::max()), bwd = fwd;
  PlayedTimes out;
  if (every_pass) out.passes.resize(static_cast<std::size_t>(p));
  out.grad_start.assign(static_cast<std::size_t>(p), std::vector<Time>(static_cast<std::size_t>(v)));
  out.grad_end = out.grad_start;
  out.grad_is_w.assign(static_cast<std::size_t>(p), std::vector<bool>(static_cast<std::size_t>(v)));
  std::vector<Time> free(static_cast<std::size_t>(p));
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  // Each (rank, chunk)'s pass totals, summed once: F, B, B_in, W, then F and B run as a pair's half.
  std::vector<std::array<Time, 6>> totals(static_cast<std::size_t>(v * p));
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < v; ++c) {
      const StageWork& st = plan.stage(c, r);
      const bool paired = plan.ep_comm_overlap && !st.forward_paired.segments.empty();
      totals[static_cast<std::size_t>(c * p + r)] = {st.forward.total(),
                                                     st.backward.total(),
                                                     st.backward_input.total(),
                                                     st.backward_weight.total(),
                                                     (paired ? st.forward_paired : st.forward).total(),
                                                     (paired ? st.backward_paired : st.backward).total()};
    }
  auto duration = [&](const parallel::PipeOp& op, int r) {
    const auto& t = totals[static_cast<std::size_t>(op.chunk * p + r)];
    const auto kind = static_cast<std::size_t>(op.kind);  // Forward, Backward, BackwardInput, BackwardWeight
    return op.paired && kind < 2 ? t[4 + kind] : t[kind];
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < p; ++r) {
      auto& at = next[static_cast<std::size_t>(r)];
      for (const auto& prog = progs[static_cast<std::size_t>(r)]; at < prog.size(); ++at) {
        const parallel::PipeOp& op = prog[at];
        const int s = plan.layout.stage(op.chunk, r);
        const bool forward = op.kind == parallel::OpKind::Forward, weight = op.kind == parallel::OpKind::BackwardWeight;
        const int from = forward ? s - 1 : s + 1;  // the stage whose output this op needs
        Time ready = Time::zero();
        if (!weight && from >= 0 && from <= last) {
          ready = (forward ? fwd : bwd)[static_cast<std::size_t>(op.micro_batch * (last + 1) + from)];
          if (ready == Time::max()) break;  // not run yet: the next rank first
          if (plan.layout.rank_of(from) != r) ready += plan.p2p;
        }
        Time& t = free[static_cast<std::size_t>(r)];
        const Time start = std::max(t, ready);
        t = start + duration(op, r);
        const bool gradients = weight || op.kind == parallel::OpKind::Backward;
        if (every_pass && gradients) out.passes[static_cast<std::size_t>(r)].emplace_back(op.chunk, start);
        if (op.micro_batch == m - 1 && gradients) {
          const auto ri = static_cast<std::size_t>(r), ci = static_cast<std::size_t>(op.chunk);
          out.grad_start[ri][ci] = start;
          out.grad_end[ri][ci] = t;
          out.grad_is_w[ri][ci] = weight;
        }
        if (!weight) (forward ? fwd : bwd)[static_cast<std::size_t>(op.micro_batch * (last + 1) + s)] = t;
        moved = true;
      }
    }
  }
  for (int r = 0; r < p; ++r)
    SIM_ASSERT(next[static_cast<std::size_t>(r)] == progs[static_cast<std::size_t>(r)].size(),
               "the programs run to their end");
  out.ends = std::move(free);
  return out;
}

}  // namespace

results::StepResult analytic_step(const StepPlan& plan) {
  const int p = plan.pp(), v = plan.vpp(), m = plan.micro_batches();
  const bool dualpipe = plan.schedule == parallel::Schedule::DualPipeV;
  // Both end their step with weight-gradient passes (W); ZB-H1 runs all of its weight gradients there.
  const bool zb = plan.schedule == parallel::Schedule::ZeroBubbleH1 || dualpipe;
  // Every stage's totals in one pass over its segments (the zero-bubble passes only for that schedule).
  // A stage sharing its StageWork with an earlier one shares its totals (a plan has a few distinct ones).
  std::vector<StageTotals> totals(plan.stages.size());
  std::vector<std::pair<const StageWork*, std::size_t>> seen;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const StageWork& st = *plan.stages[s];
    const auto same = std::find_if(seen.begin(), seen.end(), [&st](const auto& e) { return e.first == &st; });
    if (same != seen.end()) {
      totals[s] = totals[same->second];
      continue;
    }
    seen.emplace_back(&st, s);
    totals[s].forward = op_totals(st.forward);
    totals[s].backward = op_totals(st.backward);
    if (zb) {
      totals[s].backward_input = op_totals(st.backward_input);
      totals[s].backward_weight = op_totals(st.backward_weight);
    }
  }
  const auto stage_totals = [&](int c, int r) -> const StageTotals& {
    return totals[static_cast<std::size_t>(c * p + r)];  // StepPlan::stages' order
  };
  std::vector<Time> f(static_cast<std::size_t>(p)), b(static_cast<std::size_t>(p)), bi(static_cast<std::size_t>(p)),
      w(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < v; ++c) {
      const StageTotals& st = stage_totals(c, r);
      f[static_cast<std::size_t>(r)] += st.forward.all;
      b[static_cast<std::size_t>(r)] += st.backward.all;
      bi[static_cast<std::size_t>(r)] += st.backward_input.all;
      w[static_cast<std::size_t>(r)] += st.backward_weight.all;
    }
  // ZB-H1 runs each micro-batch's backward as its two halves, which can hold more than the whole: under ZeRO-3 the W
  // half gathers its weights again and reduce-scatters its gradients (step_plan.cpp). Its passes are those halves.
  const bool split = plan.schedule == parallel::Schedule::ZeroBubbleH1;
  if (split)
    for (int r = 0; r < p; ++r)
      b[static_cast<std::size_t>(r)] = bi[static_cast<std::size_t>(r)] + w[static_cast<std::size_t>(r)];
  // EP communication overlap: each steady-state pair of the rank's program (the replay's pairs) runs its paired
  // passes, whose all-to-alls are shorter by what the partner's compute hides (ep_overlap.hpp).
  std::vector<Time> saved(plan.ep_comm_overlap ? static_cast<std::size_t>(p) : 0);
  const auto saved_on = [&saved](int r) { return saved.empty() ? Time::zero() : saved[static_cast<std::size_t>(r)]; };
  if (plan.ep_comm_overlap)
    for (int r = 0; r < p; ++r) {
      auto ops = parallel::pipeline_ops(plan.schedule, p, v, m, r);
      if (!dualpipe) parallel::pair_forward_backward(ops);  // DualPipeV's program comes paired
      for (const auto& op : ops) {
        const StageWork& st = plan.stage(op.chunk, r);
        if (!op.paired || st.forward_paired.segments.empty()) continue;
        saved[static_cast<std::size_t>(r)] += op.kind == parallel::OpKind::Forward
                                                  ? st.forward.total() - st.forward_paired.total()
                                                  : st.backward.total() - st.backward_paired.total();
      }
    }
  Time sum, worst, zb_bubble, steady;
  int worst_rank = 0;
  for (int r = 0; r < p; ++r) {
    const Time x = f[static_cast<std::size_t>(r)] + b[static_cast<std::size_t>(r)];
    sum += x;
    if (x > worst) worst_rank = r;
    worst = std::max(worst, x);
    steady = std::max(steady, Time{m * x.ns} - saved_on(r));
  }
  // ZB-H1's fill and drain: each rank but the slowest adds its F + B - W (Qi et al. 2024: (p - 1)(F + B - W) for equal
  // stages), as 1F1B's adds each rank's F + B. Played out on unit passes with a heavier first or last stage (the
  // embedding, the loss), the closed form is within 4% of the played programs; the slowest rank's (p - 1) x was up to
  // 50% over.
  for (int r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (r != worst_rank) zb_bubble += std::max(Time::zero(), f[i] + bi[i] - w[i]);
  }
  const std::int64_t hops = 2 * static_cast<std::int64_t>(p - 1);
  Time pipe;
  // DualPipeV: its programs played out op by op on these totals (play_programs). The DeepSeek-V3 report's bubble,
  // (p - 1)(F&B + B - 3W) per chunk (Table 2), bounds it from above: the played-out fold idles about one forward per
  // rank less (tests/unit/dualpipe_test.cpp).
  // ZB-H1 and GPipe under ZeRO >= 2: each micro-batch's gradient pass brings its buckets where the program puts it
  // (ZB-H1's deferred W passes, GPipe's every backward, back to back at the end), which the 1F1B queue below does not
  // follow: the closed form was 12-15% fast against the replay (docs/validation.md).
  const bool gpipe = plan.schedule == parallel::Schedule::GPipe;
  const bool played_queue = (gpipe || (zb && !dualpipe)) && plan.dp_every_micro_batch && m > 1;
  const PlayedTimes dual = dualpipe || played_queue ? play_programs(plan, played_queue) : PlayedTimes{};
  if (dualpipe) {
    pipe = *std::max_element(dual.ends.begin(), dual.ends.end());
  } else if (zb) {
    pipe = Time{m * worst.ns + zb_bubble.ns + hops * plan.p2p.ns};
  } else if (v > 1) {
    pipe = Time{steady.ns + (p - 1) * worst.ns / v + hops * plan.p2p.ns};
    // With m == p (every forward first, schedule.hpp) a rank holds exactly p micro-batches of each chunk, so the first
    // micro-batch of chunk c + 1 comes back from the last rank p transfers after the rank ran out of chunk c's work:
    // each of the v - 1 chunk changes waits p transfers, in the forwards and again in the backwards.
    if (m == p) pipe += Time{2 * static_cast<std::int64_t>(v - 1) * p * plan.p2p.ns};
  } else {
    pipe = Time{sum.ns + (m - 1) * worst.ns + hops * plan.p2p.ns} - saved_on(worst_rank);
  }
  // ZeRO >= 2's stream (below): the slowest backward of each rank and the ranks after it, and the slowest rank's
  // forward and backward.
  std::vector<Time> b_after(static_cast<std::size_t>(p));
  Time period;
  for (int r = p - 1; r >= 0; --r) {
    const auto i = static_cast<std::size_t>(r);
    b_after[i] = r + 1 < p ? std::max(b[i], b_after[i + 1]) : b[i];
    period = std::max(period, f[i] + b[i]);
  }
  std::vector<Time> pass_start(static_cast<std::size_t>(v));  // per rank, below
  // Each rank's last gradient pass ends one backward (and one transfer) after the next rank's.
  Time best_end;
  // The breakdown describes the busiest rank (its passes, data-parallel wait and optimizer), as the replays do: the
  // bottleneck of an uneven pipeline. The rest of the step, to the last rank's end, is its pipeline wait.
  // As the replay picks it: the most time computing first, then in collectives (step_sim.cpp), so that both describe
  // the same rank (a user trial: a DualPipeV step described rank 1 here, EP exposed 3.3 s, and rank 0 in the replay,
  // 1.3 s, at the same step time).
  // A chunk's passes: forward, then the backward whole or split into its input and weight halves.
  const auto passes_of = [split](const StageTotals& st) {
    return split ? std::array{&st.forward, &st.backward_input, &st.backward_weight}
                 : std::array<const OpTotals*, 3>{&st.forward, &st.backward, nullptr};
  };
  const auto computing = [&](int r) {
    Time t;
    for (int c = 0; c < v; ++c)
      for (const OpTotals* op : passes_of(stage_totals(c, r)))
        if (op != nullptr) t += Time{m * op->by_kind[static_cast<std::size_t>(SegKind::Compute)].ns};
    return t;
  };
  int critical = 0;
  Time most, most_computing, critical_dp_wait, critical_opt;
  Time last = pipe;
  for (int r = 0; r < p; ++r) {
    if (dualpipe) last = dual.ends[static_cast<std::size_t>(r)];
    if (r > 0 && !dualpipe)
      last -= (zb ? bi[static_cast<std::size_t>(r - 1)] : b[static_cast<std::size_t>(r - 1)]) + plan.p2p;
    // No rank ends before its own passes are done (with interleaving and few micro-batches the offsets above, whole
    // backwards of the ranks before, can exceed the pipe's end less the rank's work: a PP 2, VPP 4 run of two
    // micro-batches came out 13% fast, its pipeline bubble negative).
    if (!dualpipe)
      last =
          std::max(last, Time{m * (f[static_cast<std::size_t>(r)] + b[static_cast<std::size_t>(r)]).ns} - saved_on(r));
    // Buckets of each chunk, ready during the chunk's last gradient pass. Interleaved 1F1B runs the backwards in
    // groups of p micro-batches per chunk, the last chunk first (Megatron-LM's get_model_chunk_id): after chunk c's
    // last backward come p backwards of each chunk before it, so it ends p x (their passes) before `last` (at least:
    // a cool-down backward may also wait for the next rank). One chunk: its pass ends at `last`.
    const int group = std::min(p, m);
    Time after;  // the gradient passes that follow chunk c's last one
    for (int c = 0; c < v; ++c) {
      const StageTotals& st = stage_totals(c, r);
      const Time pass = zb ? st.backward_weight.all : st.backward.all;
      pass_start[static_cast<std::size_t>(c)] = last - after - pass;
      after += Time{group * pass.ns};
    }
    Time dp_free;
    Time queue_end;  // ZeRO >= 2: where every micro-batch's buckets, queued on the stream, end
    if (played_queue) {
      // The rank's gradient passes as played, each bringing every bucket of its chunk at its offset in the pass; the
      // stream ends where the queue does (Lindley's recursion), moved onto this closed form's time by the rank's last
      // pass.
      const auto& passes = dual.passes[static_cast<std::size_t>(r)];
      Time free;
      for (const auto& [c, start] : passes)
        for (const auto& bucket : plan.stage(c, r).buckets)
          free = std::max(free, start + bucket.ready_at) + bucket.duration;
      const auto& [c_last, start_last] = passes.back();
      const StageTotals& st = stage_totals(c_last, r);
      const Time last_end = start_last + (zb ? st.backward_weight.all : st.backward.all);
      queue_end = last + (free > last_end ? free - last_end : Time::zero());
    } else if (plan.dp_every_micro_batch && m > 1) {
      // ZeRO >= 2 reduces every micro-batch's buckets: each gradient pass of this rank brings D / v of data-parallel
      // work (D over its v chunks), from R (its first bucket's readiness) into the pass. Counted from the end, the
      // last W + 1 passes (W the warm-up's forwards) are the cool-down's, one per Bc (the slowest backward of this
      // rank and those after it, which feed it), and each earlier one comes a steady-state period FB later (the
      // slowest rank's forward and backward): pass j starts at last - (min(j, W) + 1) Bc - max(0, j - W) FB, all
      // per pass (the rank's totals over v). The stream ends at the latest of (pass j's work ready) + (its work and all
      // after it): Lindley's recursion, whose maximum over j lies at an end of either phase.
      Time d, ready;
      for (int c = 0; c < v; ++c) {
        const auto& buckets = plan.stage(c, r).buckets;
        for (const auto& bucket : buckets)
          d += bucket.duration;
        if (!buckets.empty()) ready += buckets.front().ready_at;
      }
      const auto i = static_cast<std::size_t>(r);
      const double passes = static_cast<double>(m) * v;
      // Megatron-LM's warm-up (schedule.hpp); with interleaving and m == p, every forward comes first.
      const double warmup = v == 1   ? std::min(p - r - 1, m - 1)
                            : m == p ? passes - 1
                                     : std::min<double>((p - r - 1) * 2 + (v - 1) * p, passes - 1);
      const double alone = static_cast<double>((d - b_after[i]).ns) / v;  // per cool-down pass: work less time
      const double paired = static_cast<double>((d - period).ns) / v;     // per steady-state pass
      const double cool = (warmup + 1) * alone;
      const double tail = std::max({alone, cool, cool + (passes - 1 - warmup) * paired});
      queue_end = last + Time{ready.ns / v} + Time{static_cast<std::int64_t>(tail)};
    }
    if (dualpipe) {
      // The two chunks' last gradient passes where the played-out programs put them; buckets in order of readiness.
      const auto ri = static_cast<std::size_t>(r);
      std::vector<std::pair<Time, Time>> ready;  // (ready, duration)
      for (int c = 0; c < v; ++c) {
        const auto ci = static_cast<std::size_t>(c);
        for (const auto& bucket : plan.stage(c, r).buckets)
          ready.emplace_back(dual.grad_is_w[ri][ci] ? dual.grad_end[ri][ci] : dual.grad_start[ri][ci] + bucket.ready_at,
                             bucket.duration);
      }
      std::sort(ready.begin(), ready.end());
      for (const auto& [at, d] : ready)
        dp_free = std::max(dp_free, at) + d;
    }
    for (int c = v - 1; c >= 0 && !dualpipe; --c) {
      // Each bucket is ready at the end of its segment (ready_at from the pass start), the last chunk's first.
      for (const auto& bucket : plan.stage(c, r).buckets)
        dp_free = std::max(dp_free, pass_start[static_cast<std::size_t>(c)] + bucket.ready_at) + bucket.duration;
    }
    if (plan.dp_after_backward) {  // finalize_model_grads: every chunk's buckets after the rank's last backward
      dp_free = last;
      for (int c = 0; c < v; ++c)
        for (const auto& bucket : plan.stage(c, r).buckets)
          dp_free += bucket.duration;
    }
    Time opt, gather;
    for (int c = 0; c < v; ++c) {
      opt += plan.stage(c, r).optimizer;
      gather += plan.stage(c, r).param_gather;
    }
    const Time dp_end = std::max({last, dp_free, queue_end});
    best_end = std::max(best_end, dp_end + opt + gather);
    const auto i = static_cast<std::size_t>(r);
    const Time dp_wait = dp_end - last + gather;
    const Time work = Time{m * (f[i] + b[i]).ns} - saved_on(r) + dp_wait + opt;
    const Time comp = computing(r);
    if (r == 0 || std::pair{comp, work} > std::pair{most_computing, most}) {
      most = work;
      most_computing = comp;
      critical = r;
      critical_dp_wait = dp_wait;
      critical_opt = opt;
    }
  }
  std::array<Time, kCategories> acc{};
  const auto rc = static_cast<std::size_t>(critical);
  for (int c = 0; c < v; ++c) {
    for (const OpTotals* op : passes_of(stage_totals(c, critical))) {
      if (op == nullptr) continue;
      const auto kind = [op](SegKind k) { return op->by_kind[static_cast<std::size_t>(k)]; };
      acc[kCompute] += Time{m * kind(SegKind::Compute).ns};
      acc[kTp] += Time{m * kind(SegKind::Tp).ns};
      acc[kCp] += Time{m * kind(SegKind::Cp).ns};
      acc[kEp] += Time{m * kind(SegKind::Ep).ns};
      acc[kDp] += Time{m * kind(SegKind::Dp).ns};
    }
  }
  acc[kEp] -= saved_on(critical);  // the paired passes' all-to-alls are that much shorter
  const Time busy = Time{m * (f[rc] + b[rc]).ns} - saved_on(critical);
  acc[kDp] += critical_dp_wait;
  acc[kOptimizer] = critical_opt;
  acc[kPpWait] = best_end - busy - critical_dp_wait - critical_opt;
  results::StepResult r = detail::finish_result(plan, best_end, acc, critical);
  r.fidelity = "analytic";
  r.critical_gpu = critical;
  return r;
}

}  // namespace sim::execution
