// sim/cli/app.hpp: the `trainsim` command line; the only place that prints results and picks exit codes.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace sim::cli {

/// Exit codes (DESIGN.md contract).
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,  // a check or expectation failed
  kExitBadInput = 2,     // invalid input or usage
  kExitInfeasible = 3,   // the configuration is infeasible (out of memory, indivisible)
  kExitInternal = 4,     // a trainsim bug (a broken invariant, a simulated deadlock)
  kExitInterrupted = 130,
};

/// Runs the command line `args` (without the program name); results go to `out`, logs and errors to `err`.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sim::cli
