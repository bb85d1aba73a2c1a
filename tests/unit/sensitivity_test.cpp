// Tornado data: each input moved -20% / +20% one at a time moves p50 time and cost the expected way; the rows are
// sorted by swing, deterministic, report progress over all reruns, and stop when the progress callback throws.
#include "sim/scenario/sensitivity.hpp"

#include "sim/cli/common.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/scenario/run_setup.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sim::scenario {
namespace {

struct Base {
  reliability::RunInputs in;
  cost::CostInputs ci;
};

const Base& default_base() {
  static const Base b = [] {
    const auto s = load_default_scenario();
    auto step = std::get<cli::StepOutcome>(cli::evaluate_step(s, execution::StepOptions{}));
    const auto plan = execution::build_step_plan(step.inputs);
    return Base{run_inputs(s, plan, step.result.step_time), cost_inputs(s)};
  }();
  return b;
}

SensitivityOptions options(int trials) {
  SensitivityOptions o;
  o.trials = trials;
  o.seed = 42;
  o.threads = 2;
  return o;
}

TEST(Sensitivity, EachInputMovesTimeAndCostTheExpectedWay) {
  const auto& b = default_base();
  const auto rows = run_sensitivity(b.in, b.ci, options(40));
  ASSERT_EQ(rows.size(), 5u);
  std::map<std::string, cost::SensitivityRow> by;
  for (const auto& r : rows)
    by[r.parameter] = r;
  for (const char* p : {"failure rates", "checkpoint write time", "restart time", "price", "achieved MFU"})
    ASSERT_TRUE(by.count(p)) << p;
  const auto& mfu = by["achieved MFU"];
  // Step time x 1/0.8 and x 1/1.2: the failure-free part of the time scales exactly; failures add a little more.
  EXPECT_GT(mfu.low_days, mfu.base_days * 1.2);
  EXPECT_LT(mfu.high_days, mfu.base_days * 0.9);
  EXPECT_GT(mfu.low_cost_usd, mfu.high_cost_usd);
  const auto& fr = by["failure rates"];
  EXPECT_GT(fr.high_days, fr.low_days) << "more failures, longer run";
  EXPECT_GT(fr.high_cost_usd, fr.low_cost_usd);
  EXPECT_GE(by["restart time"].high_days, by["restart time"].low_days);
  EXPECT_GE(by["checkpoint write time"].high_days, by["checkpoint write time"].low_days);
  const auto& price = by["price"];
  EXPECT_DOUBLE_EQ(price.low_days, price.base_days) << "price changes cost only";
  EXPECT_DOUBLE_EQ(price.high_days, price.base_days);
  // Rented price, energy included in it, storage not scaled: cost +-20% of the compute part only.
  EXPECT_NEAR(price.high_cost_usd - price.base_cost_usd, price.base_cost_usd - price.low_cost_usd, 1e-6);
  EXPECT_NEAR(price.high_cost_usd / price.base_cost_usd, 1.2, 0.001);
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_GE(std::abs(rows[i - 1].high_cost_usd - rows[i - 1].low_cost_usd),
              std::abs(rows[i].high_cost_usd - rows[i].low_cost_usd))
        << "sorted by swing";
}

TEST(Sensitivity, DeterministicAndReportsProgressOverAllReruns) {
  const auto& b = default_base();
  auto o = options(12);
  int last_done = 0, last_total = 0;
  o.progress = [&](int done, int total) {
    last_done = done;
    last_total = total;
  };
  const auto first = run_sensitivity(b.in, b.ci, o);
  o.threads = 1;
  const auto second = run_sensitivity(b.in, b.ci, o);
  EXPECT_EQ(last_total, 9 * 12) << "a baseline and eight reruns";
  EXPECT_EQ(last_done, last_total);
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].parameter, second[i].parameter);
    EXPECT_EQ(first[i].low_cost_usd, second[i].low_cost_usd);
    EXPECT_EQ(first[i].high_days, second[i].high_days);
  }
}

TEST(Sensitivity, StopsWhenProgressThrows) {
  struct Stop {};
  const auto& b = default_base();
  auto o = options(12);
  int calls = 0;
  o.progress = [&](int done, int) {
    ++calls;
    if (done > 12) throw Stop{};  // during the first rerun after the baseline
  };
  EXPECT_THROW(run_sensitivity(b.in, b.ci, o), Stop);
  EXPECT_GT(calls, 0);
}

// Under MPI the nine reruns are tasks of a farm (cli::group_farm): whichever process runs a task, and in whatever
// order, the rows are the same bits as when they run here one after another.
TEST(Sensitivity, AFarmThatRunsTheRerunsInAnyOrderGivesTheSameRows) {
  const auto& b = default_base();
  auto o = options(12);
  const auto here = run_sensitivity(b.in, b.ci, o);
  int tasks = 0;
  o.farm = [&tasks](int n, const std::function<std::string(int)>& task) {
    tasks = n;
    std::vector<std::string> out(static_cast<std::size_t>(n));
    for (int i = n - 1; i >= 0; --i)
      out[static_cast<std::size_t>(i)] = task(i);
    return out;
  };
  o.threads = 1;
  const auto farmed = run_sensitivity(b.in, b.ci, o);
  EXPECT_EQ(tasks, 9) << "a baseline and eight reruns";
  ASSERT_EQ(here.size(), farmed.size());
  for (std::size_t i = 0; i < here.size(); ++i) {
    EXPECT_EQ(here[i].parameter, farmed[i].parameter);
    for (const auto field :
         {&cost::SensitivityRow::low_cost_usd, &cost::SensitivityRow::high_cost_usd, &cost::SensitivityRow::low_days,
          &cost::SensitivityRow::high_days, &cost::SensitivityRow::base_cost_usd, &cost::SensitivityRow::base_days})
      EXPECT_EQ(here[i].*field, farmed[i].*field) << here[i].parameter;
  }
}

TEST(Sensitivity, TrialsAreCappedAt200) {
  EXPECT_EQ(sensitivity_trials(1000), 200);
  EXPECT_EQ(sensitivity_trials(50), 50);
}

}  // namespace
}  // namespace sim::scenario
