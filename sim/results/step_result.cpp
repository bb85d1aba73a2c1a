// sim/results/step_result.cpp: the step result's JSON, per the contract in DESIGN.md.
#include "sim/results/step_result.hpp"

namespace sim::results {

Json to_json(const StepResult& r) {
  Json j = Json::object();
  j["schema"] = "trainsim.step/1";
  j["fidelity"] = r.fidelity;
  j["step_time_s"] = r.step_time.seconds();
  j["tokens_per_s"] = r.tokens_per_s;
  j["tflops_per_gpu"] = r.tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  Json& b = j["breakdown_s"];
  b["compute"] = r.breakdown.compute.seconds();
  b["tp_exposed"] = r.breakdown.tp_exposed.seconds();
  b["pp_bubble"] = r.breakdown.pp_bubble.seconds();
  b["pp_exposed"] = r.breakdown.pp_exposed.seconds();
  b["dp_exposed"] = r.breakdown.dp_exposed.seconds();
  b["cp_exposed"] = r.breakdown.cp_exposed.seconds();
  b["ep_exposed"] = r.breakdown.ep_exposed.seconds();
  b["optimizer"] = r.breakdown.optimizer.seconds();
  b["data_stall"] = r.breakdown.data_stall.seconds();
  Json& m = j["memory_gib"];
  m["params"] = r.memory.params;
  m["grads"] = r.memory.grads;
  m["optimizer"] = r.memory.optimizer;
  m["activations"] = r.memory.activations;
  m["buffers"] = r.memory.buffers;
  m["total"] = r.memory.total;
  m["capacity"] = r.memory.capacity;
  j["fits"] = r.fits;
  j["flop_conventions"] =
      "mfu and tflops_per_gpu: model FLOPs (Narayanan et al. SC21, no recomputation); "
      "hfu: hardware FLOPs (recomputation counted, Korthikanti et al. 2022)";
  j["simulated_gpus"] = r.simulated_gpus;
  j["events"] = r.events;
  j["critical_gpu"] = r.critical_gpu;
  return j;
}

}  // namespace sim::results
