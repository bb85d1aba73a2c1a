// tests/support/pass_work.hpp: sums over a pass's kernels, shared by the layer-cost tests.
#pragma once
#include "sim/workload/layer_costs.hpp"

namespace support {

/// The FLOPs a pass executes outside memory-bound kernels (GEMMs and attention).
inline double executed_gemm_flops(const sim::workload::PassWork& p) {
  double f = 0;
  for (const auto& s : p.segments)
    for (const auto& k : s.kernels)
      if (k.kind != sim::workload::KernelKind::Memory) f += k.flops;
  return f;
}

}  // namespace support
