// sim/workload/batch_efficiency.hpp: how much a global batch size costs in steps and tokens to reach a target loss
// (the empirical large-batch model of McCandlish et al. 2018), and an estimate of the critical batch size.
#pragma once
#include "sim/workload/model_spec.hpp"

#include <string>

namespace sim::workload {

/// McCandlish, Kaplan, Amodei et al., "An Empirical Model of Large-Batch Training" (arXiv:1812.06162), Eq. 2.11 and
/// Sec. 2.3: training to a fixed loss with batch B (here in tokens) takes
///   S(B) = S_min (1 + B_noise / B) optimiser steps and E(B) = E_min (1 + B / B_noise) tokens,
/// with E_min = S_min * B_noise. Below the critical (noise) batch, doubling B nearly halves the steps at nearly the
/// same tokens; far above it, doubling B nearly doubles the tokens at nearly the same steps.
struct BatchEfficiency {
  double critical_batch = 0;  // B_noise ~ B_crit, tokens
  double batch = 0;           // global batch, tokens per optimiser step

  /// E_min / E(B) = 1 / (1 + B / B_noise): the fraction of processed tokens that buys progress.
  double token_efficiency() const { return 1.0 / (1.0 + batch / critical_batch); }
  /// S_min / S(B) = 1 / (1 + B_noise / B).
  double step_efficiency() const { return 1.0 / (1.0 + critical_batch / batch); }
  /// Tokens processed at batch B that are worth `tokens * token_efficiency()` tokens of the small-batch limit.
  double effective_tokens(double tokens) const { return tokens * token_efficiency(); }
};

/// E(B) for a target whose small-batch token cost is `e_min` (McCandlish Eq. 2.11).
double tokens_to_target(double e_min, double batch, double critical_batch);
/// S(B) = E(B) / B for the same target.
double steps_to_target(double e_min, double batch, double critical_batch);

/// The same target loss reached with another global batch: a run that processes `tokens` at `batch` fixes
/// E_min = tokens / (1 + batch / B_noise); the tokens another batch needs follow from it.
double equivalent_tokens(double tokens, double batch, double other_batch, double critical_batch);

/// An estimate of the critical batch in tokens when a scenario gives none: DeepSeek LLM's fit of the optimal batch
/// size to the compute budget, B_opt = 0.2920 * C^0.3271 tokens with C = M * D, M the non-embedding FLOPs per token
/// (72 l h^2 + 6 l s h for their architecture; here 6 x non-embedding parameters + 6 l s h, which is the same for
/// a standard MLP and accounts GQA and SwiGLU per matrix) and D the training tokens (Bi et al., "DeepSeek LLM",
/// arXiv:2401.02954, Sec. 3.1, Eq. 1). Their optimal batch sits where the loss-versus-batch curve bends, which is
/// McCandlish's B_crit; treat it as an estimate within a factor of about two (their fit's band), and give
/// `training.critical_batch` when it is known.
double estimate_critical_batch(const ModelSpec& m, int seq_len, double tokens);
/// Where the estimate comes from, for results and reports.
inline constexpr const char* kCriticalBatchSource = "DeepSeek LLM (arXiv:2401.02954) Eq. 1: B_opt = 0.292 C^0.3271";

}  // namespace sim::workload
