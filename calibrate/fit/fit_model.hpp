// calibrate/fit/fit_model.hpp: the latencies and the network efficiency of a profile fitted against trainsim's own
// collective model (issue 23), after calibrate()'s alpha-beta fits.
#pragma once
#include "calibrate/fit/calibration.hpp"
#include "calibrate/fit/measurement.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/topology/topology.hpp"

#include <optional>
#include <span>

namespace calibrate::fit {

/// Refines `c` (from calibrate() over the same measurements) where the closed-form fits do not map onto the
/// simulator's parameters, by running sim/collectives on `cluster` (the base profile's cluster as
/// topology::profile_cluster builds it) with the fitted efficiencies:
///   latency.nvlink        the NVLink all-reduce (else first NVLink) fit's alpha: the per-step latency of the ring
///                         closed form, which is the simulator's NVLink step (only when sizes <= 1 MiB were
///                         measured at two or more rank counts: without small sizes alpha is not determined, and
///                         at one rank count steps x alpha is indistinguishable from latency.base's fixed cost);
///   efficiency.network    for measurements over several hosts with several ranks each (where busbw is not a NIC's
///                         rate: rings cross the network on every rail at once, the hierarchical algorithm moves n/k):
///                         the fraction of the NIC bandwidth at which the simulator's time for the largest size of
///                         the run with the most ranks equals the measured one (bisection; predicted time falls as
///                         the fraction grows). Measurements with one rank per host keep calibrate()'s busbw / NIC;
///   latency.launch        the host's issue time per call, one for all ops: with the base of the widest run (all-reduce
///   latency.base.OP       first), the pair minimising the squared log error of max(launch, base + simulated time)
///                         over its sizes <= 1 MiB (latency-bound); each other op's base at that launch. A launch is
///                         only fitted where the additive base cannot explain the sizes (a floor that the time
///                         leaves when the collective's own latency grows: one process issuing for several GPUs);
///                         fit_call_costs() says how. Base 0 (with a note) when the simulator is already slower.
/// Each size counts with the faster of nccl-tests' out-of-place and in-place times (a one-off stall in one column is
/// not the system's latency). Each fitted field gets its provenance entry; fitted_profile_text() writes them.
/// `algorithm` is what the measured runs used (their NCCL_ALGO; Auto for NCCL's defaults). Where the simulator runs
/// NVLink SHARP for the network fit's run (NVLS-tree over two hosts, bound by the switches, not the NICs), the NIC
/// efficiency is not determined by it and efficiency.network keeps the base profile's value, with a note.
/// The call costs fitted to one run's small sizes (nanoseconds): `launch_ns` and `base_ns` >= 0 minimising
/// sum_k ln(max(launch, base + simulated_k) / measured_k)^2 (the launch held at `launch_ns` when given), on a grid over
/// [0, max measured - simulated] x [0, max measured] refined twice (a fixed cost is resolved to 1/8 000 of its range);
/// ties go to the smaller launch, and a launch below every predicted time is reported as 0.
struct CallCostFit {
  double launch_ns = 0;
  double base_ns = 0;
  double error = 0;  // the minimised sum of squared log ratios
};
CallCostFit fit_call_costs(std::span<const double> measured_ns, std::span<const double> simulated_ns,
                           std::optional<double> launch_ns);

void fit_with_model(Calibration& c, std::span<const Measurement> measurements,
                    const sim::hardware::HardwareProfile& base, sim::topology::TopologyConfig cluster,
                    sim::collectives::Algorithm algorithm = sim::collectives::Algorithm::Auto);

}  // namespace calibrate::fit
