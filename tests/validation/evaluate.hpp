// tests/validation/evaluate.hpp: simulate one published record's step, optionally with a hardware profile's
// efficiency factors replaced (for the fit of tests/validation/fit_main.cpp).
#pragma once
#include "tests/validation/published_records.hpp"
#include "tests/validation/validation_report.hpp"

#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/scenario.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace validation {

/// Efficiency factors to set before simulating (sim/hardware/compute_model.hpp's Efficiency: "gemm", "gemm_fp8",
/// "kernel_overhead_us", "attention", "hbm").
using EfficiencyPatch = std::map<std::string, double>;

/// A record loaded once: its scenario and step inputs, or why it is a miss before any simulation.
class Prepared {
 public:
  explicit Prepared(const Record& r);
  /// The record's step at `fidelity` with the profile's efficiency patched (none: as the profile says).
  Outcome predict(const EfficiencyPatch* patch = nullptr,
                  sim::execution::Fidelity fidelity = sim::execution::Fidelity::Replica) const;
  const Record& record() const { return *record_; }
  bool ready() const { return miss_.empty(); }

 private:
  const Record* record_;
  std::string miss_;
  std::unique_ptr<sim::scenario::Scenario> scenario_;
  std::optional<sim::execution::StepInputs> inputs_;
  double memory_gib_ = 0, capacity_gib_ = 0;
};

/// Prepared(r).predict(patch): the record's step at replica fidelity (refusals, infeasibility and out-of-memory are
/// misses with their reason).
Outcome evaluate(const Record& r, const EfficiencyPatch* patch = nullptr);

}  // namespace validation
