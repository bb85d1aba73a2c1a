// sim/collectives/collective.cpp: lowering of collectives to phases of transfers, and their uncontended time.
#include "sim/collectives/collective.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

namespace sim::collectives {

using topology::GpuId;
using topology::LinkId;

namespace {

struct PhaseSpec {
  std::vector<std::pair<GpuId, GpuId>> edges;
  base::Bytes bytes;       // per edge
  std::int64_t steps = 0;  // alpha terms
};

// The group by NVLink domain: domains in increasing id, GPUs in increasing id within each.
struct Layout {
  std::vector<std::vector<GpuId>> domains;
  bool even = true;  // the same number of ranks in every domain
};

Layout layout_of(std::span<const GpuId> group, const topology::Topology& topo) {
  std::vector<std::pair<int, GpuId>> keyed;
  keyed.reserve(group.size());
  for (GpuId g : group)
    keyed.emplace_back(topo.nvlink_domain_of(g), g);
  std::sort(keyed.begin(), keyed.end());
  Layout l;
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    SIM_ASSERT(i == 0 || keyed[i].second != keyed[i - 1].second, "a collective group lists a GPU twice");
    if (i == 0 || keyed[i].first != keyed[i - 1].first) l.domains.emplace_back();
    l.domains.back().push_back(keyed[i].second);
  }
  for (const auto& d : l.domains)
    l.even = l.even && d.size() == l.domains.front().size();
  return l;
}

// Domain by domain, every other domain reversed: consecutive domains meet on GPUs of the same local rank.
std::vector<GpuId> ring_order(const Layout& l) {
  std::vector<GpuId> order;
  for (std::size_t i = 0; i < l.domains.size(); ++i) {
    const auto& d = l.domains[i];
    if (i % 2 == 0) {
      order.insert(order.end(), d.begin(), d.end());
    } else {
      order.insert(order.end(), d.rbegin(), d.rend());
    }
  }
  return order;
}

void add_ring(std::vector<std::pair<GpuId, GpuId>>& edges, const std::vector<GpuId>& ring) {
  if (ring.size() < 2) return;
  for (std::size_t j = 0; j < ring.size(); ++j)
    edges.emplace_back(ring[j], ring[(j + 1) % ring.size()]);
}

bool hierarchical_applies(const Layout& l) {
  return l.domains.size() >= 2 && l.even && l.domains.front().size() >= 2;
}

// The phases of one (op, concrete algorithm) on a group.
std::vector<PhaseSpec> plan(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                            const topology::Topology& topo) {
  const auto p = static_cast<std::int64_t>(group.size());
  if (p <= 1 || n.n <= 0) return {};
  const Layout l = layout_of(group, topo);
  std::vector<PhaseSpec> out;
  switch (op) {
    case Op::SendRecv: {
      PhaseSpec s{{}, n, 1};
      for (std::size_t i = 0; i + 1 < group.size(); ++i)
        s.edges.emplace_back(group[i], group[i + 1]);
      out.push_back(std::move(s));
      return out;
    }
    case Op::Broadcast: {
      std::vector<GpuId> order = ring_order(l);
      std::rotate(order.begin(), std::find(order.begin(), order.end(), group.front()), order.end());
      PhaseSpec s{{}, n, p - 1};
      for (std::size_t i = 0; i + 1 < order.size(); ++i)
        s.edges.emplace_back(order[i], order[i + 1]);
      out.push_back(std::move(s));
      return out;
    }
    case Op::AllToAll: {
      PhaseSpec s{{}, share(n, 1, p), p - 1};
      s.edges.reserve(static_cast<std::size_t>(p * (p - 1)));
      for (GpuId src : group)
        for (GpuId dst : group)
          if (src != dst) s.edges.emplace_back(src, dst);
      out.push_back(std::move(s));
      return out;
    }
    case Op::AllReduce:
    case Op::AllGather:
    case Op::ReduceScatter:
      break;
  }

  if (algorithm == Algorithm::Tree) {  // all-reduce only (resolve() guarantees it)
    const std::vector<GpuId> order = ring_order(l);
    const DoubleBinaryTree t = double_binary_tree(static_cast<int>(p));
    PhaseSpec s{{}, share(n, 1, 2), 2 * ceil_log2(static_cast<int>(p))};
    for (const auto& parent : t.parent) {
      for (std::size_t r = 0; r < order.size(); ++r) {
        const int u = parent[r];
        if (u < 0) continue;
        s.edges.emplace_back(order[r], order[static_cast<std::size_t>(u)]);  // reduce up
        s.edges.emplace_back(order[static_cast<std::size_t>(u)], order[r]);  // broadcast down
      }
    }
    out.push_back(std::move(s));
    return out;
  }

  if (algorithm == Algorithm::Hierarchical) {
    const auto k = static_cast<std::int64_t>(l.domains.front().size());
    const auto m = static_cast<std::int64_t>(l.domains.size());
    auto intra = [&](base::Bytes bytes, std::int64_t steps) {
      PhaseSpec s{{}, bytes, steps};
      for (const auto& d : l.domains)
        add_ring(s.edges, d);
      return s;
    };
    auto inter = [&](base::Bytes bytes, std::int64_t steps) {
      PhaseSpec s{{}, bytes, steps};
      std::vector<GpuId> rail(static_cast<std::size_t>(m));
      for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j) {
        for (std::size_t d = 0; d < rail.size(); ++d)
          rail[d] = l.domains[d][j];
        add_ring(s.edges, rail);
      }
      return s;
    };
    switch (op) {
      case Op::AllReduce:
        out.push_back(intra(share(n, k - 1, k), k - 1));
        out.push_back(inter(share(n, 2 * (m - 1), m * k), 2 * (m - 1)));
        out.push_back(intra(share(n, k - 1, k), k - 1));
        break;
      case Op::ReduceScatter:
        out.push_back(intra(share(n, k - 1, k), k - 1));
        out.push_back(inter(share(n, m - 1, m * k), m - 1));
        break;
      default:  // AllGather
        out.push_back(inter(share(n, m - 1, m * k), m - 1));
        out.push_back(intra(share(n, k - 1, k), k - 1));
        break;
    }
    return out;
  }

