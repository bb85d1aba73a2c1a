// sim/topology/topology.hpp: the physical cluster as a graph (GPUs, NVSwitches, NICs, switches) and its paths.
#pragma once
#include "sim/base/errors.hpp"
#include "sim/base/units.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace sim::topology {

using GpuId = int;   // 0 .. gpus()-1; GPU g is local rank g % gpus_per_node of node g / gpus_per_node
using LinkId = int;  // 0 .. links()-1; one direction of one physical link

/// Defaults for the latencies, each with its source.
///
/// NVLink: NCCL's tuning model charges 0.6 us per ring step over NVLink with its lowest-latency protocol
/// (hwLat[NVLINK][Ring][LL] in NVIDIA/nccl src/graph/tuning.cc, NCCL 2.18). We take that as the GPU-to-GPU latency
/// of one step through the NVSwitch.
inline constexpr base::Time kDefaultNvlinkLatency{600};
/// Network: the same table charges 2.7 us per inter-node ring step (hwLat[NET][Ring][LL]). A rail-local step crosses
/// two hops (NIC->leaf, leaf->NIC), hence 1.35 us per hop. The figure includes NIC and software overhead, so paths
/// through spines (4 hops) and cores (6 hops) overstate what the extra switch hops add: a conservative choice that
/// matters only for latency-bound (small) messages. Calibration should replace both numbers.
inline constexpr base::Time kDefaultNicLatency{1350};

/// The cluster to build. Every field is user input: validate() reports problems, the Topology constructor throws them.
struct TopologyConfig {
  enum class Kind {
    RailFatTree,  // NIC of local rank r of every node of a group goes to the rail-r leaf of that group
    FatTree,      // all NICs of a node go to the same leaf
  };

  int gpus = 0;
  int gpus_per_node = 8;
  int nvlink_domain = 8;        // GPUs per NVLink/NVSwitch domain: 8, or 72 for NVL72; a multiple of gpus_per_node
  base::Bandwidth nvlink_bw{};  // per GPU per direction (H100: 450 GB/s)
  base::Time nvlink_latency = kDefaultNvlinkLatency;  // GPU-to-GPU, one step through the NVSwitch
  /// Per GPU per direction, what an NVLink SHARP all-reduce's traffic gets (hardware nvlink.bandwidth x
  /// efficiency.nvls); zero when the NVSwitches cannot reduce (no NVLS, sim/collectives falls back to rings).
  base::Bandwidth nvls_bw{};
  int nics_per_gpu = 1;      // bonded: one NIC vertex of nics_per_gpu * nic_bw on nics_per_gpu leaf ports
  base::Bandwidth nic_bw{};  // per NIC per direction (NDR: 400 Gbit/s)
  base::Time nic_latency = kDefaultNicLatency;  // per network hop (NIC<->leaf, leaf<->spine, spine<->core)
  Kind kind = Kind::RailFatTree;
  double oversubscription = 1.0;  // leaf downlink:uplink bandwidth, >= 1
  int leaf_downlinks = 32;        // NIC ports per leaf; the switch radix is taken as 2 * leaf_downlinks
  int nodes_per_rack = 0;         // 0: one NVLink domain when it spans nodes (NVL72), else 4 nodes (see rack rule)
};

/// Problems in a config, one per field (Diagnostic::path is the TopologyConfig field name, e.g. "/gpus_per_node";
/// the scenario layer maps it to its own JSON path). Empty when the config is buildable.
std::vector<base::Diagnostic> validate(const TopologyConfig& config);

/// Each link is one direction; kinds are named after the vertex the link leaves.
enum class LinkKind : std::uint8_t {
  NvLink,     // GPU -> NVSwitch
  NvSwitch,   // NVSwitch -> GPU
  Pcie,       // GPU <-> NIC, both directions; never limiting, never on a path
  Nic,        // NIC -> leaf
  LeafDown,   // leaf -> NIC
  LeafUp,     // leaf -> spine
  SpineDown,  // spine -> leaf
  SpineUp,    // spine -> core (three tiers only)
  CoreDown,   // core -> spine (three tiers only)
};
inline constexpr std::size_t kLinkKinds = 9;
const char* to_string(LinkKind k);

struct Link {
  base::Bandwidth bandwidth;  // +infinity for Pcie
  base::Time latency;
  int from = 0;  // vertex ids
  int to = 0;
  LinkKind kind = LinkKind::NvLink;
  bool up = true;
};

