// sim/topology/topology.cpp: builds the cluster graph (Boost.Graph lives here only) and answers placement and paths.
#include "sim/topology/topology.hpp"

#include "sim/base/assert.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <boost/iterator/transform_iterator.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace sim::topology {

namespace {

constexpr int kMaxGpus = 1 << 24;           // keeps every id in an int with room to spare
constexpr int kMaxLeafDownlinks = 1 << 12;  // 4096-port switches are far beyond any product
constexpr int kAutoRackNodes = 4;           // see the rack rule in topology.hpp

struct EdgeData {
  LinkId link = 0;
};

using CsrGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, EdgeData, boost::no_property,
                                                    std::uint32_t, std::uint32_t>;

// Boost.Graph filter: keeps the edges whose link is up (default-constructible and assignable, as filtered_graph needs).
struct EdgeUp {
  const CsrGraph* graph = nullptr;
  const void* links = nullptr;  // the topology's link table (Topology::StoredLink is private)
  bool (*up)(const void* links, std::size_t id) = nullptr;
  bool operator()(boost::graph_traits<CsrGraph>::edge_descriptor e) const {
    return up(links, static_cast<std::size_t>((*graph)[e].link));
  }
};

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

std::string num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

struct Topology::Graph {
  CsrGraph g;
};

const char* to_string(LinkKind k) {
  switch (k) {
    case LinkKind::NvLink:
      return "nvlink";
    case LinkKind::NvSwitch:
      return "nvswitch";
    case LinkKind::Pcie:
      return "pcie";
    case LinkKind::Nic:
      return "nic";
    case LinkKind::LeafDown:
      return "leaf-down";
    case LinkKind::LeafUp:
      return "leaf-up";
    case LinkKind::SpineDown:
      return "spine-down";
    case LinkKind::SpineUp:
      return "spine-up";
    case LinkKind::CoreDown:
      return "core-down";
  }
  return "?";
}

std::vector<base::Diagnostic> validate(const TopologyConfig& c) {
  std::vector<base::Diagnostic> out;
  auto add = [&out](const char* field, std::string message) {
    out.push_back({"", std::string("/") + field, std::move(message)});
  };
  const bool gpn_ok = c.gpus_per_node >= 1;
  if (c.gpus < 1 || c.gpus > kMaxGpus)
    add("gpus", "must be between 1 and " + std::to_string(kMaxGpus) + "; found " + std::to_string(c.gpus));
  if (!gpn_ok) add("gpus_per_node", "must be at least 1; found " + std::to_string(c.gpus_per_node));
  if (gpn_ok && c.gpus >= 1 && c.gpus % c.gpus_per_node != 0)
    add("gpus", "must be a multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) + "); found " +
                    std::to_string(c.gpus));
  if (gpn_ok && (c.nvlink_domain < c.gpus_per_node || c.nvlink_domain % c.gpus_per_node != 0))
    add("nvlink_domain", "must be a positive multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) +
                             "); found " + std::to_string(c.nvlink_domain));
  if (!(c.nvlink_bw.bytes_per_s > 0) || !std::isfinite(c.nvlink_bw.bytes_per_s))
    add("nvlink_bw", "must be a positive bandwidth, e.g. \"450 GB/s\"; found " + num(c.nvlink_bw.bytes_per_s) + " B/s");
  if (!(c.nvls_bw.bytes_per_s >= 0) || !std::isfinite(c.nvls_bw.bytes_per_s))
    add("nvls_bw",
        "must be zero (no NVLink SHARP) or a positive bandwidth; found " + num(c.nvls_bw.bytes_per_s) + " B/s");
  if (!(c.nic_bw.bytes_per_s > 0) || !std::isfinite(c.nic_bw.bytes_per_s))
    add("nic_bw", "must be a positive bandwidth, e.g. \"400 Gbit/s\"; found " + num(c.nic_bw.bytes_per_s) + " B/s");
  if (c.nvlink_latency < base::Time::zero())
    add("nvlink_latency", "must not be negative; found " + std::to_string(c.nvlink_latency.ns) + " ns");
  if (c.nic_latency < base::Time::zero())
    add("nic_latency", "must not be negative; found " + std::to_string(c.nic_latency.ns) + " ns");
  if (c.nics_per_gpu < 1) add("nics_per_gpu", "must be at least 1; found " + std::to_string(c.nics_per_gpu));
  if (!std::isfinite(c.oversubscription) || c.oversubscription < 1.0)
    add("oversubscription",
        "must be a ratio >= 1 (downlink:uplink bandwidth, 1 = non-blocking); found " + num(c.oversubscription));
  if (c.leaf_downlinks < 1 || c.leaf_downlinks > kMaxLeafDownlinks) {
    add("leaf_downlinks",
        "must be between 1 and " + std::to_string(kMaxLeafDownlinks) + "; found " + std::to_string(c.leaf_downlinks));
  } else if (c.nics_per_gpu >= 1 && c.leaf_downlinks % c.nics_per_gpu != 0) {
    add("leaf_downlinks", "must be a multiple of nics_per_gpu (" + std::to_string(c.nics_per_gpu) +
                              ") so that a GPU's NICs share one leaf; found " + std::to_string(c.leaf_downlinks));
  } else if (c.kind == TopologyConfig::Kind::FatTree && gpn_ok && c.nics_per_gpu >= 1 &&
             (c.leaf_downlinks / c.nics_per_gpu) % c.gpus_per_node != 0) {
    add("leaf_downlinks",
        "a plain fat tree puts whole nodes on a leaf: leaf_downlinks / nics_per_gpu must be a "
        "multiple of gpus_per_node (" +
            std::to_string(c.gpus_per_node) + "); found " + std::to_string(c.leaf_downlinks));
  }
  if (c.nodes_per_rack < 0)
    add("nodes_per_rack", "must be 0 (automatic) or positive; found " + std::to_string(c.nodes_per_rack));
  return out;
}

Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

