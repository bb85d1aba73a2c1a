// sim/cli/main.cpp: process entry point; starts MPI when an MPI launcher started this process (an MPI build), hands
// the arguments to the CLI and returns its exit code.
#include "sim/cli/app.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/distributed/task_farm.hpp"

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  const sim::distributed::Session session;  // before the signal handlers: ours must win over MPI's
  sim::cli::install_interrupt_handlers();
  if (!session.notice().empty()) std::cerr << session.notice() << "\n";
  const auto& group = session.group();
  // In an MPI job only the root prints; the other processes compute their share and keep their errors for the end.
  std::ostream discard(nullptr);
  std::ostringstream kept;
  std::ostream& out = group.is_root() ? std::cout : discard;
  std::ostream& err = group.is_root() ? static_cast<std::ostream&>(std::cerr) : kept;
  int code = sim::cli::kExitInternal;
  try {
    code = sim::cli::run(args, out, err, group);
  } catch (const std::bad_alloc&) {
    err << "error: out of memory\n";
  } catch (const std::exception& e) {
    err << "internal error (a trainsim bug): " << e.what() << "\n";
  }
  // What was printed must have arrived: a full disk, /dev/full or a closed stdout loses the output, so the command
  // failed (exit 2 unless it failed already), never a silent exit 0 with a truncated file.
  if (group.is_root()) {
    errno = 0;
    std::cout.flush();
    if (!std::cout && code != sim::cli::kExitInterrupted) {
      const int e = errno;
      err << "error: cannot write to standard output" << (e != 0 ? std::string(": ") + std::strerror(e) : "")
          << "; the output is incomplete\n";
      if (code == sim::cli::kExitOk || code == sim::cli::kExitCheckFailed) code = sim::cli::kExitBadInput;
    }
  }
  // Every process of an MPI job ends here together: a failure anywhere reaches the root, which prints it, and every
  // process exits with an error (alone: `code` as it is).
  const auto end = session.finish(code, kept.str(), sim::cli::kExitInternal);
  if (group.is_root() && end.failed_rank > 0 && code == sim::cli::kExitOk)
    sim::cli::print_remote_failure(end.failed_rank, end.message, std::cerr);
  return end.code;
}
