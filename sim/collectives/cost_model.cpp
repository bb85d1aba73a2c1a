// sim/collectives/cost_model.cpp: CollectiveCostModel, the phases of collective.cpp's plan() costed without building
// them (the step planner's and the sweeps' fast path; collective.cpp keeps the reference it must match bit for bit).
// cost_model_choice.cpp holds the algorithm choice and the group's layout.
#include "sim/collectives/collective.hpp"

#include "sim/base/assert.hpp"
#include "sim/collectives/phase_sum.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <utility>

namespace sim::collectives {

using detail::add_concurrent;
using detail::add_phase;
using topology::GpuId;
using topology::LinkId;

// CollectiveCostModel: the phases of plan() costed as evaluate() costs them, without materialising them. A phase's
// transfers arrive as node indices into nodes_ (the sorted group, or the caller's order for send/recv and all-to-all).
// evaluate() counts the transfers crossing each link of their paths and takes min(capacity / count). A path begins
// with the sender's own link (NVLink or NIC) and ends with the receiver's; only a transfer between leaves builds its
// path, for the switch links between. Every phase has one of two shapes, which fix the counts on the own links:
// - each node sends at most once and receives at most once (rings, chains): every own link used carries 1 transfer;
// - every transfer comes with its reverse (the tree's reduce and broadcast, all-to-all): a node's out and in links
//   over one medium carry as many transfers as it has exchanges over that medium, counted per node.
// When Auto has a best time already, a phase that cannot beat it skips the routing (see end_phase()).
// Latencies come from the links' kinds (Topology::nominal_latency). With no link down every link has its kind's
// nominal bandwidth, and C / count is smallest at the largest count (division is monotone): one division per kind
// instead of one per link, and no link is read. The same links, counts and divisions give the same minimum, bit for
// bit.

namespace {

std::size_t index(int i) {
  return static_cast<std::size_t>(i);
}

// Per node, exchange counters (kMedia of them): with others in its NVLink domain, and over its NIC.
constexpr std::size_t kNvlink = 0;
constexpr std::size_t kNic = 1;

}  // namespace

void CollectiveCostModel::begin_phase(bool exchanges) {
  exchanges_phase_ = exchanges;
  nominal_ = topo_.links_down() == 0;
  if (exchanges_phase_) std::fill(exchanges_.begin(), exchanges_.end(), 0);
  switch_.clear();
  between_leaves_.clear();
  network_pairs_.clear();
  nvlink_ = false;
  network_ = false;
  leaf_local_ = false;
  widest_ = 0;
  rate_ = std::numeric_limits<double>::infinity();
}

// A transfer of a phase where each node sends and receives at most once. With every link nominal, the media's flags
// are all end_phase() needs; with a link down, the two own links carry this transfer only and bound the rate now.
inline void CollectiveCostModel::add_transfer(int src, int dst) {
  const GpuId s = nodes_[index(src)];
  const GpuId d = nodes_[index(dst)];
  if (domain_[index(src)] == domain_[index(dst)]) {
    nvlink_ = true;
    if (nominal_) return;
    limit_rate(topo_.nvlink_out(s), 1);
    limit_rate(topo_.nvlink_in(d), 1);
    return;
  }
  network_ = true;
  if (!siblings_.empty()) network_pairs_.emplace_back(src, dst);
  if (!nominal_) {
    limit_rate(topo_.nic_out(s), 1);
    limit_rate(topo_.nic_in(d), 1);
  }
  if (leaf_[index(src)] == leaf_[index(dst)]) {
    leaf_local_ = true;
    return;
  }
  add_between_leaves(src, dst);
}

// A transfer and its reverse: each node's out and in links over the medium carry one more.
inline void CollectiveCostModel::add_exchange(int a, int b) {
  std::int32_t* ea = &exchanges_[index(a) * kMedia];
  std::int32_t* eb = &exchanges_[index(b) * kMedia];
  if (domain_[index(a)] == domain_[index(b)]) {
    ++ea[kNvlink];
    ++eb[kNvlink];
    nvlink_ = true;
    return;
  }
  ++ea[kNic];
  ++eb[kNic];
  network_ = true;
  if (!siblings_.empty()) {
    network_pairs_.emplace_back(a, b);
    network_pairs_.emplace_back(b, a);
  }
  if (leaf_[index(a)] == leaf_[index(b)]) {
    leaf_local_ = true;
    return;
  }
  add_between_leaves(a, b);
  add_between_leaves(b, a);
}

// A transfer between leaves: routed by end_phase() unless the phase cannot matter.
void CollectiveCostModel::add_between_leaves(int src, int dst) {
  between_leaves_.emplace_back(src, dst);
}

// The switch links of a transfer's path, each keyed by kind then id.
void CollectiveCostModel::route(int src, int dst) {
  widest_ = std::max(widest_, route_gpus(nodes_[index(src)], nodes_[index(dst)]));
}

// The switch links between two GPUs under different leaves, onto switch_; returns how many.
int CollectiveCostModel::route_gpus(GpuId src, GpuId dst) {
  using topology::LinkKind;
  const topology::Topology::SwitchRoute r = topo_.switch_route(src, dst);
  constexpr std::array<LinkKind, 2> kInPod = {LinkKind::LeafUp, LinkKind::SpineDown};
  constexpr std::array<LinkKind, 4> kAcrossPods = {LinkKind::LeafUp, LinkKind::SpineUp, LinkKind::CoreDown,
                                                   LinkKind::SpineDown};
  const LinkKind* kinds = r.size == 2 ? kInPod.data() : kAcrossPods.data();
  for (std::size_t i = 0; i < static_cast<std::size_t>(r.size); ++i)
    switch_.push_back(static_cast<std::uint64_t>(kinds[i]) << 32 | static_cast<std::uint32_t>(r.links[i]));
  return r.size;
}

void CollectiveCostModel::limit_rate(LinkId link, std::int32_t transfers) {
  const topology::Link& l = topo_.link(link);
  if (std::isinf(l.bandwidth.bytes_per_s)) return;
  const double capacity = l.up ? l.bandwidth.bytes_per_s : 0.0;
  rate_ = std::min(rate_, capacity / static_cast<double>(transfers));
}

void CollectiveCostModel::limit_rate(topology::LinkKind kind, std::int32_t transfers) {
  const double capacity = topo_.nominal_bandwidth(kind).bytes_per_s;
  if (std::isinf(capacity)) return;
  rate_ = std::min(rate_, capacity / static_cast<double>(transfers));
}

// evaluate()'s phase before a protocol is applied: alpha steps x the slowest path of each class (NVLink, network; the
// protocol scales each), and the bottleneck rate at the first water-filling level. With `beat` < Time::max() (a tree
// that Auto costs after a faster candidate), a phase whose every protocol's cost, before routing its transfers between
// leaves, is already at or above `beat` stops there: routing can only add links, lowering the rate and raising the
// latency, so it cannot come below; `*cut` tells the caller (the phase is then only a lower bound).
CollectiveCostModel::RawPhase CollectiveCostModel::end_phase_raw(base::Bytes bytes, std::int64_t steps, base::Time beat,
                                                                 bool* cut) {
  using topology::LinkKind;
  auto latency = [this](std::initializer_list<LinkKind> kinds) {
    base::Time t = base::Time::zero();
    for (LinkKind k : kinds)
      t += topo_.nominal_latency(k);
    return t;
  };
  RawPhase r{bytes, steps, base::Time::zero(), base::Time::zero(), 0};
  // Path latencies: the sums over their links' kinds, the slowest of each class.
  if (nvlink_) r.nvlink = latency({LinkKind::NvLink, LinkKind::NvSwitch});
  if (leaf_local_) r.network = latency({LinkKind::Nic, LinkKind::LeafDown});
  const base::Time via_spine = latency({LinkKind::Nic, LinkKind::LeafUp, LinkKind::SpineDown, LinkKind::LeafDown});
  if (!between_leaves_.empty()) r.network = std::max(r.network, via_spine);  // (via a core: more, below)

  std::array<std::int32_t, kMedia> most{};  // the most transfers on one own link, per medium
  if (!exchanges_phase_) {
    most = {nvlink_ ? 1 : 0, network_ ? 1 : 0};
  } else {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      for (std::size_t m = 0; m < kMedia; ++m)
        most[m] = std::max(most[m], exchanges_[i * kMedia + m]);
  }
  if (nominal_) {
    if (most[kNvlink] != 0) {
      limit_rate(LinkKind::NvLink, most[kNvlink]);
      limit_rate(LinkKind::NvSwitch, most[kNvlink]);
    }
    if (most[kNic] != 0) {
      limit_rate(LinkKind::Nic, most[kNic]);
      limit_rate(LinkKind::LeafDown, most[kNic]);
    }
  } else if (exchanges_phase_) {  // (once per node, add_transfer() limited the rate already)
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const GpuId g = nodes_[i];
      if (const std::int32_t e = exchanges_[i * kMedia + kNvlink]; e != 0) {
        limit_rate(topo_.nvlink_out(g), e);
        limit_rate(topo_.nvlink_in(g), e);
      }
      if (const std::int32_t e = exchanges_[i * kMedia + kNic]; e != 0) {
        limit_rate(topo_.nic_out(g), e);
        limit_rate(topo_.nic_in(g), e);
      }
    }
  }
  r.rate = rate_;
  if (cut) *cut = false;
  if (!between_leaves_.empty() && beat < base::Time::max()) {
    bool can_beat = false;
    for (const ProtocolTerms& t : candidates_) {
      const PhaseCost bound = cost_of(r, t);
      can_beat = can_beat ||
                 detail::saturating_add(t.base, add_phase(base::Time::zero(), bound.latency, bound.transfer)) < beat;
    }
    if (!can_beat) {
      if (cut) *cut = true;
      return r;
    }
  }
  for (const auto& [src, dst] : between_leaves_)
    route(src, dst);
  // The siblings' transfers between leaves share the switch links; their own NVLink and NIC links are not the group's
  // (disjoint groups), and their paths' latencies are not the group's steps.
  for (GpuId o : siblings_)
    for (const auto& [src, dst] : network_pairs_) {
      const GpuId a = nodes_[index(src)] + o;
      const GpuId b = nodes_[index(dst)] + o;
      if (topo_.nvlink_domain_of(a) != topo_.nvlink_domain_of(b) && topo_.leaf_of(a) != topo_.leaf_of(b))
        route_gpus(a, b);
    }
  if (widest_ == 4) {
    r.network = std::max(r.network, latency({LinkKind::Nic, LinkKind::LeafUp, LinkKind::SpineUp, LinkKind::CoreDown,
                                             LinkKind::SpineDown, LinkKind::LeafDown}));
  }
  std::sort(switch_.begin(), switch_.end());
  std::array<std::int32_t, topology::kLinkKinds> most_on_switch{};  // per kind, nominal
  for (std::size_t i = 0; i < switch_.size();) {
    std::size_t j = i + 1;
    while (j < switch_.size() && switch_[j] == switch_[i])
      ++j;
    const auto transfers = static_cast<std::int32_t>(j - i);
    if (nominal_) {
      std::int32_t& most_of_kind = most_on_switch[static_cast<std::size_t>(switch_[i] >> 32)];
      most_of_kind = std::max(most_of_kind, transfers);
    } else {
      limit_rate(static_cast<LinkId>(switch_[i] & 0xffffffffU), transfers);
    }
    i = j;
  }
  for (std::size_t k = 0; k < most_on_switch.size(); ++k)
    if (most_on_switch[k] != 0) limit_rate(static_cast<LinkKind>(k), most_on_switch[k]);
  r.rate = rate_;
  return r;
}