  // Ring.
  PhaseSpec s{{},
              op == Op::AllReduce ? share(n, 2 * (p - 1), p) : share(n, p - 1, p),
              op == Op::AllReduce ? 2 * (p - 1) : p - 1};
  add_ring(s.edges, ring_order(l));
  out.push_back(std::move(s));
  return out;
}

base::Time saturating_add(base::Time a, base::Time b) {
  if (a == base::Time::max() || b == base::Time::max()) return base::Time::max();
  if (a.ns > base::Time::max().ns - b.ns) return base::Time::max();
  return a + b;
}

struct PhaseCost {
  base::Time latency;
  base::Time transfer;
};

PhaseCost evaluate(const PhaseSpec& s, const topology::Topology& topo) {
  std::vector<LinkId> path;
  std::vector<LinkId> crossed;
  crossed.reserve(s.edges.size() * 4);
  base::Time slowest = base::Time::zero();
  for (const auto& [src, dst] : s.edges) {
    path.clear();
    topo.append_path(src, dst, path);
    slowest = std::max(slowest, topo.path_latency(path));
    crossed.insert(crossed.end(), path.begin(), path.end());
  }
  std::sort(crossed.begin(), crossed.end());
  // First level of progressive filling: the smallest capacity per crossing transfer (as FlowModel computes it).
  double rate = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < crossed.size();) {
    std::size_t j = i;
    while (j < crossed.size() && crossed[j] == crossed[i])
      ++j;
    const topology::Link& link = topo.link(crossed[i]);
    if (!std::isinf(link.bandwidth.bytes_per_s)) {
      const double capacity = link.up ? link.bandwidth.bytes_per_s : 0.0;
      rate = std::min(rate, capacity / static_cast<double>(j - i));
    }
    i = j;
  }
  PhaseCost c{base::Time{slowest.ns * s.steps}, base::Time::zero()};
  if (s.bytes.n > 0 && !std::isinf(rate))
    c.transfer = rate > 0 ? base::transfer_time(s.bytes, base::Bandwidth{rate}) : base::Time::max();
  return c;
}

base::Time time_of(const std::vector<PhaseSpec>& specs, const topology::Topology& topo) {
  base::Time total = base::Time::zero();
  for (const PhaseSpec& s : specs) {
    const PhaseCost c = evaluate(s, topo);
    total = saturating_add(saturating_add(total, c.latency), c.transfer);
  }
  return total;
}

}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::AllReduce:
      return "all-reduce";
    case Op::AllGather:
      return "all-gather";
    case Op::ReduceScatter:
      return "reduce-scatter";
    case Op::AllToAll:
      return "all-to-all";
    case Op::SendRecv:
      return "send-recv";
    case Op::Broadcast:
      return "broadcast";
  }
  return "?";
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Ring:
      return "ring";
    case Algorithm::Tree:
      return "tree";
    case Algorithm::Hierarchical:
      return "hierarchical";
    case Algorithm::Auto:
      return "auto";
  }
  return "?";
}

