// reports/junit.hpp: JUnit XML (the dialect GitHub Actions, GitLab CI and Jenkins read) for `trainsim check`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace reports {

/// One check: a scenario's metric against an expectation or a baseline.
struct JUnitCase {
  enum class Status { Passed, Failed, Error, Skipped };
  std::string classname;  // the scenario ("trainsim.check.<scenario name>")
  std::string name;       // the check ("mfu >= 0.40", "baseline step_time_s")
  Status status = Status::Passed;
  std::string message;  // one line with both numbers: "mfu = 0.3821, expected >= 0.40"
  std::string details;  // free text (the body of <failure>, <error> or <system-out>)
  double time_s = 0;
};

/// One scenario's checks.
struct JUnitSuite {
  std::string name;
  std::string file;  // the scenario file, as the "file" attribute CI systems link to
  std::vector<JUnitCase> cases;
  double time_s = 0;
};

/// The whole report: <testsuites> with counts, one <testsuite> per scenario, one <testcase> per check. Every text and
/// attribute is escaped; characters XML 1.0 cannot hold (control characters, invalid UTF-8) become U+FFFD.
std::string junit_xml(const std::vector<JUnitSuite>& suites, std::string_view name = "trainsim check");

/// Escapes & < > " ' and replaces what XML 1.0 cannot hold.
std::string xml_escape(std::string_view text);

}  // namespace reports