// A raw phase under a protocol: its step latency per class scaled, its rate scaled and capped (protocol.hpp).
CollectiveCostModel::PhaseCost CollectiveCostModel::cost_of(const RawPhase& r, const ProtocolTerms& t) {
  const base::Time slowest = std::max(t.latency(r.nvlink, false), t.latency(r.network, true));
  PhaseCost c{base::Time{slowest.ns * r.steps}, base::Time::zero()};
  const double rate = t.effective(r.rate);
  if (r.bytes.n > 0 && !std::isinf(rate))
    c.transfer = rate > 0 ? base::transfer_time(r.bytes, base::Bandwidth{rate}) : base::Time::max();
  return c;
}

// The phases of a program one after another, or the two of a concurrent program side by side (collective.cpp's
// time_of() adds them alike).
base::Time CollectiveCostModel::run(const Program& prog, const ProtocolTerms& t) {
  if (prog.concurrent) {
    const PhaseCost a = cost_of(prog.phases[0], t);
    const PhaseCost b = cost_of(prog.phases[1], t);
    return add_concurrent(base::Time::zero(), a.latency, a.transfer, b.latency, b.transfer);
  }
  base::Time total = base::Time::zero();
  for (int i = 0; i < prog.count; ++i) {
    const PhaseCost c = cost_of(prog.phases[static_cast<std::size_t>(i)], t);
    total = add_phase(total, c.latency, c.transfer);
  }
  return total;
}

