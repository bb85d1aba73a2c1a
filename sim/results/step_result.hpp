// sim/results/step_result.hpp: the result of one simulated training iteration, and its JSON (trainsim.step/1).
#pragma once
#include "sim/base/units.hpp"
#include "sim/results/json.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sim::results {

/// Where the time of the iteration went, on the GPU that finished last. The parts sum to the step time.
struct StepBreakdown {
  base::Time compute;     // kernels on the compute stream
  base::Time tp_exposed;  // tensor-parallel collectives (blocking in Megatron's TP)
  base::Time pp_bubble;   // pipeline fill and drain inherent to the schedule
  base::Time pp_exposed;  // other waiting for pipeline transfers
  base::Time dp_exposed;  // data-parallel gradient reduction and parameter gathering not hidden by backward
  base::Time cp_exposed;  // context-parallel key/value exchange
  base::Time ep_exposed;  // expert-parallel all-to-all
  base::Time optimizer;   // optimizer step
  base::Time data_stall;  // waiting for the input pipeline (storage, loaders) beyond what prefetching hides
  base::Time sum() const {
    return compute + tp_exposed + pp_bubble + pp_exposed + dp_exposed + cp_exposed + ep_exposed + optimizer +
           data_stall;
  }
};

struct MemoryGib {
  double params = 0, grads = 0, optimizer = 0, activations = 0, buffers = 0, total = 0, capacity = 0;
};

/// One span of a GPU's timeline, for traces and the report's pipeline chart.
struct Span {
  std::int32_t gpu = 0;
  std::uint8_t stream = 0;  // 0 compute, 1 TP comm, 2 PP comm, 3 DP comm, 4 CP comm, 5 EP comm
  std::string name;
  base::Time start;
  base::Time end;
};

struct StepResult {
  std::string fidelity;  // "analytic" | "replica" | "full"
  base::Time step_time;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;  // model FLOPs (MFU convention) per GPU per second, in TFLOP/s
  double mfu = 0;             // model FLOPs (Narayanan et al. convention, no recomputation) / peak
  double hfu = 0;             // hardware FLOPs (recomputation counted) / peak
  StepBreakdown breakdown;
  MemoryGib memory;
  bool fits = true;
  std::int64_t simulated_gpus = 0;
  std::int64_t events = 0;
  int critical_gpu = 0;  // the GPU the breakdown describes (the busiest: the most time computing and communicating)
  std::vector<Span> timeline;
};

/// The `trainsim step --json` object (schema "trainsim.step/1"), fields in contract order.
Json to_json(const StepResult& r);

}  // namespace sim::results
