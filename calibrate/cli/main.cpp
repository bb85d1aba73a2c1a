// calibrate/cli/main.cpp: process entry point of trainsim-calibrate; hands the arguments to the CLI.
#include "calibrate/cli/app.hpp"
#include "sim/base/exit_code.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A reader that closes the pipe early: the write fails (EPIPE) and is reported below, as trainsim does, instead of
  // a silent SIGPIPE kill (exit 141; a review).
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  int code = sim::base::kExitInternal;
  try {
    code = calibrate::cli::run(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return sim::base::kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a trainsim bug): " << e.what() << "\n";
    return sim::base::kExitInternal;
  }
  // As trainsim's main: a full disk or a closed stdout loses the measurements, so the command failed.
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    const int e = errno;
    std::cerr << "error: cannot write to standard output" << (e != 0 ? std::string(": ") + std::strerror(e) : "")
              << "; the output is incomplete\n";
    if (code == sim::base::kExitOk) code = sim::base::kExitBadInput;
  }
  return code;
}
