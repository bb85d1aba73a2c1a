// Properties that must hold for every scenario (fixed seeds): determinism (same scenario and seed give byte-identical
// JSON whatever the thread count), conservation (the step breakdown and a run's time accounting add up to the step
// and wall time) and monotonicity (a faster network or faster GPUs never slow a step; more failures never raise
// goodput).
#include "sim/cli/app.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_trial.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"
#include "tests/support/cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

namespace sim {
namespace {

using execution::Fidelity;
using support::trainsim;

const std::vector<std::string> kScenarios = {
    "scenarios/default.json",
    "scenarios/examples/llama3-8b-64-h100.json",
    "scenarios/examples/mixtral-8x7b-256-h100.json",
    "scenarios/examples/gpt3-175b-1024-a100.json",
};

std::string source(const std::string& relative) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/" + relative;
}

// ---- determinism ------------------------------------------------------------------------------------------------

TEST(Determinism, RunJsonIsByteIdenticalOnOneAndTwoThreadsAndWhenRepeated) {
  for (const auto& rel : kScenarios) {
    const std::vector<std::string> args = {"run", source(rel), "--trials", "24", "--seed", "7", "--json"};
    auto with = [&](const char* threads) {
      auto a = args;
      a.insert(a.end(), {"--threads", threads});
      return trainsim(a);
    };
    const auto one = with("1");
    ASSERT_EQ(one.code, cli::kExitOk) << rel << ": " << one.err;
    const auto two = with("2");
    const auto again = with("2");
    EXPECT_EQ(one.out, two.out) << rel << ": 1 and 2 threads differ";
    EXPECT_EQ(two.out, again.out) << rel << ": two runs with the same seed differ";
  }
}

TEST(Determinism, StepJsonIsByteIdenticalWhenRepeated) {
  for (const auto& rel : kScenarios)
    for (const char* f : {"analytic", "replica", "full"}) {
      const auto first = trainsim({"step", source(rel), "--fidelity", f, "--json"});
      ASSERT_EQ(first.code, cli::kExitOk) << rel << " " << f << ": " << first.err;
      EXPECT_EQ(first.out, trainsim({"step", source(rel), "--fidelity", f, "--json"}).out) << rel << " " << f;
    }
}

// ---- conservation -----------------------------------------------------------------------------------------------

TEST(Conservation, StepBreakdownSumsToTheStepTimeWithinOneNanosecondPerPart) {
  // Every member of breakdown_s, whatever the contract grows to, counts: a new part left out of the sum shows here.
  for (const auto& rel : kScenarios)
    for (const char* f : {"analytic", "replica", "full"}) {
      const auto o = trainsim({"step", source(rel), "--fidelity", f, "--json"});
      ASSERT_EQ(o.code, cli::kExitOk) << rel << " " << f << ": " << o.err;
      const auto j = nlohmann::json::parse(o.out);
      double sum = 0;
      int parts = 0;
      for (const auto& [name, seconds] : j.at("breakdown_s").items()) {
        EXPECT_GE(seconds.get<double>(), 0.0) << rel << " " << f << ": " << name;
        sum += seconds.get<double>();
        ++parts;
      }
      const double step = j.at("step_time_s").get<double>();
      EXPECT_GE(parts, 8);
      EXPECT_NEAR(sum, step, parts * 1e-9) << rel << " " << f << ": parts " << sum << " s, step " << step << " s";
    }
}

/// A scenario's run-level inputs with its healthy step at replica fidelity. `s` must outlive the result.
struct RunSetup {
  explicit RunSetup(const std::string& rel, const std::vector<scenario::Override>& overrides = {})
      : s(scenario::load_scenario(source(rel), overrides)) {
    auto setup = scenario::step_setup(s);
    const auto& inputs = std::get<execution::StepInputs>(setup);
    const auto plan = execution::build_step_plan(inputs);
    step = execution::simulate_step(plan, {}).step_time;
    in = scenario::run_inputs(s, plan, step);
  }
  scenario::Scenario s;
  base::Time step;
  reliability::RunInputs in;
};

/// Failures ten times as frequent as the defaults, so that every part of the accounting occurs.
const std::vector<scenario::Override> kHarsh = {
    {"reliability.failures",
     R"({"replace": false, "components": [
          {"name": "harsh_gpu", "scope": "gpu", "mtbf": "2000 d", "effect": "crash", "repair": "12 h"},
          {"name": "harsh_hang", "scope": "node", "mtbf": "200 d", "effect": "hang", "repair": "1 h"},
          {"name": "harsh_slow", "scope": "gpu", "mtbf": "5000 d", "effect": "straggler", "repair": "6 h"},
          {"name": "harsh_sdc", "scope": "gpu", "mtbf": "20000 d", "effect": "sdc", "repair": "6 h"}]})"},
    {"reliability.spares", "0"},
};

