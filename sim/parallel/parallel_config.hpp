// sim/parallel/parallel_config.hpp: the parallel strategy of a job (TP/SP, PP/VPP, DP/ZeRO, CP, EP, recompute).
#pragma once
#include "sim/base/json_reader.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sim::parallel {

enum class Recompute { None, Selective, Full };
enum class Schedule { GPipe, OneFOneB, Interleaved, ZeroBubbleH1 };

const char* to_string(Recompute r);
const char* to_string(Schedule s);

struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  std::optional<int> dp;  // derived as gpus / (tp*pp*cp) when omitted
  int cp = 1;
  int ep = 1;
  int vpp = 1;  // virtual pipeline stages per rank (interleaved 1F1B when > 1)
  bool sequence_parallel = false;
  int zero_stage = 0;
  bool distributed_optimizer = false;  // Megatron's distributed optimizer: optimizer states sharded over DP
  Recompute recompute = Recompute::None;
  int micro_batch = 1;
  int global_batch = 0;  // sequences per iteration
  Schedule schedule = Schedule::OneFOneB;
  std::vector<int> layers_per_stage;  // optional uneven split over pp*vpp stages
  std::string order = "tp-cp-dp-pp";  // rank placement, innermost first

  /// Strict parse of the scenario's "parallel" object. Defaults: tp = pp = cp = ep = vpp = 1, sequence_parallel
  /// false, zero_stage 0, recompute "none", micro_batch 1, schedule "1f1b" ("interleaved" is implied by vpp > 1).
  /// global_batch is required.
  static ParallelConfig parse(base::JsonReader& in);
};

}  // namespace sim::parallel
