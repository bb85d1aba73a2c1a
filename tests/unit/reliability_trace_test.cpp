// tests/unit/reliability_trace_test.cpp: failure-trace replay (DESIGN.md, sim/reliability: "trace replay"). A trace's
// failures arrive at their logged times, in every trial, repeated after the trace's span; the cost of each is checked
// against hand-computed timelines, and a scenario's trace is read strictly.
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/scenario_errors.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace sim::reliability {
namespace {

using base::Time;
using hardware::FailureEffect;
using hardware::FailureScope;

hardware::FailureComponentSpec component(std::string name, FailureScope scope, FailureEffect effect, double repair_s) {
  hardware::FailureComponentSpec c;
  c.name = std::move(name);
  c.scope = scope;
  c.mtbf = base::Duration{1e12};  // never, by its own law: only the trace makes it fail
  c.effect = effect;
  c.repair = base::Duration{repair_s};
  return c;
}

/// One node, 1 s steps, 10,000 steps; synchronous checkpoints every 1,000 steps of 10 s; detection 0, restart 100 s,
/// load 0, swap 0; no spares: a node failure waits for its repair (fixed times, so every trial is the same).
RunInputs one_node(std::vector<TraceEvent> events, double span_s) {
  RunInputs in;
  in.job = JobShape::make(8, 8, 1);
  in.components = {component("software", FailureScope::Job, FailureEffect::Crash, 0),
                   component("gpu", FailureScope::Gpu, FailureEffect::Crash, 3600)};
  in.trace = FailureTrace{.span_s = span_s, .events = std::move(events), .source = "test"};
  in.detection.crash = Time::zero();
  in.restart = Time::from_seconds(100);
  in.node_swap = Time::zero();
  in.checkpoint.policy = CheckpointPolicy::Fixed;  // every 1,000 steps, synchronous, 10 s; nothing to load
  in.checkpoint.interval_steps = 1000;
  in.checkpoint.write = Time::from_seconds(10);
  in.checkpoint.async = false;
  in.checkpoint.load = Time::zero();
  in.exponential_repair = false;
  in.spares = 0;
  in.total_steps = 10000;
  in.step_time = [](const ClusterState&) { return Time::from_seconds(1.0); };
  return in;
}

TEST(FailureTrace, EachReplayedFailureCostsWhatItsTimelineSays) {
  const auto quiet = run_monte_carlo(one_node({}, 1e6), 4, 1, 1);
  EXPECT_EQ(quiet.interruptions_mean, 0.0);
  // A crash at 2,500 s: checkpoints are durable at 1,010 s (step 1,000) and 2,020 s (step 2,000), so 480 steps are
  // lost, then 100 s of restart.
  const auto one = run_monte_carlo(one_node({{2500, "software"}}, 1e6), 4, 1, 1);
  EXPECT_EQ(one.interruptions_mean, 1.0);
  EXPECT_NEAR(one.accounting.wall_s - quiet.accounting.wall_s, 480 + 100, 1e-6);
  EXPECT_NEAR(one.accounting.lost_work_s, 480, 1e-6);
  EXPECT_EQ(one.time_to_train_days.p10, one.time_to_train_days.p90) << "every trial replays the same failure";
  // A GPU at the same time takes its node for the 1 h repair; without a spare the job waits for it.
  const auto gpu = run_monte_carlo(one_node({{2500, "gpu"}}, 1e6), 4, 1, 1);
  EXPECT_NEAR(gpu.accounting.wall_s - quiet.accounting.wall_s, 480 + 3600 + 100, 1e-6);
  EXPECT_NEAR(gpu.accounting.waiting_for_repair_s, 3600, 1e-6);
}

TEST(FailureTrace, RepeatsAfterItsSpanAndSetsTheJobMtbf) {
  // One crash every 3,000 s (at 2,500 s of each span) until the run is done.
  RunInputs in = one_node({{2500, "software"}}, 3000);
  EXPECT_NEAR(job_mtbf(in).s, 3000, 1e-9) << "the trace's rate: events per span";
  const auto r = run_monte_carlo(in, 2, 1, 1);
  const double wall = r.accounting.wall_s;
  EXPECT_EQ(r.interruptions_mean, std::floor((wall - 2500) / 3000) + 1) << "every repetition before the end";
  EXPECT_GT(r.interruptions_mean, 2);
  // Sampled components are silent under a trace: the same components without it, at these MTBFs, never fail.
  RunInputs drawn = in;
  drawn.trace.reset();
  EXPECT_EQ(run_monte_carlo(drawn, 2, 1, 1).interruptions_mean, 0.0);
}

TEST(FailureTrace, InputsAreChecked) {
  RunInputs in = one_node({{10, "nope"}, {5, "software"}, {4000, "software"}}, 3000);
  std::string all;
  for (const auto& d : check_inputs(in))
    all += d.path + ": " + d.message + "\n";
  EXPECT_NE(all.find("/trace/events/0/component: \"nope\" is not a failure component"), std::string::npos) << all;
  EXPECT_NE(all.find("/trace/events/1/at: events must be in time order"), std::string::npos) << all;
  EXPECT_NE(all.find("/trace/events/2/at: must lie in [0, span)"), std::string::npos) << all;
}

}  // namespace
}  // namespace sim::reliability

