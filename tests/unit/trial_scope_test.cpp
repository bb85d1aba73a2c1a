// tests/unit/trial_scope_test.cpp: what user trials of 2026-12-06 found accepted and then ignored, or summarised from
// a histogram's bin where the trials themselves were known: keys refused where they do not apply, a rent beside owned
// pricing said, run-level quantiles within the times trials took, and CVaR95 unbounded with a run that never ends.
#include "sim/results/run_result.hpp"
#include "tests/support/cli.hpp"

#include "sim/base/exit_code.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using support::trainsim;

const std::string kSource = TRAINSIM_SOURCE_DIR;
const std::string kLlama8b = kSource + "/scenarios/examples/llama3-8b-64-h100.json";
const std::string kDefault = kSource + "/scenarios/default.json";

support::CliOutcome step_with(std::vector<std::string> sets) {
  std::vector<std::string> args = {"step", kLlama8b};
  for (auto& s : sets) {
    args.push_back("--set");
    args.push_back(std::move(s));
  }
  return trainsim(args);
}

TEST(KeyScope, OverlapParamGatherAppliesToZeroOneAndTwo) {
  // True at ZeRO-3 and without sharding changed nothing; at ZeRO-2 it acts.
  for (const char* zero : {"parallel.zero_stage=3", "parallel.zero_stage=0"}) {
    const auto o = step_with({zero, "parallel.overlap_param_gather=true", "parallel.tp=8"});
    EXPECT_EQ(o.code, sim::base::kExitBadInput) << zero;
    EXPECT_NE(o.err.find("/parallel/overlap_param_gather: applies to the distributed optimizer and ZeRO-2"),
              std::string::npos)
        << o.err;
  }
  EXPECT_EQ(step_with({"parallel.zero_stage=2", "parallel.overlap_param_gather=true"}).code, sim::base::kExitOk);
}

TEST(KeyScope, RecomputeNumLayersIsAtMostTheLayersOfAVirtualStage) {
  // Megatron-LM's --recompute-num-layers counts layers of one model chunk; more was capped silently (a user trial:
  // 1,000 on 20-layer stages ran as 20). Llama 3 8B's 32 layers over pp 4: 8 a stage.
  const std::vector<std::string> full = {"parallel.pp=4", "parallel.tp=2", "parallel.recompute=full"};
  auto with = [&](const char* n) {
    auto sets = full;
    sets.push_back(std::string("parallel.recompute_num_layers=") + n);
    return step_with(sets);
  };
  EXPECT_EQ(with("8").code, sim::base::kExitOk);
  const auto o = with("9");
  EXPECT_EQ(o.code, sim::base::kExitInfeasible);
  EXPECT_NE(o.err.find("[recompute-num-layers] recompute_num_layers = 9 but the largest virtual stage holds 8 layers"),
            std::string::npos)
      << o.err;
}

TEST(KeyScope, RecomputeModulesTheModelDoesNotHaveAreRefused) {
  // ["moe"] on a dense model ran as no recomputation at all.
  for (const char* module : {"moe", "moe_act", "mla_up_proj", "shared_experts"}) {
    const auto o =
        step_with({"parallel.recompute=selective", std::string("parallel.recompute_modules=[\"") + module + "\"]"});
    EXPECT_EQ(o.code, sim::base::kExitBadInput) << module;
    EXPECT_NE(o.err.find(std::string("\"") + module + "\": llama3-8b has no such module"), std::string::npos) << o.err;
  }
  EXPECT_EQ(step_with({"parallel.recompute=selective", "parallel.recompute_modules=[\"mlp\"]"}).code,
            sim::base::kExitOk);
}

TEST(KeyScope, ASnapshotBandwidthNeedsAnAsynchronousCheckpoint) {
  const auto o = trainsim({"run", kDefault, "--trials", "5", "--set", "reliability.checkpoint.async=false", "--set",
                           "reliability.checkpoint.snapshot_bandwidth=1 MB/s"});
  EXPECT_EQ(o.code, sim::base::kExitBadInput);
  EXPECT_NE(o.err.find("/reliability/checkpoint/snapshot_bandwidth: times the GPU-to-host copy of an asynchronous"),
            std::string::npos)
      << o.err;
}

TEST(KeyScope, ARentBesideOwnedPricingIsSaidNotRead) {
  // default.json sets gpu_hour; switching to owned pricing by --set still works, and says the rent is not read.
  const auto o = trainsim(
      {"run", kDefault, "--trials", "5", "--set", "cost.pricing=owned", "--set", "cost.owned.node_price=300K USD"});
  ASSERT_EQ(o.code, sim::base::kExitOk) << o.err;
  EXPECT_NE(o.err.find("cost.gpu_hour, price_kind and price_date are the rent of \"pricing\": \"rented\""),
            std::string::npos)
      << o.err;
  const auto rented = trainsim({"run", kDefault, "--trials", "5"});
  EXPECT_EQ(rented.err.find("are the rent of"), std::string::npos) << rented.err;
}

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

TEST(HistogramRange, AFewTrialsGiveTheirOwnFractionOfMisses) {
  // 3 trials, two of which missed a deadline between the first and the second, gave p_deadline_miss 0.92 from the
  // bins (a user trial): a run of up to 10,000 trials keeps its trials' times, so it is 2 / 3.
  const std::string s = kSource + "/scenarios/examples/llama3-8b-64-h100.json";
  const auto first = trainsim({"run", s, "--trials", "3", "--json"});
  ASSERT_EQ(first.code, sim::base::kExitOk) << first.err;
  const auto t = nlohmann::json::parse(first.out).at("time_to_train_days");
  const double lo = t.at("p10").get<double>(), mid = t.at("p50").get<double>();
  ASSERT_LT(lo, mid);
  char deadline[64];
  std::snprintf(deadline, sizeof deadline, "cost.deadline=%.6f d", (lo + mid) / 2);
  const auto o = trainsim({"run", s, "--trials", "3", "--json", "--set", deadline});
  ASSERT_EQ(o.code, sim::base::kExitOk) << o.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(o.out).at("p_deadline_miss").get<double>(), 2.0 / 3.0);
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
