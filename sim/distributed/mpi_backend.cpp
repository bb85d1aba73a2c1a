// sim/distributed/mpi_backend.cpp: Session and the task farm over MPI (TRAINSIM_WITH_MPI=ON); the only file that
// includes mpi.h.
//
// Every exchange is a round on MPI_COMM_WORLD, one at a time: a farm (Group::map_root / map_all) is one round, and
// Session::finish runs final rounds with no tasks until one finds every process final.
//  - A worker (rank > 0) sends the root a request carrying the results of its previous chunk (none at first), or an
//    error carrying a failure's message; each message says whether the worker is in its final round. The root
//    answers each message with one reply: a chunk [begin, end) of tasks, or stop (-1, -1). It answers stop once every
//    task is handed out or after a failure, so a worker ends the round having had a reply to each of its messages.
//    A worker in its final round answers a chunk with an error: it has ended its command (it failed, or it is a bug).
//  - The root serves every waiting message, then computes one task itself, and so on; with no task left it waits for
//    the workers' last results.
//  - Then the root broadcasts the verdict: whether every process was final, and the first failure (its rank, exit
//    code and message), or a disagreement when some processes were final and others still farming. For map_all the
//    results follow.
// So a process that fails before a farm the others entered joins it as a failed worker (or root) from
// Session::finish, the farm stops everywhere with its message, and the others end their commands and meet it in a
// final round: nobody waits forever, and no MPI_Abort is needed.
// Messages are byte strings (native byte order: the processes of one job run the same binary). Every wait is a
// test-and-sleep loop (20 us growing to 1 ms) rather than a blocking call, which in Open MPI spins a core: processes
// that share cores (mpirun --oversubscribe) leave them to the ones that compute.
#include "sim/base/assert.hpp"
#include "sim/distributed/backend.hpp"
#include "sim/distributed/task_farm.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sim::distributed {
namespace {

constexpr int kTagRequest = 9101;  // worker -> root: final flag, results of the previous chunk
constexpr int kTagError = 9102;    // worker -> root: final flag, exit code, a failure's message
constexpr int kTagReply = 9103;    // root -> worker: the next chunk, or stop
constexpr std::int64_t kStop = -1;
constexpr std::size_t kPiece = std::size_t{1} << 30;  // largest broadcast piece: MPI counts are int

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw base::InternalError(std::string("MPI: ") + call + " failed");
}

// ---- messages ---------------------------------------------------------------------------------------------------

