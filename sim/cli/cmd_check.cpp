// sim/cli/cmd_check.cpp: `trainsim check`: a scenario's `expect` section and its committed baseline, for CI.
//
// The evaluation of each scenario is sim/app's (app::check_scenario); here the rows become a table, JUnit XML and
// GitHub workflow commands, and an exit code: 0 everything holds, 1 an expectation failed or a metric regressed (or the
// configuration became infeasible), 2 bad input (a scenario, a baseline file, a metric path).
#include "reports/junit.hpp"
#include "sim/app/check.hpp"
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/printable.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

namespace sim::cli {

using results::Json;

namespace {

using Status = app::CheckStatus;
using ScenarioReport = app::CheckReport;

struct CheckArgs {
  std::vector<std::string> scenarios;
  std::string baseline_dir;
  bool update_baseline = false;
  std::string junit;
  int threads = 0;
};

// ---- output -------------------------------------------------------------------------------------------------------

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::Improved:
      return "improved";
    case Status::Updated:
      return "updated";
    case Status::Failed:
      return "FAIL";
    case Status::Error:
      return "ERROR";
    case Status::Skipped:
      return "skipped";
  }
  return "?";
}

std::string junit_text(const std::vector<ScenarioReport>& reps) {
  std::vector<reports::JUnitSuite> suites;
  for (const auto& r : reps) {
    reports::JUnitSuite suite{r.name, r.file, {}, r.seconds};
    for (const auto& row : r.rows) {
      reports::JUnitCase c;
      c.classname = "trainsim.check." + r.name;
      // Stable names (CI systems track a test's history by name): the bound of an expectation, never a measured value.
      c.name = row.check.starts_with("baseline ") || row.expected.empty() ? row.check : row.check + " " + row.expected;
      c.status = row.status == Status::Failed    ? reports::JUnitCase::Status::Failed
                 : row.status == Status::Error   ? reports::JUnitCase::Status::Error
                 : row.status == Status::Skipped ? reports::JUnitCase::Status::Skipped
                                                 : reports::JUnitCase::Status::Passed;
      c.message = row.message;
      c.details = row.status == Status::Failed || row.status == Status::Error ? row.message + "\nscenario: " + r.file
                  : row.status == Status::Skipped                             ? row.message
                                                  : std::string(status_name(row.status)) + ": " + row.value;
      suite.cases.push_back(std::move(c));
    }
    suites.push_back(std::move(suite));
  }
  return reports::junit_xml(suites);
}

