// sim/distributed/task_farm.hpp: the processes of one job (MPI's world under mpirun, else this process alone) and a
// task farm with dynamic load balancing over them. MPI's headers stay in sim/distributed/mpi_backend.cpp.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::distributed {

/// Computes task `i` (0 <= i < n) and returns its result serialised (any bytes). The result must depend on `i` only:
/// which process computes a task, and when, is up to the farm.
using TaskFn = std::function<std::string(int i)>;

struct FarmOptions {
  /// Called on every process between tasks and while it waits for messages (about every millisecond). It may throw
  /// to cancel (Ctrl-C): the farm then stops on every process, and the process that threw rethrows its exception.
  std::function<void()> poll;
  /// Called on the root after each task it learns is finished, with the tasks finished so far and n.
  std::function<void(int done, int total)> progress;
  /// The fewest tasks handed to a worker at once. Workers get ceil(remaining / (2 x processes)) tasks per request
  /// (guided self-scheduling: large chunks first, small ones at the end), never fewer than this.
  int min_chunk = 1;
};

/// A task failed on another process (or threw something that is not a std::exception); what() is "process R: "
/// and that exception's message. Every process that did not fail itself throws this.
class RemoteTaskError : public std::runtime_error {
 public:
  RemoteTaskError(int rank, const std::string& message);
  int rank() const { return rank_; }
  /// The failure's own message, without "process R: ".
  const std::string& message() const { return message_; }

 private:
  int rank_;
  std::string message_;
};

/// The processes that share a job. A default Group is this process alone; Session makes the MPI one.
class Group {
 public:
  Group() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  /// Processes of this group on this machine (at least 1), to size thread pools: cores / local_size() each.
  int local_size() const { return local_size_; }

  /// Runs tasks 0..n-1 across the group; every process calls it with the same n and an equivalent `task`. Workers
  /// ask the root for chunks of tasks and send back their results with the next request (dynamic load balancing);
  /// the root computes one task at a time between polls for requests, so two processes are two workers. Returns
  /// every result in task order on the root and an empty vector on the other processes. Alone, it runs the tasks
  /// in order here. A task that throws stops the farm everywhere (see FarmOptions::poll and RemoteTaskError).
  std::vector<std::string> map_root(int n, const TaskFn& task, const FarmOptions& o = {}) const;
  /// map_root, then the results broadcast: every process returns every result, in task order (for phases after
  /// which all processes continue from the same state).
  std::vector<std::string> map_all(int n, const TaskFn& task, const FarmOptions& o = {}) const;

 private:
  friend class Session;
  std::vector<std::string> map(int n, const TaskFn& task, const FarmOptions& o, bool to_all) const;
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
  bool mpi_ = false;
};

/// How a job ended for one process (Session::finish).
struct JobEnd {
  int code = 0;          // this process's exit code: its own, else the failed process's
  int failed_rank = -1;  // the process whose failure ended the job when it was not this one, else -1
  std::string message;   // that process's message
};

/// The MPI lifetime of a process, held by main(). Built with TRAINSIM_WITH_MPI and started by an MPI launcher
/// (mpirun sets OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK), it initialises MPI and its group is MPI's world;
/// otherwise the group is this process alone, and when an MPI launcher started it anyway notice() says that each
/// process runs the whole job.
class Session {
 public:
  Session();
  ~Session();  // finalises MPI when it was initialised
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Group& group() const { return group_; }
  /// A line for stderr (empty when none): started by an MPI launcher with several processes, but built without MPI.
  const std::string& notice() const { return notice_; }
  /// Ends this process's part of the job with exit code `code` (`message`: what it printed about a failure). In an
  /// MPI job every process calls it once and it returns when all have: a process that failed before or between
  /// farms the others entered stops those farms (they throw RemoteTaskError), so nobody waits for it forever, and
  /// the first failure comes back to every process (a process that succeeded takes the failed one's code, or
  /// `disagreement_code` when processes ended their work differently: a bug). Alone, returns `code`.
  JobEnd finish(int code, const std::string& message, int disagreement_code) const;

 private:
  Group group_;
  std::string notice_;
  // Read by the MPI backend only (mpi_backend.cpp); the local backend never initialises MPI.
  [[maybe_unused]] bool finalize_ = false;
};

}  // namespace sim::distributed