namespace sim::scenario {
namespace {

using support::load_error;

TEST(FailureTraceScenario, IsReadStrictlyAndSummarised) {
  // A trace alone replays against the hardware profile's components.
  const std::string trace =
      R"({"trace": {"span": "54 d", "events": [{"at": "30 d", "component": "network_switch_cable"}, {"at": "2.5 h", )"
      R"("component": "faulty_gpu"}]}})";
  const Scenario s = load_default_scenario({{"reliability.failures", trace}});
  ASSERT_TRUE(s.reliability.trace.has_value());
  EXPECT_FALSE(s.reliability.components.empty()) << "the profile's components stay";
  ASSERT_EQ(s.reliability.trace->events.size(), 2u);
  EXPECT_EQ(s.reliability.trace->events[0].component, "faulty_gpu") << "sorted by time";
  EXPECT_NEAR(s.reliability.trace->events[0].at_s, 9000, 1e-9);
  EXPECT_NE(failures_line(s.reliability).find("failures replayed from inline: 2 over 54.0 d, repeated after it"),
            std::string::npos)
      << failures_line(s.reliability);

  const std::string bad = load_error(
      {{"reliability.failures",
        R"({"trace": {"span": "1 d", "events": [{"at": "2 d", "component": "faulty_gpu"}, {"at": "1 h", "component": "faulty_gpv"}]}})"}});
  EXPECT_NE(bad.find("/reliability/failures/trace/events/0/at"), std::string::npos) << bad;
  EXPECT_NE(bad.find("lies at or beyond the trace's span (24.0 h)"), std::string::npos) << bad;
  EXPECT_NE(bad.find("/reliability/failures/trace/events/1/component"), std::string::npos) << bad;
  EXPECT_NE(bad.find("did you mean \"faulty_gpu\"?"), std::string::npos) << bad;
  EXPECT_NE(
      load_error({{"reliability.failures", R"({"trace": {"events": []}})"}}).find("/reliability/failures/trace/span"),
      std::string::npos);
  EXPECT_NE(load_error({{"reliability.failures", R"({"trace": {"span": "1 d", "events": [], "when": 1}})"}})
                .find("unknown key"),
            std::string::npos);
  // Components of its own replace the profile's, as without a trace: the trace may name only those.
  const std::string own = load_error(
      {{"reliability.failures", R"({"components": [{"name": "x", "scope": "job", "mtbf": "10 d", "effect": "crash"}], )"
                                R"("trace": {"span": "1 d", "events": [{"at": "1 h", "component": "faulty_gpu"}]}})"}});
  EXPECT_NE(own.find("its components: x"), std::string::npos) << own;
}

}  // namespace
}  // namespace sim::scenario