/// GitHub workflow-command escaping (actions/toolkit, command.ts): data escapes % CR LF; properties also : and ,. The
/// text is made inert first (base::printable: escape sequences, BEL and other controls shown as \xNN; a user trial's
/// scenario name carried a clear-screen sequence into the CI log), line by line for data, whose newlines stay %0A.
std::string gh_escape(std::string_view raw, bool property) {
  std::string s;
  if (property) {
    s = base::printable(raw);
  } else {
    for (std::size_t at = 0;;) {
      const std::size_t nl = raw.find('\n', at);
      s += base::printable(raw.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at));
      if (nl == std::string_view::npos) break;
      s += '\n';
      at = nl + 1;
    }
  }
  std::string out;
  for (char c : s) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else if (property && c == ':') {
      out += "%3A";
    } else if (property && c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

/// One cell of the step summary's Markdown table: GitHub renders HTML and Markdown there, so tags, entities, links,
/// images and emphasis are escaped and control characters dropped (found by a user trial: a scenario named
/// `<img src=x onerror=...> ![t](http://...)` was written as it stood).
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (u < 0x20 || u == 0x7f) {
      continue;
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (std::string_view("|[]()!`*_~\\#").find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

/// Appends to the file GitHub names, a regular file only: a FIFO would block, a link leads elsewhere, a device
/// swallows it. Every failure is a warning, never silent.
void append_summary(const char* path, const std::string& text, std::ostream& err) {
  if (const std::string why = base::append_file(path, text); !why.empty())
    err << "warning: GITHUB_STEP_SUMMARY (" << base::printable(path) << "): " << why
        << "; the summary was not written\n";
}

void github_outputs(const std::vector<ScenarioReport>& reps, std::ostream& out, std::ostream& err) {
  const char* gha = std::getenv("GITHUB_ACTIONS");
  if (!gha || std::string_view(gha) != "true") return;
  for (const auto& r : reps)
    for (const auto& row : r.rows)
      if (row.status == Status::Failed || row.status == Status::Error)
        out << "::error file=" << gh_escape(r.file, true) << ",title=" << gh_escape("trainsim check: " + r.name, true)
            << "::" << gh_escape(row.message, false) << "\n";
  const char* summary = std::getenv("GITHUB_STEP_SUMMARY");
  if (!summary || !*summary) return;
  std::string md = "### trainsim check\n\n| scenario | check | value | expected | status |\n|---|---|---|---|---|\n";
  for (const auto& r : reps)
    for (const auto& row : r.rows)
      md += "| " + md_cell(r.name) + " | " + md_cell(row.check) + " | " + md_cell(row.value) + " | " +
            md_cell(row.expected) + " | " +
            (row.status == Status::Failed || row.status == Status::Error
                 ? "**" + std::string(status_name(row.status)) + "** " + md_cell(row.message)
                 : std::string(status_name(row.status))) +
            " |\n";
  append_summary(summary, md + "\n", err);  // GitHub collects the file after the step: append, as documented
}

/// The --baseline folder before anything is computed: a file, a FIFO or a name the system refuses is bad input, and a
/// symbolic link is not written through (--update-baseline), as --out and merge --out refuse one (a user trial: the
/// baselines were written into the link's target, and a file there ended in an internal error).
void check_baseline_folder(const std::string& dir, bool update) {
  if (dir.empty()) return;
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw base::ConfigError(dir, "", "cannot use it as the baseline folder: " + ec.message());
  if (update && std::filesystem::is_symlink(st))
    throw base::ConfigError(dir, "",
                            "is a symbolic link, which trainsim does not write through; name the folder itself");
  if (std::filesystem::exists(st) && !std::filesystem::is_directory(std::filesystem::status(dir, ec)))
    throw base::ConfigError(dir, "", "exists and is not a folder; --baseline names a folder of baseline files");
}

int check_command(const CheckArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  if (o.format != "table")
    throw base::ConfigError(
        "--format", "",
        o.format + ": check prints its table (and --junit FILE writes JUnit XML for CI); accepted: table");
  if (!a.junit.empty() && base::is_standard_output(a.junit))  // two documents in one stream (a review)
    throw base::ConfigError("--junit", "",
                            a.junit + " is standard output, where check prints its table; name a file or /dev/stderr");
  // One baseline file per scenario file name: two scenarios that share a name would read (or, with
  // --update-baseline, write) one file, the last of them winning.
  if (!a.baseline_dir.empty()) {
    std::map<std::string, std::string> seen;  // baseline file -> the scenario that claims it
    for (const auto& path : a.scenarios) {
      const std::string file = std::filesystem::path(path).stem().string() + ".json";
      const auto [at, fresh] = seen.emplace(file, path);
      if (!fresh)
        throw base::ConfigError(path, "",
                                "shares its baseline file " + a.baseline_dir + "/" + file + " with " + at->second +
                                    " (baselines are named by the scenario file's name): rename one, or check them "
                                    "with separate --baseline directories");
    }
  }
  const app::CheckOptions options{.baseline_dir = a.baseline_dir,
                                  .update_baseline = a.update_baseline,
                                  .threads = thread_count(a.threads),
                                  .overrides = overrides_of(o)};
  std::vector<ScenarioReport> reps;
  for (const auto& path : a.scenarios) {
    // A check runs trials (run-level metrics), then screens configurations (within_best), each a phase of its own.
    ProgressBar bar(err, o.progress, o.quiet, "trials or configurations");
    reps.push_back(app::check_scenario(path, options, progress_of(bar)));
    if (!reps.back().baseline_written.empty() && !o.quiet) err << "wrote " << reps.back().baseline_written << "\n";
  }

  Table t({"scenario", "check", "value", "expected", "status"});
  int counts[6] = {0, 0, 0, 0, 0, 0};
  for (const auto& r : reps) {
    for (const auto& row : r.rows) {
      t.add({r.name, row.check, row.value, row.expected, status_name(row.status)});
      ++counts[static_cast<int>(row.status)];
    }
  }
  t.print(out);
  for (const auto& r : reps)
    for (const auto& row : r.rows)
      if (row.status == Status::Failed || row.status == Status::Error) {
        err << (row.status == Status::Failed ? "FAIL: " : "error: ") << base::printable(r.name) << ": "
            << base::printable(row.message) << "\n";
      } else if (!row.message.empty() && !o.quiet && row.status != Status::Skipped) {
        err << "note: " << base::printable(r.name) << ": " << base::printable(row.message) << "\n";
      }
  out << "\n"
      << reps.size() << " scenario(s): " << counts[0] << " ok, " << counts[1] << " improved, " << counts[2]
      << " updated, " << counts[3] << " failed, " << counts[4] << " error(s)"
      << (counts[5] > 0 ? ", " + std::to_string(counts[5]) + " skipped" : "") << "\n";
  if (!a.junit.empty()) {
    base::write_file_atomic(a.junit, junit_text(reps));
    if (!o.quiet) err << "wrote " << a.junit << "\n";
  }
  github_outputs(reps, out, err);
  if (counts[static_cast<int>(Status::Error)] > 0) return kExitBadInput;
  if (counts[static_cast<int>(Status::Failed)] > 0) return kExitCheckFailed;
  return kExitOk;
}

}  // namespace

void add_check_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand("check",
                                 "CI regression checks: each scenario's \"expect\" section and its baseline; exit 1 "
                                 "when something failed or regressed");
  auto a = std::make_shared<CheckArgs>();
  cmd->add_option("scenarios", a->scenarios, "Scenario files")->required();
  cmd->add_option("--baseline", a->baseline_dir, "Directory of baseline files, one <scenario file name>.json each")
      ->type_name("DIR");
  cmd->add_flag("--update-baseline", a->update_baseline, "Rewrite the baseline files with the current values");
  cmd->add_option("--junit", a->junit, "Write JUnit XML (one testcase per scenario and check)")->type_name("FILE");
  cmd->add_option("--threads", a->threads, "Worker threads for Monte Carlo runs (default: all cores)")
      ->check(CLI::Range(1, 1024));
  commands.push_back({cmd, [a, &o](std::ostream& out, std::ostream& err) {
                        if (a->update_baseline && a->baseline_dir.empty())
                          throw base::ConfigError("--update-baseline", "", "needs --baseline DIR");
                        check_baseline_folder(a->baseline_dir, a->update_baseline);
                        return check_command(*a, o, out, err);
                      }});
}

}  // namespace sim::cli