/// n / d for 0 <= n < 2^31 and a fixed d >= 1 by one multiplication and a shift, exact: with l = ceil(log2 d) and
/// m = floor(2^(31+l) / d) + 1, n / d = (n m) >> (31 + l), and n m < 2^63 (Granlund, Montgomery, "Division by
/// Invariant Integers using Multiplication", PLDI 1994, Theorem 4.2 with N = 31). The GPU-to-domain and GPU-to-leaf
/// lookups divide by configuration constants once per rank of every costed collective.
class Divisor {
 public:
  Divisor() = default;
  explicit Divisor(int d) {
    SIM_ASSERT(d >= 1, "division by a non-positive constant");
    int l = 0;
    while ((1LL << l) < d)
      ++l;
    shift_ = 31 + l;
    magic_ = (std::uint64_t{1} << shift_) / static_cast<std::uint64_t>(d) + 1;
  }
  int quotient(int n) const { return static_cast<int>((static_cast<std::uint64_t>(n) * magic_) >> shift_); }

 private:
  std::uint64_t magic_ = (std::uint64_t{1} << 31) + 1;  // d = 1
  int shift_ = 31;
};

/// Failure and placement domains.
enum class DomainKind { Node, NvlinkDomain, Leaf, Rack };

/// A failed element of the switch fabric (the scenario's cluster.network.failed): one leaf's uplink to one spine plane
/// (both directions), or a whole spine switch (every link it has). Routing goes around them (Topology's class
/// comment: re-routed to the next plane / core whose links are up), so bandwidth is lost, not reachability,
/// while a leaf keeps one uplink.
struct FabricFailure {
  enum class Kind { LeafUplink, Spine };
  Kind kind = Kind::Spine;
  int leaf = 0;   // LeafUplink: the leaf
  int index = 0;  // LeafUplink: the spine plane of its pod (0 .. uplinks-1); Spine: the spine (0 .. spines()-1)
};
/// The scenario's spelling: "spine S" or "leaf L uplink P".
std::string to_string(const FabricFailure& f);

/// The physical cluster: a link table indexed by LinkId (12 bytes a link: ends, kind, state; bandwidth and latency are
/// the kind's) plus a Boost.Graph directed graph (kept out of this header, built on first use by hop_distance).
///
/// Structure (S = switch radix = 2 * leaf_downlinks, k = nics_per_gpu, G = gpus_per_leaf = leaf_downlinks / k):
/// - one NVSwitch vertex per NVLink domain (the last domain may be partial); GPU<->NVSwitch at nvlink_bw each way;
/// - one NIC vertex per GPU: its k NICs bonded (k * nic_bw), on k ports of one leaf; GPU<->NIC PCIe never limits;
/// - rail-optimised: nodes form groups of G; the group has gpus_per_node leaves, leaf r holds local rank r of each
///   node of the group. Plain fat tree: G / gpus_per_node whole nodes per leaf;
/// - U = max(1, round(G / oversubscription)) uplinks per leaf, each at a downlink's k * nic_bw (one spine vertex
///   stands for the k physical spines a bonded NIC's ports reach), so a ratio that does not divide G is realised as
///   the nearest whole number of uplinks;
/// - tiers: one leaf needs no spine; two tiers (leaf, spine) while leaves <= S, since a spine has S ports, one per
///   leaf; beyond that three tiers: pods of S/2 leaves, each pod with its own U spines, and U planes of S/2 cores;
///   spine s of every pod connects to every core of plane s at the leaf-uplink bandwidth (spines are 1:1). The core
///   radix is not limited (a cluster beyond S^3/4 ports would need director-class cores or a fourth tier).
/// - racks: nodes_per_rack nodes, or (0) one NVLink domain when it spans several nodes (NVL72 is one rack), else 4
///   nodes: DGX H100 is 8U and draws 10.2 kW, and four per rack is the common air-cooled density.
///
/// Routing: inside one NVLink domain gpu->nvswitch->gpu; otherwise nic->leaf->[spine->[core->spine]->leaf]->nic
/// (PCIe hops omitted). The spine plane and core are chosen by D-mod-K (InfiniBand's fat-tree routing: the
/// destination's port under its leaf modulo U, the core by the destination leaf's place in its pod). A route over a
/// down link is re-routed to the next plane/core whose links are all up (in order from that choice); when no route is
/// up (a down NVLink, NIC or leaf port, or every uplink) path() returns the chosen route over the down link, and
/// path_up() is false: a flow on it gets rate 0 and stalls until the link comes back.
class Topology {
 public:
  /// Builds the cluster; throws base::ConfigError listing every problem validate() finds.
  explicit Topology(const TopologyConfig& config);
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const TopologyConfig& config() const { return config_; }
  int gpus() const { return config_.gpus; }
  int nodes() const { return nodes_; }
  int node_of(GpuId g) const;
  int local_rank(GpuId g) const;
  int nvlink_domain_of(GpuId g) const;
  int leaf_of(GpuId g) const;
  int rack_of(GpuId g) const;
  bool same_nvlink_domain(GpuId a, GpuId b) const { return nvlink_domain_of(a) == nvlink_domain_of(b); }

