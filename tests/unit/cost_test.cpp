// Rented-cluster cost arithmetic on a hand-computed case, and the deadline/budget risks read from the
// time-to-train distribution.
#include "sim/cost/cost.hpp"

#include <gtest/gtest.h>

namespace sim::cost {
namespace {

TEST(RentedCost, HandComputedCase) {
  results::RunSummary run;
  run.time_to_train_days = {10.0, 9.0, 10.0, 12.0, 14.0};
  run.interruptions_mean = 4;
  run.lost_gpu_hours_mean = 800;
  run.causes = {{"faulty_gpu", "crash", 3, 600}, {"switch", "crash", 1, 200}};
  run.time_to_train_hist = results::Histogram::linear(0, 20, 2000);
  for (double d : {9.0, 10.0, 10.0, 11.0, 12.0, 14.0, 9.5, 10.5, 13.0, 12.5})
    run.time_to_train_hist.add(d);
  CostInputs in;
  in.gpus = 1000;
  in.gpu_hour = base::Money{2.0};
  in.deadline = base::Time::from_seconds(12.2 * 86400);
  in.budget = base::Money{2.0 * 1000 * 24 * 11.2};  // buys 11.2 days of the cluster
  const auto c = rented_cost(run, in);
  EXPECT_DOUBLE_EQ(c.burn_usd_per_hour, 2000.0);
  EXPECT_DOUBLE_EQ(c.mean_usd, 10.0 * 24 * 2000);  // 480,000 USD
  EXPECT_DOUBLE_EQ(c.p50_usd, 480'000.0);
  EXPECT_DOUBLE_EQ(c.p90_usd, 12.0 * 24 * 2000);
  EXPECT_DOUBLE_EQ(c.failures_usd_mean, 1600.0);  // 800 GPU-h x 2 USD
  EXPECT_DOUBLE_EQ(c.per_failure_mean_usd, 400.0);
  ASSERT_EQ(c.per_failure_usd.size(), 2u);
  EXPECT_DOUBLE_EQ(c.per_failure_usd[0].second, 400.0);  // 600 GPU-h x 2 USD / 3
  EXPECT_DOUBLE_EQ(c.per_failure_usd[1].second, 400.0);
  ASSERT_TRUE(c.p_deadline_miss && c.p_budget_overrun);
  EXPECT_NEAR(*c.p_deadline_miss, 0.3, 1e-9) << "14, 13 and 12.5 of ten trials exceed 12.2 days";
  EXPECT_NEAR(*c.p_budget_overrun, 0.4, 1e-9) << "12, 14, 13 and 12.5 of ten trials exceed 11.2 days";
}

TEST(RentedCost, JsonCarriesTheContractFields) {
  results::RunSummary run;
  run.causes = {{"gpu", "crash", 2, 100}};
  run.interruptions_mean = 2;
  run.lost_gpu_hours_mean = 100;
  CostInputs in;
  in.gpus = 8;
  in.gpu_hour = base::Money{3.0};
  auto j = results::Json::object();
  add_cost_json(j, rented_cost(run, in));
  const auto text = j.dump(-1);
  EXPECT_NE(text.find("\"cost_usd\":{\"mean\":"), std::string::npos) << text;
  EXPECT_NE(text.find("\"cost_per_failure_usd\":{\"mean\":150.0,\"by_cause\":{\"gpu\":150.0}}"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"p_deadline_miss\":null"), std::string::npos) << text;
}

}  // namespace
}  // namespace sim::cost