CollectiveCostModel::PhaseCost CollectiveCostModel::end_phase(base::Bytes bytes, std::int64_t steps) {
  return cost_of(end_phase_raw(bytes, steps, base::Time::max(), nullptr), identity_terms());
}

CollectiveCostModel::Program CollectiveCostModel::ring_program(Op op, base::Bytes n) {
  const auto p = static_cast<std::int64_t>(nodes_.size());
  const base::Bytes bytes = op == Op::AllReduce ? share(n, 2 * (p - 1), p) : share(n, p - 1, p);
  const std::int64_t steps = op == Op::AllReduce ? 2 * (p - 1) : p - 1;
  Program prog;
  if (domains_ >= 2 && fewest_ >= 2) {  // the rings over the rails: an NVLink phase and a rail phase at the same time
    const std::int64_t k = fewest_;
    const std::int64_t m = domains_;
    const std::int64_t inter_steps = op == Op::AllReduce ? 2 * (m - 1) : m - 1;
    prog.phases[0] = intra_rings(even_ ? share(bytes, k - 1, k) : bytes, steps - inter_steps);
    prog.phases[1] = inter_rings(share(bytes, 1, k), inter_steps);
    prog.count = 2;
    prog.concurrent = true;
    return prog;
  }
  begin_phase(/*exchanges=*/false);
  for (std::size_t j = 0; j < ring_.size(); ++j)
    add_transfer(ring_[j], ring_[j + 1 == ring_.size() ? 0 : j + 1]);
  prog.phases[0] = end_phase_raw(bytes, steps, base::Time::max(), nullptr);
  prog.count = 1;
  return prog;
}