std::optional<Op> op_from_string(std::string_view s) {
  for (Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll, Op::SendRecv, Op::Broadcast})
    if (s == to_string(op)) return op;
  return std::nullopt;
}

std::optional<Algorithm> algorithm_from_string(std::string_view s) {
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Auto})
    if (s == to_string(a)) return a;
  return std::nullopt;
}

// CollectiveCostModel: the phases of plan() costed as evaluate() costs them, without materialising them. A phase's
// transfers arrive as (node, node) pairs; the node indexes nodes_ (the sorted group, or the caller's order for
// send/recv and all-to-all). evaluate() counts how many transfers cross each link of their paths and takes
// min(capacity / count); here the links a path begins and ends with (the sender's NVLink or NIC link, the receiver's)
// are counted per node, and only a transfer between leaves builds its path, for the switch links in between. The same
// links, the same counts and the same divisions give the same minimum, bit for bit (min does not depend on order).

namespace {

// Per node, the transfers on each of its own links (see Topology::nvlink_out and friends).
constexpr std::size_t kNvlOut = 0;
constexpr std::size_t kNvlIn = 1;
constexpr std::size_t kNicOut = 2;
constexpr std::size_t kNicIn = 3;
constexpr std::size_t kNodeLinks = 4;

std::size_t index(int i) {
  return static_cast<std::size_t>(i);
}

}  // namespace

base::Time CollectiveCostModel::time(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n) {
  return choose(op, algorithm, group, n, /*need_time=*/true).time;
}

Algorithm CollectiveCostModel::resolve(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n) {
  return choose(op, algorithm, group, n, /*need_time=*/false).algorithm;
}

// resolve()'s rules, and the chosen algorithm's time (plan() + time_of()) when need_time.
CollectiveCostModel::Choice CollectiveCostModel::choose(Op op, Algorithm algorithm, std::span<const GpuId> group,
                                                        base::Bytes n, bool need_time) {
  if (group.size() <= 1) return {};
  if (op == Op::AllToAll || op == Op::SendRecv || op == Op::Broadcast) {
    if (!need_time || n.n <= 0) return {};
    return {Algorithm::Ring, direct_time(op, group, n)};
  }
  check_distinct(group);
  load_nodes(sorted_.empty() ? group : std::span<const GpuId>(sorted_));
  load_layout();
  const bool hierarchical = hierarchical_applies();
  Algorithm chosen = Algorithm::Ring;
  switch (algorithm) {
    case Algorithm::Ring:
      break;
    case Algorithm::Tree:
      chosen = op == Op::AllReduce ? Algorithm::Tree : Algorithm::Ring;
      break;
    case Algorithm::Hierarchical:
      chosen = hierarchical ? Algorithm::Hierarchical : Algorithm::Ring;
      break;
    case Algorithm::Auto: {  // every candidate costs 0 when n <= 0: ring wins the tie
      if (n.n <= 0) return {};
      Choice best{Algorithm::Ring, ring_time(op, n)};
      auto consider = [&best](Algorithm a, base::Time t) {
        if (t < best.time) best = {a, t};
      };
      if (hierarchical) consider(Algorithm::Hierarchical, hierarchical_time(op, n));
      if (op == Op::AllReduce) consider(Algorithm::Tree, tree_time(n));
      return best;
    }
  }
  if (!need_time || n.n <= 0) return {chosen, base::Time::zero()};
  switch (chosen) {
    case Algorithm::Tree:
      return {chosen, tree_time(n)};
    case Algorithm::Hierarchical:
      return {chosen, hierarchical_time(op, n)};
    default:
      return {chosen, ring_time(op, n)};
  }
}

// layout_of()'s check. Leaves sorted_ empty when the group is in increasing id order already (then it is sorted by
// NVLink domain too, as a domain is a range of ids), else holds the sorted copy.
void CollectiveCostModel::check_distinct(std::span<const GpuId> group) {
  sorted_.clear();
  if (std::adjacent_find(group.begin(), group.end(), std::greater_equal<>()) == group.end()) return;
  sorted_.assign(group.begin(), group.end());
  std::sort(sorted_.begin(), sorted_.end());
  SIM_ASSERT(std::adjacent_find(sorted_.begin(), sorted_.end()) == sorted_.end(),
             "a collective group lists a GPU twice");
}