Topology::Topology(const TopologyConfig& config) : config_(config) {
  if (auto problems = validate(config); !problems.empty()) {
    for (auto& p : problems)
      p.file = "topology";
    throw base::ConfigError(std::move(problems));
  }
  const int n_gpus = config_.gpus;
  const int gpn = config_.gpus_per_node;
  const int switch_radix = 2 * config_.leaf_downlinks;
  nodes_ = n_gpus / gpn;
  domains_ = ceil_div(n_gpus, config_.nvlink_domain);
  gpus_per_leaf_ = config_.leaf_downlinks / config_.nics_per_gpu;
  if (config_.kind == TopologyConfig::Kind::RailFatTree) {
    nodes_per_group_ = gpus_per_leaf_;
    leaves_ = ceil_div(nodes_, nodes_per_group_) * gpn;
  } else {
    nodes_per_group_ = gpus_per_leaf_ / gpn;
    leaves_ = ceil_div(nodes_, nodes_per_group_);
  }
  uplinks_ = std::max(1, static_cast<int>(std::lround(gpus_per_leaf_ / config_.oversubscription)));
  if (leaves_ == 1) {
    tiers_ = 1;
    uplinks_ = 0;
    pods_ = 0;
  } else if (leaves_ <= switch_radix) {
    tiers_ = 2;
    pods_ = 1;
    leaves_per_pod_ = leaves_;
  } else {
    tiers_ = 3;
    leaves_per_pod_ = switch_radix / 2;
    pods_ = ceil_div(leaves_, leaves_per_pod_);
    cores_per_plane_ = switch_radix / 2;
  }
  per_node_ = Divisor(gpn);
  per_domain_ = Divisor(config_.nvlink_domain);
  per_group_ = Divisor(nodes_per_group_);
  if (tiers_ == 3) per_pod_ = Divisor(leaves_per_pod_);
  nodes_per_rack_ = config_.nodes_per_rack > 0                      ? config_.nodes_per_rack
                    : config_.nvlink_domain > config_.gpus_per_node ? config_.nvlink_domain / gpn
                                                                    : kAutoRackNodes;

  // Vertex ids: GPUs, NVSwitches, NICs, leaves, spines (pod-major), cores (plane-major).
  first_nvswitch_ = n_gpus;
  first_nic_ = first_nvswitch_ + domains_;
  first_leaf_ = first_nic_ + n_gpus;
  first_spine_ = first_leaf_ + leaves_;
  first_core_ = first_spine_ + pods_ * uplinks_;
  vertices_ = first_core_ + cores();

  // Link ids in blocks, so that path() is index arithmetic.
  first_pcie_ = 2 * n_gpus;
  first_nic_link_ = 4 * n_gpus;
  first_leaf_down_ = 5 * n_gpus;
  first_leaf_up_ = 6 * n_gpus;
  first_spine_down_ = first_leaf_up_ + leaves_ * uplinks_;
  first_spine_up_ = first_spine_down_ + leaves_ * uplinks_;
  const int core_links = tiers_ == 3 ? pods_ * uplinks_ * cores_per_plane_ : 0;
  first_core_down_ = first_spine_up_ + core_links;
  const auto total_links = static_cast<std::size_t>(first_core_down_ + core_links);

  const base::Bandwidth nic_bw{config_.nic_bw.bytes_per_s * config_.nics_per_gpu};
  // Uplinks run at the downlinks' rate (one bonded NIC's): a ratio that does not divide the G ports is realised as
  // round(G / ratio) of them, as a switch would be cabled (with the link rate scaled instead, 1.25:1 came out slower
  // than 1.5:1).
  const base::Bandwidth uplink_bw = nic_bw;
  const base::Bandwidth unlimited{std::numeric_limits<double>::infinity()};
  const base::Time nvl_half{config_.nvlink_latency.ns / 2};
  const base::Time nvl_up = config_.nvlink_latency - nvl_half;
  const base::Time hop = config_.nic_latency;

  // Filled in LinkId order, block by block (no zero-fill of the largest table first).
  links_.reserve(total_links);
  auto add = [this](int from, int to, LinkKind kind, base::Bandwidth bw, base::Time lat) {
    links_.push_back(StoredLink{from, to, kind, true});
    SIM_ASSERT(links_.size() == 1 || nominal_bw_[static_cast<std::size_t>(kind)].bytes_per_s == 0 ||
                   (nominal_bw_[static_cast<std::size_t>(kind)].bytes_per_s == bw.bytes_per_s &&
                    nominal_latency_[static_cast<std::size_t>(kind)] == lat),
               "every link of a kind has the kind's bandwidth and latency");
    nominal_bw_[static_cast<std::size_t>(kind)] = bw;  // the same for every link of the kind
    nominal_latency_[static_cast<std::size_t>(kind)] = lat;
  };
  for (GpuId g = 0; g < n_gpus; ++g)
    add(g, first_nvswitch_ + nvlink_domain_of(g), LinkKind::NvLink, config_.nvlink_bw, nvl_up);
  for (GpuId g = 0; g < n_gpus; ++g)
    add(first_nvswitch_ + nvlink_domain_of(g), g, LinkKind::NvSwitch, config_.nvlink_bw, nvl_half);
  for (GpuId g = 0; g < n_gpus; ++g)
    add(g, first_nic_ + g, LinkKind::Pcie, unlimited, base::Time::zero());
  for (GpuId g = 0; g < n_gpus; ++g)
    add(first_nic_ + g, g, LinkKind::Pcie, unlimited, base::Time::zero());
  for (GpuId g = 0; g < n_gpus; ++g)
    add(first_nic_ + g, leaf_vertex(leaf_of(g)), LinkKind::Nic, nic_bw, hop);
  for (GpuId g = 0; g < n_gpus; ++g)
    add(leaf_vertex(leaf_of(g)), first_nic_ + g, LinkKind::LeafDown, nic_bw, hop);
  for (int down = 0; down < 2 && tiers_ >= 2; ++down) {
    for (int l = 0; l < leaves_; ++l) {
      for (int p = 0; p < uplinks_; ++p) {
        const int spine = first_spine_ + pod_of_leaf(l) * uplinks_ + p;
        if (down == 0) {
          add(leaf_vertex(l), spine, LinkKind::LeafUp, uplink_bw, hop);
        } else {
          add(spine, leaf_vertex(l), LinkKind::SpineDown, uplink_bw, hop);
        }
      }
    }
  }
  for (int down = 0; down < 2 && tiers_ == 3; ++down) {
    for (int pod = 0; pod < pods_; ++pod) {
      for (int p = 0; p < uplinks_; ++p) {
        const int spine = first_spine_ + pod * uplinks_ + p;
        for (int c = 0; c < cores_per_plane_; ++c) {
          const int core = first_core_ + p * cores_per_plane_ + c;
          if (down == 0) {
            add(spine, core, LinkKind::SpineUp, uplink_bw, hop);
          } else {
            add(core, spine, LinkKind::CoreDown, uplink_bw, hop);
          }
        }
      }
    }
  }
  SIM_ASSERT(links_.size() == total_links, "link blocks do not add up");
  SIM_ASSERT(tiers_ < 2 || links_[static_cast<std::size_t>(spine_down(0, 0))].kind == LinkKind::SpineDown,
             "link block offsets are off");
}

