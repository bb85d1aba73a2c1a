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
  // The causal call on the rank's own keys is step 0's attention, the unmasked calls the other steps' (layer_costs'
  // flash_attention_calls); one call for the whole pass is cp equal steps.
  Time masked, unmasked;
  for (const auto& k : pass.segments[i + 1].kernels)
    if (k.kind == workload::KernelKind::Attention) (k.causal ? masked : unmasked) += kernel_time(k);
  const double steps = cp - 1;
  const double transfer = static_cast<double>(comm.ns) / steps;
  double first = static_cast<double>(masked.ns), rest = static_cast<double>(unmasked.ns) / steps;
  if (unmasked.ns == 0) first = rest = static_cast<double>(masked.ns) / cp;
  // Transfer i runs beside step i's attention, i = 0 .. cp - 2.
  const double exposed = std::max(0.0, transfer - first) + (steps - 1) * std::max(0.0, transfer - rest);
  return Time{static_cast<std::int64_t>(std::llround(exposed))};
}

}  // namespace sim::execution
