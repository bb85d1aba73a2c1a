// tests/support/step.hpp: run a scenario's step at a fidelity, for tests and benchmarks.
#pragma once
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <stdexcept>
#include <string>
#include <variant>

namespace support {

/// The 1F1B split the step and scale benchmarks have timed on scenarios/examples/llama3-405b-16384-h100.json since
/// issues 3 and 9 (7 layers on the first and last of 16 stages), as an override: the example itself now runs the
/// Llama 3 paper's one layer per virtual stage, and the benchmarks keep their workload so their medians compare.
inline const sim::scenario::Override kLlama405bOneFOneB{"parallel.pipeline_layout", "Et*7|(t*8|)*14t*7L"};

/// A scenario with its step plan. Not copyable: the inputs point into the scenario.
struct LoadedStep {
  LoadedStep(const std::string& relative_path, const std::vector<sim::scenario::Override>& overrides)
      : scenario(sim::scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + relative_path, overrides)) {
    auto setup = sim::scenario::step_setup(scenario);
    if (auto* bad = std::get_if<std::vector<sim::parallel::Infeasible>>(&setup))
      throw std::runtime_error(relative_path + " is infeasible: " + bad->front().reason);
    inputs = std::get<sim::execution::StepInputs>(setup);
    plan = sim::execution::build_step_plan(inputs);
  }
  LoadedStep(const LoadedStep&) = delete;
  LoadedStep& operator=(const LoadedStep&) = delete;

  sim::scenario::Scenario scenario;
  sim::execution::StepInputs inputs;
  sim::execution::StepPlan plan;
};

/// Loads a scenario (path relative to the source tree) and builds its step plan; throws if it is infeasible.
inline LoadedStep load_step(const std::string& relative_path,
                            const std::vector<sim::scenario::Override>& overrides = {}) {
  return LoadedStep(relative_path, overrides);
}

inline sim::results::StepResult run_step(const LoadedStep& s, sim::execution::Fidelity f, bool timeline = false) {
  sim::execution::StepOptions o;
  o.fidelity = f;
  o.record_timeline = timeline;
  return sim::execution::simulate_step(s.plan, o);
}

}  // namespace support
