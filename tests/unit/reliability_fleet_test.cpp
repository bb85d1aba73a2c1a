// Validation: published fleet-level effective training time ratios (ETTR) reproduced by the run-level simulator with
// the settings their sources state.
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/results/run_result.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <variant>

namespace sim::reliability {
namespace {

using base::Time;

/// Meta's ETTR closed form (Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
/// Clusters", HPCA 2025, arXiv:2410.21680, Sec. V), as this test restates it: with failures at rate 1/M, a restart
/// overhead u0, checkpoints written in w every dt of training (dt = sqrt(2 w M), Young's optimum),
///   ETTR = dt / (dt + w) x (1 - (u0 + dt / 2) / M).
/// Their model's M for N GPUs is 1 / (N / 8 nodes x 6.50e-3 failures per node-day), RSC-1's rate
/// (reliability_public.json: _meta.important_corrections). At 12,000 GPUs, u0 = 5 min (recovery_times.kokolis_u0_min)
/// the form gives 0.9206 (w = 10 s) and 0.7403 (w = 5 min); the paper's figures are 0.921 and 0.738.
double kokolis_ettr(double m_min, double u0_min, double w_min) {
  const double dt = std::sqrt(2 * w_min * m_min);
  return dt / (dt + w_min) * (1 - (u0_min + dt / 2) / m_min);
}

RunInputs kokolis_job(double gpus, double w_min) {
  RunInputs in;
  in.job = JobShape::make(static_cast<int>(gpus), 8, static_cast<int>(gpus / 8));
  hardware::FailureComponentSpec node;
  node.name = "node";
  node.scope = hardware::FailureScope::Node;
  node.mtbf = base::Duration{86400.0 / 6.50e-3};  // RSC-1: 6.50 failures per 1,000 node-days
  node.effect = hardware::FailureEffect::Crash;
  node.repair = base::Duration{0};  // a swapped node: the restart overhead u0 holds everything
  in.components = {node};
  in.detection.crash = Time::zero();
  in.restart = Time::from_seconds(5 * 60.0);  // u0
  in.node_swap = Time::zero();
  in.checkpoint.policy = CheckpointPolicy::Young;
  in.checkpoint.async = false;
  in.checkpoint.write = Time::from_seconds(w_min * 60);
  in.checkpoint.load = Time::zero();
  in.window = Time::from_seconds(60 * 86400.0);
  in.step_time = [](const ClusterState&) { return Time::from_seconds(1.0); };
  return in;
}

TEST(FleetValidation, MetasEttrClosedFormAtTwelveThousandGpus) {
  const double m_min = 1440.0 / (12000.0 / 8 * 6.50e-3);
  for (const auto& [w_min, published] : {std::pair{10.0 / 60, 0.921}, std::pair{5.0, 0.738}}) {
    const double closed = kokolis_ettr(m_min, 5, w_min);
    const results::RunSummary s = run_monte_carlo(kokolis_job(12000, w_min), 100, /*seed=*/2410, /*threads=*/2);
    std::printf("[ettr] 12,000 GPUs, write %.2f min: simulated %.3f, closed form %.4f, Kokolis et al. %.3f\n", w_min,
                s.goodput.mean, closed, published);
    EXPECT_NEAR(closed, published, 0.005) << "the restated closed form gives the paper's figure";
    EXPECT_NEAR(s.goodput.mean, published, 0.02);
  }
}

/// A scenario (path from the source root) as the run level gets it (healthy step at analytic fidelity).
RunInputs scenario_run(const std::string& file) {
  const scenario::Scenario s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + file);
  const auto setup = scenario::step_setup(s);
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(setup));
  return scenario::run_inputs(s, plan, execution::analytic_step(plan).step_time, /*simulate_straggler=*/false);
}

RunInputs fleet_scenario(const std::string& file) {
  return scenario_run("scenarios/validation/" + file);
}

