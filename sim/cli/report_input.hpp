// sim/cli/report_input.hpp: a scenario and its results as a reports::ReportInput, and the report folder's files.
#pragma once
#include "reports/report.hpp"
#include "sim/cli/common.hpp"

#include <string>
#include <vector>

namespace sim::cli {

/// The report's input: `step` must be the replica-fidelity step with its timeline recorded
/// (StepOptions::record_timeline); `r` the run of the same scenario.
reports::ReportInput report_input(const scenario::Scenario& s, const StepOutcome& step, const RunOutcome& r);

/// The bytes of the scenario file (the built-in text for "<built-in>/..." sources); empty when unreadable.
std::string scenario_bytes(const scenario::Scenario& s);

/// Writes report.html, summary.md, result.json and result.csv into `dir` as one set (base::write_file_set: a new
/// folder swapped in), so that a reader, a kill or a full disk sees the old four or the new four. The caller holds a
/// base::FolderLock on `dir`. Returns the paths written, in that order.
std::vector<std::string> write_report_files(const std::string& dir, const reports::ReportInput& in,
                                            const std::string& result_json);

}  // namespace sim::cli
