// sim/distributed/task_farm.cpp: the farm's entry points; one process runs its tasks in order, a group hands them to
// the MPI backend.
#include "sim/distributed/task_farm.hpp"

#include "sim/base/assert.hpp"
#include "sim/distributed/backend.hpp"

namespace sim::distributed {

RemoteTaskError::RemoteTaskError(int rank, const std::string& message)
    : std::runtime_error("process " + std::to_string(rank) + ": " + message), rank_(rank), message_(message) {}

std::vector<std::string> Group::map_root(int n, const TaskFn& task, const FarmOptions& o) const {
  return map(n, task, o, /*to_all=*/false);
}

std::vector<std::string> Group::map_all(int n, const TaskFn& task, const FarmOptions& o) const {
  return map(n, task, o, /*to_all=*/true);
}

std::vector<std::string> Group::map(int n, const TaskFn& task, const FarmOptions& o, bool to_all) const {
  SIM_ASSERT(n >= 0, "a farm of a negative number of tasks");
  if (mpi_ && size_ > 1) return detail::mpi_map(rank_, size_, n, task, o, to_all);
  std::vector<std::string> results;
  results.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (o.poll) o.poll();
    results.push_back(task(i));
    if (o.progress) o.progress(i + 1, n);
  }
  return results;
}

}  // namespace sim::distributed