TEST(FleetValidation, MegaScaleOverAHundredRestartsInWeeksAtOverNinetyPercent) {
  // Jiang et al., NSDI 2024, Sec. 6.2-6.3: "more than 10,000 GPUs", "several weeks", "training restarts over 100
  // times", "over 90% effective training time rate", with its published recovery (scenario description).
  const results::RunSummary s =
      run_monte_carlo(fleet_scenario("megascale_production_weeks.json"), 100, /*seed=*/2402, /*threads=*/2);
  std::printf("[megascale] 12,288 GPUs, 21 days: %.1f interruptions, ETTR %.3f (p10 %.3f)\n", s.interruptions_mean,
              s.goodput.mean, s.goodput.p10);
  EXPECT_GT(s.interruptions_mean, 100);
  EXPECT_GT(s.goodput.p10, 0.90);
  EXPECT_LT(s.goodput.mean, 0.99) << "restarts cost something";
}

TEST(FleetValidation, ByteRobustNinetySevenPercentOverThreeMonthsOnNineThousandSixHundredGpus) {
  // Wan et al., arXiv:2509.16293 v4, Sec. 8.1.3: "97% ETTR for a three-month training job on 9,600 GPUs", with its
  // published detection, localisation, failover and per-iteration in-memory checkpoints (scenario description). The
  // failure rates are Llama 3's, about 2.4x the ~175 incidents ByteRobust counts for that job (Table 4): the ETTR is
  // reproduced with more interruptions than ByteDance's fleet had.
  const results::RunSummary s =
      run_monte_carlo(fleet_scenario("byterobust_dense_3_months.json"), 100, /*seed=*/2509, /*threads=*/2);
  std::printf("[byterobust] 9,600 GPUs, 90 days: %.1f interruptions (Table 4: ~175), ETTR %.3f (published 0.97)\n",
              s.interruptions_mean, s.goodput.mean);
  EXPECT_NEAR(s.goodput.mean, 0.97, 0.015);
}

// GLM-65B on 1,536 H800s with PyTorch FSDP (intelligent-machine-learning/dlrover, docs/blogs/flash_checkpoint.md at
// 1c1b1934640e0483de8d198c58017de46770de20, "Train GLM-65B on Thousands of GPUs"), the one run found that publishes
// its checkpoint interval both ways: synchronous saves to CPFS "every 250 steps, which was approximately every 1.5
// hours", each blocking "about 2 minutes"; then snapshots to host memory that block "0.2 seconds", "once every 10
// steps" (10 of 250 steps of 1.5 h: 3.6 min), persisted in the background. Both intervals were the team's choice, not
// an optimum; Daly's optimum from trainsim's default failure rates lands within 25% of each (issue 19's bar).
TEST(FleetValidation, GlmSixtyFiveBSynchronousIntervalNearItsPublishedHourAndAHalf) {
  // The published write time (2 min) is given; the interval is Daly's for the default rates at 1,536 GPUs.
  const results::RunSummary s =
      run_monte_carlo(fleet_scenario("glm65b_1536_sync_checkpoints.json"), 20, /*seed=*/65, /*threads=*/2);
  std::printf("[glm65b] 1,536 GPUs, synchronous 2 min writes: every %.1f min (published ~90), goodput %.3f\n",
              s.checkpoint.interval_s / 60, s.goodput.mean);
  EXPECT_EQ(s.checkpoint.policy, "daly");
  EXPECT_NEAR(s.checkpoint.interval_s, 90 * 60.0, 0.25 * 90 * 60.0);
}

TEST(FleetValidation, DefaultScenariosAsynchronousIntervalAndStallNearGlmSixtyFiveBs) {
  // scenarios/default.json (Llama 3 70B, 1,024 H100s, asynchronous checkpoints, every reliability key "auto"): its
  // snapshot time comes from bytes and the GPU-to-host bandwidth, its interval from Daly's formula.
  const results::RunSummary s = run_monte_carlo(scenario_run("scenarios/default.json"), 20, /*seed=*/70, /*threads=*/2);
  std::printf("[default] 70B, 1,024 GPUs, asynchronous: every %.2f min (GLM-65B 3.6), blocks %.2f s (GLM-65B 0.2)\n",
              s.checkpoint.interval_s / 60, s.checkpoint.snapshot_s);
  EXPECT_TRUE(s.checkpoint.async);
  EXPECT_NEAR(s.checkpoint.interval_s, 3.6 * 60, 0.25 * 3.6 * 60);
  EXPECT_NEAR(s.checkpoint.snapshot_s, 0.2, 0.25 * 0.2);
}

}  // namespace
}  // namespace sim::reliability