void CollectiveCostModel::load_nodes(std::span<const GpuId> gpus) {
  nodes_ = gpus;
  domain_.resize(gpus.size());
  transfers_.resize(gpus.size() * kNodeLinks);
  bool one_domain = true;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    domain_[i] = topo_.nvlink_domain_of(gpus[i]);
    one_domain = one_domain && domain_[i] == domain_[0];
  }
  if (one_domain) return;  // add_transfer() never asks for a leaf
  leaf_.resize(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i)
    leaf_[i] = topo_.leaf_of(gpus[i]);
}

// layout_of() and ring_order() on sorted nodes: domain boundaries, evenness, and the ring (domain by domain, every
// other domain reversed).
void CollectiveCostModel::load_layout() {
  const auto p = static_cast<int>(nodes_.size());
  domain_start_.clear();
  for (int i = 0; i < p; ++i)
    if (i == 0 || domain_[index(i)] != domain_[index(i - 1)]) domain_start_.push_back(i);
  domain_start_.push_back(p);
  const std::size_t domains = domain_start_.size() - 1;
  even_ = true;
  for (std::size_t d = 0; d < domains; ++d)
    even_ = even_ && domain_start_[d + 1] - domain_start_[d] == domain_start_[1];
  ring_.resize(nodes_.size());
  if (domains == 1 || domains == nodes_.size()) {  // one domain, or one rank in each: nothing is reversed
    for (int i = 0; i < p; ++i)
      ring_[index(i)] = i;
    return;
  }
  std::size_t at = 0;
  for (std::size_t d = 0; d < domains; ++d) {
    const int first = domain_start_[d];
    const int last = domain_start_[d + 1];
    for (int i = 0; i < last - first; ++i)
      ring_[at++] = d % 2 == 0 ? first + i : last - 1 - i;
  }
}

bool CollectiveCostModel::hierarchical_applies() const {
  return domain_start_.size() >= 3 && even_ && domain_start_[1] >= 2;
}

void CollectiveCostModel::begin_phase() {
  std::fill_n(transfers_.begin(), nodes_.size() * kNodeLinks, 0U);
  switch_.clear();
  slowest_ = base::Time::zero();
}

// One transfer of the phase, from node src to node dst: path(src, dst) is the sender's link, the switch links between
// leaves (if any), the receiver's link (topology.hpp).
void CollectiveCostModel::add_transfer(int src, int dst) {
  const GpuId s = nodes_[index(src)];
  const GpuId d = nodes_[index(dst)];
  std::uint32_t* from = &transfers_[index(src) * kNodeLinks];
  std::uint32_t* to = &transfers_[index(dst) * kNodeLinks];
  if (domain_[index(src)] == domain_[index(dst)]) {
    ++from[kNvlOut];
    ++to[kNvlIn];
    slowest_ = std::max(slowest_, topo_.link(topo_.nvlink_out(s)).latency + topo_.link(topo_.nvlink_in(d)).latency);
    return;
  }
  ++from[kNicOut];
  ++to[kNicIn];
  if (leaf_[index(src)] == leaf_[index(dst)]) {
    slowest_ = std::max(slowest_, topo_.link(topo_.nic_out(s)).latency + topo_.link(topo_.nic_in(d)).latency);
    return;
  }
  path_.clear();
  topo_.append_path(s, d, path_);
  slowest_ = std::max(slowest_, topo_.path_latency(path_));
  switch_.insert(switch_.end(), path_.begin() + 1, path_.end() - 1);
}

void CollectiveCostModel::limit_rate(LinkId link, std::uint32_t transfers) {
  const topology::Link& l = topo_.link(link);
  if (std::isinf(l.bandwidth.bytes_per_s)) return;
  const double capacity = l.up ? l.bandwidth.bytes_per_s : 0.0;
  rate_ = std::min(rate_, capacity / static_cast<double>(transfers));
}

