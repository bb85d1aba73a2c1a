// calibrate/fit/fit_collectives.hpp: alpha-beta fits of collective timings, one per op and scope.
#pragma once
#include "calibrate/fit/measurement.hpp"

#include <span>
#include <string>
#include <vector>

namespace calibrate::fit {

/// Latency steps of the closed forms in sim/collectives/closed_form.hpp over p ranks: ring all-reduce 2(p-1);
/// all-gather, reduce-scatter, all-to-all and broadcast p-1; send/recv 1 (Thakur, Rabenseifner, Gropp 2005).
int collective_steps(CollectiveOp op, int p);

/// The fitted model of one collective over one scope:
///   t(n, p) = steps(p) * alpha + busbw_factor(p) * n / busbw
/// the closed forms of sim/collectives (ring all-reduce 2(p-1) a + 2(p-1)/p n/B, ...) with B read as nccl-tests' bus
/// bandwidth, so alpha is the per-step latency `a` of the simulator's topology and busbw is comparable with the link
/// bandwidth whatever p (NVIDIA/nccl-tests doc/PERFORMANCE.md).
struct AlphaBeta {
  CollectiveOp op = CollectiveOp::AllReduce;
  Scope scope = Scope::Nvlink;
  sim::base::Duration alpha;   // per latency step
  sim::base::Bandwidth busbw;  // asymptotic bus bandwidth
  double r2 = 0;               // weighted (relative) R^2
  double rms_rel = 0;          // residuals relative to the measured times
  double max_rel = 0;
  int points = 0;
  int min_ranks = 0, max_ranks = 0;
  sim::base::Bytes min_bytes, max_bytes;
  /// Time of a zero-byte collective at the largest rank count measured: steps(max_ranks) * alpha.
  sim::base::Duration latency() const;
  /// The model's time for n bytes over p ranks.
  sim::base::Duration predict(sim::base::Bytes n, int p) const;
};

/// Fits one op and scope by weighted least squares with relative weights (w = 1/t^2). Needs at least 3 points of at
/// least 2 sizes over 2 or more ranks; throws FitError naming the group when the points are too few, cannot separate
/// latency from bandwidth, or give a non-positive bandwidth or a negative latency.
AlphaBeta fit_alpha_beta(CollectiveOp op, Scope scope, std::span<const Measurement> points);

/// Fits every (op, scope) present among the collective measurements. Points over a single rank carry no link
/// bandwidth (nccl-tests reports busbw 0 on one rank) and are left out with a note.
std::vector<AlphaBeta> fit_collectives(std::span<const Measurement> measurements, std::vector<std::string>& notes);

}  // namespace calibrate::fit
