// sim/collectives/sweep.hpp: one collective over a range of sizes as nccl-tests reports it (time, algbw, busbw), on
// a cluster built for the ranks asked for.
#pragma once
#include "sim/base/units.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/topology/topology.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <span>
#include <vector>

namespace sim::collectives {

/// Fixed costs added once per call, by Op (the hardware profile's latency.base, in Op order); zero by default.
using BaseLatency = std::array<base::Time, 6>;

/// What one call costs beyond the collective's own phases, as a stream of back-to-back calls (nccl-tests) sees it:
/// the op's fixed cost (latency.base) and the host's issue time per call (latency.launch), which bounds the call's
/// time from below: T = max(launch, base(op) + collective_time()). Zero: the collective model alone.
struct CallCosts {
  BaseLatency base{};
  base::Time launch;
};

/// The GPUs a sweep runs on: `ranks` ranks, `per_node` on each node (0: whole nodes, gpus_per_node each; the last
/// node may be partly used), on consecutive nodes from GPU 0, over a cluster of just those nodes built from `config`
/// (its gpus field is replaced). Problems are ConfigError-ready diagnostics (path "/ranks" or "/per_node").
struct SweepCluster {
  std::unique_ptr<const topology::Topology> topology;
  std::vector<topology::GpuId> group;
  int nodes = 0;
};
/// The most ranks a sweep takes: 2^20, as trainsim-calibrate's --ranks.
inline constexpr int kMaxSweepRanks = 1 << 20;
/// Problems with the ranks, the per-node count and the cluster they need (topology::validate of it), one each.
std::vector<base::Diagnostic> validate_sweep_cluster(topology::TopologyConfig config, int ranks, int per_node);
/// Builds it; validate_sweep_cluster() must have come back empty.
SweepCluster sweep_cluster(topology::TopologyConfig config, int ranks, int per_node);

/// One size of a sweep. algbw = size / time and busbw = algbw x busbw_factor(op, p), nccl-tests' definitions
/// (doc/PERFORMANCE.md in NVIDIA/nccl-tests); both 0 when the time is 0 (one rank).
struct SweepRow {
  base::Bytes size;
  Algorithm algorithm = Algorithm::Ring;  // the concrete algorithm resolve() ran
  Protocol protocol = Protocol::LL;       // NCCL's protocol it ran with (protocol.hpp)
  base::Time time;                        // max(launch, collective_time() + the op's base latency)
  bool launch_bound = false;              // the host's issue time decided it (time == launch)
  base::Bandwidth algbw;
  base::Bandwidth busbw;
};

/// `op` over `group` for each size, with `algorithm` (Auto: resolve()'s choice per size). Every non-empty collective
/// of two or more ranks gets the call costs: T = max(launch, base(op) + collective_time()). Deterministic;
/// O(sizes x p) (O(sizes x p^2) for all-to-all).
std::vector<SweepRow> sweep(Op op, Algorithm algorithm, std::span<const topology::GpuId> group,
                            const std::vector<base::Bytes>& sizes, const CallCosts& costs,
                            const topology::Topology& topo);

/// nccl-tests' and the measurement records' names: "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
/// "send_recv", "broadcast" (the hardware profile's latency.base keys).
const char* nccl_name(Op op);
/// Those names, nccl-tests' program stems ("alltoall", "sendrecv") and to_string(Op)'s ("all-reduce").
std::optional<Op> op_from_nccl_name(std::string_view name);

/// nccl-tests' -b A -e B -f 2: A, 2A, 4A, ... while <= B (A alone when B < A). A must be positive.
std::vector<base::Bytes> doubling_sizes(base::Bytes from, base::Bytes to);

}  // namespace sim::collectives