// evaluate()'s cost of the phase: alpha steps x the slowest path, and the bytes at the first water-filling level.
CollectiveCostModel::PhaseCost CollectiveCostModel::end_phase(base::Bytes bytes, std::int64_t steps) {
  rate_ = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const GpuId g = nodes_[i];
    const std::uint32_t* t = &transfers_[i * kNodeLinks];
    if (t[kNvlOut] != 0) limit_rate(topo_.nvlink_out(g), t[kNvlOut]);
    if (t[kNvlIn] != 0) limit_rate(topo_.nvlink_in(g), t[kNvlIn]);
    if (t[kNicOut] != 0) limit_rate(topo_.nic_out(g), t[kNicOut]);
    if (t[kNicIn] != 0) limit_rate(topo_.nic_in(g), t[kNicIn]);
  }
  std::sort(switch_.begin(), switch_.end());
  for (std::size_t i = 0; i < switch_.size();) {
    std::size_t j = i + 1;
    while (j < switch_.size() && switch_[j] == switch_[i])
      ++j;
    limit_rate(switch_[i], static_cast<std::uint32_t>(j - i));
    i = j;
  }
  PhaseCost c{base::Time{slowest_.ns * steps}, base::Time::zero()};
  if (bytes.n > 0 && !std::isinf(rate_))
    c.transfer = rate_ > 0 ? base::transfer_time(bytes, base::Bandwidth{rate_}) : base::Time::max();
  return c;
}

namespace {

// time_of()'s sum, phase by phase.
base::Time add_phase(base::Time total, base::Time latency, base::Time transfer) {
  return saturating_add(saturating_add(total, latency), transfer);
}

}  // namespace

base::Time CollectiveCostModel::ring_time(Op op, base::Bytes n) {
  const auto p = static_cast<std::int64_t>(nodes_.size());
  begin_phase();
  for (std::size_t j = 0; j < ring_.size(); ++j)
    add_transfer(ring_[j], ring_[j + 1 == ring_.size() ? 0 : j + 1]);
  const PhaseCost c =
      op == Op::AllReduce ? end_phase(share(n, 2 * (p - 1), p), 2 * (p - 1)) : end_phase(share(n, p - 1, p), p - 1);
  return add_phase(base::Time::zero(), c.latency, c.transfer);
}

base::Time CollectiveCostModel::tree_time(base::Bytes n) {
  const auto p = static_cast<int>(nodes_.size());
  begin_phase();
  for (int tree = 0; tree < 2; ++tree) {
    for (int r = 0; r < p; ++r) {
      const int u = double_binary_tree_parent(p, tree, r);
      if (u < 0) continue;
      add_transfer(ring_[index(r)], ring_[index(u)]);  // reduce up
      add_transfer(ring_[index(u)], ring_[index(r)]);  // broadcast down
    }
  }
  const PhaseCost c = end_phase(share(n, 1, 2), 2 * std::int64_t{ceil_log2(p)});
  return add_phase(base::Time::zero(), c.latency, c.transfer);
}

base::Time CollectiveCostModel::hierarchical_time(Op op, base::Bytes n) {
  const int k = domain_start_[1];  // even: domain d is nodes [d k, (d + 1) k)
  const auto m = static_cast<int>(domain_start_.size()) - 1;
  auto intra = [&](base::Bytes bytes, std::int64_t steps) {
    begin_phase();
    for (int d = 0; d < m; ++d)
      for (int j = 0; j < k; ++j)
        add_transfer(d * k + j, d * k + (j + 1 == k ? 0 : j + 1));
    return end_phase(bytes, steps);
  };
  auto inter = [&](base::Bytes bytes, std::int64_t steps) {  // one ring per local index j
    begin_phase();
    for (int j = 0; j < k; ++j)
      for (int d = 0; d < m; ++d)
        add_transfer(d * k + j, (d + 1 == m ? 0 : d + 1) * k + j);
    return end_phase(bytes, steps);
  };
  const std::int64_t k64 = k;
  const std::int64_t m64 = m;
  base::Time total = base::Time::zero();
  switch (op) {
    case Op::AllReduce: {
      const PhaseCost in = intra(share(n, k64 - 1, k64), k64 - 1);  // reduce-scatter, then all-gather: equal phases
      const PhaseCost across = inter(share(n, 2 * (m64 - 1), m64 * k64), 2 * (m64 - 1));
      total = add_phase(total, in.latency, in.transfer);
      total = add_phase(total, across.latency, across.transfer);
      return add_phase(total, in.latency, in.transfer);
    }
    case Op::ReduceScatter: {
      const PhaseCost in = intra(share(n, k64 - 1, k64), k64 - 1);
      const PhaseCost across = inter(share(n, m64 - 1, m64 * k64), m64 - 1);
      total = add_phase(total, in.latency, in.transfer);
      return add_phase(total, across.latency, across.transfer);
    }
    default: {  // AllGather
      const PhaseCost across = inter(share(n, m64 - 1, m64 * k64), m64 - 1);
      const PhaseCost in = intra(share(n, k64 - 1, k64), k64 - 1);
      total = add_phase(total, across.latency, across.transfer);
      return add_phase(total, in.latency, in.transfer);
    }
  }
}

