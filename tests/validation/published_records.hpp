// tests/validation/published_records.hpp: the published runs of ../shared/validation/published_runs*.json as
// scenarios, with the reference step time each source's own convention gives (issue 17).
//
// Nothing is copied by hand: each record is read from the shared file and converted by the rules below. Where a
// record leaves a setting out, the converter fills it with the framework default the shared README names (and says
// which in `assumptions`); where it cannot express a record at all, it says why in `refusal`, and the row is listed,
// never dropped.
#pragma once
#include <string>
#include <vector>

namespace validation {

/// How the reference step time was obtained from what the source publishes (compare like with like).
enum class Reference {
  StepTime,    // the source publishes the step (iteration) time
  TokensPerS,  // global batch x sequence / published tokens per second
  Tflops,      // the source's own FLOP count per iteration / (GPUs x published TFLOP/s per GPU)
};

struct Record {
  std::string id;
  std::string family;      // source family (one per publication / benchmark suite), for per-family errors
  bool core = false;       // from published_runs.json: the 18 A100 Megatron runs first validated on
  std::string generation;  // GPU generation whose physical parameters the run informs: "ampere", "hopper", ...
  std::string hardware;    // built-in hardware profile name
  std::string scenario;    // scenario JSON text (empty when refused)
  std::string refusal;     // why the record cannot be expressed (empty when it can)
  double reference_step_s = 0;
  Reference reference = Reference::StepTime;
  std::string reference_how;             // the formula, in words
  std::vector<std::string> assumptions;  // defaults filled in, each a short sentence
};

/// The record files of `dir` (the shared validation folder): every published_runs*.json, published_runs.json first,
/// then by name, so a file of runs dropped beside them is validated too. Throws std::runtime_error when
/// published_runs.json or published_runs_more.json is missing.
std::vector<std::string> published_record_files(const std::string& dir);

/// Every record of those files, in file order. Throws std::runtime_error when a file is missing, is not JSON or
/// is not an array of records.
std::vector<Record> load_published_records(const std::string& dir);

/// Every record of those files as its JSON text, in file order (to convert a variant of one).
std::vector<std::string> published_record_texts(const std::string& dir);
/// One record converted as load_published_records() converts it; with `tflops_only`, as if the source published
/// neither a step time nor tokens/s (its reference then comes from its TFLOP/s, by the source's own FLOP count).
Record convert_record(const std::string& record_json, bool tflops_only = false);

/// The shared validation folder beside the project: $TRAINSIM_VALIDATION_DIR, else <source>/../shared/validation.
std::string shared_validation_dir();

/// The id of an FP8 run's BF16 twin (same source, model, GPU count and layout) by its source's naming; empty when the
/// id names no FP8 run. The twin may not be published.
std::string bf16_twin_id(const std::string& id);

}  // namespace validation
