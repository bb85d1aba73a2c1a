// sim/cli/interrupt.cpp: the process's one signal flag. A signal handler can only reach static storage, so this is
// the single piece of global state in trainsim, and only the CLI (the process boundary) touches it.
#include "sim/cli/interrupt.hpp"

#include <csignal>

namespace sim::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_signal(int) {
  g_interrupted = 1;
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool interrupt_requested() {
  return g_interrupted != 0;
}

}  // namespace sim::cli
