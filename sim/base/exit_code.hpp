// sim/base/exit_code.hpp: the exit codes of trainsim and trainsim-calibrate (DESIGN.md "Command line" contract).
#pragma once

namespace sim::base {

/// Exit codes (DESIGN.md contract). sim/cli picks them for `trainsim`, calibrate/cli for `trainsim-calibrate`.
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,  // a check or expectation failed
  kExitBadInput = 2,     // invalid input or usage
  kExitInfeasible = 3,   // the configuration is infeasible (out of memory, indivisible)
  kExitInternal = 4,     // a trainsim bug (a broken invariant, a simulated deadlock)
  kExitInterrupted = 130,
};

}  // namespace sim::base