// The graph: one edge per link, carrying its LinkId, read straight from the link table (no copy). Counting-sort
// construction, O(V + E), once, on first use (thread-safe: the planner shares a topology among its workers).
const Topology::Graph& Topology::graph() const {
  std::call_once(*graph_once_, [this] {
    auto edge_of = [this](LinkId id) {
      const StoredLink& l = links_[static_cast<std::size_t>(id)];
      return std::pair<std::uint32_t, std::uint32_t>(static_cast<std::uint32_t>(l.from),
                                                     static_cast<std::uint32_t>(l.to));
    };
    auto data_of = [](LinkId id) { return EdgeData{id}; };
    const boost::counting_iterator<LinkId> first(0);
    const boost::counting_iterator<LinkId> last(static_cast<LinkId>(links_.size()));
    graph_ = std::make_unique<Graph>(
        Graph{CsrGraph(boost::edges_are_unsorted_multi_pass, boost::make_transform_iterator(first, edge_of),
                       boost::make_transform_iterator(last, edge_of), boost::make_transform_iterator(first, data_of),
                       static_cast<std::uint32_t>(vertices_))});
  });
  return *graph_;
}

int Topology::node_of(GpuId g) const {
  check_gpu(g);
  return g / config_.gpus_per_node;
}

int Topology::local_rank(GpuId g) const {
  check_gpu(g);
  return g % config_.gpus_per_node;
}

