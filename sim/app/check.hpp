// sim/app/check.hpp: "check this scenario": its `expect` section and its committed baseline as rows of results, for
// `trainsim check` (which prints them as a table, JUnit XML and GitHub annotations and picks the exit code).
#pragma once
#include "sim/app/step.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>
#include <vector>

namespace sim::app {

/// Skipped: not evaluated because the configuration does not fit (named as when evaluated, for CI histories).
enum class CheckStatus { Ok, Improved, Updated, Failed, Error, Skipped };

/// One check of one scenario: an expectation, a baseline metric, fit or feasibility, or an input error.
struct CheckRow {
  std::string check;
  std::string value;
  std::string expected;
  CheckStatus status = CheckStatus::Ok;
  std::string message;  // failures and errors: one line with both numbers
};

struct CheckReport {
  std::string file;
  std::string name;
  std::vector<CheckRow> rows;
  double seconds = 0;
  std::string baseline_written;  // the baseline file rewritten (update_baseline), else empty
};

struct CheckOptions {
  std::string baseline_dir;  // empty: expectations only
  bool update_baseline = false;
  int threads = 1;                            // for the Monte Carlo run and the within_best search
  std::vector<scenario::Override> overrides;  // --set
};

/// Checks the scenario file at `path`: loads it with the overrides, steps it (replica), runs the Monte Carlo only
/// when a run-level metric is checked, and compares every expectation and baseline metric; with update_baseline,
/// rewrites the baseline file (`<baseline_dir>/<file stem>.json`). Bad input (the scenario, the baseline, a metric
/// path) comes back as Error rows, never as an exception. `progress` hears of the run's trials and may cancel.
CheckReport check_scenario(const std::string& path, const CheckOptions& options, const Progress& progress);

/// A `trainsim check` baseline file (schema trainsim.baseline/1)? Throws ConfigError when it is one and is malformed.
bool validate_baseline_file(const std::string& path);

}  // namespace sim::app
