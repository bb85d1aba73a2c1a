// sim/cli/interrupt.cpp: the process's one signal flag. A signal handler can only reach static storage, so this is
// the single piece of global state in trainsim, and only the CLI (the process boundary) touches it.
#include "sim/cli/interrupt.hpp"

#include "sim/cli/app.hpp"

#include "sim/base/atomic_file.hpp"

#include <atomic>
#include <csignal>

#include <unistd.h>

namespace sim::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
volatile std::sig_atomic_t g_said_complete = 0;  // the handler told the user the results are complete
std::atomic<int> g_polling{0};                   // a loop polls g_interrupted: the handler must not exit
static_assert(std::atomic<int>::is_always_lock_free, "read in a signal handler");

void say(const char* text, std::size_t size) {
  if (::write(2, text, size) < 0) {
  }
}

extern "C" void on_signal(int) {
  const bool again = g_interrupted != 0;
  g_interrupted = 1;
  if (g_polling.load() != 0) return;
  // Nothing polls the flag (write, rmdir and _exit are async-signal-safe). Once the results are written the command
  // is as good as done: it finishes and exits as it would have, and a second signal stops it at once (a user trial
  // got "stopped before writing any result", exit 130, beside a complete report).
  if (base::outputs_committed()) {
    if (!again) {
      static const char kLate[] =
          "\ninterrupted after the results were written: they are complete; finishing (again to stop at once)\n";
      g_said_complete = 1;
      return say(kLate, sizeof kLate - 1);
    }
    say(kStoppedAfterResults, sizeof kStoppedAfterResults - 1);
    ::_exit(kExitInterrupted);
  }
  // Before any result: stop here, with the output folder this run created removed again if it is still empty.
  base::remove_created_folders_after_signal();
  say(kStoppedBeforeResults, sizeof kStoppedBeforeResults - 1);
  ::_exit(kExitInterrupted);
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A reader that closes the pipe early (`| head`) makes the next write fail with EPIPE, which the output writer
  // reports ("cannot write to standard output", exit 2), instead of killing the process silently with exit 141.
  std::signal(SIGPIPE, SIG_IGN);
}

bool interrupt_requested() {
  return g_interrupted != 0;
}

bool interrupt_after_results_said() {
  return g_said_complete != 0;
}

InterruptPolling::InterruptPolling() : previous_(g_polling.load()) {}

InterruptPolling::~InterruptPolling() {
  g_polling.store(previous_);
}

void InterruptPolling::polled() {
  g_polling.store(1);
}

}  // namespace sim::cli