  int count(DomainKind kind) const;
  /// GPUs of one domain in increasing id order. index in [0, count(kind)).
  std::vector<GpuId> gpus_in(DomainKind kind, int index) const;

  int tiers() const { return tiers_; }  // switch tiers: 1 (one leaf), 2 (leaf, spine) or 3 (leaf, spine, core)
  int leaves() const { return leaves_; }
  int spines() const { return pods_ * uplinks_; }
  int cores() const { return tiers_ == 3 ? uplinks_ * cores_per_plane_ : 0; }
  int vertices() const { return vertices_; }

  int links() const { return static_cast<int>(links_.size()); }
  /// The link with its kind's bandwidth and latency (a value: the table keeps only ends, kind and state).
  Link link(LinkId id) const;
  void set_link_up(LinkId id, bool up);
  /// Every link of a kind is built with the same bandwidth and latency, and set_link_up is the only change a link sees
  /// afterwards: each link has its kind's nominal latency, and while links_down() == 0 its nominal bandwidth too. Lets
  /// hot paths (collectives::CollectiveCostModel) skip reading link by link.
  base::Bandwidth nominal_bandwidth(LinkKind kind) const { return nominal_bw_[static_cast<std::size_t>(kind)]; }
  base::Time nominal_latency(LinkKind kind) const { return nominal_latency_[static_cast<std::size_t>(kind)]; }
  int links_down() const { return links_down_; }
  bool link_up(LinkId id) const { return link(id).up; }

  /// Directed links crossed from src to dst (see the class comment); empty when src == dst.
  std::vector<LinkId> path(GpuId src, GpuId dst) const;
  /// Same, appended to `out` (no allocation once `out` has capacity).
  void append_path(GpuId src, GpuId dst, std::vector<LinkId>& out) const;
  /// The switch links of path(src, dst) when src and dst hang off different leaves, as path() lists them between its
  /// first and last link: leaf up, spine down within a pod (size 2); leaf up, spine up, core down, spine down across
  /// pods (size 4). Size 0 under one leaf or inside one NVLink domain. No allocation.
  struct SwitchRoute {
    std::array<LinkId, 4> links{};
    int size = 0;
  };
  SwitchRoute switch_route(GpuId src, GpuId dst) const;
  /// A GPU's own links, which begin and end every path: path(src, dst) starts with src's link to its NVSwitch (same
  /// NVLink domain) or to its leaf, and ends with dst's link back from it; any links between are shared switch links.
  /// Index arithmetic, for hot paths that count how many transfers share a link without building paths.
  LinkId nvlink_out(GpuId g) const { return g; }                 // LinkKind::NvLink
  LinkId nvlink_in(GpuId g) const { return config_.gpus + g; }   // LinkKind::NvSwitch
  LinkId nic_out(GpuId g) const { return first_nic_link_ + g; }  // LinkKind::Nic
  LinkId nic_in(GpuId g) const { return first_leaf_down_ + g; }  // LinkKind::LeafDown
  /// Sum of the latencies of the links; the lowest bandwidth among them (+infinity for an empty path).
  base::Time path_latency(std::span<const LinkId> path) const;
  base::Bandwidth path_bandwidth(std::span<const LinkId> path) const;
  bool path_up(std::span<const LinkId> path) const;

  /// Links on a shortest route (fewest graph edges) from src to dst over up links, found by breadth-first search on
  /// the graph, not counting its PCIe hops (as path() lists none); -1 when unreachable. O(vertices + edges): a test
  /// oracle for path() and a diagnostic, not for hot paths.
  int hop_distance(GpuId src, GpuId dst) const;

  /// Approximate heap bytes held (link table, graph, index tables).
  std::size_t memory_bytes() const;

  /// Spine planes per leaf (the uplinks U of the class comment); 0 with one leaf.
  int uplinks() const { return uplinks_; }
  /// The directed links a fabric failure takes down (set_link_up(id, false) on each fails it). Throws
  /// base::ConfigError (path "/failed") when the cluster has no such leaf, plane or spine.
  std::vector<LinkId> failure_links(const FabricFailure& f) const;
  /// Leaves every one of whose uplinks is down: their GPUs reach no other leaf.
  std::vector<int> isolated_leaves() const;

