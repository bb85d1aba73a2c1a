// sim/cli/interrupt.hpp: Ctrl-C and SIGTERM turn into a clean stop (exit code 130), never a half-written file.
#pragma once

namespace sim::cli {

/// What the CLI says when a signal stops it: before any result, and after some were written (the signal handler and
/// the Interrupted catch say the same).
inline constexpr char kStoppedBeforeResults[] = "\ninterrupted: stopped before writing any result\n";
inline constexpr char kStoppedAfterResults[] = "\ninterrupted: stopped; the files written before it are complete\n";

/// Thrown from progress callbacks once an interrupt was requested; long loops unwind and nothing is written.
struct Interrupted {};

/// Installs SIGINT and SIGTERM handlers. Once a loop polls (InterruptPolling::polled), a signal only sets a flag that
/// the loop checks (async-signal-safe); until then nothing would check it (a long step simulation, loading), so the
/// process exits at once with code 130, removing the output folder it created while that is empty: files are only
/// ever written atomically (temporary file, then rename, with the signals held in between), so none is half-written.
/// After the results are written (base::outputs_committed) a first signal lets the command finish as it would have,
/// and says so; a second stops it at once.
void install_interrupt_handlers();
/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
bool interrupt_requested();
/// Whether the handler already said that a signal came after the results were written.
bool interrupt_after_results_said();

/// A scope in which a loop polls interrupt_requested() (a progress bar): from the first polled() to the end of the
/// scope a signal waits for the loop. Nestable.
class InterruptPolling {
 public:
  InterruptPolling();
  ~InterruptPolling();
  InterruptPolling(const InterruptPolling&) = delete;
  InterruptPolling& operator=(const InterruptPolling&) = delete;
  /// The loop has started polling (any thread; idempotent).
  void polled();

 private:
  int previous_;
};

}  // namespace sim::cli
