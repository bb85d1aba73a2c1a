// sim/cli/app.cpp: the `trainsim` command line: global options, subcommand registration, exit codes for errors.
#include "sim/cli/app.hpp"

#include "sim/base/errors.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/interrupt.hpp"

#include <CLI/CLI.hpp>

#ifndef TRAINSIM_VERSION
#define TRAINSIM_VERSION "0.0.0-dev"
#endif

namespace sim::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"trainsim: discrete-event simulator and cost/risk estimator for large-scale model training", "trainsim"};
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  Options o;
  app.add_option("--set", o.sets, "Override a scenario field: --set parallel.tp=4 (dotted path; repeatable)")
      ->type_name("KEY=VALUE");
  app.add_option("--format", o.format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
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
  add_run_command(app, o, commands);
  add_import_command(app, o, commands);
  add_check_command(app, o, commands);
  add_plan_command(app, o, commands);
  add_compare_command(app, o, commands);
  add_scale_command(app, o, commands);

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

  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.run(out, err);
    return main_job(scenario_path, o, out, err);
  } catch (const base::ConfigError& e) {
    for (const auto& d : e.items())
      err << "error: " << d.to_string() << '\n';
    return kExitBadInput;
  } catch (const Interrupted&) {
    err << "\ninterrupted: stopped before writing any result\n";
    return kExitInterrupted;
  } catch (const base::InternalError& e) {
    err << e.what() << "\nplease report this with the scenario that triggered it\n";
    return kExitInternal;
  }
}

}  // namespace sim::cli
