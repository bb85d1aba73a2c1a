// sim/execution/analytic_step.cpp: the closed-form step (the planner's fast path and the replays' test oracle), on
// the same timed work as the replays: per rank its forward and backward totals, the schedule's formula, then each
// rank's data-parallel buckets after its last backward.
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
  Time backward_input;   // zero-bubble only
  Time backward_weight;  // zero-bubble only
};

}  // namespace

results::StepResult analytic_step(const StepPlan& plan) {
  const int p = plan.pp(), v = plan.vpp(), m = plan.micro_batches();
  const bool zb = plan.schedule == parallel::Schedule::ZeroBubbleH1;
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
      totals[s].backward_input = st.backward_input.total();
      totals[s].backward_weight = st.backward_weight.total();
    }
  }
  const auto stage_totals = [&](int c, int r) -> const StageTotals& {
    return totals[static_cast<std::size_t>(c * p + r)];
  };
  std::vector<Time> f(static_cast<std::size_t>(p)), b(static_cast<std::size_t>(p)), bi(static_cast<std::size_t>(p)),
      w(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < v; ++c) {
      const StageTotals& st = stage_totals(c, r);
      f[static_cast<std::size_t>(r)] += st.forward.all;
      b[static_cast<std::size_t>(r)] += st.backward.all;
      bi[static_cast<std::size_t>(r)] += st.backward_input;
      w[static_cast<std::size_t>(r)] += st.backward_weight;
    }
  // EP communication overlap: each steady-state pair of the rank's program (the replay's pairs) runs its paired
  // passes, whose all-to-alls are shorter by what the partner's compute hides (ep_overlap.hpp).
  std::vector<Time> saved(plan.ep_comm_overlap ? static_cast<std::size_t>(p) : 0);
  const auto saved_on = [&saved](int r) { return saved.empty() ? Time::zero() : saved[static_cast<std::size_t>(r)]; };
  if (plan.ep_comm_overlap)
    for (int r = 0; r < p; ++r) {
      auto ops = parallel::pipeline_ops(plan.schedule, p, v, m, r);
      parallel::pair_forward_backward(ops);
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
    zb_bubble = std::max(
        zb_bubble, f[static_cast<std::size_t>(r)] + bi[static_cast<std::size_t>(r)] - w[static_cast<std::size_t>(r)]);
  }
  const std::int64_t hops = 2 * static_cast<std::int64_t>(p - 1);
  Time pipe;
  if (zb) {
    pipe = Time{m * worst.ns + (p - 1) * std::max<std::int64_t>(0, zb_bubble.ns) + hops * plan.p2p.ns};
  } else if (v > 1) {
    pipe = Time{steady.ns + (p - 1) * worst.ns / v + hops * plan.p2p.ns};
  } else {
    pipe = Time{sum.ns + (m - 1) * worst.ns + hops * plan.p2p.ns} - saved_on(worst_rank);
  }
  // Each rank's last gradient pass ends one backward (and one transfer) after the next rank's.
  Time best_end;
  // The breakdown describes the busiest rank (its passes, data-parallel wait and optimizer), as the replays do: the
  // bottleneck of an uneven pipeline. The rest of the step, to the last rank's end, is its pipeline wait.
  int critical = 0;
  Time most, critical_dp_wait, critical_opt;
  Time last = pipe;
  for (int r = 0; r < p; ++r) {
    if (r > 0) last -= (zb ? bi[static_cast<std::size_t>(r - 1)] : b[static_cast<std::size_t>(r - 1)]) + plan.p2p;
    // Buckets of each chunk, the chunks' last gradient passes taken back to back, ending at `last`.
    Time gradient_op_total;
    for (int c = 0; c < v; ++c) {
      const StageTotals& st = stage_totals(c, r);
      gradient_op_total += zb ? st.backward_weight : st.backward.all;
    }
    Time start = last - gradient_op_total, dp_free = Time::zero();
    if (plan.dp_every_micro_batch && m > 1) {
      // ZeRO >= 2 reduces every micro-batch's buckets: in the steady state each micro-batch's forward and backward
      // on this rank (F + B) produce D of data-parallel work, so the stream falls behind by D - (F + B) per earlier
      // micro-batch when it cannot keep up, and the last micro-batch's buckets queue behind that backlog.
      Time d;
      for (int c = 0; c < v; ++c)
        for (const auto& bucket : plan.stage(c, r).buckets)
          d += bucket.duration;
      const Time per_mb = f[static_cast<std::size_t>(r)] + b[static_cast<std::size_t>(r)];
      dp_free = start + Time{(m - 1) * std::max<std::int64_t>(0, (d - per_mb).ns)};
    }
    for (int c = v - 1; c >= 0; --c) {
      // Each bucket is ready at the end of its segment (ready_at from the pass start); the pass ends at start + its
      // total.
      for (const auto& bucket : plan.stage(c, r).buckets)
        dp_free = std::max(dp_free, start + bucket.ready_at) + bucket.duration;
      const StageTotals& stt = stage_totals(c, r);
      start = start + (zb ? stt.backward_weight : stt.backward.all);
    }
    Time opt, gather;
    for (int c = 0; c < v; ++c) {
      opt += plan.stage(c, r).optimizer;
      gather += plan.stage(c, r).param_gather;
    }
    const Time dp_end = std::max(last, dp_free);
    best_end = std::max(best_end, dp_end + opt + gather);
    const auto i = static_cast<std::size_t>(r);
    const Time dp_wait = dp_end - last + gather;
    const Time work = Time{m * (f[i] + b[i]).ns} - saved_on(r) + dp_wait + opt;
    if (work > most) {
      most = work;
      critical = r;
      critical_dp_wait = dp_wait;
      critical_opt = opt;
    }
  }
  std::array<Time, kCategories> acc{};
  const auto rc = static_cast<std::size_t>(critical);
  for (int c = 0; c < v; ++c) {
    const StageTotals& st = stage_totals(c, critical);
    for (const OpTotals* op : {&st.forward, &st.backward}) {
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