 private:
  struct Graph;  // Boost.Graph, defined in topology.cpp only

  void check_gpu(GpuId g) const;
  SwitchRoute route_between_leaves(GpuId src, GpuId dst, int ls, int ld) const;  // ls, ld: their leaves
  int leaf_vertex(int leaf) const { return first_leaf_ + leaf; }
  int pod_of_leaf(int leaf) const { return tiers_ == 3 ? per_pod_.quotient(leaf) : 0; }
  LinkId leaf_up(int leaf, int plane) const { return first_leaf_up_ + leaf * uplinks_ + plane; }
  LinkId spine_down(int leaf, int plane) const { return first_spine_down_ + leaf * uplinks_ + plane; }
  LinkId spine_up(int pod, int plane, int core) const {
    return first_spine_up_ + (pod * uplinks_ + plane) * cores_per_plane_ + core;
  }
  LinkId core_down(int pod, int plane, int core) const {
    return first_core_down_ + (pod * uplinks_ + plane) * cores_per_plane_ + core;
  }
  bool up(LinkId id) const { return links_[static_cast<std::size_t>(id)].up; }

  TopologyConfig config_;
  int nodes_ = 0;
  int domains_ = 0;
  int gpus_per_leaf_ = 0;  // G
  int nodes_per_group_ = 0;
  int leaves_ = 0;
  int uplinks_ = 0;  // U: spine planes
  int tiers_ = 1;
  int leaves_per_pod_ = 0;
  int pods_ = 0;
  int cores_per_plane_ = 0;  // S/2 in three tiers
  int nodes_per_rack_ = 0;
  // By gpus_per_node, nvlink_domain, nodes_per_group_ and leaves_per_pod_ (three tiers).
  Divisor per_node_, per_domain_, per_group_, per_pod_;
  int vertices_ = 0;
  int first_nvswitch_ = 0, first_nic_ = 0, first_leaf_ = 0, first_spine_ = 0, first_core_ = 0;
  LinkId first_pcie_ = 0, first_nic_link_ = 0, first_leaf_down_ = 0, first_leaf_up_ = 0, first_spine_down_ = 0,
         first_spine_up_ = 0, first_core_down_ = 0;
  /// A link as the table keeps it, 12 bytes: every link of a kind has the kind's bandwidth and latency
  /// (nominal_bw_, nominal_latency_), so only its ends and state are per link (a 16M-GPU cluster has ~120M links).
  struct StoredLink {
    std::int32_t from = 0;
    std::int32_t to = 0;
    LinkKind kind = LinkKind::NvLink;
    bool up = true;
  };
  std::vector<StoredLink> links_;
  std::array<base::Bandwidth, kLinkKinds> nominal_bw_{};
  std::array<base::Time, kLinkKinds> nominal_latency_{};
  int links_down_ = 0;
  // Built on first use (hop_distance: the test oracle and diagnostic), not with the topology: routing is index
  // arithmetic, and a 16M-GPU analytic step should not pay for a graph it never walks. The flag is heap-held so that
  // Topology stays movable.
  mutable std::unique_ptr<Graph> graph_;
  mutable std::unique_ptr<std::once_flag> graph_once_ = std::make_unique<std::once_flag>();
  const Graph& graph() const;
};

// Hot accessors, inline: the collective cost model calls them once per rank or per transfer.

inline void Topology::check_gpu(GpuId g) const {
  SIM_ASSERT(g >= 0 && g < config_.gpus, "GPU id out of range");
}

inline int Topology::nvlink_domain_of(GpuId g) const {
  check_gpu(g);
  return per_domain_.quotient(g);
}

inline int Topology::leaf_of(GpuId g) const {
  check_gpu(g);
  const int node = per_node_.quotient(g);
  if (config_.kind == TopologyConfig::Kind::RailFatTree)
    return per_group_.quotient(node) * config_.gpus_per_node + (g - node * config_.gpus_per_node);
  return per_group_.quotient(node);
}

inline Link Topology::link(LinkId id) const {
  SIM_ASSERT(id >= 0 && id < links(), "link id out of range");
  const StoredLink& l = links_[static_cast<std::size_t>(id)];
  const auto k = static_cast<std::size_t>(l.kind);
  return Link{nominal_bw_[k], nominal_latency_[k], l.from, l.to, l.kind, l.up};
}

}  // namespace sim::topology
