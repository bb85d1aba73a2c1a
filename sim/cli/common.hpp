// sim/cli/common.hpp: what the subcommands share: global options, the application layer's evaluations with the
// progress bar, text output helpers.
#pragma once
#include "sim/app/check.hpp"
#include "sim/app/run.hpp"
#include "sim/base/printable.hpp"
#include "sim/base/table.hpp"
#include "sim/base/task_farm.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/shard_file.hpp"
#include "sim/cost/cost.hpp"
#include "sim/cost/sensitivity.hpp"
#include "sim/distributed/task_farm.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/results/json.hpp"
#include "sim/results/run_result.hpp"
#include "sim/results/step_result.hpp"
#include "sim/scenario/scenario.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <mutex>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace CLI {
class App;
}

namespace sim::cli {

using base::Table;  // the one table printer, below the CLI (trainsim-calibrate prints with it too)

/// Why `value` is not a --seed (an integer from 0 to 2^63-1), or "": the options' check, so that "-1" and "abc" get
/// this message rather than CLI11's range of doubles (found by a user trial).
std::string seed_problem(const std::string& value);

/// Options every subcommand understands (DESIGN.md "common").
struct Options {
  std::vector<std::string> sets;
  std::string format = "table";
  std::string progress = "auto";
  bool quiet = false;
  int verbose = 0;
  /// The processes sharing the job: main's MPI session under mpirun, else this process alone. Never null while a
  /// command runs.
  const distributed::Group* group = nullptr;
};

/// A registered subcommand: its CLI11 parser and what runs when it was given. Each `cmd_*.cpp` adds one or more.
struct Command {
  CLI::App* app = nullptr;
  std::function<int(std::ostream& out, std::ostream& err)> run;
  /// Shares its work with the other processes of an MPI job (Options::group) and prints on the root only; any other
  /// command runs on the root alone while the other processes end at once.
  bool uses_group = false;
};
using CommandList = std::vector<Command>;

// One registration function per subcommand file (app.cpp calls them in help order).
void add_describe_commands(CLI::App& app, const Options& o, CommandList& out);  // describe, validate
void add_step_command(CLI::App& app, const Options& o, CommandList& out);
void add_run_command(CLI::App& app, const Options& o, CommandList& out);
void add_import_command(CLI::App& app, const Options& o, CommandList& out);
void add_check_command(CLI::App& app, const Options& o, CommandList& out);
using app::validate_baseline_file;  // sim/app/check.hpp
void add_plan_command(CLI::App& app, const Options& o, CommandList& out);
void add_compare_command(CLI::App& app, const Options& o, CommandList& out);
void add_scale_command(CLI::App& app, const Options& o, CommandList& out);
void add_merge_command(CLI::App& app, const Options& o, CommandList& out);
void add_collective_command(CLI::App& app, const Options& o, CommandList& out);

/// `trainsim merge`'s options, for the merger of the shards' command.
struct MergeArgs {
  std::vector<std::string> shards;  // shard files, any order
  std::string scenario;             // --scenario: read the scenario here instead of at the path the shards name
  std::string out;                  // --out DIR: the command's report files, as that command's --out writes them
  int threads = 0;                  // for what the merge computes itself (run --out: the sensitivity reruns)
  bool json = false;
};
/// Turns a whole, checked set of shards of one command (read_shard_set: one per index, in shard order) into that
/// command's output, byte for byte what one process prints and writes. cmd_merge.cpp lists one per command.
using ShardMerger = int (*)(const std::vector<ShardFile>& shards, const MergeArgs& a, const Options& o,
                            std::ostream& out, std::ostream& err);
int merge_run_shards(const std::vector<ShardFile>& shards, const MergeArgs& a, const Options& o, std::ostream& out,
                     std::ostream& err);  // cmd_run.cpp
int merge_plan_shards(const std::vector<ShardFile>& shards, const MergeArgs& a, const Options& o, std::ostream& out,
                      std::ostream& err);  // cmd_plan.cpp
/// Writes shard `index` of `count` of `command`: the header (scenario path and overrides, the inputs fingerprint
/// over `params`, this version, `work`) and `payload`, to `path` atomically, or to `out` when `path` is empty.
/// cmd_merge.cpp.
void write_shard(const std::string& command, const std::string& scenario, const Options& o, int index, int count,
                 const results::Json& params, results::Json work, const std::vector<results::Json>& payload,
                 const std::string& path, std::ostream& out, std::ostream& err);
/// The scenario the shards ran, read again with their --set overrides (from the path they recorded, or --scenario),
/// checked against their inputs fingerprint for `command` with `params` (shard_inputs_sha256). Throws ConfigError
/// naming the file when it cannot be read or is not the one they ran. cmd_merge.cpp.
scenario::Scenario load_shards_scenario(const std::vector<ShardFile>& shards, const MergeArgs& a, const Options& o,
                                        const std::string& command, const results::Json& params);
/// A Hugging Face config.json read as `trainsim import hf-config` reads it and loaded as a trainsim model (for
/// `describe models`). Throws ConfigError naming the file when a field stays unresolved or the model does not load.
/// cmd_import.cpp.
workload::ModelSpec load_hf_config_model(const std::string& path);
/// Whether `path` holds a Hugging Face config.json rather than a trainsim file: a JSON object with no "schema" and a
/// "model_type" (every transformers config has one). cmd_import.cpp.
bool is_hf_config(const std::string& path);

/// The main job (no subcommand): run the scenario (or the built-in default) and write the report folder.
int main_job(const std::string& path, const Options& o, std::ostream& out, std::ostream& err);

std::vector<scenario::Override> overrides_of(const Options& o);
/// Loads the scenario at `path` with the --set overrides, or the built-in default when `path` is empty.
scenario::Scenario load_scenario_or_default(const std::string& path, const Options& o);

using base::fmt;
using base::pct;

/// The optimizer-state sharding column of `plan` and `scale`: none, distopt (Megatron's distributed optimizer, ZeRO-1)
/// or zero-2 / zero-3.
std::string sharding(const parallel::ParallelConfig& c);
/// A planned configuration's Megatron-LM flags, with a note where its schedule has no Megatron-LM flag.
std::string megatron_flags_line(const std::string& flags, parallel::Schedule schedule);

void print_step(const results::StepResult& r, const scenario::Scenario& s, const execution::StepInputs& in,
                std::ostream& out);
/// The notes step and run print and the report shows about what a scenario's numbers leave out: MoE routing taken as
/// balanced; a profile's call costs not added to the step.
std::vector<std::string> scenario_notes(const scenario::Scenario& s);
/// Rented pricing without a price (a hardware profile with none, cost.gpu_hour not given): what the run's costs
/// then are (a user trial: plan --objective cost ranked on storage alone, run printed 0.00 USD/h without a word).
std::optional<std::string> missing_price_warning(const scenario::Scenario& s);

/// Prints the broken rules and returns the infeasible exit code.
int print_infeasible(const std::vector<parallel::Infeasible>& why, const scenario::Scenario& s, std::ostream& err);

/// A progress bar on stderr with rate and ETA, drawn only on a terminal unless --progress says otherwise. Every
/// update checks for Ctrl-C / SIGTERM and throws Interrupted, so long loops stop and nothing is written.
class ProgressBar {
 public:
  ProgressBar(std::ostream& err, const std::string& mode, bool quiet, std::string unit = "trials");
  void update(int done, int total);
  /// The unit of the next phase: an update whose total differs from the last one's starts a new phase, with its own
  /// line, clock (rate and ETA) and this unit (a user trial saw the report's sensitivity reruns drawn as "trials" at
  /// a rate counted from the first phase's start).
  void then(std::string unit);
  /// The clock rates and ETAs are read from (tests give their own); restarts the current phase's clock.
  void use_clock(std::function<std::chrono::steady_clock::time_point()> now);

