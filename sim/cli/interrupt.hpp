// sim/cli/interrupt.hpp: Ctrl-C and SIGTERM turn into a clean stop (exit code 130), never a half-written file.
#pragma once

namespace sim::cli {

/// Thrown from progress callbacks once an interrupt was requested; long loops unwind and nothing is written.
struct Interrupted {};

/// Installs SIGINT and SIGTERM handlers. While an InterruptPolling exists, a signal only sets a flag that the loop
/// polls (async-signal-safe); otherwise nothing polls it (a long step simulation, loading), so the process exits at
/// once with code 130: files are only ever written atomically (temporary file, then rename), so none is half-written.
void install_interrupt_handlers();
/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
bool interrupt_requested();

/// Marks a stretch in which a loop polls interrupt_requested() (progress bars); nestable.
class InterruptPolling {
 public:
  InterruptPolling();
  ~InterruptPolling();
  InterruptPolling(const InterruptPolling&) = delete;
  InterruptPolling& operator=(const InterruptPolling&) = delete;

 private:
  int previous_;
};

}  // namespace sim::cli
