// sim/collectives/collective.hpp: a collective on a concrete group of GPUs: its algorithm, its cost, its transfers.
#pragma once
#include "sim/base/units.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/topology/topology.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::collectives {

enum class Algorithm {
  Ring,          // one ring through the group, NVLink domain by domain
  Tree,          // NCCL's double binary tree (all-reduce only)
  Hierarchical,  // NVLink phase, network phase across domains (one ring per rail), NVLink phase
  Auto,          // what NCCL's tuner would pick: see resolve()
  Nvls,          // NVLink SHARP all-reduce (the switches reduce): NCCL's NVLS in one domain, NVLS-tree across domains
};

const char* to_string(Op op);
const char* to_string(Algorithm a);
std::optional<Op> op_from_string(std::string_view s);                // "all-reduce", "all-gather", ...
std::optional<Algorithm> algorithm_from_string(std::string_view s);  // "ring", "tree", "hierarchical", "auto", "nvls"

/// One point-to-point transfer of a lowered collective.
struct Transfer {
  topology::GpuId src = 0;
  topology::GpuId dst = 0;
  base::Bytes bytes;
};

/// Transfers that run concurrently. A phase takes `latency` (its alpha terms: steps x the slowest path latency among
/// its transfers) plus the time for all its transfers to complete when started together; phases run one after another.
struct Phase {
  std::vector<Transfer> transfers;
  base::Time latency;
};

/// The concrete algorithm a request runs (rules, in order):
/// - a group of one rank, or AllToAll, SendRecv and Broadcast: Ring (all-to-all and send/recv are direct
///   point-to-point exchanges and broadcast a pipelined chain, whatever was asked);
/// - Tree is for AllReduce only (as in NCCL); asked for another op it runs Ring;
/// - Hierarchical needs the group spread evenly (k ranks in each of m >= 2 NVLink domains, k >= 2); otherwise Ring;
/// - Nvls is for AllReduce where the NVSwitches reduce (TopologyConfig::nvls_bw > 0: hardware nvlink.sharp, NCCL
///   2.17+ on H100 and later), over one domain of 2 or more ranks (NCCL's NVLS) or k >= 2 ranks in each of m >= 2
///   domains (NCCL's NVLS_TREE); otherwise Ring;
/// - Auto, like NCCL's tuner, takes the algorithm with the smallest predicted time, collective_time(), among those
///   that apply (ties: Ring, then Hierarchical, then Tree, then Nvls; Hierarchical for AllReduce only: NCCL has no
///   hierarchical all-gather or reduce-scatter, it runs rings (or NVLS in a domain); NVLS-tree only over 2 domains:
///   beyond, NCCL's tuner halves its network bandwidth, tuning.cc, and runs rings, as the 4- and 8-node H100 logs of
///   docs/validation.md show), each with its fastest NCCL protocol (protocol.hpp: LL,
///   LL128 or Simple, their step latencies, fixed costs and bandwidth fractions; an explicit algorithm also runs its
///   fastest protocol).
Algorithm resolve(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n,
                  const topology::Topology& topo);