// User trial 48's findings, each a test.
namespace sim::reliability {
namespace {

TEST(FailureTrace, ALoggedFailureHitsANodeTheJobStillHolds) {
  // Two GPU failures 60 s apart while the job is down, one spare, waiting for repairs: the second needs a repair of
  // its own in every trial. It hit the already failed node in 1 trial of 8 (8 nodes), which then finished early.
  RunInputs in = one_node({{1000, "gpu"}, {1060, "gpu"}}, 1e6);
  in.job = JobShape::make(64, 8, 8);
  in.spares = 1;
  in.when_spares_exhausted = OnSparesExhausted::Wait;
  in.detection.crash = Time::from_seconds(120);
  const auto r = run_monte_carlo(in, 64, 3, 1);
  EXPECT_EQ(r.time_to_train_days.p10, r.time_to_train_days.p90) << "fixed repairs: every trial the same";
  // The spare covers the first node; the job waits for the first repair (1 h after 1,000 s), from detection at 1,120 s.
  EXPECT_NEAR(r.accounting.waiting_for_repair_s, 4600 - 1120, 1e-6);
}

// Review 49's findings.
TEST(FailureTrace, TimesAreWholeNanosecondsSoARepetitionNeverStartsBeforeThePreviousEnds) {
  // An event a nanosecond before the end of a 777,777.7 s span: in doubles, repetition 91's last event landed 16 ns
  // after repetition 92's first, which the engine refused as scheduled in the past (an internal error).
  RunInputs in = one_node({{0, "software"}, {777777.699999999, "software"}}, 777777.7);
  in.total_steps.reset();
  in.window = Time::from_seconds(1000 * 86400.0);
  const auto r = run_monte_carlo(in, 1, 1, 1);
  EXPECT_GT(r.interruptions_mean, 2 * 111);  // two per repetition, 111 repetitions in 1,000 d
}

TEST(FailureTrace, AStragglerCountsWhenItsDrainStopsWorkNotWhenItStarts) {
  // Trial 48: a straggler was counted when it began, though the job ran on; one swapped out at another failure's
  // restart (its health check) was counted and never drained. Now: counted once, when its drain stops work.
  auto counts = [](std::vector<TraceEvent> events) {
    RunInputs in = one_node(std::move(events), 1e6);
    in.components.push_back(component("slow", FailureScope::Gpu, FailureEffect::Straggler, 0));
    const auto r = run_monte_carlo(in, 2, 1, 1);
    std::map<std::string, double> by;
    for (const auto& c : r.causes)
      by[c.name] = c.interruptions_mean;
    return by;
  };
  const auto swapped = counts({{1000, "slow"}, {1300, "software"}});  // found at 1,600 s; the crash came first
  EXPECT_EQ(swapped.at("slow"), 0.0);
  EXPECT_EQ(swapped.at("software"), 1.0);
  const auto drained = counts({{1000, "software"}, {1050, "slow"}});  // during the restart; drained at 1,650 s
  EXPECT_EQ(drained.at("slow"), 1.0);
  EXPECT_EQ(drained.at("software"), 1.0);
}

TEST(FailureTrace, ASpanOfTheSimulatorsWholeRangeDoesNotOverflowTheClock) {
  // A 199-year log on a 199-year window: repetition 1 would start at 199 years and its last event lie near 398, past
  // the integer-nanosecond clock's 292 (signed overflow, caught by UBSan); it is not scheduled at all.
  const double years = 199 * 365.25 * 86400.0;
  RunInputs in = one_node({{0, "software"}, {years - 1, "software"}}, years);
  in.total_steps.reset();
  in.window = Time::from_seconds(years);
  const auto r = run_monte_carlo(in, 1, 1, 1);
  EXPECT_GE(r.interruptions_mean, 2.0);
  EXPECT_LE(r.interruptions_mean, 3.0);
}

TEST(FailureTrace, ReplacesTheFailureComponentsAndLeavesTrainingsLossSpikesDrawn) {
  // A failure component of effect loss_spike is replayed like any other: never drawn (it was drawn beside its logged
  // events); a component after `replaces` (the one run_setup adds for training.loss_spikes) is drawn.
  RunInputs in = one_node({}, 1e6);
  hardware::FailureComponentSpec spike = component("spike", FailureScope::Job, FailureEffect::LossSpike, 0);
  spike.mtbf = base::Duration{600};  // every 10 min by its law
  in.components.push_back(spike);
  EXPECT_EQ(run_monte_carlo(in, 2, 1, 1).interruptions_mean, 0.0) << "replaced by an empty trace";
  in.trace->replaces = 2;  // software and gpu replaced; spike drawn
  EXPECT_GT(run_monte_carlo(in, 2, 1, 1).interruptions_mean, 5.0);
  EXPECT_NEAR(job_mtbf(in).s, 600, 1e-9) << "the drawn component's rate, and no events";
}

TEST(FailureTrace, TheWorkGuardCountsATracesEventsExactly) {
  // 10,000 failures in the first day of a one-year log, over a run of 19 days: the mean rate says 520, the run meets
  // all 10,000.
  std::vector<TraceEvent> events(10000);
  for (std::size_t i = 0; i < events.size(); ++i)
    events[i] = {static_cast<double>(i) * 8.0, "software"};
  RunInputs in = one_node(std::move(events), 365 * 86400.0);
  in.total_steps = 19 * 86400.0;
  EXPECT_EQ(interruptions_per_trial(in, Time::from_seconds(1)), 10000.0);
  in.total_steps = 400 * 86400.0;  // one whole repetition and 35 days of the next
  EXPECT_EQ(interruptions_per_trial(in, Time::from_seconds(1)), 20000.0);
}

}  // namespace
}  // namespace sim::reliability

