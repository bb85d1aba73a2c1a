// sim/execution/ep_overlap.cpp: the two-stream replay of Megatron-Core's combined 1F1B step (ep_overlap.hpp).
#include "sim/execution/ep_overlap.hpp"

#include "sim/base/assert.hpp"
#include "sim/execution/overlap_interference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace sim::execution {

using base::Time;

namespace {

/// Compute-stream time of a run of segments: everything but the all-to-alls runs on the compute stream.
struct Cut {
  std::vector<Time> between;  // compute before the first all-to-all, between each pair, after the last
  std::vector<Time> alltoalls;
};

Cut cut(const std::vector<TimedSegment>& segs) {
  Cut c;
  c.between.emplace_back();
  for (const auto& s : segs) {
    if (s.kind == SegKind::Ep) {
      c.alltoalls.push_back(s.duration);
      c.between.emplace_back();
    } else {
      c.between.back() += s.duration;
    }
  }
  return c;
}

Time sum(const std::vector<TimedSegment>& segs) {
  Time t;
  for (const auto& s : segs)
    t += s.duration;
  return t;
}

/// The two streams of the combined step: each op starts when its stream is free and its chain (the forward's or
/// the backward's parts, in order) has reached it.
class TwoStreams {
 public:
  struct Chain {
    Time ready;
    Time* last_comm = nullptr;  // the stall slot of the chain's last op when it was an all-to-all
  };

  void compute(Time d, Chain& c) {
    if (d <= Time::zero()) return;  // no kernel: nothing waits
    const Time start = std::max(compute_free_, c.ready);
    if (c.ready > compute_free_ && c.last_comm != nullptr) *c.last_comm += c.ready - compute_free_;
    compute_free_ = start + d;
    c.ready = compute_free_;
    c.last_comm = nullptr;
  }

  void comm(Time d, Chain& c, Time* slot) {
    const Time start = std::max(comm_free_, c.ready);
    comm_free_ = start + d;
    c.ready = comm_free_;
    c.last_comm = slot;
    last_comm_ = slot;
  }

  /// The makespan; a last all-to-all ending after the compute stream stalls the pair by the difference.
  Time finish() {
    if (comm_free_ > compute_free_ && last_comm_ != nullptr) *last_comm_ += comm_free_ - compute_free_;
    return std::max(compute_free_, comm_free_);
  }

 private:
  Time compute_free_, comm_free_;
  Time* last_comm_ = nullptr;
};

}  // namespace

Time mlp_weight_grad_time(const workload::PassWork& weight_grad,
                          const std::function<Time(const workload::Kernel&)>& kernel_time) {
  Time t;
  for (const auto& seg : weight_grad.segments)
    if (!seg.is_comm && seg.label == "mlp_wgrad")
      for (const auto& k : seg.kernels)
        t += kernel_time(k);
  return t;
}

OverlapUnit forward_unit(const std::vector<TimedSegment>& segs) {
  const Cut c = cut(segs);
  SIM_ASSERT(c.alltoalls.size() <= 2, "a layer's forward has at most a dispatch and a combine");
  OverlapUnit u;
  u.attn = c.between[0];
  if (c.alltoalls.empty()) return u;
  u.dispatch = c.alltoalls[0];
  u.mlp = c.between[1];
  if (c.alltoalls.size() == 2) {
    u.combine = c.alltoalls[1];
    u.post = c.between[2];
  }
  u.has_dispatch = true;
  u.has_combine = c.alltoalls.size() == 2;
  return u;
}

OverlapUnit backward_unit(const std::vector<TimedSegment>& recompute, const std::vector<TimedSegment>& input_grad,
                          const std::vector<TimedSegment>& weight_grad, Time mlp_weight_grad) {
  const Cut r = cut(recompute);
  const Cut b = cut(input_grad);
  SIM_ASSERT(b.alltoalls.size() <= 2, "a layer's backward has at most a combine and a dispatch gradient");
  OverlapUnit u;
  Time rec;
  for (const Time t : r.between)
    rec += t;
  for (const Time t : r.alltoalls)
    u.recompute_comm += t;
  u.recompute_alltoalls = static_cast<int>(r.alltoalls.size());
  const Time other_weight_grad = std::max(Time::zero(), sum(weight_grad) - mlp_weight_grad);
  if (b.alltoalls.empty()) {
    u.pre = rec;
    u.attn = b.between[0] + sum(weight_grad);
    return u;
  }
  // A recomputed MoE block runs before the backward can start (its all-to-alls on the chain); other recomputation
  // (norms, MLA up-projection, attention core) runs inside the attention part's backward.
  u.pre = b.between[0] + (u.recompute_alltoalls > 0 ? rec : Time::zero());
  u.combine = b.alltoalls[0];
  u.has_combine = true;
  if (b.alltoalls.size() == 2) {
    u.mlp = b.between[1] + mlp_weight_grad;
    u.dispatch = b.alltoalls[1];
    u.has_dispatch = true;
    u.attn = b.between[2] + other_weight_grad + (u.recompute_alltoalls > 0 ? Time::zero() : rec);
  } else {
    u.mlp = b.between[1] + sum(weight_grad) + (u.recompute_alltoalls > 0 ? Time::zero() : rec);
  }
  return u;
}

