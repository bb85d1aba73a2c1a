// tests/fuzz/fuzz_scenario.cpp: libFuzzer target for the scenario loader (strict JSON, inline models and profiles,
// failure components, expectations, cross-file checks), then the step an accepted, feasible scenario gives at the
// analytic fidelity: its time and rates must be finite and positive, its memory finite.
#include "sim/base/errors.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>
#include <variant>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  try {
    const scenario::Scenario s = scenario::load_scenario_text(fuzz::as_text(data, size), "fuzz-scenario.json");
    fuzz::require(s.cluster.gpus > 0 && s.cluster.gpus_per_node > 0, "a cluster");
    // Clusters beyond 16,384 GPUs only cost time here; extreme_input_test covers them.
    if (s.cluster.gpus > 16384) return 0;
    auto setup = scenario::step_setup(s);
    if (std::holds_alternative<std::vector<parallel::Infeasible>>(setup)) return 0;
    const auto& inputs = std::get<execution::StepInputs>(setup);
    const auto plan = execution::build_step_plan(inputs);
    execution::StepOptions options;
    options.fidelity = execution::Fidelity::Analytic;
    const auto r = execution::simulate_step(plan, options);
    fuzz::require(r.step_time.ns > 0, "a positive step time");
    fuzz::require_finite(r.tokens_per_s, "tokens/s");
    fuzz::require_finite(r.mfu, "MFU");
    fuzz::require_finite(r.hfu, "HFU");
    const auto m = scenario::memory_gib(s, inputs.layout);
    fuzz::require_finite(m.total, "memory per GPU");
  } catch (const base::ConfigError&) {
    // the defined outcome for bad input
  }
  return 0;
}
