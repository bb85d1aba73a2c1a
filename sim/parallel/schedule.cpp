// sim/parallel/schedule.cpp: operation orders of GPipe, 1F1B, interleaved 1F1B and ZB-H1.
#include "sim/parallel/schedule.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>

namespace sim::parallel {

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::Forward:
      return "F";
    case OpKind::Backward:
      return "B";
    case OpKind::BackwardInput:
      return "B_in";
    case OpKind::BackwardWeight:
      return "W";
  }
  return "?";
}

namespace {

std::vector<PipeOp> one_f_one_b(int pp, int m, int rank, OpKind backward) {
  std::vector<PipeOp> ops;
  const int warmup = std::min(pp - rank - 1, m);
  const int steady = m - warmup;
  for (int i = 0; i < warmup; ++i)
    ops.push_back({OpKind::Forward, i, 0});
  for (int i = 0; i < steady; ++i) {
    ops.push_back({OpKind::Forward, warmup + i, 0});
    ops.push_back({backward, i, 0});
  }
  for (int i = steady; i < m; ++i)
    ops.push_back({backward, i, 0});
  return ops;
}

std::vector<PipeOp> interleaved(int pp, int v, int m, int rank) {
  SIM_ASSERT(m % pp == 0, "interleaved schedule needs micro-batches divisible by pp (checked by feasibility)");
  const int total = m * v;
  const int warmup = std::min((pp - rank - 1) * 2 + (v - 1) * pp, total);
  auto op = [&](int k, bool forward) {
    const int in_group = k % (pp * v);
    int chunk = in_group / pp;
    if (!forward) chunk = v - 1 - chunk;
    const int mb = (k / (pp * v)) * pp + in_group % pp;
    return PipeOp{forward ? OpKind::Forward : OpKind::Backward, mb, chunk};
  };
  std::vector<PipeOp> ops;
  for (int k = 0; k < warmup; ++k)
    ops.push_back(op(k, true));
  const int steady = total - warmup;
  for (int i = 0; i < steady; ++i) {
    ops.push_back(op(warmup + i, true));
    ops.push_back(op(i, false));
  }
  for (int k = steady; k < total; ++k)
    ops.push_back(op(k, false));
  return ops;
}

std::vector<PipeOp> zero_bubble_h1(int pp, int m, int rank) {
  const int lag = pp - rank - 1;
  std::vector<PipeOp> ops;
  int next_w = 0;
  for (const PipeOp& op : one_f_one_b(pp, m, rank, OpKind::BackwardInput)) {
    ops.push_back(op);
    if (op.kind == OpKind::BackwardInput && op.micro_batch - lag >= next_w)
      ops.push_back({OpKind::BackwardWeight, next_w++, 0});
  }
  while (next_w < m)
    ops.push_back({OpKind::BackwardWeight, next_w++, 0});
  return ops;
}

}  // namespace

std::vector<ScheduleInfo> describe_schedules() {
  return {
      {"gpipe", "all forwards, then all backwards; bubble (p-1)/m, holds m micro-batches (Huang et al. 2019)"},
      {"1f1b",
       "one forward, one backward after p-r-1 warm-up forwards; bubble (p-1)/m, holds p (Narayanan et al. "
       "2019/2021)"},
      {"interleaved",
       "1F1B over vpp model chunks per rank; bubble (p-1)/(vpp m) at vpp times the pipeline "
       "transfers (Narayanan et al. SC21)"},
      {"zb-h1",
       "1F1B with backward split into input (B) and weight (W) gradients, W deferred into the cool-down; "
       "bubble about (p-1)(F+B-W) (Qi et al. ICLR 2024)"},
  };
}

std::vector<PipeOp> pipeline_ops(Schedule schedule, int pp, int vpp, int micro_batches, int rank) {
  SIM_ASSERT(pp >= 1 && rank >= 0 && rank < pp && micro_batches >= 1, "bad pipeline shape");
  switch (schedule) {
    case Schedule::GPipe: {
      std::vector<PipeOp> ops;
      for (int c = 0; c < vpp; ++c)
        for (int i = 0; i < micro_batches; ++i)
          ops.push_back({OpKind::Forward, i, c});
      for (int c = vpp - 1; c >= 0; --c)
        for (int i = 0; i < micro_batches; ++i)
          ops.push_back({OpKind::Backward, i, c});
      return ops;
    }
    case Schedule::OneFOneB:
      return one_f_one_b(pp, micro_batches, rank, OpKind::Backward);
    case Schedule::Interleaved:
      return interleaved(pp, vpp, micro_batches, rank);
    case Schedule::ZeroBubbleH1:
      return zero_bubble_h1(pp, micro_batches, rank);
  }
  return {};
}

int pair_forward_backward(std::vector<PipeOp>& ops) {
  int pairs = 0;
  for (std::size_t i = 0; i + 1 < ops.size();) {
    PipeOp& a = ops[i];
    PipeOp& b = ops[i + 1];
    const bool opposite = (a.kind == OpKind::Forward && b.kind == OpKind::Backward) ||
                          (a.kind == OpKind::Backward && b.kind == OpKind::Forward);
    if (!opposite || (a.micro_batch == b.micro_batch && a.chunk == b.chunk)) {
      ++i;
      continue;
    }
    a.paired = b.paired = true;
    ++pairs;
    i += 2;
  }
  return pairs;
}

}  // namespace sim::parallel
