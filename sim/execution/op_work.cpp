// sim/execution/op_work.cpp: an operation's timed segments summed (step_plan.hpp).
#include "sim/execution/step_plan.hpp"

namespace sim::execution {

using base::Time;

Time OpWork::total() const {
  Time t;
  for (const auto& s : segments)
    t += s.duration;
  return t;
}

Time OpWork::total(SegKind kind) const {
  Time t;
  for (const auto& s : segments)
    if (s.kind == kind) t += s.duration;
  return t;
}

}  // namespace sim::execution
