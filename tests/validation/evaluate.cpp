// tests/validation/evaluate.cpp: one record through the scenario loader and the step simulator.
#include "tests/validation/evaluate.hpp"

#include "sim/base/errors.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/step_setup.hpp"

#include <cstdio>

namespace validation {

Prepared::Prepared(const Record& r) : record_(&r) {
  if (!r.refusal.empty()) {
    miss_ = "not expressible: " + r.refusal;
    return;
  }
  try {
    scenario_ = std::make_unique<sim::scenario::Scenario>(sim::scenario::load_scenario_text(r.scenario, r.id));
    auto setup = sim::scenario::step_setup(*scenario_);
    if (auto* bad = std::get_if<std::vector<sim::parallel::Infeasible>>(&setup)) {
      miss_ = "infeasible: " + bad->front().reason;
      return;
    }
    inputs_ = std::get<sim::execution::StepInputs>(setup);
    const auto memory = sim::scenario::memory_gib(*scenario_, inputs_->layout);
    memory_gib_ = memory.total;
    capacity_gib_ = memory.capacity;
  } catch (const sim::base::ConfigError& e) {
    miss_ = std::string("scenario refused: ") + e.what();
  }
}

Outcome Prepared::predict(const EfficiencyPatch* patch, sim::execution::Fidelity fidelity) const {
  Outcome o;
  o.record = record_;
  o.memory_gib = memory_gib_;
  o.capacity_gib = capacity_gib_;
  if (!miss_.empty()) {
    o.miss = miss_;
    return o;
  }
  sim::execution::StepInputs in = *inputs_;
  sim::hardware::HardwareProfile hw = scenario_->hardware;
  if (patch) {
    auto& e = hw.efficiency;
    for (const auto& [key, value] : *patch) {
      if (key == "gemm") e.gemm = value;
      if (key == "gemm_fp8") e.gemm_fp8 = value;
      if (key == "attention") e.attention = value;
      if (key == "hbm") e.hbm = value;
      if (key == "kernel_overhead_us") e.kernel_overhead = sim::base::Time{static_cast<std::int64_t>(value * 1000)};
    }
    in.hardware = &hw;
  }
  const auto plan = sim::execution::build_step_plan(in);
  sim::execution::StepOptions opt;
  opt.fidelity = fidelity;
  o.predicted_step_s = sim::execution::simulate_step(plan, opt).step_time.seconds();
  if (memory_gib_ > capacity_gib_) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "does not fit: %.1f of %.1f GiB", memory_gib_, capacity_gib_);
    o.miss = buf;
    return o;
  }
  o.predicted = true;
  return o;
}

Outcome evaluate(const Record& r, const EfficiencyPatch* patch) {
  return Prepared(r).predict(patch);
}

}  // namespace validation