OverlapStalls overlap_stalls(const std::vector<OverlapUnit>& forward, const std::vector<OverlapUnit>& backward) {
  OverlapStalls out;
  // Slots first (the streams keep pointers into them): one per all-to-all segment, in segment order.
  std::size_t nf = 0, nb = 0;
  for (const auto& u : forward)
    nf += (u.has_dispatch ? 1 : 0) + (u.has_combine ? 1 : 0);
  for (const auto& u : backward)
    nb += static_cast<std::size_t>(u.recompute_alltoalls) + (u.has_combine ? 1 : 0) + (u.has_dispatch ? 1 : 0);
  out.forward.assign(nf, Time::zero());
  out.backward.assign(nb, Time::zero());
  std::size_t fi = 0, bi = 0;
  TwoStreams s;
  TwoStreams::Chain f, b;
  // Megatron's TransformerLayerSchedulePlan.run, unit by unit: the forward's i-th unit beside the backward's i-th.
  for (std::size_t i = 0; i < std::max(forward.size(), backward.size()); ++i) {
    const OverlapUnit* fu = i < forward.size() ? &forward[i] : nullptr;
    const OverlapUnit* bu = i < backward.size() ? &backward[i] : nullptr;
    Time* f_dispatch = nullptr;
    Time* f_combine = nullptr;
    Time* b_dispatch = nullptr;
    if (fu != nullptr) {
      f_dispatch = fu->has_dispatch ? &out.forward[fi++] : nullptr;
      f_combine = fu->has_combine ? &out.forward[fi++] : nullptr;
    }
    if (bu != nullptr) {
      s.compute(bu->pre, b);
      if (bu->recompute_alltoalls > 0) {
        Time* first = &out.backward[bi];
        bi += static_cast<std::size_t>(bu->recompute_alltoalls);
        s.comm(bu->recompute_comm, b, first);
      }
      if (bu->has_combine) s.comm(bu->combine, b, &out.backward[bi++]);
      b_dispatch = bu->has_dispatch ? &out.backward[bi++] : nullptr;
    }
    if (fu != nullptr) s.compute(fu->attn, f);
    if (bu != nullptr) s.compute(bu->mlp, b);
    if (f_dispatch != nullptr) s.comm(fu->dispatch, f, f_dispatch);
    if (b_dispatch != nullptr) s.comm(bu->dispatch, b, b_dispatch);
    if (fu != nullptr) s.compute(fu->mlp, f);
    if (f_combine != nullptr) s.comm(fu->combine, f, f_combine);
    if (fu != nullptr) s.compute(fu->post, f);
    if (bu != nullptr) s.compute(bu->attn, b);
  }
  SIM_ASSERT(fi == nf && bi == nb, "every all-to-all has its stall slot");
  out.makespan = s.finish();
  return out;
}

OpWork with_ep_stalls(const OpWork& op, const std::vector<Time>& stalls) {
  OpWork w;
  w.segments.reserve(op.segments.size());
  std::size_t k = 0;
  for (const auto& s : op.segments) {
    if (s.kind != SegKind::Ep) {
      w.segments.push_back(s);
      continue;
    }
    SIM_ASSERT(k < stalls.size(), "an all-to-all segment without its stall");
    w.segments.push_back({stalls[k++], SegKind::Ep, s.label});  // kept at zero: bucket indices stay valid
  }
  SIM_ASSERT(k == stalls.size(), "a stall without its all-to-all segment");
  return w;
}

void EpOverlapBuilder::finish(StageWork& st, int sms, int comm_sms, std::uint16_t interference_label) const {
  const Time comm = st.forward.total(SegKind::Ep) + st.backward.total(SegKind::Ep);
  if (comm == Time::zero()) return;
  const OverlapStalls s = overlap_stalls(forward_, backward_);
  st.forward_paired = with_ep_stalls(st.forward, s.forward);
  st.backward_paired = with_ep_stalls(st.backward, s.backward);
  const Time hidden = comm - st.forward_paired.total(SegKind::Ep) - st.backward_paired.total(SegKind::Ep);
  if (const Time slowed = overlap_interference(hidden, sms, comm_sms); slowed > Time::zero())
    st.backward_paired.segments.push_back({slowed, SegKind::Compute, interference_label});
}

}  // namespace sim::execution
