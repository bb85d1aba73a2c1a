// sim/parallel/micro_batches_held.cpp: the micro-batches a pipeline rank holds in flight, per model chunk, at its
// activation peak under each schedule (the pipeline-order half of the activation count; memory.cpp holds the bytes).
#include "sim/parallel/memory.hpp"
#include "sim/parallel/schedule.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sim::parallel {
namespace {

/// Forward-order chunk of the k-th forward on a rank, Megatron-LM's get_model_chunk_id: groups of pp micro-batches
/// per chunk.
int forward_chunk(int k, int pp, int vpp) {
  return k % (pp * vpp) / pp;
}

/// DualPipeV's peak from its program: a forward adds its chunk's layers, a backward (or its input-gradient half,
/// after which the saved activations are freed) takes them off; per chunk, the count at the first heaviest moment.
std::vector<int> dualpipe_held(const Layout& layout, int r) {
  const auto ops = pipeline_ops(Schedule::DualPipeV, layout.pp, 2, layout.micro_batches, r);
  auto layers = [&](int c) { return layout.layers_per_stage[static_cast<std::size_t>(layout.stage(c, r))]; };
  std::vector<int> held(2, 0), peak(2, 0);
  long long weight = 0, peak_weight = -1;
  for (const PipeOp& op : ops) {
    const auto c = static_cast<std::size_t>(op.chunk);
    if (op.kind == OpKind::Forward) {
      ++held[c];
      weight += layers(op.chunk);
      if (weight > peak_weight) {
        peak_weight = weight;
        peak = held;
      }
    } else if (op.kind != OpKind::BackwardWeight) {
      --held[c];
      weight -= layers(op.chunk);
    }
  }
  return peak;
}

}  // namespace

std::vector<int> micro_batches_held(const Layout& layout, Schedule schedule, int pipeline_rank) {
  const int p = layout.pp;
  const int v = layout.vpp;
  const int m = layout.micro_batches;
  const int r = pipeline_rank;
  SIM_ASSERT(r >= 0 && r < p, "pipeline rank out of range");
  SIM_ASSERT(v == 1 || schedule == Schedule::Interleaved || schedule == Schedule::DualPipeV,
             "vpp > 1 only under the interleaved schedule and DualPipeV");
  if (schedule == Schedule::DualPipeV) return dualpipe_held(layout, r);
  const int total = m * v;
  int warmup = 0;
  switch (schedule) {
    case Schedule::GPipe:
      warmup = total;
      break;
    case Schedule::OneFOneB:
      warmup = std::min(p - r - 1, m);
      break;
    case Schedule::ZeroBubbleH1:
      // A micro-batch whose W pass is deferred still holds what W needs: each linear's input and output gradient,
      // 32sbh of a layer's 34sbh (Qi et al., Table 1). Counted as a whole micro-batch, every rank holds the first's p.
      warmup = std::min(p - 1, m);
      break;
    case Schedule::Interleaved:
      warmup = m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
      break;
    case Schedule::DualPipeV:  // returned above
      break;
  }

  auto chunk_layers = [&](int c) { return layout.layers_per_stage[static_cast<std::size_t>(layout.stage(c, r))]; };
  bool uniform = true;
  for (int c = 1; c < v; ++c)
    uniform = uniform && chunk_layers(c) == chunk_layers(0);
  if (uniform) {
    // Every forward adds and every backward frees the same layers, so the first peak is right after the warm-up and
    // one more forward (all forwards when the warm-up is all of them): forwards [0, f), no backward yet. Forward k
    // runs chunk (k mod pv) / p, so chunk c has p forwards in every full round of pv plus its share of the last.
    const int f = std::min(warmup + 1, total);
    std::vector<int> held(static_cast<std::size_t>(v));
    for (int c = 0; c < v; ++c)
      held[static_cast<std::size_t>(c)] = f / (p * v) * p + std::clamp(f % (p * v) - c * p, 0, p);
    return held;
  }

  // Chunks of different layers: replay the order by weight and find the first moment of the peak (forwards applied
  // so far), then replay again up to that moment for the per-chunk counts. Two passes without copies: copying the
  // counts at every new peak made this the planner's hottest function.
  auto replay = [&](auto&& on_forward, auto&& on_backward) {
    for (int k = 0; k < warmup; ++k)
      if (!on_forward(forward_chunk(k, p, v))) return;
    for (int k = 0; k < total - warmup; ++k) {  // steady state: one forward, one backward; the cool-down only frees
      if (!on_forward(forward_chunk(k + warmup, p, v))) return;
      if (!on_backward(v - 1 - forward_chunk(k, p, v))) return;  // backwards run the chunks in reverse order
    }
  };
  long long weight = 0, peak_weight = -1;
  std::int64_t forwards = 0, peak_forwards = 0;
  replay(
      [&](int c) {
        weight += chunk_layers(c);
        ++forwards;
        if (weight > peak_weight) {
          peak_weight = weight;
          peak_forwards = forwards;
        }
        return true;
      },
      [&](int c) {
        weight -= chunk_layers(c);
        return true;
      });
  std::vector<int> held(static_cast<std::size_t>(v), 0);
  std::int64_t seen = 0;
  replay(
      [&](int c) {
        if (seen == peak_forwards) return false;  // the peak is right after forward number peak_forwards
        ++seen;
        ++held[static_cast<std::size_t>(c)];
        return true;
      },
      [&](int c) {
        if (seen == peak_forwards) return false;  // this backward follows the peak
        SIM_ASSERT(held[static_cast<std::size_t>(c)] > 0, "backward of a chunk with nothing in flight");
        --held[static_cast<std::size_t>(c)];
        return true;
      });
  return held;
}

}  // namespace sim::parallel
