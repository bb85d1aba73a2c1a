// sim/cli/app.hpp: the `trainsim` command line; the only place that prints results and picks exit codes.
#pragma once
#include "sim/base/exit_code.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace sim::distributed {
class Group;
}

namespace sim::cli {

// The exit codes, defined below the CLI (trainsim-calibrate picks the same ones).
using base::ExitCode;
using base::kExitBadInput;
using base::kExitCheckFailed;
using base::kExitInfeasible;
using base::kExitInternal;
using base::kExitInterrupted;
using base::kExitOk;

/// Runs the command line `args` (without the program name); results go to `out`, logs and errors to `err`.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// The same as one process of the MPI job `group` (main's distributed::Session): commands that share their work use
/// every process, the others run on the root alone.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const distributed::Group& group);
/// Prints the failure of process `rank` of an MPI job (its error lines, "error: " or not) as "error: process R: ...".
void print_remote_failure(int rank, const std::string& message, std::ostream& err);

}  // namespace sim::cli
