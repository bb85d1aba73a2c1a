// sim/cli/interrupt.cpp: the process's one signal flag. A signal handler can only reach static storage, so this is
// the single piece of global state in trainsim, and only the CLI (the process boundary) touches it.
#include "sim/cli/interrupt.hpp"

#include "sim/cli/app.hpp"

#include <atomic>
#include <csignal>

#include <unistd.h>

namespace sim::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
std::atomic<int> g_polling{0};  // a loop polls g_interrupted: the handler must not exit
static_assert(std::atomic<int>::is_always_lock_free, "read in a signal handler");

extern "C" void on_signal(int) {
  g_interrupted = 1;
  if (g_polling.load() != 0) return;
  // Nothing polls the flag: stop here (write and _exit are async-signal-safe).
  static const char kMessage[] = "\ninterrupted: stopped before writing any result\n";
  if (::write(2, kMessage, sizeof kMessage - 1) < 0) {
  }
  ::_exit(kExitInterrupted);
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool interrupt_requested() {
  return g_interrupted != 0;
}

InterruptPolling::InterruptPolling() : previous_(g_polling.load()) {}

InterruptPolling::~InterruptPolling() {
  g_polling.store(previous_);
}

void InterruptPolling::polled() {
  g_polling.store(1);
}

}  // namespace sim::cli
