// calibrate/cli/app.hpp: the `trainsim-calibrate` command line (measure, import nccl-tests, fit); the only place in
// calibrate/ that prints and picks exit codes.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace calibrate::cli {

/// Runs the command line `args` (without the program name); results go to `out`, notes and errors to `err`.
/// Exit codes as trainsim's (sim/cli/app.hpp): 0 ok, 1 a measurement failed, 2 invalid input or usage (including
/// too few or inconsistent points for a fit, and `measure` without a CUDA device), 4 internal error.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace calibrate::cli
