// Validation: Llama 3's 54-day snapshot on 16,384 H100 GPUs (Grattafiori, Dubey et al., arXiv:2407.21783, Sec. 3.3.4,
// Table 5): 419 unexpected interruptions, by root cause. The default failure components are derived from that table
// (hardware_profiles/README.md), so the simulator must give back its counts.
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace sim::reliability {
namespace {

// Table 5 counts (reliability_public.json: llama3_54day.root_cause_table). They sum to 419.
struct Row {
  const char* component;
  int count;
};
constexpr std::array<Row, 18> kTable5 = {{{"faulty_gpu", 148},
                                          {"gpu_hbm3_memory", 72},
                                          {"software_bug", 54},
                                          {"network_switch_cable", 35},
                                          {"host_maintenance", 32},
                                          {"gpu_sram_memory", 19},
                                          {"gpu_system_processor", 17},
                                          {"nic", 7},
                                          {"nccl_watchdog_timeouts", 7},
                                          {"silent_data_corruption", 6},
                                          {"gpu_thermal_interface_sensor", 6},
                                          {"ssd", 3},
                                          {"power_supply", 3},
                                          {"server_chassis", 2},
                                          {"io_expansion_board", 2},
                                          {"dependency", 2},
                                          {"cpu", 2},
                                          {"system_memory", 2}}};

RunInputs llama3_54_days() {
  RunInputs in;
  in.job = JobShape::make(16384, 8, /*dp=*/128);  // Llama 3 405B at 16K GPUs: DP = 128 (Table 4)
  in.components = scenario::load_hardware("h100-sxm5-80gb").failures;
  in.spares = 64;  // the 24K-GPU cluster ran the job on 16K: plenty of spare nodes
  in.window = base::Time::from_seconds(54 * 86400.0);
  in.step_time = [](const ClusterState& s) { return base::Time::from_seconds(10.0 * s.straggler_factor); };
  return in;
}

TEST(RunValidationLlama3, InterruptionsIn54DaysMatchTable5) {
  const RunInputs in = llama3_54_days();
  const int trials = 200;
  const results::RunSummary s = run_monte_carlo(in, trials, /*seed=*/2407, /*threads=*/2);
  // Every default component is a Table 5 row, all of them unexpected interruptions (host_maintenance is Table 5's
  // "unplanned maintenance"; the 47 planned interruptions are not in the defaults).
  std::printf(
      "[llama3] mean interruptions %.1f per 54 days (Table 5: 419, %+.2f%%); job MTBF %.2f h analytic, "
      "%.2f h simulated; goodput %.3f (p10 %.3f); checkpoint every %.0f s\n",
      s.interruptions_mean, 100 * (s.interruptions_mean / 419 - 1), s.job_mtbf_h, s.job_mtbf_h_simulated,
      s.goodput.mean, s.goodput.p10, s.checkpoint.interval_s);
  EXPECT_NEAR(s.interruptions_mean, 419.0, 0.03 * 419.0);
  EXPECT_NEAR(s.job_mtbf_h, 54.0 * 24 / 419, 0.01) << "1 / sum of rates = 3.09 h";
  ASSERT_EQ(s.causes.size(), kTable5.size());
  for (std::size_t i = 0; i < kTable5.size(); ++i) {
    const results::CauseSummary& c = s.causes[i];
    ASSERT_EQ(c.name, kTable5[i].component) << "the profile lists Table 5's rows in order";
    const double count = kTable5[i].count;
    // Poisson: the mean over `trials` has a standard error of sqrt(count / trials); 4 of them, or 5% for big rows.
    const double tolerance = std::max(4.0 * std::sqrt(count / trials), 0.05 * count);
    std::printf("[llama3]   %-30s %6.1f  (Table 5: %3.0f, share %5.1f%% vs %5.1f%%)\n", c.name.c_str(),
                c.interruptions_mean, count, 100 * c.interruptions_mean / s.interruptions_mean, 100 * count / 419);
    EXPECT_NEAR(c.interruptions_mean, count, tolerance) << c.name;
  }
  EXPECT_EQ(s.never_finished, 0);
  EXPECT_GT(s.goodput.mean, 0.85) << "Llama 3 reports > 90% effective training time with its own (unpublished) "
                                     "restart and checkpoint times";
}

}  // namespace
}  // namespace sim::reliability
