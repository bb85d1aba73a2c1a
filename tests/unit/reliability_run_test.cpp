// Run-level simulation: Daly's closed forms as oracles, monotonicity, determinism, and the mechanics of recovery.
#include "sim/reliability/checkpoint_policy.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/rng.hpp"
#include "sim/results/run_result.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace sim::reliability {
namespace {

using base::Time;
using hardware::FailureEffect;
using hardware::FailureScope;

Time minutes(double m) {
  return Time::from_seconds(m * 60.0);
}

hardware::FailureComponentSpec component(std::string name, FailureScope scope, double mtbf_h, FailureEffect effect,
                                         double repair_h = 0.0) {
  hardware::FailureComponentSpec c;
  c.name = std::move(name);
  c.scope = scope;
  c.mtbf = base::Duration{mtbf_h * 3600.0};
  c.effect = effect;
  c.repair = base::Duration{repair_h * 3600.0};
  return c;
}

/// Daly's model on a one-node job: job-level exponential crashes of mean `mtbf_h`, instant detection, restart R,
/// blocking checkpoints of delta and no load time; `solve_h` hours of compute at one 1-second step per second.
RunInputs daly_model(double mtbf_h, double delta_min, double restart_min, double solve_h) {
  RunInputs in;
  in.job = JobShape::make(8, 8, 1);
  in.components = {component("crash", FailureScope::Job, mtbf_h, FailureEffect::Crash)};
  in.detection.crash = Time::zero();
  in.restart = minutes(restart_min);
  in.checkpoint = CheckpointSpec{.policy = CheckpointPolicy::Daly,
                                 .interval = Time::zero(),
                                 .write = minutes(delta_min),
                                 .async = false,
                                 .snapshot = Time::zero(),
                                 .load = Time::zero(),
                                 .write_basis = {},
                                 .load_basis = {},
                                 .snapshot_basis = {}};
  in.total_steps = solve_h * 3600.0;
  in.step_time = [](const ClusterState&) { return Time::from_seconds(1.0); };
  return in;
}

double sum_of_parts(const results::TimeAccounting& a) {
  return a.productive_s + a.checkpoint_s + a.detection_s + a.restart_s + a.lost_work_s + a.waiting_for_repair_s +
         a.degraded_s + a.drain_s;
}

TEST(RunMonteCarlo, GoodputMatchesDalysExpectedWallTimeWhereItsAssumptionsHold) {
  // Daly (2006): T_w = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau, exponential failures, instant detection.
  for (double mtbf_h : {1.0, 6.0, 24.0}) {
    const double solve_h = 2000.0;
    RunInputs in = daly_model(mtbf_h, /*delta_min=*/5, /*restart_min=*/10, solve_h);
    const results::RunSummary s = run_monte_carlo(in, /*trials=*/16, /*seed=*/7, /*threads=*/2);
    const double tau_s = s.checkpoint.interval_s;
    const double expected_wall_h =
        daly_expected_wall_time(base::Duration{solve_h * 3600}, base::Duration{tau_s}, base::Duration{300},
                                base::Duration{600}, base::Duration{mtbf_h * 3600})
            .s /
        3600.0;
    const double expected_goodput = solve_h / expected_wall_h;
    std::printf(
        "[daly] M = %4.1f h, tau = %6.1f min: goodput simulated %.4f, Daly %.4f (%+.2f%%); wall %.1f h vs %.1f h\n",
        mtbf_h, tau_s / 60, s.goodput.mean, expected_goodput, 100 * (s.goodput.mean / expected_goodput - 1),
        s.accounting.wall_s / 3600, expected_wall_h);
    EXPECT_NEAR(s.goodput.mean, expected_goodput, 0.02 * expected_goodput) << "M = " << mtbf_h << " h";
    EXPECT_NEAR(s.accounting.wall_s / 3600, expected_wall_h, 0.02 * expected_wall_h) << "M = " << mtbf_h << " h";
    EXPECT_EQ(s.never_finished, 0);
  }
}

// The work guard counts interruptions over the time a run trains, failures' cost included (Daly's expected wall
// time), not over its failure-free time: loss spikes every step passed at 2.4e5 interruptions per trial where a trial
// simulated 4.3 million (a user trial), so a command the guard let through ran for hours.
TEST(RunMonteCarlo, TheWorkGuardCountsInterruptionsOverTheTimeARunTrains) {
  RunInputs in = daly_model(/*mtbf_h=*/6, /*delta_min=*/5, /*restart_min=*/10, /*solve_h=*/2000);
  const double tau = daly_interval(base::Duration{300}, base::Duration{6 * 3600.0}).s;
  const double wall = daly_expected_wall_time(base::Duration{2000 * 3600.0}, base::Duration{tau}, base::Duration{300},
                                              base::Duration{600}, base::Duration{6 * 3600.0})
                          .s;
  EXPECT_NEAR(interruptions_per_trial(in, Time::from_seconds(1)), wall / (6 * 3600.0), 1e-6 * wall);
  EXPECT_GT(wall, 2000 * 3600.0 * 1.2) << "a fifth longer than failure-free at least";
  const double simulated = run_monte_carlo(in, 8, 3, 2).interruptions_mean;
  EXPECT_NEAR(simulated, wall / (6 * 3600.0), 0.05 * simulated) << "what a trial meets";
  // Failures every few seconds against a ten-minute restart: no trial finishes, each runs to its event cap.
  in.components = {component("spike", FailureScope::Job, 3.0 / 3600, FailureEffect::Crash)};
  EXPECT_EQ(interruptions_per_trial(in, Time::from_seconds(1)), kMaxTrialEvents / 2);
  // A checkpoint every 30 days against a one-hour MTBF: no checkpoint ever lands, every trial stalls after
  // stall_interruptions (a review: counted at the event cap, the guard refused 10,000 trials that take a second).
  in = daly_model(/*mtbf_h=*/1, /*delta_min=*/5, /*restart_min=*/10, /*solve_h=*/2000);
  in.checkpoint.policy = CheckpointPolicy::Fixed;
  in.checkpoint.interval = Time::from_seconds(30 * 86400.0);
  EXPECT_EQ(interruptions_per_trial(in, Time::from_seconds(1)), 1000.0);
  EXPECT_EQ(run_monte_carlo(in, 4, 3, 2).interruptions_mean, 1000.0);
}

/// Least-squares fit of W(tau) = a/tau + b tau + c (the first-order shape of the expected wall time) through the
/// sweep; its minimum is at sqrt(a/b).
double fitted_optimum(const std::vector<double>& tau, const std::vector<double>& wall) {
  double m[3][3] = {}, v[3] = {};
  for (std::size_t i = 0; i < tau.size(); ++i) {
    const double row[3] = {1.0 / tau[i], tau[i], 1.0};
    for (int r = 0; r < 3; ++r) {
      v[r] += row[r] * wall[i];
      for (int c = 0; c < 3; ++c)
        m[r][c] += row[r] * row[c];
    }
  }
  for (int i = 0; i < 3; ++i)  // Gauss-Jordan; the normal matrix is symmetric positive definite
    for (int r = 0; r < 3; ++r) {
      if (r == i) continue;
      const double f = m[r][i] / m[i][i];
      for (int c = 0; c < 3; ++c)
        m[r][c] -= f * m[i][c];
      v[r] -= f * v[i];
    }
  const double a = v[0] / m[0][0], b = v[1] / m[1][1];
  return std::sqrt(a / b);
}

TEST(RunMonteCarlo, BestFixedIntervalOfASweepIsDalysOptimum) {
  // Daly (2006), delta = 5 min: M = 24 h -> 117 min, 6 h -> 57 min. Every interval sees the same failure times
  // (common random numbers: one seed for the whole sweep).
  for (double mtbf_h : {24.0, 6.0}) {
    RunInputs in = daly_model(mtbf_h, 5, 10, /*solve_h=*/400 * mtbf_h);
    const double daly_s = daly_interval(base::Duration{300}, base::Duration{mtbf_h * 3600}).s;
    std::vector<double> taus, walls;
    double best_tau = 0, best_wall = 1e300;
    for (int i = 0; i < 13; ++i) {
      const double tau_s = std::round(daly_s * std::exp(std::log(0.5) + i * std::log(4.0) / 12));
      in.checkpoint.policy = CheckpointPolicy::Fixed;
      in.checkpoint.interval = Time::from_seconds(tau_s);
      const results::RunSummary s = run_monte_carlo(in, /*trials=*/24, /*seed=*/2006, /*threads=*/2);
      taus.push_back(tau_s);
      walls.push_back(s.accounting.wall_s);
      if (s.accounting.wall_s < best_wall) {
        best_wall = s.accounting.wall_s;
        best_tau = tau_s;
      }
    }
    const double fit = fitted_optimum(taus, walls);
    std::printf("[daly-sweep] M = %4.1f h: Daly %.1f min; sweep best %.1f min, fitted optimum %.1f min (%+.1f%%)\n",
                mtbf_h, daly_s / 60, best_tau / 60, fit / 60, 100 * (fit / daly_s - 1));
    EXPECT_NEAR(fit, daly_s, 0.05 * daly_s) << "M = " << mtbf_h << " h";
    EXPECT_NEAR(best_tau, daly_s, 0.13 * daly_s) << "the best grid point is Daly's or a neighbour (grid step 12%)";

    in.checkpoint.policy = CheckpointPolicy::Daly;
    const results::RunSummary automatic = run_monte_carlo(in, 1, 1, 1);
    EXPECT_NEAR(automatic.checkpoint.interval_s, daly_s, 1.0) << "\"auto\" is Daly's optimum, in whole 1 s steps";
  }
}

TEST(RunMonteCarlo, HigherFailureRatesNeverRaiseGoodputFasterWritesNeverLowerIt) {
  // Random scenarios (fixed seed); each comparison shares failure times (common random numbers: an added component
  // has its own stream, so the others' arrivals do not move).
  base::Rng pick = base::RngStreams(4).stream("monotonicity");
  for (int scenario = 0; scenario < 10; ++scenario) {
    const double mtbf_h = std::exp(std::log(1.0) + pick.uniform() * std::log(48.0));
    RunInputs in = daly_model(mtbf_h, 0.2 + 10 * pick.uniform(), 1 + 30 * pick.uniform(), 24.0 * 20);
    in.job = JobShape::make(64, 8, 8);
    in.components.push_back(component("node", FailureScope::Node, mtbf_h * 8 * 3, FailureEffect::Hang, 4.0));
    in.detection.crash = minutes(10 * pick.uniform());
    in.spares = static_cast<int>(pick.below(3));
    in.checkpoint.async = pick.uniform() < 0.5;
    in.checkpoint.snapshot = in.checkpoint.async ? Time::from_seconds(in.checkpoint.write.seconds() * 0.05) : Time{};
    in.checkpoint.load = minutes(2 * pick.uniform());
    if (pick.uniform() < 0.5) {
      in.checkpoint.policy = CheckpointPolicy::Fixed;
      in.checkpoint.interval = minutes(10 + 120 * pick.uniform());
    }
    const double base_goodput = run_monte_carlo(in, 24, 99, 2).goodput.mean;

    RunInputs more_failures = in;
    more_failures.components.push_back(component("extra", FailureScope::Job, mtbf_h * 2, FailureEffect::Crash));
    more_failures.checkpoint.policy = CheckpointPolicy::Fixed;  // same interval: only the failures differ
    more_failures.checkpoint.interval = Time::from_seconds(run_monte_carlo(in, 1, 99, 1).checkpoint.interval_s);
    RunInputs fixed = in;
    fixed.checkpoint = more_failures.checkpoint;
    const double fixed_goodput = run_monte_carlo(fixed, 24, 99, 2).goodput.mean;
    const double worse = run_monte_carlo(more_failures, 24, 99, 2).goodput.mean;
    EXPECT_LE(worse, fixed_goodput) << "scenario " << scenario << ": an extra failure class raised goodput";

    RunInputs faster = in;
    faster.checkpoint.write = Time{in.checkpoint.write.ns / 2};
    faster.checkpoint.snapshot = Time{in.checkpoint.snapshot.ns / 2};
    const double better = run_monte_carlo(faster, 24, 99, 2).goodput.mean;
    EXPECT_GE(better, base_goodput) << "scenario " << scenario << ": halving the checkpoint write lowered goodput";
  }
}

/// A small job with every effect: crashes, hangs, SDC, stragglers, maintenance, spares and shrinking.
RunInputs rich_job() {
  RunInputs in;
  in.job = JobShape::make(256, 8, 16);
  in.components = {component("gpu", FailureScope::Gpu, 256 * 8.0, FailureEffect::Crash, 24),
                   component("node_hang", FailureScope::Node, 32 * 30.0, FailureEffect::Hang, 1),
                   component("sdc", FailureScope::Gpu, 256 * 200.0, FailureEffect::Sdc, 24),
                   component("slow_gpu", FailureScope::Gpu, 256 * 50.0, FailureEffect::Straggler, 12),
                   component("switch", FailureScope::Switch, 8 * 100.0, FailureEffect::Crash, 8),
                   component("maintenance", FailureScope::Node, 32 * 40.0, FailureEffect::Maintenance, 4),
                   component("software", FailureScope::Job, 48.0, FailureEffect::Crash)};
  in.spares = 2;
  in.when_spares_exhausted = OnSparesExhausted::Shrink;
  in.total_steps = 20.0 * 86400 / 5.0;  // 20 days of 5 s steps
  in.step_time = [](const ClusterState& s) {
    return Time::from_seconds(5.0 * s.straggler_factor * 16.0 / (16.0 - s.missing_dp_replicas));
  };
  return in;
}

TEST(RunMonteCarlo, SameSummaryOnOneOrTwoThreads) {
  const RunInputs in = rich_job();
  const std::string one = results::to_json(run_monte_carlo(in, 40, 42, 1)).dump();
  const std::string two = results::to_json(run_monte_carlo(in, 40, 42, 2)).dump();
  EXPECT_EQ(one, two) << "trial i depends only on (seed, i) and sums are exact";
  EXPECT_NE(one, results::to_json(run_monte_carlo(in, 40, 43, 2)).dump()) << "another seed, another result";
}

TEST(RunMonteCarlo, ImpossibleRunNeverFinishesAndSaysWhy) {
  // MTBF 10 s, checkpoint write 60 s: no checkpoint can ever complete.
  RunInputs in = daly_model(10.0 / 3600.0, /*delta_min=*/1, /*restart_min=*/0.5, /*solve_h=*/24);
  const results::RunSummary s = run_monte_carlo(in, 20, 1, 2);  // stops at the first hopeless window, not a hang
  std::printf("[impossible] never finished %d of %d: %s\n", s.never_finished, s.trials,
              s.never_finished_reason.c_str());
  EXPECT_EQ(s.never_finished, 20);
  EXPECT_NE(s.never_finished_reason.find("without a new durable checkpoint"), std::string::npos);
  EXPECT_TRUE(std::isinf(s.time_to_train_days.p50));
  const std::string json = results::to_json(s).dump();
  EXPECT_NE(json.find("\"p50\": null"), std::string::npos) << "never finishing is null, not a number";

  // Slow but possible runs stop at the horizon instead.
  RunInputs slow = daly_model(0.5, 5, 10, 24);
  slow.checkpoint.policy = CheckpointPolicy::Fixed;
  slow.checkpoint.interval = minutes(600);  // P(10 h without a failure at M = 30 min) = e^-20
  slow.horizon_factor = 3;
  slow.stall_interruptions = 1000000;
  const results::RunSummary h = run_monte_carlo(slow, 4, 1, 2);
  EXPECT_EQ(h.never_finished, 4);
  EXPECT_NE(h.never_finished_reason.find("horizon"), std::string::npos) << h.never_finished_reason;
  EXPECT_NEAR(h.accounting.wall_s, 3 * 24 * 3600.0, 1.0);
}

TEST(RunMonteCarlo, FailureFreeRunTakesSolveTimePlusCheckpoints) {
  RunInputs in = daly_model(1.0, 1, 10, /*solve_h=*/100);
  in.components.clear();
  in.checkpoint.policy = CheckpointPolicy::Fixed;
  in.checkpoint.interval = minutes(60);
  const results::RunSummary s = run_monte_carlo(in, 3, 1, 2);
  // Checkpoints at 1 h, 2 h, ..., 99 h of progress; none at the end.
  const double expected_s = 100 * 3600.0 + 99 * 60.0;
  EXPECT_NEAR(s.accounting.wall_s, expected_s, 1e-6);
  EXPECT_NEAR(s.accounting.checkpoint_s, 99 * 60.0, 1e-6);
  EXPECT_NEAR(s.goodput.mean, 100 * 3600.0 / expected_s, 1e-12);
  EXPECT_NEAR(s.time_to_train_days.p50, expected_s / 86400, expected_s / 86400 * 4e-4);
  EXPECT_DOUBLE_EQ(s.checkpoint.durable_mean, 99.0);
  EXPECT_TRUE(std::isinf(s.job_mtbf_h));
}

TEST(RunMonteCarlo, TimeAccountingSumsToWallTime) {
  const results::RunSummary s = run_monte_carlo(rich_job(), 30, 3, 2);
  const results::TimeAccounting& a = s.accounting;
  EXPECT_NEAR(sum_of_parts(a), a.wall_s, 1e-6 * a.wall_s);
  for (double part : {a.productive_s, a.checkpoint_s, a.detection_s, a.restart_s, a.lost_work_s, a.degraded_s,
                      a.drain_s, a.waiting_for_repair_s})
    EXPECT_GE(part, 0.0);
  EXPECT_NEAR(a.productive_s, 20 * 86400.0, 1e-3) << "every trial finished all its steps";
  EXPECT_GT(a.degraded_s, 0.0) << "stragglers and shrinking slow the job";
  EXPECT_GT(a.drain_s, 0.0);
  EXPECT_GT(a.lost_work_s, 0.0);
  // Lost GPU-hours: the downtime, lost work and slowdown of every cause, at 256 GPUs.
  const double lost_h =
      (a.detection_s + a.restart_s + a.lost_work_s + a.waiting_for_repair_s + a.degraded_s + a.drain_s) / 3600 * 256;
  EXPECT_NEAR(s.lost_gpu_hours_mean, lost_h, 1e-3 * lost_h);

  // Without stragglers or shrinking, running never counts as degraded.
  RunInputs healthy = rich_job();
  healthy.components.erase(healthy.components.begin() + 3);  // slow_gpu
  healthy.spares = 1000;
  const results::RunSummary h = run_monte_carlo(healthy, 20, 3, 2);
  EXPECT_NEAR(h.accounting.degraded_s, 0.0, 1e-9 * h.accounting.wall_s);
  EXPECT_NEAR(sum_of_parts(h.accounting), h.accounting.wall_s, 1e-6 * h.accounting.wall_s);
}

TEST(RunMonteCarlo, InterruptionsDuringRecoveryCount) {
  // Restarts of 3 h against a job MTBF of 1 h: most failures strike a job that is already down, and all count.
  RunInputs in = daly_model(1.0, 1, 180, 1);
  in.total_steps.reset();
  in.window = Time::from_seconds(30 * 86400.0);
  const results::RunSummary s = run_monte_carlo(in, 20, 5, 2);
  std::printf("[interruptions] window 720 h at MTBF 1 h: %.1f per trial (expected 720); goodput %.4f\n",
              s.interruptions_mean, s.goodput.mean);
  EXPECT_NEAR(s.interruptions_mean, 720.0, 3 * std::sqrt(720.0 / 20));
  EXPECT_NEAR(s.job_mtbf_h_simulated, 1.0, 0.03);
  EXPECT_TRUE(std::isnan(s.time_to_train_days.mean)) << "a window has no time to train";
}

TEST(RunMonteCarlo, AnInterruptionCountsOnceWhenItStopsWork) {
  // MTBF 1 h, no restart, but 3 h to detect each crash: arrivals while the job is already down (being detected) take
  // nothing more down and are not interruptions. A cycle is about 1 h running + 3 h detecting: 720 h / 4 h = 180.
  RunInputs in = daly_model(1.0, 1, 0, 1);
  in.detection.crash = minutes(180);
  in.total_steps.reset();
  in.window = Time::from_seconds(30 * 86400.0);
  const results::RunSummary s = run_monte_carlo(in, 20, 5, 2);
  std::printf("[interruptions] MTBF 1 h, 3 h detection: %.1f per 720 h (expected about 180, arrivals 720)\n",
              s.interruptions_mean);
  EXPECT_NEAR(s.interruptions_mean, 180.0, 12.0);
}

TEST(RunMonteCarlo, AutoSparesCoverTheRepairLoadAndASwapDelaysTheRestart) {
  RunInputs in = daly_model(1.0, 1, 10, 24 * 30);
  in.job = JobShape::make(64, 8, 8);
  in.components = {component("node", FailureScope::Node, 8 * 12.0, FailureEffect::Crash, 24)};
  // 8 nodes / 96 h x 24 h repair = 2 nodes in repair on average (Little); Poisson(2): P(<= 5) = 0.983, P(<= 6) = 0.995.
  EXPECT_NEAR(mean_nodes_in_repair(in), 2.0, 1e-9);
  EXPECT_EQ(auto_spares(in), 6);
  // A component failing every nanosecond: the pool is every node, never negative (a user trial got "/spares: must be
  // >= 0" from an int overflow).
  RunInputs absurd = in;
  absurd.components = {component("gpu", FailureScope::Gpu, 1e-9 / 3600, FailureEffect::Crash, 1)};
  EXPECT_EQ(auto_spares(absurd), absurd.job.nodes);
  in.spares = 50;
  in.node_swap = Time::zero();
  const results::RunSummary quick = run_monte_carlo(in, 8, 5, 2);
  in.node_swap = minutes(30);
  const results::RunSummary slow = run_monte_carlo(in, 8, 5, 2);
  const double extra_min = (slow.accounting.restart_s - quick.accounting.restart_s) / 60 / slow.interruptions_mean;
  std::printf("[spares] a 30 min node swap adds %.1f min to each restart\n", extra_min);
  EXPECT_NEAR(extra_min, 30.0, 3.0) << "every failure here takes a node out and swaps a spare in";
}

TEST(RunMonteCarlo, WeibullComponentsKeepTheirLongRunRate) {
  // Stationary renewal per instance: the mean count over any window is instances x window / MTBF, whatever the shape.
  for (double shape : {0.7, 2.0}) {
    RunInputs in = daly_model(1.0, 1, 1, 1);
    in.job = JobShape::make(1024, 8, 128);
    hardware::FailureComponentSpec c = component("weibull", FailureScope::Gpu, 1024 * 10.0, FailureEffect::Crash);
    c.exponential = false;
    c.weibull_shape = shape;
    in.components = {c};
    in.total_steps.reset();
    in.window = Time::from_seconds(20 * 86400.0);
    const results::RunSummary s = run_monte_carlo(in, 16, 5, 2);
    EXPECT_NEAR(s.interruptions_mean, 48.0, 0.08 * 48.0) << "shape " << shape;
  }
}

TEST(RunMonteCarlo, SilentCorruptionRollsBackPastNewerCheckpoints) {
  RunInputs in = daly_model(1.0, 1, 10, 24 * 2000);
  in.components = {component("sdc", FailureScope::Job, 1000.0, FailureEffect::Sdc)};
  in.detection.sdc = minutes(120);
  in.checkpoint.policy = CheckpointPolicy::Fixed;
  in.checkpoint.interval = minutes(30);
  const results::RunSummary s = run_monte_carlo(in, 16, 5, 2);
  const double per_event_min = s.accounting.lost_work_s / 60 / s.interruptions_mean;
  // Everything computed since the corruption is lost: the 120 min until detection (of which 30/31 compute, the rest
  // checkpoint writes) plus, on average, half a 30-min interval back to the newest checkpoint before the corruption.
  const double expected_min = 120.0 * 30 / 31 + 15;
  std::printf("[sdc] lost work per corruption %.1f min, expected %.1f min\n", per_event_min, expected_min);
  EXPECT_NEAR(per_event_min, expected_min, 2.0);
  EXPECT_DOUBLE_EQ(s.accounting.detection_s, 0.0) << "the job ran on while corrupt: that time is lost work";
}

TEST(RunMonteCarlo, StragglerSlowsTheJobUntilDrained) {
  RunInputs in = daly_model(1.0, 1, 10, 24 * 200);
  in.components = {component("slow", FailureScope::Job, 50.0, FailureEffect::Straggler, 0)};
  in.detection.straggler = minutes(30);
  in.straggler_slowdown = 1.5;
  in.step_time = [](const ClusterState& s) { return Time::from_seconds(1.0 * s.straggler_factor); };
  const results::RunSummary s = run_monte_carlo(in, 8, 5, 2);
  // 30 min at 1.5x the step time make 20 min of progress: 10 min degraded per straggler, then a drain.
  const double degraded_min = s.accounting.degraded_s / 60 / s.interruptions_mean;
  EXPECT_NEAR(degraded_min, 10.0, 0.3);
  EXPECT_NEAR(s.accounting.lost_work_s, 0.0, 1e-6) << "a drain writes a checkpoint first";
  EXPECT_NEAR(s.accounting.drain_s / s.interruptions_mean, 60.0, 1.0) << "one full checkpoint write per drain";
}

TEST(RunMonteCarlo, SparesAreSwappedInOtherwiseTheJobWaitsOrShrinks) {
  RunInputs in = daly_model(1.0, 1, 10, 24 * 30);
  in.job = JobShape::make(64, 8, 8);
  in.components = {component("node", FailureScope::Node, 8 * 12.0, FailureEffect::Crash, 24)};
  in.step_time = [](const ClusterState& s) { return Time::from_seconds(8.0 / (8.0 - s.missing_dp_replicas)); };

  in.spares = 50;
  const results::RunSummary plenty = run_monte_carlo(in, 8, 5, 2);
  EXPECT_DOUBLE_EQ(plenty.accounting.waiting_for_repair_s, 0.0);
  EXPECT_NEAR(plenty.accounting.degraded_s, 0.0, 1e-6);

  in.spares = 0;
  in.when_spares_exhausted = OnSparesExhausted::Wait;
  const results::RunSummary wait = run_monte_carlo(in, 8, 5, 2);
  EXPECT_GT(wait.accounting.waiting_for_repair_s, 0.2 * wait.accounting.wall_s) << "24 h repairs every 12 h";

  in.when_spares_exhausted = OnSparesExhausted::Shrink;
  const results::RunSummary shrink = run_monte_carlo(in, 8, 5, 2);
  EXPECT_DOUBLE_EQ(shrink.accounting.waiting_for_repair_s, 0.0) << "seven replicas can always run";
  EXPECT_GT(shrink.accounting.degraded_s, 0.0);
  EXPECT_GT(shrink.goodput.mean, wait.goodput.mean);
  std::printf("[spares] goodput: 50 spares %.4f, none + wait %.4f, none + shrink %.4f\n", plenty.goodput.mean,
              wait.goodput.mean, shrink.goodput.mean);
}

/// 64 GPUs in 8 replicas of one node, no spares, node crashes of mean `node_mtbf_h` each with `repair_h` repairs, a
/// step that takes 1 s on 8 replicas and 2 s on 4 (the batch divides over 8 or 4 replicas only).
RunInputs eight_replica_job(double solve_h, double node_mtbf_h, double repair_h) {
  RunInputs in = daly_model(1.0, 1, 10, solve_h);
  in.job = JobShape::make(64, 8, 8);
  in.components = {component("node", FailureScope::Node, node_mtbf_h, FailureEffect::Crash, repair_h)};
  in.step_time = [](const ClusterState& s) {
    return s.missing_dp_replicas == 0   ? Time::from_seconds(1.0)
           : s.missing_dp_replicas == 4 ? Time::from_seconds(2.0)
                                        : Time::max();
  };
  in.spares = 0;
  return in;
}

// A software crash (no part to repair) while the job runs shrunk for a node under repair restarts it shrunk again.
// The shrunk running was charged to whichever failure stopped the job last, so the software crash took over the
// node failure's cost (a user trial: 11.6 times its cost per failure without node failures).
TEST(RunMonteCarlo, RunningShrunkIsChargedToTheFailureThatShrankTheJob) {
  RunInputs in = eight_replica_job(/*solve_h=*/24 * 30, /*node_mtbf_h=*/8 * 48.0, /*repair_h=*/24);
  in.when_spares_exhausted = OnSparesExhausted::Shrink;
  in.components.push_back(component("software", FailureScope::Job, 12.0, FailureEffect::Crash));
  const results::RunSummary both = run_monte_carlo(in, 16, 5, 2);
  in.components.erase(in.components.begin());
  const results::RunSummary alone = run_monte_carlo(in, 16, 5, 2);
  auto per_failure = [](const results::RunSummary& r, const std::string& name) {
    for (const auto& c : r.causes)
      if (c.name == name) return c.lost_gpu_hours_mean / c.interruptions_mean;
    return -1.0;
  };
  const double shared = per_failure(both, "software"), own = per_failure(alone, "software");
  std::printf("[shrink cause] software crash: %.2f GPU-h each beside node failures, %.2f alone; node %.2f\n", shared,
              own, per_failure(both, "node"));
  EXPECT_GT(both.accounting.degraded_s, 0.0);
  // Its lost work costs more while shrunk (a step takes twice as long), never the shrink itself.
  EXPECT_LT(shared, 1.5 * own);
  EXPECT_GT(per_failure(both, "node"), 5 * shared);
}

TEST(RunMonteCarlo, AShrunkJobTakesItsReplicasBackAndIgnoresTheNodesItLeftIdle) {
  // 64 GPUs in 8 replicas of one node, no spares, node crashes every 12 h with 2 h repairs, a step that halves with
  // half the replicas (one lost node: 8 -> 4 replicas, the batch dividing only over powers of two). Shrunk, the job
  // used to keep its 4 replicas until a restart found nothing under repair, and the 4 idle nodes' failures
  // interrupted it: shrinking cost more than waiting.
  RunInputs in = eight_replica_job(/*solve_h=*/24 * 30, /*node_mtbf_h=*/8 * 12.0, /*repair_h=*/2);
  in.when_spares_exhausted = OnSparesExhausted::Wait;
  const results::RunSummary wait = run_monte_carlo(in, 16, 5, 2);
  in.when_spares_exhausted = OnSparesExhausted::Shrink;
  const results::RunSummary shrink = run_monte_carlo(in, 16, 5, 2);
  std::printf("[shrink] wait %.2f d (%.1f interruptions), shrink %.2f d (%.1f), degraded %.2f d\n",
              wait.time_to_train_days.mean, wait.interruptions_mean, shrink.time_to_train_days.mean,
              shrink.interruptions_mean, shrink.accounting.degraded_s / 86400);
  // Back at full size once the 2 h repair is done: about 2 h degraded at half speed (1 h of work lost to speed) per
  // failure, against 2 h of waiting, so shrinking is the faster policy here.
  EXPECT_LT(shrink.time_to_train_days.mean, wait.time_to_train_days.mean);
  EXPECT_LT(shrink.accounting.degraded_s / shrink.interruptions_mean, 3 * 3600.0) << "rejoins after the repair";
  // Its idle nodes' failures do not interrupt it (measured: 64.5 against waiting's 64.2; 71.2 when they did).
  EXPECT_LT(shrink.interruptions_mean, 1.05 * wait.interruptions_mean);
}

TEST(RunMonteCarlo, ARepairThatEndsDuringTheShrunkRestartRestartsAtFullSize) {
  // Repairs shorter than the restart (5 min against 10): the node is back before the shrunk job runs. The job used to
  // run on half its replicas until the next repair, hours later (a user trial: 15 min repairs made the default
  // scenario 43 days longer than waiting, and faster repairs made runs longer).
  RunInputs in = eight_replica_job(/*solve_h=*/24 * 30, /*node_mtbf_h=*/8 * 12.0, /*repair_h=*/5.0 / 60);
  in.when_spares_exhausted = OnSparesExhausted::Wait;
  const results::RunSummary wait = run_monte_carlo(in, 16, 5, 2);
  in.when_spares_exhausted = OnSparesExhausted::Shrink;
  const results::RunSummary shrink = run_monte_carlo(in, 16, 5, 2);
  std::printf("[shrink, 5 min repairs] wait %.2f d, shrink %.2f d, degraded %.3f d\n", wait.time_to_train_days.mean,
              shrink.time_to_train_days.mean, shrink.accounting.degraded_s / 86400);
  EXPECT_LT(shrink.accounting.degraded_s, 60.0 * shrink.interruptions_mean) << "back at full size before it runs";
  EXPECT_LT(shrink.time_to_train_days.mean, 1.01 * wait.time_to_train_days.mean);
}

TEST(RunMonteCarlo, ACutSampleTimelineSaysWhereItStopsAndKeepsItsEnd) {
  // Hourly crashes over 30 days: far more events than the 10 kept. The recording stops with a marker and the
  // trial's end is still there (a report had drawn a cut timeline as the whole run).
  RunInputs in = daly_model(1.0, 1, 10, 24 * 30);
  in.max_timeline_events = 10;
  const results::RunSummary s = run_monte_carlo(in, 2, 5, 1);
  ASSERT_GE(s.sample_timeline.size(), 2u);
  EXPECT_LE(s.sample_timeline.size(), 10u);
  EXPECT_EQ(s.sample_timeline[s.sample_timeline.size() - 2].kind, "timeline_truncated");
  EXPECT_EQ(s.sample_timeline.back().kind, "finished");
  EXPECT_GT(s.sample_timeline.back().at.days(), 29.0);
}

TEST(RunMonteCarlo, FailuresOfNodesAShrunkJobLeftIdleDoNotInterruptIt) {
  // As above, but repairs outlast the run: after its first failure the job runs on 4 of its 8 nodes for good (the
  // batch divides over 8 or 4 replicas), so later node failures reach it at the rate of 4 nodes, not of every healthy
  // one, until it has too few nodes left to run (then it never finishes).
  RunInputs in = eight_replica_job(/*solve_h=*/24 * 2, /*node_mtbf_h=*/8 * 48.0, /*repair_h=*/100000);
  in.when_spares_exhausted = OnSparesExhausted::Shrink;
  const results::RunSummary s = run_monte_carlo(in, 400, 7, 2);
  // Measured: 1.04 interruptions per trial; 1.26 when the idle nodes' failures interrupted the shrunk job too.
  std::printf("[idle] %.2f interruptions per trial, %d of %d never finished\n", s.interruptions_mean, s.never_finished,
              s.trials);
  EXPECT_LT(s.interruptions_mean, 1.15);
}

TEST(RunMonteCarlo, RejectsUnusableInputsWithOneMessage) {
  RunInputs in = daly_model(1.0, 1, 10, 1);
  in.components.push_back(component("crash", FailureScope::Gpu, 0.0, FailureEffect::Crash));
  in.window = Time::from_seconds(3600);
  try {
    run_monte_carlo(in, 0, 1, 1);
    FAIL() << "expected a ConfigError";
  } catch (const base::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/components/1/mtbf"), std::string::npos) << what;
    EXPECT_NE(what.find("appears twice"), std::string::npos) << what;
    EXPECT_NE(what.find("exactly one of"), std::string::npos) << what;
    EXPECT_NE(what.find("/trials"), std::string::npos) << what;
  }
}

TEST(RunMonteCarlo, JsonFollowsTheRunContractAndReportsProgress) {
  int calls = 0, last = -1;
  const results::RunSummary s = run_monte_carlo(rich_job(), 12, 1, 2, [&](int done, int total) {
    ++calls;
    EXPECT_EQ(total, 12);
    EXPECT_GE(done, last);
    last = done;
  });
  EXPECT_GE(calls, 1);
  EXPECT_EQ(last, 12);
  const std::string j = results::to_json(s).dump();
  for (const char* key : {"\"schema\": \"trainsim.run/1\"", "\"time_to_train_days\"", "\"goodput\"",
                          "\"interruptions\"", "\"by_cause\"", "\"job_mtbf_h\"", "\"lost_gpu_hours\"", "\"checkpoint\"",
                          "\"interval_s\"", "\"overhead_fraction\"", "\"cost_usd\": null", "\"p_deadline_miss\": null",
                          "\"time_accounting_days\"", "\"never_finished\"", "\"sample_trial\""})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  EXPECT_FALSE(s.sample_timeline.empty());
  EXPECT_EQ(s.sample_timeline.front().kind, "resume");
  EXPECT_EQ(s.sample_timeline.back().kind, "finished");
}

}  // namespace
}  // namespace sim::reliability
