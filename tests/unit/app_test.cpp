// The application layer (sim/app, issue 21) drives step, run, plan and check without the command line and gives the
// command line's JSON (and check's table) byte for byte: sim/cli parses, prints and picks exit codes, and nothing else.
#include "sim/app/check.hpp"
#include "sim/app/plan.hpp"
#include "sim/app/run.hpp"
#include "sim/app/step.hpp"
#include "sim/base/table.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/cli.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <variant>

namespace sim {
namespace {

const std::string kCi = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/";

app::StepOutcome step_of(const scenario::Scenario& s, execution::Fidelity fidelity = execution::Fidelity::Replica) {
  execution::StepOptions opt;
  opt.fidelity = fidelity;
  auto evaluated = app::evaluate_step(s, opt);
  EXPECT_TRUE(std::holds_alternative<app::StepOutcome>(evaluated)) << s.name << " is infeasible";
  return std::get<app::StepOutcome>(std::move(evaluated));
}

TEST(AppLayer, StepGivesTheJsonOfTrainsimStep) {
  for (const char* name : {"llama3-8b-16-h100.json", "mixtral-8x7b-32-h100-ep.json"}) {
    const std::string path = kCi + name;
    const auto s = scenario::load_scenario(path, {});
    for (const auto& [flag, fidelity] :
         {std::pair{"analytic", execution::Fidelity::Analytic}, std::pair{"replica", execution::Fidelity::Replica}}) {
      const auto cli = support::trainsim({"step", path, "--fidelity", flag, "--json"});
      ASSERT_EQ(cli.code, 0) << cli.err;
      EXPECT_EQ(app::step_json(step_of(s, fidelity).result, s).dump() + "\n", cli.out) << name << " " << flag;
    }
  }
}

TEST(AppLayer, RunGivesTheJsonOfTrainsimRun) {
  const std::string path = kCi + "llama3-8b-256-h100-run.json";
  const auto s = scenario::load_scenario(path, {});
  const auto cli = support::trainsim({"run", path, "--trials", "40", "--seed", "7", "--threads", "2", "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  int reports = 0;
  const auto run = app::evaluate_run(s, step_of(s), 40, 7, 2, [&reports](int, int) { ++reports; });
  EXPECT_EQ(run.json.dump() + "\n", cli.out);
  EXPECT_GT(reports, 0) << "progress is reported through the callback passed in";
}

TEST(AppLayer, ProgressCancelsARun) {
  const auto s = scenario::load_scenario(kCi + "llama3-8b-256-h100-run.json", {});
  const auto step = step_of(s);
  struct Cancelled {};
  EXPECT_THROW(app::evaluate_run(s, step, 40, 7, 1, [](int, int) { throw Cancelled{}; }), Cancelled);
}

TEST(AppLayer, PlanGivesTheJsonOfTrainsimPlan) {
  const std::string path = kCi + "llama3-8b-16-h100.json";
  const auto s = scenario::load_scenario(path, {});
  const auto cli = support::trainsim({"plan", path, "--top", "3", "--trials", "10", "--threads", "2", "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  planner::PlanOptions opt;
  opt.objective = planner::Objective::Time;
  opt.top_k = 3;
  opt.threads = 2;
  opt.run_trials = 10;
  EXPECT_EQ(app::plan_json(app::evaluate_plan(s, opt), 3, s).dump() + "\n", cli.out);
}

// trainsim check prints check_scenario's rows as its table and counts them; the same rows give the same bytes.
TEST(AppLayer, CheckGivesTheTableOfTrainsimCheck) {
  const std::vector<std::string> names = {"llama3-8b-16-h100", "llama3-8b-256-h100-run", "mixtral-8x7b-32-h100-ep",
                                          "llama2-70b-64-h100-pp"};
  std::vector<std::string> args = {"check"};
  for (const auto& n : names)
    args.push_back(kCi + n + ".json");
  for (const char* a : {"--baseline", "", "--threads", "2"})
    args.emplace_back(a);
  args[args.size() - 3] = kCi + "baselines";
  const auto cli = support::trainsim(args);
  ASSERT_EQ(cli.code, 0) << cli.err;

  const app::CheckOptions options{.baseline_dir = kCi + "baselines", .threads = 2, .overrides = {}};
  const char* status[] = {"ok", "improved", "updated", "FAIL", "ERROR"};
  base::Table t({"scenario", "check", "value", "expected", "status"});
  int counts[5] = {0, 0, 0, 0, 0};
  for (const auto& n : names) {
    const auto rep = app::check_scenario(kCi + n + ".json", options, {});
    EXPECT_TRUE(rep.baseline_written.empty());
    for (const auto& row : rep.rows) {
      t.add({rep.name, row.check, row.value, row.expected, status[static_cast<int>(row.status)]});
      ++counts[static_cast<int>(row.status)];
    }
  }
  std::ostringstream expected;
  t.print(expected);
  expected << "\n"
           << names.size() << " scenario(s): " << counts[0] << " ok, " << counts[1] << " improved, " << counts[2]
           << " updated, " << counts[3] << " failed, " << counts[4] << " error(s)\n";
  EXPECT_EQ(expected.str(), cli.out);
  EXPECT_EQ(counts[3] + counts[4], 0) << "the ci scenarios hold their baselines";
}

}  // namespace
}  // namespace sim
