// sim/workload/batch_efficiency.cpp: McCandlish's steps/tokens trade-off and the critical-batch estimate.
#include "sim/workload/batch_efficiency.hpp"

#include "sim/base/assert.hpp"
#include "sim/workload/params.hpp"

#include <cmath>

namespace sim::workload {

double tokens_to_target(double e_min, double batch, double critical_batch) {
  SIM_ASSERT(batch > 0 && critical_batch > 0, "batch sizes must be positive");
  return e_min * (1.0 + batch / critical_batch);  // McCandlish et al. 2018, Eq. 2.11
}

double steps_to_target(double e_min, double batch, double critical_batch) {
  // S(B) = S_min (1 + B_noise / B) with S_min = E_min / B_noise; equal to E(B) / B.
  return e_min / critical_batch * (1.0 + critical_batch / batch);
}

double equivalent_tokens(double tokens, double batch, double other_batch, double critical_batch) {
  const double e_min = tokens / (1.0 + batch / critical_batch);
  return tokens_to_target(e_min, other_batch, critical_batch);
}

double estimate_critical_batch(const ModelSpec& m, int seq_len, double tokens) {
  const ParamCounts p = count_params(m);
  const double non_embedding = m.layers * (p.attention_per_layer + p.active_mlp_per_layer + p.router_per_layer);
  // Non-embedding FLOPs per token, forward and backward (DeepSeek LLM Sec. 3.1: M counts the attention score
  // computation, 6 l s h, and excludes the vocabulary projection).
  const double flops_per_token = 6.0 * non_embedding + 6.0 * m.layers * static_cast<double>(seq_len) * m.hidden;
  const double compute = flops_per_token * tokens;
  return 0.2920 * std::pow(compute, 0.3271);  // DeepSeek LLM Eq. 1, tokens
}

}  // namespace sim::workload
