// sim/distributed/backend.hpp: what the MPI backend (mpi_backend.cpp) or its stand-in (local_backend.cpp) provides to
// task_farm.cpp; private to this folder.
#pragma once
#include "sim/distributed/task_farm.hpp"

#include <string>
#include <vector>

namespace sim::distributed::detail {

/// The farm over MPI's world for process `rank` of `size` (size > 1); see Group::map_root and Group::map_all.
std::vector<std::string> mpi_map(int rank, int size, int n, const TaskFn& task, const FarmOptions& o, bool to_all);
/// Session::finish over MPI's world for process `rank` of `size` (size > 1).
JobEnd mpi_finish(int rank, int size, int code, const std::string& message, int disagreement_code);

}  // namespace sim::distributed::detail