// Send/recv along the caller's order, all-to-all among all pairs, broadcast down the ring from group[0].
base::Time CollectiveCostModel::direct_time(Op op, std::span<const GpuId> group, base::Bytes n) {
  const auto p = static_cast<int>(group.size());
  check_distinct(group);
  if (op == Op::Broadcast) {
    load_nodes(sorted_.empty() ? group : std::span<const GpuId>(sorted_));
    load_layout();
    const auto root_node =
        static_cast<int>(std::lower_bound(nodes_.begin(), nodes_.end(), group.front()) - nodes_.begin());
    const auto root = static_cast<int>(std::find(ring_.begin(), ring_.end(), root_node) - ring_.begin());
    begin_phase();
    for (int i = 0; i + 1 < p; ++i)
      add_transfer(ring_[index((root + i) % p)], ring_[index((root + i + 1) % p)]);
    const PhaseCost c = end_phase(n, p - 1);
    return add_phase(base::Time::zero(), c.latency, c.transfer);
  }
  load_nodes(group);
  begin_phase();
  if (op == Op::SendRecv) {
    for (int i = 0; i + 1 < p; ++i)
      add_transfer(i, i + 1);
    const PhaseCost c = end_phase(n, 1);
    return add_phase(base::Time::zero(), c.latency, c.transfer);
  }
  for (int i = 0; i < p; ++i)  // AllToAll
    for (int j = 0; j < p; ++j)
      if (i != j) add_transfer(i, j);
  const PhaseCost c = end_phase(share(n, 1, p), p - 1);
  return add_phase(base::Time::zero(), c.latency, c.transfer);
}

Algorithm resolve(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                  const topology::Topology& topo) {
  return CollectiveCostModel(topo).resolve(op, algorithm, group, n);
}

std::vector<Phase> lower(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                         const topology::Topology& topo) {
  const Algorithm a = resolve(op, algorithm, group, n, topo);
  std::vector<Phase> phases;
  std::vector<LinkId> path;
  for (PhaseSpec& s : plan(op, a, group, n, topo)) {
    Phase ph;
    base::Time slowest = base::Time::zero();
    ph.transfers.reserve(s.edges.size());
    for (const auto& [src, dst] : s.edges) {
      path.clear();
      topo.append_path(src, dst, path);
      slowest = std::max(slowest, topo.path_latency(path));
      ph.transfers.push_back({src, dst, s.bytes});
    }
    ph.latency = base::Time{slowest.ns * s.steps};
    phases.push_back(std::move(ph));
  }
  return phases;
}

base::Time collective_time(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                           const topology::Topology& topo) {
  return CollectiveCostModel(topo).time(op, algorithm, group, n);
}

namespace detail {

Algorithm reference_resolve(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                            const topology::Topology& topo) {
  if (group.size() <= 1 || op == Op::AllToAll || op == Op::SendRecv || op == Op::Broadcast) return Algorithm::Ring;
  const bool hierarchical = hierarchical_applies(layout_of(group, topo));
  switch (algorithm) {
    case Algorithm::Ring:
      return Algorithm::Ring;
    case Algorithm::Tree:
      return op == Op::AllReduce ? Algorithm::Tree : Algorithm::Ring;
    case Algorithm::Hierarchical:
      return hierarchical ? Algorithm::Hierarchical : Algorithm::Ring;
    case Algorithm::Auto:
      break;
  }
  Algorithm best = Algorithm::Ring;
  base::Time best_time = time_of(plan(op, Algorithm::Ring, group, n, topo), topo);
  auto consider = [&](Algorithm a) {
    const base::Time t = time_of(plan(op, a, group, n, topo), topo);
    if (t < best_time) {
      best = a;
      best_time = t;
    }
  };
  if (hierarchical) consider(Algorithm::Hierarchical);
  if (op == Op::AllReduce) consider(Algorithm::Tree);
  return best;
}

base::Time reference_collective_time(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                                     const topology::Topology& topo) {
  return time_of(plan(op, reference_resolve(op, algorithm, group, n, topo), group, n, topo), topo);
}

}  // namespace detail

}  // namespace sim::collectives
