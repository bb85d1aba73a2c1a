// sim/cli/app.cpp: the `trainsim` command line: global options, subcommand registration, exit codes for errors.
#include "sim/cli/app.hpp"

#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/input_file.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/distributed/task_farm.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>

#ifndef TRAINSIM_VERSION
#define TRAINSIM_VERSION "0.0.0-dev"
#endif

namespace sim::cli {

void print_remote_failure(int rank, const std::string& message, std::ostream& err) {
  std::size_t at = 0;
  while (at < message.size()) {
    std::size_t end = message.find('\n', at);
    if (end == std::string::npos) end = message.size();
    std::string_view line(message.data() + at, end - at);
    if (line.substr(0, 7) == "error: ") line.remove_prefix(7);
    if (!line.empty()) err << "error: process " << rank << ": " << line << '\n';
    at = end + 1;
  }
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const distributed::Group alone;
  return run(args, out, err, alone);
}

namespace {

/// What CLI11 lets through and trainsim refuses (issue 22): a second positional after a subcommand's (it fell back to
/// the main job's SCENARIO and was ignored), an empty value (--out '' was taken as no option), a --seed past
/// 2^63-1 (CLI11 clamped it to 2^63-1 without a word). Empty when nothing is wrong.
std::string misused_options(const CLI::App& app, const std::string& main_scenario) {
  const auto subs = app.get_subcommands();
  if (!subs.empty() && !main_scenario.empty())
    return "unexpected argument \"" + main_scenario + "\": " + subs.front()->get_name() +
           " takes the arguments its --help lists, no more";
  for (const CLI::App* sub : subs) {
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->count() == 0) continue;
      const std::string type = opt->get_type_name();
      for (const auto& value : opt->results()) {
        // --args "": the launch script run with no arguments ($@ empty, $1 unset), which its absence does not say.
        if (value.empty() && opt->get_name() != "--args")
          return opt->get_name() + ": an empty value" +
                 (type.find("FILE") != std::string::npos || type.find("DIR") != std::string::npos
                      ? "; give a path, or leave the option out"
                      : "; leave the option out for its default");
        if (opt->get_name() != "--seed") continue;
        if (std::string why = seed_problem(value); !why.empty()) return "--seed: " + why;
      }
    }
  }
  return "";
}

/// DESIGN.md's --format table|json|md|csv, for the commands whose result is a table of numbers: step, run, plan,
/// merge and the main job print all four; describe, compare, collective, scale and import table or JSON; validate
/// its text (check says why itself). A format a command would ignore is refused, never silently dropped.
std::string format_problem(const CLI::App& app, const std::string& format) {
  const auto subs = app.get_subcommands();
  const std::string cmd = subs.empty() ? "" : subs.front()->get_name();
  const auto given = [&](const char* name) {
    const CLI::Option* opt = subs.empty() ? nullptr : subs.front()->get_option_no_throw(name);
    return opt != nullptr && opt->count() > 0;
  };
  // table is the default: only an explicit --format table conflicts with --json.
  const bool format_given = app.get_option_no_throw("--format")->count() > 0;
  if (given("--json") && format != "json" && format_given)
    return "--json and --format " + format + " ask for two outputs; give one of them";
  if (format == "table") return "";
  if (given("--shard-index") && format != "json")
    return "--format " + format + ": a shard prints JSON lines for trainsim merge; give --format to merge instead";
  if (cmd.empty() || cmd == "step" || cmd == "run" || cmd == "plan" || cmd == "merge" || cmd == "check") return "";
  const bool json = cmd == "describe" || cmd == "compare" || cmd == "collective" || cmd == "scale" || cmd == "import";
  if (json && format == "json") return "";
  return "--format " + format + ": " + cmd + " prints " + (json ? "a table or JSON" : "text") +
         "; accepted: " + (json ? "table, json" : "table") + " (md and csv: step, run, plan, merge, the main job)";
}

}  // namespace