class Writer {
 public:
  void u64(std::uint64_t v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void bytes(std::string_view s) {
    u64(s.size());
    buf_.append(s);
  }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

class Reader {
 public:
  explicit Reader(std::string_view buf) : buf_(buf) {}
  std::uint64_t u64() {
    SIM_ASSERT(buf_.size() - at_ >= sizeof(std::uint64_t), "a truncated farm message");
    std::uint64_t v = 0;
    std::memcpy(&v, buf_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  std::string bytes() {
    const std::uint64_t n = u64();
    SIM_ASSERT(buf_.size() - at_ >= n, "a truncated farm message");
    std::string s(buf_.substr(at_, n));
    at_ += n;
    return s;
  }

 private:
  std::string_view buf_;
  std::size_t at_ = 0;
};

int mpi_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw base::InternalError("a task farm message over 2 GiB; use smaller tasks");
  return static_cast<int>(bytes);
}

// ---- failures and waiting ---------------------------------------------------------------------------------------

/// A failure of this process: an exception caught in a farm (rethrown once the farm has stopped everywhere), or the
/// end of a failed command (Session::finish: no exception, an exit code).
struct Failure {
  std::exception_ptr error;
  std::string message;
  int code = 0;  // 0: not known (an exception; its process's command picks the code)
};

/// Records the exception being handled (the first failure only). Call inside a catch block.
void note_failure(std::optional<Failure>& failed) {
  if (failed) return;
  std::string message = "a task threw an exception that is not a std::exception (an interrupt?)";
  try {
    throw;
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
  }
  failed = Failure{std::current_exception(), std::move(message), 0};
}

/// Calls `f` (a task, a poll or progress callback), recording what it throws.
template <class F>
void guarded(std::optional<Failure>& failed, const F& f) {
  try {
    f();
  } catch (...) {
    note_failure(failed);
  }
}

class Backoff {
 public:
  void reset() { pause_ = std::chrono::microseconds(20); }
  void sleep() {
    std::this_thread::sleep_for(pause_);
    pause_ = std::min(pause_ * 2, std::chrono::microseconds(1000));
  }

 private:
  std::chrono::microseconds pause_{20};
};

/// Completes `request`, polling between tests; a poll that throws is recorded and the wait goes on (an MPI request
/// must complete before its buffer goes away).
void wait(MPI_Request& request, const FarmOptions& o, std::optional<Failure>& failed) {
  Backoff backoff;
  for (;;) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) return;
    if (o.poll && !failed) guarded(failed, o.poll);
    backoff.sleep();
  }
}

void send(const std::string& message, int to, int tag, const FarmOptions& o, std::optional<Failure>& failed) {
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Isend(message.data(), mpi_count(message.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD, &r), "MPI_Isend");
  wait(r, o, failed);
}

/// Broadcasts `buf` from the root (any size) without blocking calls.
void broadcast(std::string& buf, int rank, const FarmOptions& o, std::optional<Failure>& failed) {
  std::uint64_t size = buf.size();
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &r), "MPI_Ibcast");
  wait(r, o, failed);
  if (rank != 0) buf.assign(size, '\0');
  for (std::size_t at = 0; at < size; at += kPiece) {
    const auto piece = static_cast<int>(std::min<std::size_t>(kPiece, size - at));
    check(MPI_Ibcast(buf.data() + at, piece, MPI_BYTE, 0, MPI_COMM_WORLD, &r), "MPI_Ibcast");
    wait(r, o, failed);
  }
}

// ---- one round --------------------------------------------------------------------------------------------------

struct Verdict {
  bool all_final = true;
  bool disagreement = false;  // some processes final, others farming (a bug)
  int failed_rank = -1;       // the first failure the root heard of (itself first)
  int code = 0;
  std::string message;
};

struct Round {
  int n = 0;
  const TaskFn* task = nullptr;
  const FarmOptions* o = nullptr;
  bool final = false;  // Session::finish: this process has ended its command
};

