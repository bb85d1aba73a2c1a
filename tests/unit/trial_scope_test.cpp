// tests/unit/trial_scope_test.cpp: what user trials of 2026-12-06 found accepted and then ignored, or summarised from
// a histogram's bin where the trials themselves were known: keys refused where they do not apply, a rent beside owned
// pricing said, run-level quantiles within the times trials took, and CVaR95 unbounded with a run that never ends.
#include "sim/results/run_result.hpp"
#include "tests/support/cli.hpp"

#include "sim/base/exit_code.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

using support::trainsim;

const std::string kSource = TRAINSIM_SOURCE_DIR;
const std::string kDefault = kSource + "/scenarios/default.json";

TEST(HistogramRange, TrialsInOneBinGiveTheirOwnValue) {
  // 100 identical trials at 201.36464 d had a p50 of 201.42 d (the bin's midpoint) and a 95% chance of missing a
  // 201.37 d deadline.
  auto h = sim::results::Histogram::log_spaced(200.0, 20000.0, 8192);
  for (int i = 0; i < 100; ++i)
    h.add(201.36464);
  EXPECT_EQ(h.quantile(0.5), 201.36464);
  EXPECT_EQ(h.quantile(0.99), 201.36464);
  EXPECT_EQ(h.fraction_above(201.37), 0.0);
  EXPECT_EQ(h.fraction_above(201.36), 1.0);
  // Spread values: a fraction within the values' own range, and each quantile between the smallest and largest.
  auto spread = sim::results::Histogram::linear(0.0, 100.0, 10);
  for (double x : {41.0, 42.0, 43.0, 44.0})
    spread.add(x);
  EXPECT_NEAR(spread.fraction_above(42.5), 0.5, 1e-12) << "41-44 spread over the part of 40-50 they occupy";
  EXPECT_GE(spread.quantile(0.1), 41.0);
  EXPECT_LE(spread.quantile(0.9), 44.0);
  // Merged (a sharded run) as one.
  auto a = sim::results::Histogram::linear(0.0, 100.0, 10), b = a;
  a.add(41.0);
  b.add(44.0);
  a.merge(b);
  EXPECT_EQ(a.min(), 41.0);
  EXPECT_EQ(a.max(), 44.0);
}

TEST(HistogramRange, OneTrialsPercentilesAreItsTime) {
  const auto o = trainsim({"run", kDefault, "--trials", "1", "--json"});
  ASSERT_EQ(o.code, sim::base::kExitOk) << o.err;
  const auto t = nlohmann::json::parse(o.out).at("time_to_train_days");
  for (const char* p : {"p10", "p50", "p90", "p99"})
    EXPECT_DOUBLE_EQ(t.at(p).get<double>(), t.at("mean").get<double>()) << p;
}

TEST(HistogramRange, ARunWithoutFailuresMeetsADeadlineItBeats) {
  const auto o = trainsim({"run", kDefault, "--trials", "20", "--json", "--set", "reliability.failures=none", "--set",
                           "cost.deadline=201.37 d"});
  ASSERT_EQ(o.code, sim::base::kExitOk) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_LT(j.at("time_to_train_days").at("mean").get<double>(), 201.37);
  EXPECT_EQ(j.at("p_deadline_miss").get<double>(), 0.0);
}

TEST(RunHorizon, ARunLongerThanTheSimulatorsRangeIsNotBlamedOnFailures) {
  // 5,400T tokens take 72,491 d failure-free, 201 years with failures: every trial stopped at the 200-year cap, and
  // the advice read "at these failure rates the run stalls" beside a 98.7% goodput (a user trial).
  const auto o = trainsim({"run", kDefault, "--trials", "2", "--format", "csv", "--set", "training.tokens=5400T"});
  ASSERT_EQ(o.code, sim::base::kExitOk) << o.err;
  EXPECT_NE(o.out.find("not finished within the simulator's range of 200 years"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("the run is longer than trainsim can simulate"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("at these failure rates the run stalls"), std::string::npos) << o.out;
}

}  // namespace