namespace sim::scenario {
namespace {

using support::load_error;

TEST(FailureTraceScenario, TrialFortyEightsInputsAreRefusedOrOrdered) {
  // A span the clock cannot hold was an internal error when the summary printed it.
  EXPECT_NE(load_error({{"reliability.failures",
                         R"({"trace": {"span": "107000 d", "events": [{"at": "1 s", "component": "software_bug"}]}})"}})
                .find("/reliability/failures/trace/span: is longer than a run can be"),
            std::string::npos);
  // Events at one instant in component-name order, whatever the log's.
  const Scenario s = load_default_scenario(
      {{"reliability.failures", R"({"trace": {"span": "1 d", "events": [{"at": "1 h", "component": "software_bug"}, )"
                                R"({"at": "1 h", "component": "faulty_gpu"}]}})"}});
  EXPECT_EQ(s.reliability.trace->events[0].component, "faulty_gpu");
  // A duplicate key in a --set value is refused as in a file, not resolved to the last one.
  EXPECT_NE(load_error({{"reliability.failures", R"({"trace": {"span": "1 d", "events": []}, "trace": {}})"}})
                .find("invalid JSON: duplicate key \"trace\""),
            std::string::npos);
  // What a failures object takes, named.
  EXPECT_NE(load_error({{"reliability.failures", "{}"}})
                .find("expected \"components\" (failure components), a "
                      "\"trace\" (a failure log to replay) or both"),
            std::string::npos);
  EXPECT_NE(load_error({{"reliability.failures", R"({"traces": {}})"}}).find("did you mean \"trace\""),
            std::string::npos);
  const std::string twice = load_error(
      {{"reliability.failures", R"({"replace": false, "components": [{"name": "software_bug", "scope": "job", )"
                                R"("mtbf": "10 d", "effect": "crash"}]})"}});
  EXPECT_NE(twice.find("/reliability/failures/components: [0] \"software_bug\" is already a component of the "
                       "hardware profile"),
            std::string::npos)
      << twice;
  // A failure file's contents are provenance: its SHA-256 changes with any event (a user trial: two traces 2,000 s
  // apart gave different results under one configuration hash).
  support::TempDir dir;
  auto hash_of = [&](const std::string& at) {
    const auto path = (dir.path() / ("f" + at + ".json")).string();
    std::ofstream(path) << R"({"trace": {"span": "30 d", "events": [{"at": ")" << at
                        << R"(", "component": "software_bug"}]}})";
    return load_default_scenario({{"reliability.failures", "\"" + path + "\""}}).reliability.failures_sha256;
  };
  EXPECT_EQ(hash_of("1000 s").size(), 64u);
  EXPECT_NE(hash_of("1000 s"), hash_of("3000 s"));
  EXPECT_NE(load_error({{"reliability.failures", R"({"components": [], "trace": {"span": "1 d", "events": [{"at": )"
                                                 R"("1 h", "component": "x"}]}})"}})
                .find("the failure model has no components"),
            std::string::npos);
}

}  // namespace
}  // namespace sim::scenario
