// sim/scenario/step_setup.hpp: a loaded scenario wired into the step level's inputs (layout, topology, memory).
#pragma once
#include "sim/execution/step_plan.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/results/step_result.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/batch_efficiency.hpp"

#include <variant>
#include <vector>

namespace sim::scenario {

/// The step level's inputs for a scenario, or every rule its parallel configuration breaks (exit code 3).
using StepSetup = std::variant<execution::StepInputs, std::vector<parallel::Infeasible>>;
StepSetup step_setup(const Scenario& s);

/// The cluster as the topology model sees it: NVLink and NIC bandwidth scaled by the profile's achieved fractions.
topology::TopologyConfig topology_config(const Scenario& s);
/// That cluster with the scenario's failed fabric elements down (cluster.network.failed); ConfigError naming the
/// element (its JSON path) when the cluster has no such element, or when a leaf is left without an uplink.
topology::Topology degraded_topology(const Scenario& s);

/// The scenario's global batch against its critical batch (given, or estimated from the model and its tokens).
struct Convergence {
  workload::BatchEfficiency batch;
  std::string source;  // "scenario" or the estimate's citation
};
Convergence convergence(const Scenario& s);

/// Tokens per second the scenario's input pipeline delivers to the job: the shared storage's read bandwidth over the
/// bytes per token (less the node-cache hits), capped by the loaders of every node.
double data_tokens_per_s(const Scenario& s);

/// Peak memory per GPU of the scenario's layout, in the result's units.
results::MemoryGib memory_gib(const Scenario& s, const parallel::Layout& layout);

}  // namespace sim::scenario
