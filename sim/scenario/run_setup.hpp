// sim/scenario/run_setup.hpp: a scenario and its simulated step wired into the run level's inputs.
#pragma once
#include "sim/execution/step_plan.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/scenario/scenario.hpp"

namespace sim::scenario {

/// The checkpoint of a scenario's layout: bytes from the model, the optimizer and the sharding.
reliability::CheckpointShape checkpoint_shape(const Scenario& s, const parallel::Layout& layout);
/// Its write, load and snapshot times on the scenario's storage, the data pipeline reading `data_bytes_per_s`.
reliability::CheckpointIo checkpoint_io(const Scenario& s, const parallel::Layout& layout, double data_bytes_per_s);

/// The run level's inputs. `healthy` is the simulated healthy step; a straggler's step comes from the step level at
/// full fidelity (one GPU slowed) for jobs of up to 16,384 GPUs, else from the healthy step stretched by its factor;
/// fewer data-parallel replicas are simulated (replica fidelity; analytic when `simulate_straggler` is false, the
/// planner's fast path) with the same global batch, and a state the global batch does not divide over is one the job
/// cannot run in. Checkpoint write and load times come from bytes and bandwidths unless the scenario gives them;
/// spares default to reliability::auto_spares; failure domains come from the plan's topology.
reliability::RunInputs run_inputs(const Scenario& s, const execution::StepPlan& plan, base::Time healthy,
                                  bool simulate_straggler = true);

}  // namespace sim::scenario
