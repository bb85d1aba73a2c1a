// sim/collectives/protocol.hpp: NCCL's three protocols (LL, LL128, Simple) as what they change in a collective's cost:
// the latency of each step, a fixed cost per call, and the fraction of the links' bandwidth the data gets.
//
// Source: ncclTopoTuneModel in NVIDIA/nccl src/graph/tuning.cc at b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2:
//   baseLat (us)            Ring { LL 6.6, LL128 14.0, Simple 8.4 }   Tree { 6.8, 14.0, 0 }
//   hwLat NVLink (us/step)  Ring { 0.6, 1.9, 3.4 }                    Tree { 0.6, 1.25, 28 }
//   hwLat Net (us/step)     Ring { 2.7, 4.0, 14.0 }                   Tree { 5.0, 8.5, 28 }
//   bandwidth               Ring LL: 1/4 of the bus bandwidth (1/3 inside one node for all-gather / reduce-scatter),
//                           at most llMaxBw (Hopper, Intel hosts: 87.7 GB/s on one node, 22.5 on two, 19.0 beyond);
//                           Ring LL128: 0.92 (0.7 with one rank per node); Tree: 0.92, then LL 1/3.8, LL128 120/128.
// trainsim's per-hop link latencies (hardware profile `latency`, default nvlink 0.6 us per step and 1.35 us per network
// hop, i.e. 2.7 us per rail step) are LL's; a protocol scales the NVLink part and the network part of each step by its
// ratio to LL's (LL128: 1.9 / 0.6 and 4.0 / 2.7 on a ring), so a calibrated latency keeps its meaning. Like NCCL's
// tuner, Auto takes the fastest protocol for each algorithm. Not modelled: the ring's plateau factor for large
// inter-node Simple all-reduces, the tree's per-size correction table, per-channel caps (above the links' rates on
// NVLink systems), and protocols of the direct operations (all-to-all, send/recv, broadcast keep LL's latencies).
#pragma once
#include "sim/base/units.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sim::collectives {

enum class Protocol { LL, LL128, Simple };
inline constexpr std::array<Protocol, 3> kProtocols{Protocol::LL, Protocol::LL128, Protocol::Simple};
const char* to_string(Protocol p);

/// What a protocol changes in the phases of one collective.
struct ProtocolTerms {
  double nvlink_latency = 1;                                  // factor on the NVLink steps' latency
  double network_latency = 1;                                 // factor on the network steps' latency
  double rate = 1;                                            // factor on the phase's bottleneck rate
  double rate_cap = std::numeric_limits<double>::infinity();  // bytes/s
  base::Time base;                                            // once per call

  /// A path latency of the NVLink or the network class, scaled (identity at 1: LL's values unchanged).
  base::Time latency(base::Time t, bool network) const {
    const double f = network ? network_latency : nvlink_latency;
    if (f == 1.0 || t == base::Time::max()) return t;
    return base::Time{static_cast<std::int64_t>(std::llround(static_cast<double>(t.ns) * f))};
  }
  /// NCCL's tree correction (tree_correction): it multiplies the tuned bandwidth, which LL's cap has already bounded
  /// (tuning.cc caps busBw by llMaxBw in ncclTopoTuneModel; ncclTopoGetAlgoTime applies the factor), so both scale.
  void correct(double factor) {
    rate *= factor;
    rate_cap *= factor;
  }
  /// The rate the data gets from a bottleneck rate (infinite stays infinite: no finite link).
  double effective(double bottleneck) const {
    if (std::isinf(bottleneck)) return bottleneck;
    return std::min(bottleneck * rate, rate_cap);
  }
};

/// The terms of protocol p for a ring (rings over rails and the hierarchical rings too: `tree` false) or NCCL's tree
/// (`tree` true), on a group spread over `domains` NVLink domains with `ranks_per_domain` ranks in each (the most).
/// `gather_or_scatter`: an all-gather or reduce-scatter (LL keeps 1/3 of the bandwidth inside one domain).
ProtocolTerms protocol_terms(Protocol p, bool tree, int domains, int ranks_per_domain, bool gather_or_scatter);

/// NCCL's correction of its trees' bandwidth by buffer size ("Trees are not perfectly sticking to the model for medium
/// sizes"): a factor per protocol and power of two from 64 B (index floor(log2(n / 64))) below 512 MiB, 1 beyond and
/// below 64 B; down to 0.4 (LL), 0.6 (LL128) and 0.5 (Simple) between 128 KiB and 4 MiB. Source: NVIDIA/nccl
/// src/graph/tuning.cc, treeCorrectionFactor and ncclTopoGetAlgoTime (the 23-entry table of NCCL 2.19 to 2.23, applied
/// to all-reduce trees). trainsim applies it to the tree's bandwidth fraction (ProtocolTerms::rate) of every
/// tree, as NCCL's tuner does to its predicted bandwidth.
double tree_correction(Protocol p, base::Bytes n);

/// NVLS and NVLS-tree, which NCCL runs with Simple only. tuning.cc's hwLat (same commit): NVLink NVLS Simple 23 us,
/// the in-switch reduce and multicast, here two steps (up, down) of 11.5 us, i.e. 11.5 / 0.6 times the profile's NVLink
/// step; Net NVLSTree Simple 14 us per tree step across nodes, 14 / 2.7 times the profile's rail step; baseLat 0. The
/// links' full rate: what NVLS loses is in efficiency.nvls (hardware/compute_model.hpp).
ProtocolTerms nvls_terms();

/// The identity: LL's latencies as the profile gives them, the links' full rate, no fixed cost (direct operations).
inline ProtocolTerms identity_terms() {
  return {};
}

}  // namespace sim::collectives