// A ring in each domain (domain d is nodes [domain_start_[d], domain_start_[d + 1])).
CollectiveCostModel::RawPhase CollectiveCostModel::intra_rings(base::Bytes bytes, std::int64_t steps) {
  begin_phase(/*exchanges=*/false);
  for (int d = 0; d < domains_; ++d) {
    const int first = domain_start_[index(d)];
    const int last = domain_start_[index(d + 1)];
    if (last - first < 2) continue;
    for (int i = first; i < last; ++i)
      add_transfer(i, i + 1 == last ? first : i + 1);
  }
  return end_phase_raw(bytes, steps, base::Time::max(), nullptr);
}

// A ring across the domains per local index j < fewest_ (the smallest domain's size): one per rail.
CollectiveCostModel::RawPhase CollectiveCostModel::inter_rings(base::Bytes bytes, std::int64_t steps) {
  const int m = domains_;
  begin_phase(/*exchanges=*/false);
  for (int j = 0; j < fewest_; ++j)
    for (int d = 0; d < m; ++d)
      add_transfer(domain_start_[index(d)] + j, domain_start_[index(d + 1 == m ? 0 : d + 1)] + j);
  return end_phase_raw(bytes, steps, base::Time::max(), nullptr);
}

// Double binary trees across the m >= 2 domains of an even group, one pair per rail (the j-th GPU of each domain),
// every edge both ways (reduce up, broadcast down) carrying n / 2k: NVLS-tree's and NCCL's tree's phase across domains.
CollectiveCostModel::RawPhase CollectiveCostModel::rail_trees(base::Bytes n) {
  const int k = domain_start_[1];
  const int m = domains_;
  begin_phase(/*exchanges=*/true);
  for (int j = 0; j < k; ++j)
    for (int tree = 0; tree < 2; ++tree)
      for (int r = 0; r < m; ++r)
        if (const int u = double_binary_tree_parent(m, tree, r); u >= 0) add_exchange(r * k + j, u * k + j);
  return end_phase_raw(share(n, 1, 2 * std::int64_t{k}), 2 * std::int64_t{ceil_log2(m)}, base::Time::max(), nullptr);
}

