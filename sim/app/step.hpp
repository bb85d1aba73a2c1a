// sim/app/step.hpp: "evaluate this scenario's step": one training iteration at a fidelity, with memory and fit, and
// its `trainsim.step/1` JSON. The step plan is built once here and carried to the run level.
#pragma once
#include "sim/execution/kernel_table.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/results/json.hpp"
#include "sim/results/step_result.hpp"
#include "sim/scenario/scenario.hpp"

#include <functional>
#include <variant>
#include <vector>

namespace sim::app {

/// Progress and cancellation of a long evaluation (trials, reruns, candidates): called as units of work finish,
/// possibly from worker threads; a front end cancels the evaluation by throwing from it (the CLI throws Interrupted
/// on Ctrl-C), and the exception leaves the evaluation with nothing returned. Empty: no reports, no cancellation.
using Progress = std::function<void(int done, int total)>;

/// A scenario's step: the wired inputs (pointing into the scenario, which must outlive it), the step plan built from
/// them (every kernel and collective timed once; the run level reuses it) and the result with memory and fit.
struct StepOutcome {
  execution::StepInputs inputs;
  results::StepResult result;
  execution::StepPlan plan;
};

/// The step of `s` at `opt`'s fidelity; a layout that breaks a rule comes back as its reasons.
std::variant<StepOutcome, std::vector<parallel::Infeasible>> evaluate_step(const scenario::Scenario& s,
                                                                           const execution::StepOptions& opt);

/// `trainsim step --json`: the result's trainsim.step/1 JSON with the scenario's name and its convergence section.
results::Json step_json(const results::StepResult& r, const scenario::Scenario& s);

/// `trainsim step --kernels`: every kernel and collective of one layer, the embedding and the output layer for one
/// micro-batch on one GPU (execution/kernel_table.hpp), and the layout's memory per GPU (whether it fits, as `step`
/// says it); a layout that breaks a rule comes back as its reasons.
struct KernelTable {
  std::vector<execution::KernelRow> rows;
  results::MemoryGib memory;
  bool fits = true;
};
std::variant<KernelTable, std::vector<parallel::Infeasible>> step_kernels(const scenario::Scenario& s);

/// The rows as JSON (schema trainsim.kernels/1): times in seconds, bytes and FLOPs as counts; memory_gib (total,
/// capacity) and fits.
results::Json kernels_json(const KernelTable& table, const scenario::Scenario& s);

/// The effective configuration that was simulated (schema trainsim.resolved-scenario/1), for provenance.
results::Json scenario_json(const scenario::Scenario& s);

}  // namespace sim::app
