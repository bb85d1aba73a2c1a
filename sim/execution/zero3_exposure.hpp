// sim/execution/zero3_exposure.hpp: how much of a ZeRO-3 / FSDP unit's gather (with the reduce-scatter beside it)
// the compute stream waits for, and how much runs hidden beside the previous unit's compute.
#pragma once
#include "sim/base/units.hpp"

#include <algorithm>
#include <optional>

namespace sim::execution {

struct Zero3Exposure {
  base::Time exposed;  // the compute stream waits for it
  base::Time hidden;   // NCCL's kernels beside the previous unit's compute (they slow it: overlap_interference)
};

/// One unit's exposure. `gather` and `grads` (the reduce-scatter sharing its links, or zero) as the framework runs
/// them, `nccl` the part of both that NCCL's kernels take on the GPU (less than gather + grads where
/// parallel.zero3_engine_gbs bounds them); `previous` how long the previous unit of the pass computed (none: the
/// pass's first unit). `overlap` false (parallel.zero3_overlap): everything blocks. `late`: a backward gather issued
/// after the previous unit's compute (FSDP's BACKWARD_POST, torch/distributed/fsdp/api.py), exposed whole, at half
/// rate while that unit's reduce-scatter shares its links, and never less than what that compute leaves uncovered.
inline Zero3Exposure zero3_exposure(base::Time gather, base::Time grads, base::Time nccl,
                                    std::optional<base::Time> previous, bool overlap, bool late) {
  const base::Time g = gather + grads;
  const base::Time uncovered = previous ? std::max(base::Time::zero(), g - *previous) : g;
  const base::Time exposed = !overlap           ? g
                             : late && previous ? std::max(uncovered, gather + std::min(gather, grads))
                                                : uncovered;
  if (g <= exposed || nccl <= base::Time::zero()) return {exposed, base::Time::zero()};
  const base::Time hidden =
      nccl >= g ? g - exposed : base::Time::from_seconds((g - exposed).seconds() * nccl.seconds() / g.seconds());
  return {exposed, hidden};
}

}  // namespace sim::execution