 private:
  void progress_line(int done, int total);
  void next_unit();  // a new phase takes the unit then() queued, if any (the caller holds mutex_)

  std::ostream& err_;
  bool on_;
  bool lines_;  // --progress auto without a terminal: a plain line a minute on long phases (progress_line)
  int lines_total_ = -1, lines_done_ = 0;
  std::chrono::steady_clock::time_point lines_start_, lines_last_;
  std::string unit_;
  std::vector<std::string> next_units_;
  int total_ = -1;
  bool line_open_ = false;
  std::function<std::chrono::steady_clock::time_point()> now_ = std::chrono::steady_clock::now;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;  // the last report: where the next phase's clock starts
  std::mutex mutex_;
  InterruptPolling polling_;  // once update() polls for Ctrl-C, a signal no longer ends the process at once
};

void print_run(const results::RunSummary& r, const cost::CostSummary& c, const scenario::Scenario& s,
               std::ostream& out);

// The evaluations live in the application layer (sim/app); the CLI parses, prints and picks exit codes.
using app::evaluate_step;
using app::RunOutcome;
using app::scenario_json;
using app::share_sensitivity;
using app::step_json;
using app::StepOutcome;

/// The progress bar as the application layer's progress and cancellation: each report may throw Interrupted.
app::Progress progress_of(ProgressBar& bar);
/// app::evaluate_run with the progress bar.
RunOutcome evaluate_run(const scenario::Scenario& s, const StepOutcome& step, int trials, std::uint64_t seed,
                        int threads, ProgressBar& bar, bool sensitivity = false);
/// app::finish_run with the progress bar.
RunOutcome finish_run(const scenario::Scenario& s, const StepOutcome& step, const reliability::RunInputs& in,
                      results::RunSummary run, int threads, ProgressBar& bar, bool sensitivity,
                      const base::TaskFarm& farm = {});

void print_scenario(const scenario::Scenario& s, std::ostream& out);
/// A JSON result as a table of (metric, value) rows, every scalar by its dotted path: `--format md|csv` of a step.
void print_leaves(const results::Json& j, std::ostream& out);

/// Farm options for a loop over MPI tasks: each poll checks for Ctrl-C (throws Interrupted; `polling` scopes the
/// wait), and `progress` hears of finished tasks on the root.
distributed::FarmOptions interruptible(InterruptPolling& polling, std::function<void(int done, int total)> progress);
/// A farm over `group`'s processes (every process gets every result), interruptible as above, for computations that
/// take a base::TaskFarm (the planner, the sensitivity reruns).
base::TaskFarm group_farm(const distributed::Group& group, std::function<void(int done, int total)> progress);

/// Worker threads: `requested` when positive, else every core shared among `local_processes` processes of one job
/// on this machine (MPI ranks).
int thread_count(int requested, int local_processes = 1);

}  // namespace sim::cli