int Topology::rack_of(GpuId g) const {
  return node_of(g) / nodes_per_rack_;
}

int Topology::count(DomainKind kind) const {
  switch (kind) {
    case DomainKind::Node:
      return nodes_;
    case DomainKind::NvlinkDomain:
      return domains_;
    case DomainKind::Leaf:
      return leaves_;
    case DomainKind::Rack:
      return ceil_div(nodes_, nodes_per_rack_);
  }
  return 0;
}

std::vector<GpuId> Topology::gpus_in(DomainKind kind, int index) const {
  SIM_ASSERT(index >= 0 && index < count(kind), "domain index out of range");
  const int gpn = config_.gpus_per_node;
  std::vector<GpuId> out;
  auto range = [&out](int first, int last) {
    for (GpuId g = first; g < last; ++g)
      out.push_back(g);
  };
  switch (kind) {
    case DomainKind::Node:
      range(index * gpn, (index + 1) * gpn);
      break;
    case DomainKind::NvlinkDomain:
      range(index * config_.nvlink_domain, std::min(config_.gpus, (index + 1) * config_.nvlink_domain));
      break;
    case DomainKind::Rack:
      range(index * nodes_per_rack_ * gpn, std::min(nodes_, (index + 1) * nodes_per_rack_) * gpn);
      break;
    case DomainKind::Leaf:
      if (config_.kind == TopologyConfig::Kind::RailFatTree) {
        const int group = index / gpn;
        const int rail = index % gpn;
        const int last = std::min(nodes_, (group + 1) * nodes_per_group_);
        for (int node = group * nodes_per_group_; node < last; ++node)
          out.push_back(node * gpn + rail);
      } else {
        range(index * nodes_per_group_ * gpn, std::min(nodes_, (index + 1) * nodes_per_group_) * gpn);
      }
      break;
  }
  return out;
}

void Topology::set_link_up(LinkId id, bool is_up) {
  SIM_ASSERT(id >= 0 && id < links(), "link id out of range");
  StoredLink& l = links_[static_cast<std::size_t>(id)];
  if (l.up != is_up) links_down_ += is_up ? -1 : 1;
  l.up = is_up;
}

std::vector<LinkId> Topology::path(GpuId src, GpuId dst) const {
  std::vector<LinkId> out;
  out.reserve(6);
  append_path(src, dst, out);
  return out;
}