/// The collective as transfers, for the engine to drive through network::FlowModel. `group` lists distinct GPUs;
/// for SendRecv group[i] sends n bytes to group[i+1] (a chain; two ranks is one message); for Broadcast group[0] is
/// the root. Ring order visits the group NVLink domain by domain (domains by id, GPUs by id), reversing every other
/// domain so that consecutive domains are joined by GPUs of the same local rank (the same rail).
/// - Ring all-reduce: one phase, each rank sends 2(p-1)/p n to its successor, latency 2(p-1) a;
/// - ring all-gather / reduce-scatter: the same with (p-1)/p n and (p-1) a;
/// - Ring over k >= 2 ranks in each of m >= 2 domains (the group even): NCCL runs one ring per channel and spreads
///   the channels' domain crossings over the k rails (NIC of local rank j carries the rings that leave the domain at
///   j), so of the R = 2(p-1)/p n bytes (all-reduce; (p-1)/p n for all-gather and reduce-scatter) each rank moves,
///   (k-1)/k R go over NVLink and R/k over its own NIC, at the same time: one phase holding a ring in each domain
///   carrying (k-1)/k R and k rings across the domains (one per rail) carrying R/k. Its time is both latencies,
///   NCCL's (nsteps - nInterSteps) intraLat + nInterSteps interLat with nInterSteps = 2(m-1) (m-1), plus the slower
///   of the two transfers: T = (2(p-1) - 2(m-1)) a_nvl + 2(m-1) a_net + max((k-1)/k R/B_nvl, R/(k B_net)).
///   Source: the latency and channel model of ncclTopoTuneModel, NVIDIA/nccl src/graph/tuning.cc (commit
///   b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2); a single ring through one NIC per domain would move all R bytes
///   through one NIC, k times slower than NCCL measures (docs/validation.md, "Collectives");
/// - Ring over m >= 2 domains holding different numbers of ranks, each 2 or more (a data-parallel group spread 9/9/9/5
///   over NVL72 domains): the same rings over k = the fewest ranks any domain holds. NCCL aligns every rank's ring
///   graph to the smallest channel count and bandwidths of all ranks (initTransportsRank, NVIDIA/nccl src/init.cc), the
///   smallest domain's, and each channel leaves every domain through its own NIC, so the crossings spread over k rails
///   as above; a rank beyond a domain's first k forwards every channel over NVLink, so the domain rings carry all R
///   bytes: T = (2(p-1) - 2(m-1)) a_nvl + 2(m-1) a_net + max(R/B_nvl, R/(k B_net)). (One ring through one NIC per
///   domain, the lowering before, took such a group up to k times as long as its rails: docs/validation.md's Qwen3-32B
///   on 256 GB200s);
/// - Tree in one domain, or over domains holding different numbers of ranks: one double binary tree over all ranks in
///   ring order, one phase, every tree edge carrying ceil(n/2) both ways (reduce up, broadcast down, pipelined),
///   latency 2 ceil(log2 p) a;
/// - Tree over k >= 2 ranks in each of m >= 2 domains (the group even): NCCL's, a chain inside each domain and double
///   binary trees across the domains, one pair per rail (channel): rail j's trees join the j-th GPU of each domain and
///   carry n/(2k) per edge both ways, and its chain runs through the domain's k GPUs from GPU j, n/k per edge both
///   ways, so the k chains use each ring edge of the domain k - 1 times: one phase of the domains' ring edges both ways
///   carrying (k-1)/k n and, concurrently (pipelined), the trees across, 2(k-1) NVLink and 2 ceil(log2 m) network
///   steps, NCCL's latency 2((k-1) intraLat + log2(m) interLat) (ncclTopoTuneModel, tuning.cc at the commit below).
///   Each NIC then carries about 2n/k each way, as the rings over the rails do. Source: NCCL's tree topology
///   (src/graph/trees.cc: "intra-node chain, inter-node double binary tree"; src/device/all_reduce.h, runTreeSplit).
///   One tree over all ranks in ring order, the lowering before, crossed each domain boundary through one GPU's NIC and
///   gave 64 H100s 55 GB/s of bus bandwidth at 1 GiB against the rings' 334;
/// - Nvls in one domain of k: one phase shaped as a ring in the domain, each rank moving n (k+1)/k each way at the NVLS
///   rate (closed_form.hpp's nvls_allreduce_time; the transfers carry nvls_link_bytes(), that traffic at the NVLink
///   links' rate), 2 steps (up, down): T = 2a + n (k+1)/k / B_nvls. NVLS-tree (m >= 2 domains of k): that phase in
///   every domain and, concurrently (pipelined, as NCCL runs it), k double binary trees across the domains, one per
///   local rank j over the j-th GPU of each domain, every tree edge carrying n/(2k) both ways, 2 ceil(log2 m) network
///   steps: the GPU of each domain reduces its shard in the switch, the trees all-reduce the shards between domains
///   over the rails, the switch multicasts the result. Latencies are NCCL's NVLS terms (protocol.hpp's nvls_terms()).
///   Source: the NVLS and NVLS_TREE patterns of NVIDIA/nccl (src/device/all_reduce.h) and ncclTopoTuneModel (same
///   commit as protocol.hpp); with m = 2 each NIC carries n/k per direction, against the rings' ~2n/k, which is why
///   nccl-tests' 2-node H100 all-reduce reaches ~470 GB/s busbw where 4 or more nodes stay at ~320
///   (docs/validation.md, "Collectives");
/// - Hierarchical all-reduce: three phases (ring reduce-scatter in each domain; k rings across domains, one per local
///   index, each moving 2(m-1)/m n/k per rank; ring all-gather in each domain); reduce-scatter and all-gather take
///   the first two, resp. the last two in mirror order;
/// - AllToAll: one phase, each rank sends n/p to every other rank, latency (p-1) a;
/// - Broadcast: one phase, a chain from the root along ring order, each link n bytes, latency (p-1) a;
/// - SendRecv: one phase, latency a.
/// Here a is the slowest path latency among the phase's transfers. Empty for p <= 1 or n <= 0.
std::vector<Phase> lower(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n,
                         const topology::Topology& topo);
class CollectiveCostModel;
/// The same, choosing the algorithm with the caller's cost model (which allocates nothing once its buffers have
/// grown): for a replay that lowers thousands of collectives.
std::vector<Phase> lower(CollectiveCostModel& model, Op op, Algorithm algorithm, std::span<const topology::GpuId> group,
                         base::Bytes n, const topology::Topology& topo);

