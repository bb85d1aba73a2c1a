// tests/validation/attention_fit.hpp: the attention kernel model of sim/hardware/compute_model.hpp fitted to measured
// kernels (tests/validation/attention_microbenchmarks.json), shared by trainsim-validation-fit, which reports it, and
// the validation test that holds the Hopper profiles to it.
#pragma once
#include <string>
#include <vector>

namespace validation {

/// One fitted pass of one kernel class: efficiency x s / (s + seq_half) of the BF16 peak.
struct AttentionPassFit {
  double efficiency = 0;  // asymptotic fraction of the BF16 peak
  double seq_half = 0;    // sequence length at half of it
  double rms = 0;         // rms of log(predicted / measured) over the points
  int points = 0;
};

/// Fits `kernel` ("flash2", "cudnn", "fa3") `pass` ("forward", "backward", "forward_noncausal",
/// "backward_noncausal") of the measurements for `arch` ("sm_90"), through hardware::attention_time on the
/// measurements' profile. The causal backward is fitted to its derived causal counterpart (see the data file's
/// description); the non-causal passes to the non-causal series as measured.
AttentionPassFit fit_attention(const std::string& arch, const std::string& kernel, const std::string& pass);

}  // namespace validation