void Topology::append_path(GpuId src, GpuId dst, std::vector<LinkId>& out) const {
  check_gpu(src);
  check_gpu(dst);
  if (src == dst) return;
  if (same_nvlink_domain(src, dst)) {
    out.push_back(nvlink_out(src));  // GPU -> NVSwitch
    out.push_back(nvlink_in(dst));   // NVSwitch -> GPU
    return;
  }
  out.push_back(nic_out(src));
  const SwitchRoute r = route_between_leaves(src, dst, leaf_of(src), leaf_of(dst));
  out.insert(out.end(), r.links.begin(), r.links.begin() + r.size);
  out.push_back(nic_in(dst));
}

Topology::SwitchRoute Topology::switch_route(GpuId src, GpuId dst) const {
  check_gpu(src);
  check_gpu(dst);
  if (src == dst || same_nvlink_domain(src, dst)) return {};
  return route_between_leaves(src, dst, leaf_of(src), leaf_of(dst));
}

// D-mod-K over the spine planes (and the cores of the plane across pods), re-routed around down links (class
// comment).
// With no link down the hashed choice is up: no link is read.
Topology::SwitchRoute Topology::route_between_leaves(GpuId /*src: D-mod-K routes by the destination*/, GpuId dst,
                                                     int ls, int ld) const {
  SwitchRoute r;
  if (ls == ld) return r;
  const bool all_up = links_down_ == 0;
  // D-mod-K (Zahavi, Johnson, Kerbyson, Lang, "Optimized InfiniBand fat-tree routing for shift all-to-all
  // communication patterns", 2010; the fat-tree routing of InfiniBand subnet managers): the plane is the destination's
  // port under its leaf modulo U, so the flows into one leaf from its distinct ports take distinct planes (none shares
  // an uplink while U covers the ports: 1:1), and the core across pods follows the destination leaf's place in its
  // pod. A hash of (src, dst) put flows on planes by chance: 1.5:1 oversubscription came out faster than 1:1.
  const int node = per_node_.quotient(dst);
  const int port = config_.kind == TopologyConfig::Kind::RailFatTree
                       ? node - per_group_.quotient(node) * nodes_per_group_
                       : (node - per_group_.quotient(node) * nodes_per_group_) * config_.gpus_per_node +
                             (dst - node * config_.gpus_per_node);
  const int plane0 = port % uplinks_;
  const int ps = pod_of_leaf(ls);
  const int pd = pod_of_leaf(ld);
  if (ps == pd) {
    int plane = plane0;
    for (int i = 0; i < uplinks_ && !all_up; ++i) {
      const int p = (plane0 + i) % uplinks_;
      if (up(leaf_up(ls, p)) && up(spine_down(ld, p))) {
        plane = p;
        break;
      }
    }
    r.links = {leaf_up(ls, plane), spine_down(ld, plane), 0, 0};
    r.size = 2;
    return r;
  }
  const int core0 = (ld - pd * leaves_per_pod_ + port / uplinks_) % cores_per_plane_;
  int plane = plane0;
  int core = core0;
  bool found = all_up;
  for (int i = 0; i < uplinks_ && !found; ++i) {
    const int p = (plane0 + i) % uplinks_;
    if (!up(leaf_up(ls, p)) || !up(spine_down(ld, p))) continue;
    for (int j = 0; j < cores_per_plane_; ++j) {
      const int c = (core0 + j) % cores_per_plane_;
      if (up(spine_up(ps, p, c)) && up(core_down(pd, p, c))) {
        plane = p;
        core = c;
        found = true;
        break;
      }
    }
  }
  r.links = {leaf_up(ls, plane), spine_up(ps, plane, core), core_down(pd, plane, core), spine_down(ld, plane)};
  r.size = 4;
  return r;
}

std::string to_string(const FabricFailure& f) {
  if (f.kind == FabricFailure::Kind::Spine) return "spine " + std::to_string(f.index);
  return "leaf " + std::to_string(f.leaf) + " uplink " + std::to_string(f.index);
}

