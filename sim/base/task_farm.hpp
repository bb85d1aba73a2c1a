// sim/base/task_farm.hpp: the hook through which a distributed driver (sim/distributed's MPI farm) shares out
// independent tasks of a computation that knows nothing of MPI (the planner, the sensitivity reruns).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace sim::base {

/// Runs tasks 0 .. n-1, each returning its result as text, and gives back every result in task order, on every
/// process of a distributed computation; results must not depend on which process ran a task. Empty: the caller runs
/// its tasks itself.
using TaskFarm = std::function<std::vector<std::string>(int n, const std::function<std::string(int)>& task)>;

}  // namespace sim::base