/// The time of the collective when nothing else uses the network: per phase of lower(), its latency plus
/// ceil(bytes / R) where R = min over the links its transfers cross of capacity / (its transfers on that link), the
/// first level of max-min water-filling. Every transfer of a phase has the same size, so this is exactly the time
/// network::FlowModel takes for the phase on an otherwise idle topology; it includes the collective's own sharing
/// (the tree's four messages per rank, flows sharing an uplink where a leaf has fewer uplinks than flows). On a uniform
/// group it reduces to the closed forms of closed_form.hpp: an intra-domain group gives NVLink a and B; a group with
/// one rank per node gives the network's; a group with k ranks per domain gives the rings over rails above, or
/// Hierarchical. Time::max() when a transfer crosses a down link.
base::Time collective_time(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n,
                           const topology::Topology& topo);

/// collective_time() and resolve() (which delegate to it) for callers that cost many collectives on one topology: the
/// step planner, a search. Results are those of the straightforward evaluation of lower()'s phases (kept as
/// detail::reference_collective_time) bit for bit. It never builds a path list: per rank it counts the transfers on
/// its own NVLink and NIC links (where every path begins and ends), and only a transfer between leaves asks the
/// topology for its switch links; with no link down it reads no link either, only the kinds' nominal values. O(p) for
/// rings and trees (O(p^2) for all-to-all); no allocation once its scratch buffers have grown to the largest group
/// seen. O(1) to construct, so a short-lived one costs a few allocations per call; keep one to avoid even those. It
/// reads the topology at each call (set_link_up is seen). Not thread-safe: one per thread.
class CollectiveCostModel {
 public:
  explicit CollectiveCostModel(const topology::Topology& topo) : topo_(topo) {}

  base::Time time(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n);
  /// The collective's time while the same collective runs at the same moment on each sibling group, the group shifted
  /// by an offset (the data-parallel groups of the other tensor-parallel ranks, which reduce their shards of the same
  /// bucket together): the algorithm and protocol are the group's alone (NCCL's tuner knows no other traffic), and
  /// the bottleneck rate counts the siblings' transfers on the switch links (leaf uplinks, spines, cores) they share
  /// with the group's; their NVLink and NIC links are their own. The time is that of the last of them to finish (the
  /// siblings' transfers on the most loaded switch link): what the full replay's flows give when the siblings are
  /// placed as the group is (each member in the same domain, leaf and rail relative to the first; the caller passes
  /// only such offsets), and what a replica standing for every tensor-parallel rank waits for. With none, time()
  /// above. Offsets must be nonzero and keep every member in the cluster. All-to-all, send/recv and broadcast ignore
  /// them.
  base::Time time(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n,
                  std::span<const topology::GpuId> sibling_offsets);
  Algorithm resolve(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n);
  /// The algorithm, NCCL protocol and time of the request (the protocol is LL for the direct operations and NVLS).
  struct Choice {
    Algorithm algorithm = Algorithm::Ring;
    base::Time time;
    Protocol protocol = Protocol::LL;
  };
  Choice choice(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n);

 private:
  struct PhaseCost {
    base::Time latency;
    base::Time transfer;
  };

  Choice choose(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n, bool need_time);
  /// The algorithm's time with its fastest protocol (each protocol's fixed cost included); a tree that cannot beat
  /// `beat` is not routed and costs Time::max().
  Choice fastest(Op op, Algorithm a, base::Bytes n, base::Time beat, std::optional<Protocol> only = std::nullopt);
  std::span<const topology::GpuId> sorted(std::span<const topology::GpuId> group);  // asserts distinct GPUs
  void load_nodes(std::span<const topology::GpuId> gpus);  // nodes_ = gpus, with their NVLink domains and leaves
  void load_layout();                                      // domain_start_, even_, ring_ from sorted nodes_
  bool hierarchical_applies() const;
  /// A phase before a protocol is applied: its bytes per transfer, alpha steps, slowest path latency of each class
  /// (LL's, as the links give them) and bottleneck rate.
  struct RawPhase {
    base::Bytes bytes;
    std::int64_t steps = 0;
    base::Time nvlink;
    base::Time network;
    double rate = 0;
  };
  /// An algorithm's phases: one after another, or (concurrent) the two rings over the rails side by side.
  struct Program {
    std::array<RawPhase, 3> phases{};
    int count = 0;
    bool concurrent = false;
  };
  static PhaseCost cost_of(const RawPhase& r, const ProtocolTerms& t);
  static base::Time run(const Program& p, const ProtocolTerms& t);
  Program ring_program(Op op, base::Bytes n);
  Program tree_program(base::Bytes n, base::Time beat, bool* cut);  // (cut: cannot beat `beat`, not routed)
  Program hierarchical_program(Op op, base::Bytes n);
  bool nvls_applies(Op op) const;     // resolve's rule for Nvls, on the loaded layout
  Choice nvls_choice(base::Bytes n);  // NVLS, or NVLS-tree over several domains (nvls_applies)
  RawPhase intra_rings(base::Bytes bytes, std::int64_t steps);  // a ring in each domain (even groups)
  RawPhase inter_rings(base::Bytes bytes, std::int64_t steps);  // a ring across domains per local index
  RawPhase rail_trees(base::Bytes n);  // double binary trees across domains per local index (even groups)
  // SendRecv, AllToAll and Broadcast: one phase each, over the caller's order (resp. the ring from group[0]).
  base::Time direct_time(Op op, std::span<const topology::GpuId> group, base::Bytes n);