Verdict root_role(int size, const Round& round, std::optional<Failure>& failed, std::vector<std::string>& results) {
  const FarmOptions& o = *round.o;
  const int n = round.n;
  results.assign(static_cast<std::size_t>(n), std::string());
  Verdict v;
  v.all_final = round.final;
  bool any_final = round.final;
  std::optional<Verdict> remote;  // the first worker's failure
  int next = 0, done = 0, workers = size - 1;
  const auto stopping = [&] { return failed.has_value() || remote.has_value() || (any_final && !v.all_final); };
  const auto progress = [&] {
    if (o.progress && !failed) guarded(failed, [&] { o.progress(done, n); });
  };
  Backoff backoff;
  while (workers > 0 || (!stopping() && next < n)) {
    bool served = false;
    for (;;) {  // every message waiting now
      int waiting = 0;
      MPI_Status st;
      check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &st), "MPI_Iprobe");
      if (waiting == 0) break;
      int bytes = 0;
      check(MPI_Get_count(&st, MPI_BYTE, &bytes), "MPI_Get_count");
      std::string message(static_cast<std::size_t>(bytes), '\0');
      check(MPI_Recv(message.data(), bytes, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Recv");
      served = true;
      Reader r(message);
      const bool worker_final = r.u64() != 0;
      v.all_final = v.all_final && worker_final;
      any_final = any_final || worker_final;
      std::int64_t reply[2] = {kStop, kStop};
      if (st.MPI_TAG == kTagError) {
        const auto code = static_cast<int>(r.i64());
        std::string text = r.bytes();
        if (!remote) remote = Verdict{false, false, st.MPI_SOURCE, code, std::move(text)};
      } else {
        SIM_ASSERT(st.MPI_TAG == kTagRequest, "an unexpected message in the task farm");
        const auto begin = r.u64(), count = r.u64();
        SIM_ASSERT(begin + count <= static_cast<std::uint64_t>(n), "farm results outside the tasks");
        for (std::uint64_t k = 0; k < count; ++k)
          results[begin + k] = r.bytes();
        done += static_cast<int>(count);
        if (count > 0) progress();
        if (!stopping() && next < n) {
          const int remaining = n - next;
          const int chunk = std::min(remaining, std::max(o.min_chunk, (remaining + 2 * size - 1) / (2 * size)));
          reply[0] = next;
          reply[1] = next + chunk;
          next += chunk;
        }
      }
      if (reply[0] == kStop) --workers;
      check(MPI_Send(reply, 2, MPI_INT64_T, st.MPI_SOURCE, kTagReply, MPI_COMM_WORLD), "MPI_Send");
    }
    if (!stopping() && next < n) {  // one task of its own between polls
      const int i = next++;
      guarded(failed, [&] {
        if (o.poll) o.poll();
        results[static_cast<std::size_t>(i)] = (*round.task)(i);
        ++done;
      });
      progress();
      backoff.reset();
      continue;
    }
    if (served) {
      backoff.reset();
      continue;
    }
    if (o.poll && !failed) guarded(failed, o.poll);
    backoff.sleep();
  }
  if (failed) {
    v.failed_rank = 0;
    v.code = failed->code;
    v.message = failed->message;
  } else if (remote) {
    v.failed_rank = remote->failed_rank;
    v.code = remote->code;
    v.message = std::move(remote->message);
  } else if (any_final && !v.all_final) {
    v.disagreement = true;
  }
  return v;
}

void worker_role(int rank, const Round& round, std::optional<Failure>& failed) {
  const FarmOptions& o = *round.o;
  const auto request = [&](std::int64_t begin, const std::vector<std::string>& results) {
    Writer w;
    w.u64(round.final ? 1 : 0);
    w.u64(static_cast<std::uint64_t>(begin));
    w.u64(results.size());
    for (const auto& r : results)
      w.bytes(r);
    return w.take();
  };
  const auto error = [&] {
    Writer w;
    w.u64(round.final ? 1 : 0);
    w.i64(failed ? failed->code : 0);
    w.bytes(failed ? failed->message
                   : "process " + std::to_string(rank) +
                         " had ended its command while the others still shared work "
                         "(a trainsim bug)");
    return w.take();
  };
  std::string message = failed ? error() : request(0, {});
  int tag = failed ? kTagError : kTagRequest;
  for (;;) {
    send(message, 0, tag, o, failed);
    std::int64_t reply[2] = {kStop, kStop};
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Irecv(reply, 2, MPI_INT64_T, 0, kTagReply, MPI_COMM_WORLD, &r), "MPI_Irecv");
    wait(r, o, failed);
    if (reply[0] == kStop) return;
    std::vector<std::string> results;
    for (std::int64_t i = reply[0]; i < reply[1] && !failed && !round.final; ++i)
      guarded(failed, [&] {
        if (o.poll) o.poll();
        results.push_back((*round.task)(static_cast<int>(i)));
      });
    if (failed || round.final) {
      tag = kTagError;
      message = error();
    } else {
      tag = kTagRequest;
      message = request(reply[0], results);
    }
  }
}

