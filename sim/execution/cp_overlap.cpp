// sim/execution/cp_overlap.cpp: the ring exchange's exposed time of cp_overlap.hpp.
#include "sim/execution/cp_overlap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sim::execution {

using base::Time;

Time cp_ring_exposed(const workload::PassWork& pass, std::size_t i, Time comm, int cp,
                     const std::function<Time(const workload::Kernel&)>& kernel_time) {
  if (cp < 2 || i + 1 >= pass.segments.size() || pass.segments[i + 1].is_comm) return comm;
  Time attention;
  for (const auto& k : pass.segments[i + 1].kernels)
    if (k.kind == workload::KernelKind::Attention) attention += kernel_time(k);
  const double steps = cp - 1;
  const double per_step = static_cast<double>(comm.ns) / steps - static_cast<double>(attention.ns) / cp;
  return Time{static_cast<std::int64_t>(std::llround(steps * std::max(0.0, per_step)))};
}

}  // namespace sim::execution
