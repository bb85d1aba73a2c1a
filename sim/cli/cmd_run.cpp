// sim/cli/cmd_run.cpp: `trainsim run` (Monte Carlo over the whole training run) and the main job.
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/report_input.hpp"

#include <CLI/CLI.hpp>

#include <cctype>
#include <filesystem>
#include <memory>

namespace sim::cli {

using results::Json;

namespace {

// ---- run --------------------------------------------------------------------------------------------------------

struct RunArgs {
  std::string scenario;
  int trials = 0;  // 0: the scenario's
  std::int64_t seed = -1;
  int threads = 0;  // 0: all cores
  std::string out_dir;
  bool json = false;
};

int run_command(const RunArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const auto s = load_scenario_or_default(a.scenario, o);
  execution::StepOptions step_options;
  step_options.record_timeline = !a.out_dir.empty();  // the report's pipeline chart
  auto evaluated = evaluate_step(s, step_options);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& step = std::get<StepOutcome>(evaluated);
  if (!step.result.fits) {
    err << "infeasible: " << s.name << " does not fit in memory (" << fmt(step.result.memory.total, 1) << " of "
        << fmt(step.result.memory.capacity, 1) << " GiB per GPU)\n";
    return kExitInfeasible;
  }
  const int trials = a.trials > 0 ? a.trials : s.reliability.trials;
  const std::uint64_t seed = a.seed >= 0 ? static_cast<std::uint64_t>(a.seed) : s.reliability.seed;
  const int threads = thread_count(a.threads);
  ProgressBar bar(err, o.progress, o.quiet);
  const auto r = evaluate_run(s, step, trials, seed, threads, bar, /*sensitivity=*/!a.out_dir.empty());
  const std::string text = r.json.dump() + "\n";
  if (!a.out_dir.empty()) {
    for (const auto& path : write_report_files(a.out_dir, report_input(s, step, r), text))
      if (!o.quiet) err << "wrote " << path << "\n";
  }
  if (a.json || o.format == "json") {
    out << text;
  } else {
    print_run(r.run, r.cost, s, out);
  }
  return kExitOk;
}

// ---- the main job -----------------------------------------------------------------------------------------------

/// The folder the main job writes into when no --out is given: trainsim-out/<scenario name> (name made file-safe).
std::string default_out_dir(const scenario::Scenario& s) {
  std::string safe;
  for (char c : s.name)
    safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return "trainsim-out/" + (safe.empty() ? std::string("scenario") : safe);
}

}  // namespace

int main_job(const std::string& path, const Options& o, std::ostream& out, std::ostream& err) {
  const auto s = load_scenario_or_default(path, o);
  if (path.empty() && !o.quiet) err << "trainsim: no scenario given; using the built-in default (" << s.name << ")\n";
  execution::StepOptions step_options;
  step_options.record_timeline = true;  // the report's pipeline chart
  auto evaluated = evaluate_step(s, step_options);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& step = std::get<StepOutcome>(evaluated);
  if (!step.result.fits) {
    print_step(step.result, s, step.inputs, out);
    err << "infeasible: " << s.name << " does not fit in memory\n";
    return kExitInfeasible;
  }
  // The whole run: failures, checkpoints and restarts over the scenario's Monte Carlo trials.
  ProgressBar bar(err, o.progress, o.quiet);
  const auto r =
      evaluate_run(s, step, s.reliability.trials, s.reliability.seed, thread_count(0), bar, /*sensitivity=*/true);
  Json result = r.json;
  result["resolved_scenario"] = scenario_json(s);  // provenance: what exactly was simulated
  const std::string dir = default_out_dir(s);
  for (const auto& written : write_report_files(dir, report_input(s, step, r), result.dump() + "\n"))
    if (!o.quiet) err << "trainsim: wrote " << written << "\n";
  if (o.format == "json") {
    out << result.dump() << '\n';
    return kExitOk;
  }
  print_scenario(s, out);
  out << "\n";
  print_step(step.result, s, step.inputs, out);
  out << "\n";
  print_run(r.run, r.cost, s, out);
  return kExitOk;
}

void add_run_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* run_cmd = app.add_subcommand("run", "Simulate the whole training run with failures: Monte Carlo over trials");
  auto a = std::make_shared<RunArgs>();
  run_cmd->add_option("scenario", a->scenario, "Scenario file (default: the built-in default scenario)");
  run_cmd->add_option("--trials", a->trials, "Monte Carlo trials (default: the scenario's)")
      ->check(CLI::Range(1, 10'000'000));
  run_cmd->add_option("--seed", a->seed, "Seed (default: the scenario's)")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--threads", a->threads, "Worker threads (default: all cores); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  run_cmd
      ->add_option("--out", a->out_dir, "Write report.html, summary.md, result.json and result.csv into this directory")
      ->type_name("DIR");
  run_cmd->add_flag("--json", a->json, "JSON result (schema trainsim.run/1), same as --format json");
  commands.push_back({run_cmd, [a, &o](std::ostream& out, std::ostream& err) { return run_command(*a, o, out, err); }});
}

}  // namespace sim::cli