/// One round on any process; the root's results come back in `results`. Every process returns the root's verdict.
Verdict run_round(int rank, int size, const Round& round, std::optional<Failure>& failed,
                  std::vector<std::string>& results) {
  Verdict v;
  if (rank == 0) {
    v = root_role(size, round, failed, results);
  } else {
    worker_role(rank, round, failed);
  }
  std::string text;
  if (rank == 0) {
    Writer w;
    w.u64(v.all_final ? 1 : 0);
    w.u64(v.disagreement ? 1 : 0);
    w.i64(v.failed_rank);
    w.i64(v.code);
    w.bytes(v.message);
    text = w.take();
  }
  broadcast(text, rank, *round.o, failed);
  Reader r(text);
  v.all_final = r.u64() != 0;
  v.disagreement = r.u64() != 0;
  v.failed_rank = static_cast<int>(r.i64());
  v.code = static_cast<int>(r.i64());
  v.message = r.bytes();
  return v;
}

}  // namespace

// ---- Session ----------------------------------------------------------------------------------------------------

Session::Session() {
  if (!launched_by_mpi()) return;  // a plain process: no MPI start-up cost
  int provided = 0;
  // Tasks may use threads; only the main thread calls MPI.
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  finalize_ = true;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &group_.rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &group_.size_), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, group_.rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  check(MPI_Comm_size(node, &group_.local_size_), "MPI_Comm_size");
  MPI_Comm_free(&node);
  group_.mpi_ = true;
}

Session::~Session() {
  if (!finalize_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

JobEnd Session::finish(int code, const std::string& message, int disagreement_code) const {
  if (!group_.mpi_ || group_.size_ == 1) return {code, -1, {}};
  return detail::mpi_finish(group_.rank_, group_.size_, code, message, disagreement_code);
}

// ---- entry points -----------------------------------------------------------------------------------------------

namespace detail {

std::vector<std::string> mpi_map(int rank, int size, int n, const TaskFn& task, const FarmOptions& o, bool to_all) {
  std::optional<Failure> failed;
  std::vector<std::string> results;
  const Verdict v = run_round(rank, size, Round{n, &task, &o, false}, failed, results);
  if (failed) std::rethrow_exception(failed->error);  // this process's own failure, as it was thrown
  if (v.failed_rank >= 0) throw RemoteTaskError(v.failed_rank, v.message);
  if (v.disagreement)
    throw RemoteTaskError(0, "some processes had ended their command while others still shared work (a trainsim bug)");
  if (!to_all) return rank == 0 ? std::move(results) : std::vector<std::string>{};
  std::string all;
  if (rank == 0) {
    Writer w;
    for (const auto& r : results)
      w.bytes(r);
    all = w.take();
  }
  broadcast(all, rank, o, failed);
  if (failed) std::rethrow_exception(failed->error);
  if (rank == 0) return results;
  results.clear();
  results.reserve(static_cast<std::size_t>(n));
  Reader r(all);
  for (int i = 0; i < n; ++i)
    results.push_back(r.bytes());
  return results;
}

JobEnd mpi_finish(int rank, int size, int code, const std::string& message, int disagreement_code) {
  const FarmOptions none;
  const TaskFn no_task = [](int) { return std::string(); };
  std::optional<Failure> failed;
  if (code != 0) failed = Failure{nullptr, message, code};
  std::vector<std::string> unused;
  for (;;) {
    // Rounds until every process has ended its command; a failed one keeps reporting its failure.
    const Verdict v = run_round(rank, size, Round{0, &no_task, &none, true}, failed, unused);
    if (!v.all_final) continue;
    JobEnd end;
    end.code = code;
    if (code == 0 && v.failed_rank >= 0) end.code = v.code != 0 ? v.code : disagreement_code;
    if (code == 0 && v.disagreement) end.code = disagreement_code;
    if (v.failed_rank >= 0 && v.failed_rank != rank) {
      end.failed_rank = v.failed_rank;
      end.message = v.message;
    }
    return end;
  }
}

}  // namespace detail
}  // namespace sim::distributed
