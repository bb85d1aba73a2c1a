// sim/execution/recompute.cpp: the parallel configuration's recomputation choice in the workload's terms.
#include "sim/execution/recompute.hpp"

namespace sim::execution {

workload::RecomputeMode recompute_mode(parallel::Recompute r) {
  switch (r) {
    case parallel::Recompute::None:
      return workload::RecomputeMode::None;
    case parallel::Recompute::Selective:
      return workload::RecomputeMode::Selective;
    case parallel::Recompute::Full:
      return workload::RecomputeMode::Full;
    case parallel::Recompute::Op:
      return workload::RecomputeMode::Op;
  }
  return workload::RecomputeMode::None;
}

workload::RecomputeSet recompute_set(unsigned modules) {
  workload::RecomputeSet r;
  r.core_attn = (modules & parallel::kRecomputeCoreAttn) != 0;
  r.layernorm = (modules & parallel::kRecomputeLayernorm) != 0;
  r.mlp = (modules & parallel::kRecomputeMlp) != 0;
  r.moe = (modules & parallel::kRecomputeMoe) != 0;
  r.moe_act = (modules & parallel::kRecomputeMoeAct) != 0;
  r.mla_up_proj = (modules & parallel::kRecomputeMlaUpProj) != 0;
  r.shared_experts = (modules & parallel::kRecomputeSharedExperts) != 0;
  return r;
}

}  // namespace sim::execution
