// tests/validation/validation_report.hpp: errors of predicted against published runs, per run and per source family,
// as text for the test log and Markdown for docs/validation.md.
#pragma once
#include "tests/validation/published_records.hpp"

#include <map>
#include <string>
#include <vector>

namespace validation {

/// One record's prediction (or why there is none).
struct Outcome {
  const Record* record = nullptr;
  bool predicted = false;
  double predicted_step_s = 0;
  double memory_gib = 0;
  double capacity_gib = 0;
  std::string miss;  // empty when predicted

  /// Error in the quantity the source publishes, signed so that positive is always "trainsim predicts slower": step
  /// time (predicted / published - 1), or throughput (tokens/s or TFLOP/s: 1 - predicted / published throughput).
  double error() const;
};

struct FamilyStats {
  int runs = 0;
  int predicted = 0;
  int within15 = 0;           // of all runs: a miss is never within
  double mape = 0;            // over predicted runs
  double core_mape = 0;       // over the published_runs.json records of the family (0 when none)
  double held_out_mape = -1;  // with the family left out of the fit (-1: not computed)
};

struct Summary {
  FamilyStats all;
  std::map<std::string, FamilyStats> by_family;
  double core_mape = 0;  // the 18 records of published_runs.json
};

Summary summarise(const std::vector<Outcome>& outcomes);
/// Fills each family's held_out_mape (and the overall one) from trainsim-validation-fit's result file, if present.
void read_held_out(const std::string& fit_result_path, Summary& s);
std::string render_text(const std::vector<Outcome>& outcomes, const Summary& s);
std::string render_markdown(const std::vector<Outcome>& outcomes, const Summary& s);

/// Replaces the text between "<!-- step-validation:begin -->" and "<!-- step-validation:end -->" in `path` (creating
/// the file, or appending the markers, when absent); the rest of the file is kept. Writes only when it changed.
void write_docs_section(const std::string& path, const std::string& markdown);

}  // namespace validation