// NVLink SHARP in each domain (a ring's transfers inside it carrying the NVLS traffic at the links' rate, 2 steps) and,
// over several domains, NVLS-tree's double binary trees across them, one per rail, at the same time; Simple's terms.
CollectiveCostModel::Choice CollectiveCostModel::nvls_choice(base::Bytes n) {
  const int k = domain_start_[1];
  const int m = domains_;
  const topology::TopologyConfig& c = topo_.config();
  Program prog;
  prog.phases[0] = intra_rings(nvls_link_bytes(k, n, c.nvlink_bw, c.nvls_bw), 2);
  prog.count = 1;
  if (m > 1) {
    prog.phases[1] = rail_trees(n);
    prog.count = 2;
    prog.concurrent = true;
  }
  const ProtocolTerms t = nvls_terms();
  return {Algorithm::Nvls, detail::saturating_add(t.base, run(prog, t)), Protocol::Simple};
}

// Over k ranks in each of m >= 2 domains, NCCL's tree (collective.hpp): a chain in each domain per rail, k chains
// that use each ring edge of the domain k - 1 times, both ways, and concurrently k double binary trees across the
// domains, one per rail, as NVLS-tree's; never cut (two phases, each O(p)). Otherwise:

// Both trees of double_binary_tree() over the ring order, from one walk of tree 0: tree 1 is its mirror image (p even)
// or its shift by one (p odd), so tree 0's edge (r, u) gives tree 1's (p-1-r, p-1-u), resp. (r+1, u+1) mod p.
// `*cut`: no protocol can beat `beat` (the phase is a lower bound, end_phase_raw()).
CollectiveCostModel::Program CollectiveCostModel::tree_program(base::Bytes n, base::Time beat, bool* cut) {
  const auto p = static_cast<int>(nodes_.size());
  if (hierarchical_applies()) {
    const int k = domain_start_[1];
    const int m = domains_;
    Program prog;
    begin_phase(/*exchanges=*/true);
    for (int d = 0; d < m; ++d)
      for (int i = 0; i < k; ++i)
        add_exchange(d * k + i, d * k + (i + 1 == k ? 0 : i + 1));
    prog.phases[0] = end_phase_raw(share(n, k - 1, k), 2 * std::int64_t{k - 1}, base::Time::max(), nullptr);
    prog.phases[1] = rail_trees(n);
    prog.count = 2;
    prog.concurrent = true;
    if (cut) *cut = false;
    return prog;
  }
  begin_phase(/*exchanges=*/true);  // reduce up, broadcast down: every tree edge both ways
  for (int r = 1; r < p; ++r) {     // rank 0 is the root of tree 0
    const int u = double_binary_tree_parent(p, 0, r);
    add_exchange(ring_[index(r)], ring_[index(u)]);
    if (p % 2 == 0) {
      add_exchange(ring_[index(p - 1 - r)], ring_[index(p - 1 - u)]);
    } else {
      add_exchange(ring_[index(r + 1 == p ? 0 : r + 1)], ring_[index(u + 1 == p ? 0 : u + 1)]);
    }
  }
  Program prog;
  prog.phases[0] = end_phase_raw(share(n, 1, 2), 2 * std::int64_t{ceil_log2(p)}, beat, cut);
  prog.count = 1;
  return prog;
}

