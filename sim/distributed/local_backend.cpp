// sim/distributed/local_backend.cpp: the Session of a build without MPI (TRAINSIM_WITH_MPI=OFF): every process is
// alone, and one started by mpirun says so.
#include "sim/base/assert.hpp"
#include "sim/distributed/backend.hpp"
#include "sim/distributed/task_farm.hpp"

#include <cstdlib>
#include <string>

namespace sim::distributed {
namespace {

/// An environment variable as an integer, or `fallback` when unset or not a number.
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return *end == '\0' ? static_cast<int>(x) : fallback;
}

}  // namespace

Session::Session() {
  // Open MPI's mpirun sets OMPI_COMM_WORLD_*, MPICH's and Slurm's PMI launchers PMI_*.
  const int size = env_int("OMPI_COMM_WORLD_SIZE", env_int("PMI_SIZE", 1));
  const int rank = env_int("OMPI_COMM_WORLD_RANK", env_int("PMI_RANK", 0));
  if (size > 1 && rank == 0)
    notice_ = "trainsim: started as one of " + std::to_string(size) +
              " MPI processes, but built without MPI (configure with -DTRAINSIM_WITH_MPI=ON to share the work): "
              "each process runs the whole job on its own";
}

Session::~Session() = default;

JobEnd Session::finish(int code, const std::string& /*message*/, int /*disagreement_code*/) const {
  return {code, -1, {}};
}

namespace detail {

std::vector<std::string> mpi_map(int, int, int, const TaskFn&, const FarmOptions&, bool) {
  throw base::InternalError("the MPI task farm was called in a build without MPI");
}

JobEnd mpi_finish(int, int, int, const std::string&, int) {
  throw base::InternalError("MPI was called in a build without MPI");
}

}  // namespace detail
}  // namespace sim::distributed