std::vector<LinkId> Topology::failure_links(const FabricFailure& f) const {
  auto refuse = [](const std::string& what) { throw base::ConfigError("topology", "/failed", what); };
  if (tiers_ < 2) refuse("the cluster has one leaf switch and no spine: nothing between leaves can fail");
  std::vector<LinkId> out;
  if (f.kind == FabricFailure::Kind::LeafUplink) {
    if (f.leaf < 0 || f.leaf >= leaves_)
      refuse("leaf " + std::to_string(f.leaf) + " does not exist: the cluster has leaves 0-" +
             std::to_string(leaves_ - 1));
    if (f.index < 0 || f.index >= uplinks_)
      refuse("uplink " + std::to_string(f.index) + " does not exist: each leaf has uplinks 0-" +
             std::to_string(uplinks_ - 1) + " (one per spine plane)");
    out = {leaf_up(f.leaf, f.index), spine_down(f.leaf, f.index)};
    return out;
  }
  if (f.index < 0 || f.index >= spines())
    refuse("spine " + std::to_string(f.index) + " does not exist: the cluster has spines 0-" +
           std::to_string(spines() - 1));
  const int pod = f.index / uplinks_;
  const int plane = f.index % uplinks_;
  const int first = pod * leaves_per_pod_;
  const int last = std::min(leaves_, first + leaves_per_pod_);
  for (int l = first; l < last; ++l) {
    out.push_back(leaf_up(l, plane));
    out.push_back(spine_down(l, plane));
  }
  if (tiers_ == 3)
    for (int c = 0; c < cores_per_plane_; ++c) {
      out.push_back(spine_up(pod, plane, c));
      out.push_back(core_down(pod, plane, c));
    }
  return out;
}

std::vector<int> Topology::isolated_leaves() const {
  std::vector<int> out;
  if (tiers_ < 2) return out;
  for (int l = 0; l < leaves_; ++l) {
    bool any = false;
    for (int p = 0; p < uplinks_ && !any; ++p)
      any = up(leaf_up(l, p)) && up(spine_down(l, p));
    if (!any) out.push_back(l);
  }
  return out;
}

base::Time Topology::path_latency(std::span<const LinkId> p) const {
  base::Time t = base::Time::zero();
  for (LinkId id : p)
    t += link(id).latency;
  return t;
}

base::Bandwidth Topology::path_bandwidth(std::span<const LinkId> p) const {
  double bw = std::numeric_limits<double>::infinity();
  for (LinkId id : p)
    bw = std::min(bw, link(id).bandwidth.bytes_per_s);
  return base::Bandwidth{bw};
}

bool Topology::path_up(std::span<const LinkId> p) const {
  return std::all_of(p.begin(), p.end(), [this](LinkId id) { return link(id).up; });
}

int Topology::hop_distance(GpuId src, GpuId dst) const {
  check_gpu(src);
  check_gpu(dst);
  if (src == dst) return 0;
  const CsrGraph& g = graph().g;
  auto link_up = [](const void* table, std::size_t id) {
    return (*static_cast<const std::vector<StoredLink>*>(table))[id].up;
  };
  boost::filtered_graph<CsrGraph, EdgeUp> up_graph(g, EdgeUp{&g, &links_, link_up});
  std::vector<std::uint32_t> pred(static_cast<std::size_t>(vertices_), std::numeric_limits<std::uint32_t>::max());
  auto pred_map = boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g));
  const auto s = static_cast<std::uint32_t>(src);
  pred[s] = s;
  boost::breadth_first_search(
      up_graph, s,
      boost::visitor(boost::make_bfs_visitor(boost::record_predecessors(pred_map, boost::on_tree_edge()))));
  auto v = static_cast<std::uint32_t>(dst);
  if (pred[v] == std::numeric_limits<std::uint32_t>::max()) return -1;
  // Walk back and count the hops a path lists: PCIe hops (GPU<->NIC) are never limiting and not on paths.
  auto is_gpu = [this](std::uint32_t x) { return x < static_cast<std::uint32_t>(config_.gpus); };
  auto is_nic = [this](std::uint32_t x) {
    return x >= static_cast<std::uint32_t>(first_nic_) && x < static_cast<std::uint32_t>(first_leaf_);
  };
  int hops = 0;
  while (v != s) {
    const std::uint32_t u = pred[v];
    if (!((is_gpu(u) && is_nic(v)) || (is_nic(u) && is_gpu(v)))) ++hops;
    v = u;
  }
  return hops;
}

std::size_t Topology::memory_bytes() const {
  const std::size_t edges = links_.size();
  const std::size_t csr = graph_ == nullptr ? 0
                                            : (static_cast<std::size_t>(vertices_) + 1) * sizeof(std::uint32_t) +
                                                  edges * (sizeof(std::uint32_t) + sizeof(EdgeData));
  return sizeof(*this) + links_.capacity() * sizeof(StoredLink) + csr;
}

}  // namespace sim::topology