std::string seed_problem(const std::string& value) {
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seed);
  if (ec != std::errc() || end != value.data() + value.size() ||
      seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return "\"" + value.substr(0, 40) +
           "\" is not a seed: an integer from 0 to 9223372036854775807 (2^63-1, the range of reliability.seed)";
  return "";
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const distributed::Group& group) {
  base::forget_inputs();  // the files this command reads are the ones its outputs must not replace
  CLI::App app{"trainsim: discrete-event simulator and cost/risk estimator for large-scale model training", "trainsim"};
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  Options o;
  o.group = &group;
  app.add_option("--set", o.sets, "Override a scenario field: --set parallel.tp=4 (dotted path; repeatable)")
      ->type_name("KEY=VALUE");
  app.add_option("--format", o.format, "Output format (md and csv: step, run, plan, merge and the main job)")
      ->check(CLI::IsMember({"table", "json", "md", "csv"}))
      ->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "Only results and errors");
  app.add_flag("-v,--verbose", o.verbose, "More detail on stderr");
  app.add_option("--progress", o.progress, "Progress indicator on stderr for long runs")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.fallthrough();
  app.require_subcommand(0, 1);

  std::string scenario_path;
  app.add_option("scenario", scenario_path, "Scenario file (default: the built-in default scenario)");

  // Subcommands, one file each (sim/cli/cmd_*.cpp), in the order --help lists them.
  CommandList commands;
  add_describe_commands(app, o, commands);
  add_step_command(app, o, commands);
  add_collective_command(app, o, commands);
  add_run_command(app, o, commands);
  add_import_command(app, o, commands);
  add_check_command(app, o, commands);
  add_plan_command(app, o, commands);
  add_compare_command(app, o, commands);
  add_scale_command(app, o, commands);
  add_merge_command(app, o, commands);

  std::vector<std::string> argv_rev(args.rbegin(), args.rend());
  try {
    app.parse(argv_rev);
  } catch (const CLI::Success& e) {  // --help, --version
    app.exit(e, out, err);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "error: " << e.what() << "\nrun 'trainsim --help' for usage\n";
    return kExitBadInput;
  }

  std::string misuse = misused_options(app, scenario_path);
  if (misuse.empty()) misuse = format_problem(app, o.format);
  base::Table::set_style(!misuse.empty() || o.format == "table" || o.format == "json" ? base::TableStyle::Text
                         : o.format == "md"                                           ? base::TableStyle::Markdown
                                                                                      : base::TableStyle::Csv);
  if (!misuse.empty()) {
    err << "error: " << base::printable(misuse) << "\nrun 'trainsim --help' for usage\n";
    return kExitBadInput;
  }

  // A signal a polling loop heard after the last poll, while the results were being written: the command finished.
  const auto finished = [&err](int code) {
    if (interrupt_requested() && base::outputs_committed() && !interrupt_after_results_said())
      err << "interrupted after the results were written: they are complete\n";
    return code;
  };
  try {
    for (const auto& c : commands) {
      if (!c.app->parsed()) continue;
      if (!c.uses_group && !group.is_root()) return kExitOk;  // the root runs it alone
      return finished(c.run(out, err));
    }
    if (!group.is_root()) return kExitOk;
    return finished(main_job(scenario_path, o, out, err));
  } catch (const base::ConfigError& e) {
    for (const auto& d : e.items())
      err << "error: " << base::printable(d.to_string()) << '\n';
    return kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the system refuses (too long, not a folder, no permission): bad input, named, not a trainsim bug.
    err << "error: "
        << base::printable(e.path1().empty() ? std::string(e.what()) : e.path1().string() + ": " + e.code().message())
        << '\n';
    return kExitBadInput;
  } catch (const Interrupted&) {
    err << (base::outputs_committed() ? kStoppedAfterResults : kStoppedBeforeResults);
    return kExitInterrupted;
  } catch (const distributed::RemoteTaskError& e) {
    print_remote_failure(e.rank(), e.message(), err);
    return kExitInternal;
  } catch (const base::InternalError& e) {
    err << e.what() << "\nplease report this with the scenario that triggered it\n";
    return kExitInternal;
  }
}

}  // namespace sim::cli
