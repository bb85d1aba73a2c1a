// tests/unit/step_fabric_test.cpp: the network fabric under a step: failed spines (issue 21) and NVLink SHARP.
#include "tests/support/step.hpp"

#include "sim/base/errors.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/scenario/plan_setup.hpp"
#include "sim/scenario/step_setup.hpp"
#include "sim/topology/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace sim::execution {
namespace {

using support::load_step;
using support::run_step;

// A degraded fabric at the step level (issue 21): Llama 3 8B on 8 nodes of a plain fat tree with two uplinks per leaf
// (16:1): with spine 1 down, the data-parallel rings of all 64 GPUs share the one remaining uplink of each leaf, and
// the full-fidelity step (every group's flows on one topology) is slower; the collective closed form of the same fabric
// is DegradedFabric.ASpineDownSharesTheRemainingUplinksAsTheClosedFormSays.
TEST(DegradedFabric, AFailedSpineSlowsTheFullFidelityStep) {
  const std::vector<sim::scenario::Override> fabric = {{"cluster.network.topology", "\"fat-tree\""},
                                                       {"cluster.network.oversubscription", "16"}};
  auto failed = fabric;
  failed.push_back({"cluster.network.failed", "[\"spine 1\"]"});
  const auto healthy = run_step(load_step("scenarios/examples/llama3-8b-64-h100.json", fabric), Fidelity::Full);
  const auto degraded = run_step(load_step("scenarios/examples/llama3-8b-64-h100.json", failed), Fidelity::Full);
  EXPECT_GT(degraded.breakdown.dp_exposed, healthy.breakdown.dp_exposed);
  EXPECT_GT(degraded.step_time, healthy.step_time);
  EXPECT_EQ(degraded.breakdown.compute, healthy.breakdown.compute);
}

// The same fabric, by how much: Llama 3 8B at TP 8 with plain data parallelism (no distributed optimizer) all-reduces
// its fp32 gradients over 8 rings of one GPU per node; the rings' crossings between the two leaves share two uplinks,
// then one. The full-fidelity step's exposed data-parallel time grows by what the collective closed form of the
// gradient all-reduce grows by on the same two topologies (the buckets' latencies cancel, their bytes add up).
TEST(DegradedFabric, AFailedSpineCostsTheStepWhatTheClosedFormOfItsGradientAllReduceSays) {
  const std::vector<sim::scenario::Override> fabric = {{"cluster.network.topology", "\"fat-tree\""},
                                                       {"cluster.network.oversubscription", "16"},
                                                       {"parallel.tp", "8"},
                                                       {"parallel.zero_stage", "0"},
                                                       {"parallel.distributed_optimizer", "false"}};
  auto failed = fabric;
  failed.push_back({"cluster.network.failed", "[\"spine 1\"]"});
  const auto healthy = load_step("scenarios/examples/llama3-8b-64-h100.json", fabric);
  const auto degraded = load_step("scenarios/examples/llama3-8b-64-h100.json", failed);
  const double step_delta = run_step(degraded, Fidelity::Full).breakdown.dp_exposed.seconds() -
                            run_step(healthy, Fidelity::Full).breakdown.dp_exposed.seconds();
  // The closed form: 8 rings (one per local rank j) over the 8 nodes; each ring's crossing from leaf 0 to leaf 1 (node
  // 3 -> node 4) is a flow on one of leaf 0's uplinks, and a ring moves 2(p-1)/p of the gradient at its slowest
  // flow's rate: min(NIC, uplink / flows on the busiest uplink). The gradient: this GPU's parameters in fp32.
  auto rate = [](const sim::topology::Topology& topo) {
    std::map<sim::topology::LinkId, int> per_uplink;
    for (int j = 0; j < 8; ++j)
      for (sim::topology::LinkId id : topo.path(3 * 8 + j, 4 * 8 + j))
        if (topo.link(id).kind == sim::topology::LinkKind::LeafUp) ++per_uplink[id];
    double slowest = topo.config().nic_bw.bytes_per_s;
    for (const auto& [id, flows] : per_uplink)
      slowest = std::min(slowest, topo.link(id).bandwidth.bytes_per_s / flows);
    return slowest;
  };
  const double params = sim::parallel::params_per_gpu(*healthy.inputs.model, healthy.inputs.layout, 0).total();
  const double ring_bytes = 2.0 * 7 / 8 * 4 * params;
  const double closed_delta = ring_bytes / rate(sim::scenario::degraded_topology(degraded.scenario)) -
                              ring_bytes / rate(sim::scenario::degraded_topology(healthy.scenario));
  ASSERT_GT(closed_delta, 0.1) << "half the uplinks: the rings' crossing flows at half the rate";
  EXPECT_NEAR(step_delta / closed_delta, 1.0, 0.02) << "step +" << step_delta << " s, closed form +" << closed_delta;
}

TEST(DegradedFabric, FailedElementsAreCheckedAndPlanRefusesThem) {
  auto error_of = [](const std::vector<sim::scenario::Override>& o) {
    try {
      load_step("scenarios/examples/llama3-8b-64-h100.json", o);
    } catch (const sim::base::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const sim::scenario::Override fat{"cluster.network.topology", "\"fat-tree\""};
  EXPECT_NE(error_of({fat, {"cluster.network.failed", "[\"spine one\"]"}}).find("/cluster/network/failed"),
            std::string::npos);
  EXPECT_NE(error_of({fat, {"cluster.network.failed", "[\"spine 99\"]"}}).find("spines 0-"), std::string::npos);
  EXPECT_NE(error_of({fat, {"cluster.network.failed", "[\"leaf 1\"]"}}).find("PXN"), std::string::npos)
      << "a whole leaf is refused with its reason";
  EXPECT_NE(error_of({fat,
                      {"cluster.network.oversubscription", "16"},
                      {"cluster.network.failed", "[\"leaf 0 uplink 0\", \"leaf 0 uplink 1\"]"}})
                .find("leaf 0 has no uplink left"),
            std::string::npos);
  const auto s = load_step("scenarios/examples/llama3-8b-64-h100.json",
                           {fat, {"cluster.network.failed", "[\"leaf 1 uplink 3\"]"}});
  EXPECT_THROW(sim::scenario::plan_problem(s.scenario, {}), sim::base::ConfigError) << "plan searches healthy clusters";
}

// NVLink SHARP in a step: Llama 3 8B at TP 8 without sequence parallelism all-reduces inside each H100 node; NCCL
// runs NVLS there (algbw ~275 GB/s against the ring's ~200), so tensor parallelism is exposed less. With
// cluster.network.nvls false (NCCL_NVLS_ENABLE=0, as NVIDIA's DGX Cloud recipes run) the rings come back; with
// sequence parallelism (reduce-scatter and all-gather) nothing changes.
TEST(NvlinkSharp, TensorParallelAllReducesRunInTheSwitchesUnlessDisabled) {
  const std::vector<sim::scenario::Override> tp8 = {{"parallel.tp", "8"}, {"parallel.sequence_parallel", "false"}};
  auto off = tp8;
  off.push_back({"cluster.network.nvls", "false"});
  const auto on_step = load_step("scenarios/examples/llama3-8b-64-h100.json", tp8);
  const auto off_step = load_step("scenarios/examples/llama3-8b-64-h100.json", off);
  EXPECT_GT(sim::scenario::topology_config(on_step.scenario).nvls_bw.bytes_per_s, 0.0);
  EXPECT_EQ(sim::scenario::topology_config(off_step.scenario).nvls_bw.bytes_per_s, 0.0);
  const auto with = run_step(on_step, Fidelity::Replica);
  const auto without = run_step(off_step, Fidelity::Replica);
  EXPECT_LT(with.breakdown.tp_exposed.seconds(), 0.9 * without.breakdown.tp_exposed.seconds());
  EXPECT_EQ(with.breakdown.compute, without.breakdown.compute);
  const auto sp =
      run_step(load_step("scenarios/examples/llama3-8b-64-h100.json", {{"parallel.tp", "8"}}), Fidelity::Replica);
  const auto sp_off = run_step(
      load_step("scenarios/examples/llama3-8b-64-h100.json", {{"parallel.tp", "8"}, {"cluster.network.nvls", "false"}}),
      Fidelity::Replica);
  EXPECT_EQ(sp.step_time, sp_off.step_time) << "sequence parallelism: no all-reduce inside the node";
}

}  // namespace
}  // namespace sim::execution
