// sim/parallel/schedule.cpp: operation orders of GPipe, 1F1B, interleaved 1F1B, ZB-H1 and DualPipeV.
#include "sim/parallel/schedule.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <array>
#include <deque>

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
  // With as many micro-batches as stages Megatron-LM runs every forward first (all_warmup_microbatches in
  // forward_backward_pipelining_with_interleaving), as micro_batches_held and the analytic step count it.
  const int warmup = m == pp ? total : std::min((pp - rank - 1) * 2 + (v - 1) * pp, total);
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
  const int lag = rank;  // schedule.hpp: the last rank delays the most W passes, the first none
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

/// DualPipeV's order on rank r of p (deepseek-ai/DualPipe, dualpipe/dualpipev.py, DualPipeV.step(), its eight
/// steps): chunk 0 runs virtual stage r, chunk 1 stage 2p - 1 - r (Layout::v_shape). Micro-batches go through each
/// chunk in order; a split backward (B_in) queues its weight gradients, which W ops run first in, first out.
std::vector<PipeOp> dualpipe_v(int p, int m, int r) {
  std::vector<PipeOp> ops;
  std::array<int, 2> next_f{}, next_b{};
  std::deque<PipeOp> deferred;  // weight gradients of split backwards, oldest first
  auto forward = [&](int c, bool paired = false) { ops.push_back({OpKind::Forward, next_f[c]++, c, paired}); };
  auto backward = [&](int c, bool split = false, bool paired = false) {
    const int mb = next_b[c]++;
    ops.push_back({split ? OpKind::BackwardInput : OpKind::Backward, mb, c, paired});
    if (split) deferred.push_back({OpKind::BackwardWeight, mb, c});
  };
  auto weight = [&] {
    SIM_ASSERT(!deferred.empty(), "a W op without a split backward before it");
    ops.push_back(deferred.front());
    deferred.pop_front();
  };
  auto pair = [&](int f, int b) {  // a forward and a backward of other micro-batches, each beside the other
    forward(f, true);
    backward(b, false, true);
  };
  const int tail = p - r - 1;
  for (int i = 0; i < 2 * tail; ++i)  // 1: forwards of chunk 0 fill the way down
    forward(0);
  for (int i = 0; i <= r; ++i) {  // 2: both chunks
    forward(0);
    forward(1);
  }
  for (int i = 0; i < tail; ++i) {  // 3: chunk 1's first backwards, split (zero bubble)
    backward(1, true);
    weight();
    forward(1);
  }
  for (int i = 0; i < m - 2 * p + r + 1; ++i) {  // 4: the steady state, two overlapped pairs
    if (i == 0 && r == p - 1) {                  // the fold's first pair runs apart ("to further reduce bubble size")
      forward(0);
      backward(1);
    } else {
      pair(0, 1);
    }
    pair(1, 0);
  }
  for (int i = 0; i < tail; ++i) {  // 5
    backward(1);
    pair(1, 0);
  }
  bool split = false;  // 6: the second half of these backwards defer their weight gradients
  for (int i = 0; i <= r; ++i) {
    if (i == (r + 1) / 2 && r % 2 == 1) split = true;
    backward(1, split);
    if (i == (r + 1) / 2 && r % 2 == 0) split = true;
    backward(0, split);
  }
  for (int i = 0; i < tail; ++i) {  // 7
    weight();
    backward(0, true);
  }
  for (int i = 0; i <= r; ++i)  // 8
    weight();
  SIM_ASSERT(deferred.empty() && next_f[0] == m && next_f[1] == m && next_b[0] == m && next_b[1] == m,
             "DualPipeV runs every pass once");
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
      {"dualpipev",
       "DeepSeek's DualPipe cut in half: 2 chunks per rank in a V, forward/backward pairs overlapping their "
       "all-to-alls, split backwards at the ends; bubble at most (p-1)(F&B+B-3W) per chunk, m >= 2p (DeepSeek-V3 "
       "report, "
       "arXiv:2412.19437, Sec. 3.2.1; deepseek-ai/DualPipe)"},
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
    case Schedule::DualPipeV:
      return dualpipe_v(pp, micro_batches, rank);
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
