// sim/scenario/run_setup.hpp: a scenario and its simulated step wired into the run level's inputs.
#pragma once
#include "sim/execution/step_plan.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/scenario/scenario.hpp"

namespace sim::scenario {

/// Device-to-host copy rate of an asynchronous checkpoint's blocking snapshot: about half of PCIe Gen5 x16's
/// 64 GB/s per direction (an assumption; calibration should replace it).
inline constexpr base::Bandwidth kDefaultSnapshotBandwidth{25e9};

/// The run level's inputs. `healthy` is the simulated healthy step; a straggler's step comes from the step level at
/// full fidelity (one GPU slowed) for jobs of up to 16,384 GPUs, else from the healthy step stretched by its factor;
/// fewer data-parallel replicas stretch the step in proportion (the same global batch on fewer replicas).
/// `simulate_straggler` false always stretches (the planner's fast path: a full-fidelity step per candidate is
/// seconds).
reliability::RunInputs run_inputs(const Scenario& s, const execution::StepPlan& plan, base::Time healthy,
                                  bool simulate_straggler = true);

}  // namespace sim::scenario