TEST(Conservation, EveryTrialsTimeAccountingSumsExactlyToItsWallTime) {
  for (const auto& rel : kScenarios) {
    RunSetup r(rel, kHarsh);
    const auto plan = reliability::make_plan(r.in, r.step);
    reliability::StepTimes shared(r.in.step_time);
    reliability::LocalStepTimes local(shared, r.in.job.dp, plan.straggler_slowdown);
    for (std::uint64_t trial = 0; trial < 12; ++trial) {
      const auto t = reliability::run_trial(plan, local, 42, trial, false);
      const std::int64_t parts = t.productive_ns + t.checkpoint_ns + t.detection_ns + t.restart_ns + t.lost_work_ns +
                                 t.waiting_ns + t.degraded_ns + t.drain_ns;
      EXPECT_EQ(parts, t.wall.ns) << rel << " trial " << trial;
      for (std::int64_t part : {t.productive_ns, t.checkpoint_ns, t.detection_ns, t.restart_ns, t.lost_work_ns,
                                t.waiting_ns, t.degraded_ns, t.drain_ns})
        EXPECT_GE(part, 0) << rel << " trial " << trial;
    }
  }
}

TEST(Conservation, RunJsonTimeAccountingSumsToTheWallTime) {
  std::vector<std::string> args = {"run", source("scenarios/default.json"), "--trials", "40", "--json"};
  for (const auto& o : kHarsh)
    args.insert(args.end(), {"--set", o.key + "=" + o.value});
  const auto o = trainsim(args);
  ASSERT_EQ(o.code, cli::kExitOk) << o.err;
  const auto acc = nlohmann::json::parse(o.out).at("time_accounting_days");
  double sum = 0;
  for (const auto& [name, days] : acc.items())
    if (name != "wall") sum += days.get<double>();
  const double wall = acc.at("wall").get<double>();
  EXPECT_GT(acc.at("lost_work").get<double>(), 0.0);
  EXPECT_GT(acc.at("restart").get<double>(), 0.0);
  EXPECT_NEAR(sum, wall, 1e-9 * wall) << "the parts of time_accounting_days must add up to its wall time";
}

// ---- monotonicity -----------------------------------------------------------------------------------------------

results::StepResult step_of(const scenario::Scenario& s, Fidelity f) {
  auto setup = scenario::step_setup(s);
  const auto& inputs = std::get<execution::StepInputs>(setup);
  execution::StepOptions options;
  options.fidelity = f;
  return execution::simulate_step(execution::build_step_plan(inputs), options);
}

scenario::Scenario faster(scenario::Scenario s, double network, double gpu) {
  s.cluster.network.nic_bandwidth.bytes_per_s *= network;
  for (auto& [dtype, peak] : s.hardware.gpu.peak)
    peak.flops_per_s *= gpu;
  return s;
}

TEST(Monotonicity, AFasterNetworkOrFasterGpusNeverSlowAStep) {
  // A factor near 1 probes local scheduling anomalies; 4 probes regime changes (communication no longer exposed).
  // Full fidelity on the clusters of up to 256 GPUs, to keep the unit suite fast.
  for (const auto& rel : kScenarios) {
    const auto base_scenario = scenario::load_scenario(source(rel));
    for (auto f : {Fidelity::Analytic, Fidelity::Replica, Fidelity::Full}) {
      if (f == Fidelity::Full && base_scenario.cluster.gpus > 256) continue;
      const base::Time base = step_of(base_scenario, f).step_time;
      for (double k : {1.05, 4.0}) {
        const base::Time net = step_of(faster(base_scenario, k, 1.0), f).step_time;
        const base::Time gpu = step_of(faster(base_scenario, 1.0, k), f).step_time;
        const base::Time both = step_of(faster(base_scenario, k, k), f).step_time;
        EXPECT_LE(net.ns, base.ns) << rel << " " << to_string(f) << ": NIC x" << k;
        EXPECT_LE(gpu.ns, base.ns) << rel << " " << to_string(f) << ": peak x" << k;
        EXPECT_LE(both.ns, std::min(net.ns, gpu.ns)) << rel << " " << to_string(f) << ": both x" << k;
      }
    }
  }
}

TEST(Monotonicity, ShorterMtbfNeverRaisesGoodput) {
  // Common random numbers: the same seed, so trial i of each run draws from the same streams; a fixed checkpoint
  // interval, so that only the failures differ. 200 trials; goodput may rise by no more than 0.001 (the mean's
  // Monte Carlo noise at these rates is far below that, and halving every MTBF costs several percent).
  for (const auto& rel :
       {std::string("scenarios/default.json"), std::string("scenarios/examples/llama3-8b-64-h100.json")}) {
    RunSetup r(rel, {{"reliability.checkpoint.interval", "\"1 h\""}});
    double previous = 2.0;
    for (double scale : {4.0, 1.0, 0.5, 0.25}) {
      auto in = r.in;
      for (auto& c : in.components)
        c.mtbf.s *= scale;
      const double goodput = reliability::run_monte_carlo(in, 200, 42, 2).goodput.mean;
      std::printf("[monotonicity] %s: MTBF x%.2f -> goodput %.5f\n", rel.c_str(), scale, goodput);
      EXPECT_LE(goodput, previous + 1e-3) << rel << ": MTBF x" << scale << " raised goodput";
      previous = goodput;
    }
  }
}

}  // namespace
}  // namespace sim