  // One phase: begin, add its transfers (as node indices), end with the per-transfer bytes and alpha steps. In a
  // phase either each node sends at most once and receives at most once (rings, chains: add_transfer), or every
  // transfer comes with its reverse (trees, all-to-all: add_exchange, counted per node).
  void begin_phase(bool exchanges);
  void add_transfer(int src, int dst);
  void add_exchange(int a, int b);
  void add_between_leaves(int src, int dst);
  void route(int src, int dst);
  int route_gpus(topology::GpuId src, topology::GpuId dst);  // onto switch_; the number of switch links
  // The phase unscaled; when no protocol of candidates_ can bring it below `beat` before routing its transfers between
  // leaves, that lower bound with *cut set.
  RawPhase end_phase_raw(base::Bytes bytes, std::int64_t steps, base::Time beat, bool* cut);
  PhaseCost end_phase(base::Bytes bytes, std::int64_t steps);  // with LL's terms (direct operations, NVLS)
  void limit_rate(topology::LinkId link, std::int32_t transfers);
  void limit_rate(topology::LinkKind kind, std::int32_t transfers);  // every link of the kind at nominal bandwidth

  const topology::Topology& topo_;
  // Scratch, reused from call to call. The nodes are the group's GPUs in the order transfers index them.
  std::span<const topology::GpuId> nodes_;
  std::vector<topology::GpuId> sorted_;              // the group in id order, when the caller's is not
  std::vector<std::int32_t> scratch_;                // one allocation for the per-node arrays below
  std::span<std::int32_t> domain_;                   // per node: its NVLink domain
  std::span<std::int32_t> leaf_;                     // per node: its leaf (filled when the group spans domains)
  std::span<std::int32_t> ring_;                     // ring order as node indices
  std::span<std::int32_t> domain_start_;             // first node of each domain (sorted nodes), then the node count
  static constexpr std::size_t kMedia = 2;           // exchange counters per node: over NVLink, over its NIC
  std::span<std::int32_t> exchanges_;                // per node, kMedia counters
  std::vector<std::pair<int, int>> between_leaves_;  // the phase's transfers between leaves (node indices)
  std::vector<std::pair<int, int>> network_pairs_;   // with siblings: the phase's transfers between domains
  std::span<const topology::GpuId> siblings_;        // time()'s sibling offsets, while it costs with them
  std::vector<std::uint64_t> switch_;  // switch links crossed by the phase's transfers (kind << 32 | id), repeated
  int domains_ = 0;
  int fewest_ = 0;                // the fewest ranks a domain holds (the rails the rings can use)
  bool even_ = true;              // the same number of ranks in every domain
  bool exchanges_phase_ = false;  // the phase is of exchanges (else each node sends and receives at most once)
  bool nominal_ = true;           // no link is down: every link at its kind's nominal bandwidth
  bool nvlink_ = false;           // the phase has a transfer inside an NVLink domain
  bool network_ = false;          // the phase has a transfer between domains
  bool leaf_local_ = false;       // the phase has a transfer between domains under one leaf
  int widest_ = 0;                // the most switch links on one path of the phase: 0, 2 (a spine), 4 (a core)
  double rate_ = 0;               // the phase's bottleneck rate so far, bytes/s
  std::array<ProtocolTerms, 3> candidates_{};  // the protocols fastest() is costing, by kProtocols order
};

namespace detail {
/// The straightforward implementation that CollectiveCostModel replaces (builds every transfer's path, sorts the
/// links it crosses): kept as its test oracle. Allocates and sorts on every call; not for hot paths.
base::Time reference_collective_time(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n,
                                     const topology::Topology& topo);
Algorithm reference_resolve(Op op, Algorithm algorithm, std::span<const topology::GpuId> group, base::Bytes n,
                            const topology::Topology& topo);
}  // namespace detail

}  // namespace sim::collectives