CollectiveCostModel::Program CollectiveCostModel::hierarchical_program(Op op, base::Bytes n) {
  const int k = domain_start_[1];  // even: domain d is nodes [d k, (d + 1) k)
  const int m = domains_;
  const std::int64_t k64 = k;
  const std::int64_t m64 = m;
  Program prog;
  switch (op) {
    case Op::AllReduce: {
      const RawPhase in = intra_rings(share(n, k64 - 1, k64), k64 - 1);  // reduce-scatter, then all-gather: equal
      prog.phases = {in, inter_rings(share(n, 2 * (m64 - 1), m64 * k64), 2 * (m64 - 1)), in};
      prog.count = 3;
      return prog;
    }
    case Op::ReduceScatter: {
      const RawPhase in = intra_rings(share(n, k64 - 1, k64), k64 - 1);
      prog.phases = {in, inter_rings(share(n, m64 - 1, m64 * k64), m64 - 1), RawPhase{}};
      prog.count = 2;
      return prog;
    }
    default: {  // AllGather
      const RawPhase across = inter_rings(share(n, m64 - 1, m64 * k64), m64 - 1);
      prog.phases = {across, intra_rings(share(n, k64 - 1, k64), k64 - 1), RawPhase{}};
      prog.count = 2;
      return prog;
    }
  }
}

// Send/recv along the caller's order, all-to-all among all pairs, broadcast down the ring from group[0].
base::Time CollectiveCostModel::direct_time(Op op, std::span<const GpuId> group, base::Bytes n) {
  const auto p = static_cast<int>(group.size());
  const std::span<const GpuId> by_id = sorted(group);
  if (op == Op::Broadcast) {
    load_nodes(by_id);
    load_layout();
    if (domains_ >= 2 && fewest_ >= 2) {  // the chains over the rails, as collective.cpp's plan() lays them out
      const std::int64_t k = fewest_, m = domains_;
      Program prog;
      prog.phases[0] = intra_rings(even_ ? share(n, k - 1, k) : n, std::int64_t{p} - 1 - (m - 1));
      prog.phases[1] = inter_rings(share(n, 1, k), m - 1);
      prog.count = 2;
      prog.concurrent = true;
      return run(prog, identity_terms());
    }
    const auto root_node = std::lower_bound(by_id.begin(), by_id.end(), group.front()) - by_id.begin();
    const auto root = static_cast<int>(std::find(ring_.begin(), ring_.end(), root_node) - ring_.begin());
    begin_phase(/*exchanges=*/false);  // a chain
    for (int i = 0; i + 1 < p; ++i)
      add_transfer(ring_[index((root + i) % p)], ring_[index((root + i + 1) % p)]);
    const PhaseCost c = end_phase(n, p - 1);
    return add_phase(base::Time::zero(), c.latency, c.transfer);
  }
  load_nodes(group);
  if (op == Op::SendRecv) {
    begin_phase(/*exchanges=*/false);  // a chain
    for (int i = 0; i + 1 < p; ++i)
      add_transfer(i, i + 1);
    const PhaseCost c = end_phase(n, 1);
    return add_phase(base::Time::zero(), c.latency, c.transfer);
  }
  begin_phase(/*exchanges=*/true);  // AllToAll: every pair, both ways
  for (int i = 0; i < p; ++i)
    for (int j = i + 1; j < p; ++j)
      add_exchange(i, j);
  const PhaseCost c = end_phase(share(n, 1, p), p - 1);
  return add_phase(base::Time::zero(), c.latency, c.transfer);
}

}  // namespace sim::collectives
