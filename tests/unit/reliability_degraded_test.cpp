// Degraded cluster states from the step level (scenario::run_inputs): a data-parallel shrink is simulated, not
// stretched by dp / live, and the global-batch rule decides which shrunk states the job can run in.
#include "sim/base/errors.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <variant>

namespace sim::scenario {
namespace {

struct Wired {
  Scenario s;
  reliability::RunInputs in;
  base::Time healthy;
};

Wired wire(const std::string& file) {
  Wired w{load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + file), {}, {}};
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(step_setup(w.s)));
  execution::StepOptions o;
  w.healthy = execution::simulate_step(plan, o).step_time;
  w.in = run_inputs(w.s, plan, w.healthy, /*simulate_straggler=*/false);
  return w;
}

TEST(DegradedStates, HalvingDataParallelReplicasIsNotTwiceTheStep) {
  // Llama 2 70B, TP8 PP4 VPP2 on 64 GPUs: dp = 2, 64 micro-batches per replica. On one replica the same global batch
  // is 128 micro-batches: the interleaved 1F1B bubble (p-1)/(v m) halves and the gradient all-reduce vanishes, so the
  // step grows by less than dp / live = 2.
  const Wired w = wire("scenarios/ci/llama2-70b-64-h100-pp.json");
  const base::Time one = w.in.step_time(reliability::ClusterState{1, 1.0});
  const double ratio = one.seconds() / w.healthy.seconds();
  std::printf("[degraded] llama2-70b dp 2 -> 1: step %.3f s -> %.3f s, x%.3f (linear: x2)\n", w.healthy.seconds(),
              one.seconds(), ratio);
  EXPECT_LT(ratio, 1.98) << "the step level, not dp / live";
  EXPECT_GT(ratio, 1.5);
  EXPECT_EQ(w.in.step_time(reliability::ClusterState{0, 1.0}), w.healthy);
}

TEST(DegradedStates, AStateTheGlobalBatchDoesNotDivideOverCannotRun) {
  // The default scenario: global batch 1024 over dp = 32 (micro-batch 1). 31 replicas do not divide it; 16 do.
  const Wired w = wire("scenarios/default.json");
  EXPECT_EQ(w.in.step_time(reliability::ClusterState{1, 1.0}), base::Time::max());
  const base::Time sixteen = w.in.step_time(reliability::ClusterState{16, 1.0});
  EXPECT_NE(sixteen, base::Time::max());
  EXPECT_GT(sixteen, w.healthy);
}

// A shrunk state is never faster than the healthy one: ZeRO-1 over 4,096 replicas of a tiny model is latency-bound
// (its reduce-scatter and all-gather rings take (p - 1) steps each), so half the replicas simulate faster; the run had
// credited that as negative lost time (a user trial: goodput 121%, lost GPU-hours -8.5e9).
TEST(DegradedStates, AShrunkStateIsNeverFasterThanTheHealthyJob) {
  Wired w{load_scenario_text(R"({"schema": "trainsim.scenario/1", "name": "latency-bound",
    "model": {"name": "tiny", "layers": 2, "hidden": 256, "ffn_hidden": 1024, "heads": 4, "vocab": 1024,
              "activation": "gelu", "max_seq_len": 1024},
    "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 4096},
    "parallel": {"tp": 1, "pp": 1, "zero_stage": 1, "micro_batch": 1, "global_batch": 4096},
    "training": {"seq_len": 1024, "tokens": "1B"}})",
                             "t.json"),
          {},
          {}};
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(step_setup(w.s)));
  w.healthy = execution::simulate_step(plan, execution::StepOptions{}).step_time;
  w.in = run_inputs(w.s, plan, w.healthy, /*simulate_straggler=*/false);
  const base::Time half = w.in.step_time(reliability::ClusterState{2048, 1.0});
  EXPECT_GE(half, w.healthy);
}

// A shrunk state that leaves part of a node (two replicas of 20 GPUs on 8-GPU nodes: one is 2.5 nodes) cannot be
// simulated on whole nodes: it is a state the job cannot run in, not a topology error that aborted `run` and the
// planner's whole search (a user trial: 24, 40, 56 and 72 GPUs failed with "found 12/20/28/36").
TEST(DegradedStates, AShrunkStateOfPartNodesIsNotRunNotAnError) {
  auto s =
      load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json", {{"cluster.gpus", "40"},
                                                                                   {"parallel.tp", "4"},
                                                                                   {"parallel.pp", "5"},
                                                                                   {"parallel.dp", "2"},
                                                                                   {"parallel.recompute", "\"full\""}});
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(step_setup(s)));
  execution::StepOptions o;
  const base::Time healthy = execution::simulate_step(plan, o).step_time;
  const auto in = run_inputs(s, plan, healthy, /*simulate_straggler=*/false);
  EXPECT_EQ(in.step_time(reliability::ClusterState{1, 1.0}), base::Time::max());
  EXPECT_EQ(in.step_time(reliability::ClusterState{0, 1.0}), healthy);
}

TEST(DegradedStates, FailureDomainsComeFromTheTopology) {
  // Rail-optimised fat tree with 32-port leaves: a leaf carries one GPU of each of 32 nodes; racks of 4 nodes
  // (topology::TopologyConfig). The run level uses the same sizes.
  const Wired w = wire("scenarios/default.json");
  EXPECT_EQ(w.in.job.nodes_per_switch, 32);
  EXPECT_EQ(w.in.job.nodes_per_rack, 4);
  EXPECT_EQ(w.in.job.switches, 128 / 32);
}

// Every new reliability key refuses a bad value with its path and what it accepts.
TEST(ReliabilityKeys, BadValuesAreRejectedWithTheirPath) {
  const std::string base = "scenarios/default.json";
  const struct {
    const char* key;
    const char* value;
    const char* path;
  } cases[] = {{"reliability.spares", "\"many\"", "/reliability/spares"},
               {"reliability.spares", "-1", "/reliability/spares"},
               {"reliability.on_spares_exhausted", "\"pray\"", "/reliability/on_spares_exhausted"},
               {"reliability.node_swap", "\"3\"", "/reliability/node_swap"},
               {"reliability.checkpoint.write", "\"fast\"", "/reliability/checkpoint/write"},
               {"reliability.checkpoint.load", "12", "/reliability/checkpoint/load"},
               {"reliability.checkpoint.write_bandwidth", "\"0 GB/s\"", "/reliability/checkpoint/write_bandwidth"}};
  for (const auto& c : cases) {
    try {
      load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + base, {Override{c.key, c.value}});
      ADD_FAILURE() << c.key << "=" << c.value << " was accepted";
    } catch (const base::ConfigError& e) {
      ASSERT_EQ(e.items().size(), 1u) << e.what();
      EXPECT_EQ(e.items()[0].path, c.path) << e.what();
    }
  }
  const Scenario s =
      load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + base,
                    {Override{"reliability.spares", "8"}, Override{"reliability.checkpoint.write", "\"40 s\""},
                     Override{"reliability.on_spares_exhausted", "\"wait\""}});
  EXPECT_EQ(s.reliability.spares, 8);
  EXPECT_EQ(s.reliability.checkpoint.write, base::Time::from_seconds(40));
  EXPECT_FALSE(s.reliability.shrink);
}

}  // namespace
}  // namespace sim::scenario
