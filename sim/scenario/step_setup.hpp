// sim/scenario/step_setup.hpp: a loaded scenario wired into the step level's inputs (layout, topology, memory).
#pragma once
#include "sim/execution/step_plan.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/results/step_result.hpp"
#include "sim/scenario/scenario.hpp"

#include <variant>
#include <vector>

namespace sim::scenario {

/// The step level's inputs for a scenario, or every rule its parallel configuration breaks (exit code 3).
using StepSetup = std::variant<execution::StepInputs, std::vector<parallel::Infeasible>>;
StepSetup step_setup(const Scenario& s);

/// The cluster as the topology model sees it: NVLink and NIC bandwidth scaled by the profile's achieved fractions.
topology::TopologyConfig topology_config(const Scenario& s);

/// Peak memory per GPU of the scenario's layout, in the result's units.
results::MemoryGib memory_gib(const Scenario& s, const parallel::Layout& layout);

}  // namespace sim::scenario
