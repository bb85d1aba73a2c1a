// sim/cli/interrupt.hpp: Ctrl-C and SIGTERM turn into a clean stop (exit code 130), never a half-written file.
#pragma once

namespace sim::cli {

/// Thrown from progress callbacks once an interrupt was requested; long loops unwind and nothing is written.
struct Interrupted {};

/// Installs SIGINT and SIGTERM handlers that only set a flag (async-signal-safe).
void install_interrupt_handlers();
/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
bool interrupt_requested();

}  // namespace sim::cli
