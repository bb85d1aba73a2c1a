// sim/cli/app.hpp: the `trainsim` command line; the only place that prints results and picks exit codes.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace sim::distributed {
class Group;
}

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
/// The same as one process of the MPI job `group` (main's distributed::Session): commands that share their work use
/// every process, the others run on the root alone.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const distributed::Group& group);
/// Prints the failure of process `rank` of an MPI job (its error lines, "error: " or not) as "error: process R: ...".
void print_remote_failure(int rank, const std::string& message, std::ostream& err);

}  // namespace sim::cli
