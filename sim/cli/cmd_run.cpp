// sim/cli/cmd_run.cpp: `trainsim run` (Monte Carlo over the whole training run) and the main job.
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/rng.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/report_input.hpp"
#include "sim/cli/shard_file.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/scenario/sensitivity.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <variant>

namespace sim::cli {

using results::Json;

namespace {

/// The report's sensitivity study (its what-if reruns) on the progress bar, after the run's own trials.
constexpr const char* kSensitivityUnit = "trials of the report's what-if reruns";

// ---- run --------------------------------------------------------------------------------------------------------

struct RunArgs {
  std::string scenario;
  int trials = 0;  // 0: the scenario's
  std::int64_t seed = -1;
  int threads = 0;  // 0: all cores (shared among the MPI processes on this machine)
  std::string out;  // DIR for the report files; with --shard-index the shard FILE (default stdout)
  bool json = false;
  bool shard = false;  // --shard-index given
  int shard_index = 0;
  int shard_count = 0;
};

/// Trials per task when MPI processes share a run: fixed by the trial numbers alone (tasks start at multiples of it),
/// never by the number of processes; at most about 4,096 tasks, so the root folds few results.
int trials_per_task(int trials) {
  return std::max(64, (trials + 4095) / 4096);
}

/// What a shard's inputs fingerprint covers besides the scenario: the options that change run's result.
Json run_params(int trials, std::uint64_t seed) {
  Json p = Json::object();
  p["trials"] = trials;
  p["seed"] = std::to_string(seed);
  return p;
}

/// The step `run` builds on (with the timeline when it writes the report); an infeasible scenario is reported on
/// `err` and comes back as its exit code.
std::variant<StepOutcome, int> run_step(const scenario::Scenario& s, bool timeline, std::ostream& err) {
  execution::StepOptions step_options;
  step_options.record_timeline = timeline;  // the report's pipeline chart
  auto evaluated = evaluate_step(s, step_options);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  auto& step = std::get<StepOutcome>(evaluated);
  if (!step.result.fits) {
    err << "infeasible: " << base::printable(s.name) << " does not fit in memory (" << fmt(step.result.memory.total, 1)
        << " of " << fmt(step.result.memory.capacity, 1) << " GiB per GPU)\n";
    return kExitInfeasible;
  }
  return std::move(step);
}

/// A slice read back from its JSON (a shard's payload line or an MPI process's result); `origin` names it.
reliability::RunPartial partial_from_text(const std::string& text, const std::string& origin,
                                          const reliability::RunInputs& in) {
  auto doc = base::JsonDocument::parse_text(text, origin);
  base::Diagnostics diag(origin);
  auto r = doc.root(diag);
  auto part = reliability::RunPartial::from_json(r, in);
  diag.throw_if_any();
  return part;
}

/// Trials [slice.first, slice.first + slice.count) of the run as one slice. Alone: here, on `threads` threads. In an
/// MPI group: tasks of trials_per_task trials farmed over the processes, folded in trial order on the root; the
/// other processes get nothing. Either way the same sums, so the same bytes.
std::optional<reliability::RunPartial> run_trials(const reliability::RunInputs& in, int trials, ShardSlice slice,
                                                  std::uint64_t seed, int threads, const distributed::Group& group,
                                                  ProgressBar& bar) {
  if (group.size() == 1)
    return reliability::run_monte_carlo_slice(in, trials, slice.first, slice.count, seed, threads,
                                              [&bar](int done, int total) { bar.update(done, total); });
  const int per_task = trials_per_task(trials);
  const int end = slice.first + slice.count;
  const int first_task = slice.first / per_task;
  const int tasks = (end + per_task - 1) / per_task - first_task;
  const auto task_range = [&](int k) {
    const int b = std::max(slice.first, (first_task + k) * per_task);
    const int e = std::min(end, (first_task + k + 1) * per_task);
    return ShardSlice{b, e - b};
  };
  InterruptPolling polling;
  const auto results = group.map_root(
      tasks,
      [&](int k) {
        const ShardSlice r = task_range(k);
        return reliability::run_monte_carlo_slice(in, trials, r.first, r.count, seed, threads).to_json().dump(-1);
      },
      interruptible(polling, [&](int done, int) { bar.update(std::min(slice.count, done * per_task), slice.count); }));
  if (!group.is_root()) return std::nullopt;
  std::optional<reliability::RunPartial> total;
  for (std::size_t k = 0; k < results.size(); ++k) {
    auto part = partial_from_text(results[k], "task " + std::to_string(k), in);
    if (total) {
      total->append(part);
    } else {
      total.emplace(std::move(part));
    }
  }
  return total;
}

/// What run prints and writes once it has its result, whether one process computed it, shards merged or MPI
/// processes shared it: the report files into `out_dir` (when given), then the JSON or the summary.
int emit_run(const scenario::Scenario& s, const StepOutcome& step, const RunOutcome& r, const std::string& out_dir,
             bool json, const Options& o, std::ostream& out, std::ostream& err) {
  if (!o.quiet)
    for (const auto& note : scenario_notes(s))
      err << "note: " << note << "\n";
  if (const auto w = missing_price_warning(s)) err << "warning: " << *w << "\n";
  const std::string text = r.json.dump() + "\n";
  if (!out_dir.empty()) {
    for (const auto& path : write_report_files(out_dir, report_input(s, step, r), text))
      if (!o.quiet) err << "wrote " << path << "\n";
  }
  if (json || o.format == "json") {
    out << text;
  } else if (o.format == "md" || o.format == "csv") {  // the report's summary.md or result.csv
    const auto in = report_input(s, step, r);
    out << (o.format == "md" ? reports::render_markdown(in) : reports::render_csv(in));
  } else {
    print_run(r.run, r.cost, s, out);
  }
  return kExitOk;
}

int run_command(const RunArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const distributed::Group& group = *o.group;
  const bool shard = a.shard;
  auto s = load_scenario_or_default(a.scenario, o);
  // --trials and --seed are the run's own: the report's effective configuration and its hash record them.
  if (a.trials > 0) s.reliability.trials = a.trials;
  if (a.seed >= 0) s.reliability.seed = static_cast<std::uint64_t>(a.seed);
  const int trials = s.reliability.trials;
  const std::uint64_t seed = s.reliability.seed;
  ShardSlice slice{0, trials};
  if (shard) {
    check_shard_options(a.shard_index, a.shard_count, trials, "trials");
    slice = shard_slice(trials, a.shard_index, a.shard_count);
  }
  const std::string report_dir = shard ? std::string() : a.out;
  std::optional<base::FolderLock> lock;  // the root writes the report: a second writer is refused before the work
  if (!report_dir.empty() && group.is_root()) lock.emplace(report_dir);
  auto stepped = run_step(s, !report_dir.empty(), err);
  if (const int* code = std::get_if<int>(&stepped)) return *code;
  const auto& step = std::get<StepOutcome>(stepped);
  const auto in = app::run_inputs(s, step);
  app::check_run_work(s, in, step.result.step_time, trials, a.trials > 0 ? "--trials" : "", !report_dir.empty(),
                      shard ? a.shard_count : 1);
  const int threads = thread_count(a.threads, group.local_size());
  ProgressBar bar(err, o.progress, o.quiet);
  if (!report_dir.empty()) bar.then(kSensitivityUnit);
  auto part = run_trials(in, trials, slice, seed, threads, group, bar);
  // With a report, the tornado's nine reruns are farmed like the trials (without, the farm is never called).
  base::TaskFarm farm;
  if (group.size() > 1)
    farm = group_farm(group, [&bar, per = scenario::sensitivity_trials(trials)](int done, int total) {
      bar.update(done * per, total * per);  // tasks of `per` trials
    });
  if (!part) {  // an MPI process other than the root: it computes its share, the root prints
    if (!report_dir.empty()) share_sensitivity(s, in, trials, seed, threads, farm);
    return kExitOk;
  }

  if (shard) {
    Json work = run_params(trials, seed);
    work["first"] = slice.first;
    work["count"] = slice.count;
    work["step_time_ns"] = step.result.step_time.ns;
    write_shard("run", a.scenario, o, a.shard_index, a.shard_count, run_params(trials, seed), std::move(work),
                {part->to_json()}, a.out, out, err);
    return kExitOk;
  }
  std::vector<reliability::RunPartial> parts;
  parts.push_back(std::move(*part));
  auto summary = reliability::summarise_partials(in, parts);
  const auto r = finish_run(s, step, in, std::move(summary), threads, bar, !report_dir.empty(), farm);
  return emit_run(s, step, r, report_dir, a.json, o, out, err);
}

// ---- the main job -----------------------------------------------------------------------------------------------

/// The folder the main job writes into when no --out is given: trainsim-out/<scenario name> (name made file-safe).
std::string default_out_dir(const scenario::Scenario& s) {
  std::string safe;
  for (char c : s.name)
    safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  // A leading dot would let "." and ".." name trainsim-out itself or the working directory; it also hides the folder.
  if (!safe.empty() && safe.front() == '.') safe.front() = '_';
  if (safe.empty()) safe = "scenario";
  if (safe.size() > 200 || safe != s.name) {
    // Two names the rewrite makes alike ("a/b" and "a_b") keep folders of their own (a user trial: one run's report
    // silently replaced the other's): the rewritten name carries the original's FNV-1a hash.
    char tag[18];
    std::snprintf(tag, sizeof tag, "-%08llx", static_cast<unsigned long long>(base::fnv1a64(s.name) & 0xffffffffull));
    safe = safe.substr(0, 200) + tag;
  }
  return "trainsim-out/" + safe;
}

}  // namespace

int main_job(const std::string& path, const Options& o, std::ostream& out, std::ostream& err) {
  const auto s = load_scenario_or_default(path, o);
  if (path.empty() && !o.quiet)
    err << "trainsim: no scenario given; using the built-in default (" << base::printable(s.name) << ")\n";
  const std::string dir = default_out_dir(s);
  // trainsim-out itself must be a folder, not a link that leads the report elsewhere (found by a user trial: a link
  // to ../outside received the files).
  if (std::error_code ec; std::filesystem::is_symlink("trainsim-out", ec))
    throw base::ConfigError("trainsim-out", "",
                            "is a symbolic link, which trainsim does not write through; make it a folder, or give "
                            "`trainsim run SCENARIO --out DIR`");
  const base::FolderLock lock(dir);  // a second run into the same folder is refused now, not mixed in later
  execution::StepOptions step_options;
  step_options.record_timeline = true;  // the report's pipeline chart
  auto evaluated = evaluate_step(s, step_options);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& step = std::get<StepOutcome>(evaluated);
  if (!step.result.fits) {  // the step, in the format asked for (it was text under every format)
    if (o.format == "json")
      out << step_json(step.result, s).dump() << '\n';
    else if (o.format == "md" || o.format == "csv")
      print_leaves(step_json(step.result, s), out);
    else
      print_step(step.result, s, step.inputs, out);
    err << "infeasible: " << base::printable(s.name) << " does not fit in memory\n";
    return kExitInfeasible;
  }
  // The whole run: failures, checkpoints and restarts over the scenario's Monte Carlo trials.
  ProgressBar bar(err, o.progress, o.quiet);
  bar.then(kSensitivityUnit);
  const auto r =
      evaluate_run(s, step, s.reliability.trials, s.reliability.seed, thread_count(0), bar, /*sensitivity=*/true);
  Json result = r.json;
  for (const auto& written : write_report_files(dir, report_input(s, step, r), result.dump() + "\n"))
    if (!o.quiet) err << "trainsim: wrote " << written << "\n";
  if (o.format == "json") {
    out << result.dump() << '\n';
    return kExitOk;
  }
  if (o.format == "md" || o.format == "csv") {  // what the report folder holds as summary.md or result.csv
    const auto in = report_input(s, step, r);
    out << (o.format == "md" ? reports::render_markdown(in) : reports::render_csv(in));
    return kExitOk;
  }
  print_scenario(s, out);
  out << "\n";
  print_step(step.result, s, step.inputs, out);
  out << "\n";
  print_run(r.run, r.cost, s, out);
  return kExitOk;
}

int merge_run_shards(const std::vector<ShardFile>& shards, const MergeArgs& a, const Options& o, std::ostream& out,
                     std::ostream& err) {
  // Every shard's slice: the even split its index names, of the same trials and seed.
  struct Work {
    int trials = 0, first = 0, count = 0;
    std::string seed;
    std::int64_t step_time_ns = 0;
  };
  std::vector<Work> works;
  std::vector<base::Diagnostic> problems;
  for (const ShardFile& f : shards) {
    base::Diagnostics diag(f.path + ":1");
    auto w = f.work(diag);
    Work k;
    w.required("trials", k.trials, base::Range::at_least(1));
    w.required("seed", k.seed);
    w.required("first", k.first, base::Range::at_least(0));
    w.required("count", k.count, base::Range::at_least(1));
    w.required("step_time_ns", k.step_time_ns, base::Range::at_least(1));
    w.finish();
    if (diag.empty()) {
      const ShardSlice expect = shard_slice(k.trials, f.header.shard_index, f.header.shard_count);
      if (k.first != expect.first || k.count != expect.count)
        diag.add("/work", "trials [" + std::to_string(k.first) + ", " + std::to_string(k.first + k.count) +
                              ") where shard " + std::to_string(f.header.shard_index) + " of " +
                              std::to_string(f.header.shard_count) + " of " + std::to_string(k.trials) +
                              " trials takes [" + std::to_string(expect.first) + ", " +
                              std::to_string(expect.first + expect.count) + ")");
    }
    // Every shard, not only the first, must have stepped the same scenario the same way.
    if (diag.empty() && !works.empty() && k.step_time_ns != works.front().step_time_ns)
      diag.add("/work/step_time_ns", std::to_string(k.step_time_ns) + " ns, but " + shards.front().path + " has " +
                                         std::to_string(works.front().step_time_ns) +
                                         " ns: the shards come from different scenarios or builds");
    problems.insert(problems.end(), diag.items().begin(), diag.items().end());
    works.push_back(k);
  }
  if (!problems.empty()) throw base::ConfigError(std::move(problems));
  const ShardFile& first = shards.front();
  const Work& head = works.front();
  std::uint64_t seed = 0;
  // The whole text, digits only: std::stoull took "-1" (as 2^64-1) and "12abc" (as 12).
  const auto [end, ec] = std::from_chars(head.seed.data(), head.seed.data() + head.seed.size(), seed);
  if (ec != std::errc() || end != head.seed.data() + head.seed.size() || head.seed.empty())
    throw base::ConfigError(first.path + ":1", "/work/seed", "\"" + head.seed + "\" is not an unsigned integer");

  // The scenario again, with the shards' overrides: it must be the one they ran.
  auto s = load_shards_scenario(shards, a, o, "run", run_params(head.trials, seed));
  s.reliability.trials = head.trials;  // the run's own, as `run --trials --seed` records them in its report
  s.reliability.seed = seed;
  std::optional<base::FolderLock> lock;
  if (!a.out.empty()) lock.emplace(a.out);
  auto stepped = run_step(s, !a.out.empty(), err);
  if (const int* code = std::get_if<int>(&stepped)) return *code;
  const auto& step = std::get<StepOutcome>(stepped);
  if (step.result.step_time.ns != head.step_time_ns)
    throw base::ConfigError(first.path + ":1", "/work/step_time_ns",
                            std::to_string(head.step_time_ns) + " ns, but this trainsim simulates " +
                                std::to_string(step.result.step_time.ns) +
                                " ns for the same scenario: merge with the build that wrote the shards");
  const auto in = app::run_inputs(s, step);

  // Every slice, folded in trial order (constant memory however many shards).
  std::optional<reliability::RunPartial> total;
  for (const ShardFile& f : shards) {
    for (std::size_t i = 0; i < f.payload.size(); ++i) {
      auto doc = f.payload_document(i);
      base::Diagnostics diag(doc.origin());
      auto r = doc.root(diag);
      auto part = reliability::RunPartial::from_json(r, in);
      diag.throw_if_any();
      if (!total) {
        total.emplace(std::move(part));
        continue;
      }
      try {
        total->append(part);
      } catch (const base::ConfigError& e) {
        throw base::ConfigError(doc.origin(), "", e.items().front().message);
      }
    }
  }
  std::vector<reliability::RunPartial> parts;
  parts.push_back(std::move(*total));
  auto summary = reliability::summarise_partials(in, parts);
  ProgressBar bar(err, o.progress, o.quiet, kSensitivityUnit);
  const auto r = finish_run(s, step, in, std::move(summary), thread_count(a.threads), bar, !a.out.empty());
  return emit_run(s, step, r, a.out, a.json, o, out, err);
}

void add_run_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* run_cmd = app.add_subcommand("run", "Simulate the whole training run with failures: Monte Carlo over trials");
  auto a = std::make_shared<RunArgs>();
  run_cmd->add_option("scenario", a->scenario, "Scenario file (default: the built-in default scenario)");
  run_cmd->add_option("--trials", a->trials, "Monte Carlo trials (default: the scenario's)")
      ->check(CLI::Range(1, 10'000'000));
  run_cmd->add_option("--seed", a->seed, "Seed (default: the scenario's)")->check(seed_problem, "SEED");
  run_cmd->add_option("--threads", a->threads, "Worker threads (default: all cores); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  run_cmd
      ->add_option("--out", a->out,
                   "Write report.html, summary.md, result.json and result.csv into this directory; with "
                   "--shard-index, the shard file to write (default: stdout)")
      ->type_name("DIR|FILE");
  run_cmd->add_flag("--json", a->json, "JSON result (schema trainsim.run/1), same as --format json");
  auto* index = run_cmd
                    ->add_option("--shard-index", a->shard_index,
                                 "Run only shard I of --shard-count N (an even split of the trials) and write it as "
                                 "JSON lines for trainsim merge (docs/scale-out.md)")
                    ->type_name("I");
  auto* count = run_cmd->add_option("--shard-count", a->shard_count, "Number of shards the trials are split into")
                    ->type_name("N");
  index->needs(count);
  count->needs(index);
  commands.push_back({run_cmd,
                      [a, index, &o](std::ostream& out, std::ostream& err) {
                        a->shard = index->count() > 0;
                        return run_command(*a, o, out, err);
                      },
                      /*uses_group=*/true});
}

}  // namespace sim::cli
