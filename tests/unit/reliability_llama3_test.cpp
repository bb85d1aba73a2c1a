// Validation: Llama 3's 54-day snapshot on 16,384 H100 GPUs (Grattafiori, Dubey et al., arXiv:2407.21783, Sec. 3.3.4,
// Table 5): 419 unexpected interruptions, by root cause, and > 90% effective training time. The default failure
// components are derived from that table (hardware_profiles/README.md), so the simulator must give back its counts,
// and with every reliability key left out the goodput of a cluster that swaps spares in (>= 0.85).
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <variant>

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

// Llama 3 405B's layout for 54 days with every reliability key left out (scenarios/validation): the defaults a
// planner gets (spare pool sized by auto_spares, elastic shrink, node swap, checkpoints from bytes and bandwidth).
RunInputs llama3_54_days() {
  static const scenario::Scenario s =
      scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/llama3_405b_54d_defaults.json");
  const auto setup = scenario::step_setup(s);
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(setup));
  const base::Time healthy = execution::analytic_step(plan).step_time;
  return scenario::run_inputs(s, plan, healthy, /*simulate_straggler=*/false);
}

TEST(RunValidationLlama3, InterruptionsIn54DaysMatchTable5) {
  const RunInputs in = llama3_54_days();
  const int trials = 200;
  const results::RunSummary s = run_monte_carlo(in, trials, /*seed=*/2407, /*threads=*/2);
  // Every default component is a Table 5 row, all of them unexpected interruptions (host_maintenance is Table 5's
  // "unplanned maintenance"; the 47 planned interruptions are not in the defaults).
  std::printf(
      "[llama3] mean interruptions %.1f per 54 days (Table 5: 419, %+.2f%%); job MTBF %.2f h analytic, "
      "%.2f h simulated; goodput %.3f (p10 %.3f); checkpoint every %.0f s, write %.1f s, load %.1f s; %d spares, "
      "waiting %.2f%%\n",
      s.interruptions_mean, 100 * (s.interruptions_mean / 419 - 1), s.job_mtbf_h, s.job_mtbf_h_simulated,
      s.goodput.mean, s.goodput.p10, s.checkpoint.interval_s, s.checkpoint.write_s, s.checkpoint.load_s, s.spares,
      100 * s.accounting.waiting_for_repair_s / s.accounting.wall_s);
  EXPECT_NEAR(s.interruptions_mean, 419.0, 0.05 * 419.0) << "an arrival counts only when it interrupts work";
  EXPECT_NEAR(s.job_mtbf_h, 54.0 * 24 / 419, 0.01) << "1 / sum of rates = 3.09 h";
  // Table 5's software-bug row is the sum of the profile's per-job and per-node parts (hardware_profiles/README.md).
  std::map<std::string, double> by_row;
  for (const results::CauseSummary& c : s.causes)
    by_row[c.name == "software_bug_per_node" ? std::string("software_bug") : c.name] += c.interruptions_mean;
  ASSERT_EQ(by_row.size(), kTable5.size());
  for (const Row& row : kTable5) {
    ASSERT_TRUE(by_row.contains(row.component)) << row.component;
    const double mean = by_row[row.component];
    const double count = row.count;
    // Poisson: the mean over `trials` has a standard error of sqrt(count / trials); 4 of them, or 5% for big rows.
    const double tolerance = std::max(4.0 * std::sqrt(count / trials), 0.05 * count);
    std::printf("[llama3]   %-30s %6.1f  (Table 5: %3.0f, share %5.1f%% vs %5.1f%%)\n", row.component, mean, count,
                100 * mean / s.interruptions_mean, 100 * count / 419);
    EXPECT_NEAR(mean, count, tolerance) << row.component;
  }
  EXPECT_EQ(s.never_finished, 0);
  EXPECT_GE(s.goodput.mean, 0.85) << "Llama 3 reports > 90% effective training time with its own (unpublished) "
                                     "restart and checkpoint times; the defaults must give a large run's answer";
}

}  // namespace
}  // namespace sim::reliability
