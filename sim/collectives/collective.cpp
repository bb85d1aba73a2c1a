// sim/collectives/collective.cpp: lowering of collectives to phases of transfers, and their uncontended time by the
// straightforward evaluation (the reference); cost_model.cpp has CollectiveCostModel, the fast evaluation of the same
// phases.
#include "sim/collectives/collective.hpp"

#include "sim/collectives/phase_sum.hpp"

#include "sim/base/assert.hpp"

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

namespace {

struct PhaseSpec {
  std::vector<std::pair<GpuId, GpuId>> edges;
  base::Bytes bytes;        // per edge
  std::int64_t steps = 0;   // alpha terms
  bool concurrent = false;  // runs at the same time as the phase before it (the rings over rails)
};

// The group by NVLink domain: domains in increasing id, GPUs in increasing id within each. Flat (domain d is
// ids[start[d], start[d + 1])): a data-parallel group of one GPU per node has as many domains as ranks, and a vector
// per domain made the allocator a tenth of a 131,072-GPU full-fidelity replay.
class Domains {
 public:
  std::size_t size() const { return start_.size() - 1; }
  std::span<const GpuId> operator[](std::size_t d) const {
    return {ids_.data() + start_[d], static_cast<std::size_t>(start_[d + 1] - start_[d])};
  }
  std::span<const GpuId> front() const { return (*this)[0]; }

  class Iterator {
   public:
    Iterator(const Domains& ds, std::size_t d) : ds_(&ds), d_(d) {}
    std::span<const GpuId> operator*() const { return (*ds_)[d_]; }
    Iterator& operator++() {
      ++d_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return d_ != o.d_; }

   private:
    const Domains* ds_;
    std::size_t d_;
  };
  Iterator begin() const { return {*this, 0}; }
  Iterator end() const { return {*this, size()}; }

  void reserve(std::size_t gpus) {
    ids_.reserve(gpus);
    start_.reserve(gpus + 1);
  }
  /// Appends a GPU to the last domain, or to a new one after it.
  void append(GpuId g, bool new_domain) {
    if (new_domain) start_.push_back(ids_.size());
    ids_.push_back(g);
    start_.back() = ids_.size();
  }

 private:
  std::vector<GpuId> ids_;
  std::vector<std::size_t> start_{0};  // start_.back() is always ids_.size()
};

struct Layout {
  Domains domains;
  bool even = true;  // the same number of ranks in every domain
};

Layout layout_of(std::span<const GpuId> group, const topology::Topology& topo) {
  std::vector<std::pair<int, GpuId>> keyed;
  keyed.reserve(group.size());
  for (GpuId g : group)
    keyed.emplace_back(topo.nvlink_domain_of(g), g);
  std::sort(keyed.begin(), keyed.end());
  Layout l;
  l.domains.reserve(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    SIM_ASSERT(i == 0 || keyed[i].second != keyed[i - 1].second, "a collective group lists a GPU twice");
    l.domains.append(keyed[i].second, i == 0 || keyed[i].first != keyed[i - 1].first);
  }
  for (const auto d : l.domains)
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

void add_ring(std::vector<std::pair<GpuId, GpuId>>& edges, std::span<const GpuId> ring) {
  if (ring.size() < 2) return;
  for (std::size_t j = 0; j < ring.size(); ++j)
    edges.emplace_back(ring[j], ring[(j + 1) % ring.size()]);
}

bool hierarchical_applies(const Layout& l) {
  return l.domains.size() >= 2 && l.even && l.domains.front().size() >= 2;
}

// The rails NCCL's rings spread their domain crossings over (collective.hpp): the fewest ranks any domain holds, when
// the group spans two or more domains of two or more ranks each; 0 otherwise (one ring, one NIC per domain).
std::int64_t rails(const Layout& l) {
  if (l.domains.size() < 2) return 0;
  std::size_t fewest = l.domains.front().size();
  for (const auto d : l.domains)
    fewest = std::min(fewest, d.size());
  return fewest >= 2 ? static_cast<std::int64_t>(fewest) : 0;
}

// NVLS on one domain of two or more ranks, NVLS-tree on k >= 2 ranks in each of m >= 2 domains; all-reduce only, and
// only where the switches reduce.
bool nvls_applies(Op op, const Layout& l, const topology::Topology& topo) {
  if (op != Op::AllReduce || !(topo.config().nvls_bw.bytes_per_s > 0)) return false;
  return l.domains.size() == 1 ? l.domains.front().size() >= 2 : hierarchical_applies(l);
}

// Double binary trees across the m >= 2 domains of an even layout, one pair per rail (the j-th GPU of each domain),
// every edge both ways (reduce up, broadcast down) carrying n / 2k, concurrent with the phase before it: NVLS-tree's
// and NCCL's tree's phase across domains (collective.hpp).
PhaseSpec rail_trees(const Layout& l, base::Bytes n) {
  const auto k = l.domains.front().size();
  const auto m = static_cast<int>(l.domains.size());
  const DoubleBinaryTree t = double_binary_tree(m);
  PhaseSpec across{{}, share(n, 1, 2 * static_cast<std::int64_t>(k)), 2 * ceil_log2(m), /*concurrent=*/true};
  for (std::size_t j = 0; j < k; ++j)
    for (const auto& parent : t.parent)
      for (std::size_t r = 0; r < static_cast<std::size_t>(m); ++r) {
        const int u = parent[r];
        if (u < 0) continue;
        const GpuId child = l.domains[r][j], up = l.domains[static_cast<std::size_t>(u)][j];
        across.edges.emplace_back(child, up);  // reduce up
        across.edges.emplace_back(up, child);  // broadcast down
      }
  return across;
}

// NCCL's rings over the rails (collective.hpp): a ring in each domain carrying what does not cross it and, at the same
// time, a ring across the domains on each of the k rails carrying 1 / k of `bytes`, the ring's bytes per link. Uneven,
// a domain's ranks beyond its k exits forward every ring over NVLink: all of the bytes.
void add_rings_over_rails(std::vector<PhaseSpec>& out, const Layout& l, std::int64_t k, base::Bytes bytes,
                          std::int64_t steps, std::int64_t inter_steps) {
  const auto m = static_cast<std::int64_t>(l.domains.size());
  PhaseSpec intra{{}, l.even ? share(bytes, k - 1, k) : bytes, steps - inter_steps};
  for (const auto& d : l.domains)
    add_ring(intra.edges, d);
  out.push_back(std::move(intra));
  PhaseSpec inter{{}, share(bytes, 1, k), inter_steps, /*concurrent=*/true};
  std::vector<GpuId> rail(static_cast<std::size_t>(m));
  for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j) {
    for (std::size_t d = 0; d < rail.size(); ++d)
      rail[d] = l.domains[d][j];
    add_ring(inter.edges, rail);
  }
  out.push_back(std::move(inter));
}

// The phases of one (op, concrete algorithm) on a group.
std::vector<PhaseSpec> plan(Op op, Algorithm algorithm, std::span<const GpuId> group, const Layout& l, base::Bytes n,
                            const topology::Topology& topo) {
  const auto p = static_cast<std::int64_t>(group.size());
  if (p <= 1 || n.n <= 0) return {};
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
      // NCCL pipelines a broadcast down the chains of its ring channels, which cross the domains on every rail at once
      // as its rings do: each rail carries n / k (a user trial: one NIC per domain gave 46 GB/s over two HGX H100
      // nodes, against all-gather's 367 on the same links). Within a domain each link carries the rest.
      if (const std::int64_t k = rails(l); k > 0) {
        add_rings_over_rails(out, l, k, n, p - 1, static_cast<std::int64_t>(l.domains.size()) - 1);
        return out;
      }
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
    if (hierarchical_applies(l)) {     // NCCL's tree over k ranks in each of m domains (collective.hpp)
      const auto k = static_cast<std::int64_t>(l.domains.front().size());
      PhaseSpec chains{{}, share(n, k - 1, k), 2 * (k - 1)};
      for (const auto& d : l.domains) {
        const std::size_t before = chains.edges.size();
        add_ring(chains.edges, d);
        for (std::size_t e = before, end = chains.edges.size(); e < end; ++e)
          chains.edges.emplace_back(chains.edges[e].second, chains.edges[e].first);
      }
      out.push_back(std::move(chains));
      out.push_back(rail_trees(l, n));
      return out;
    }
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

  if (algorithm == Algorithm::Nvls) {  // all-reduce, one domain or NVLS-tree's even layout (resolve() guarantees it)
    const auto k = static_cast<int>(l.domains.front().size());
    const topology::TopologyConfig& c = topo.config();
    PhaseSpec in_switch{{}, nvls_link_bytes(k, n, c.nvlink_bw, c.nvls_bw), 2};
    for (const auto& d : l.domains)
      add_ring(in_switch.edges, d);
    out.push_back(std::move(in_switch));
    if (l.domains.size() == 1) return out;
    out.push_back(rail_trees(l, n));
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
  const base::Bytes ring_bytes = op == Op::AllReduce ? share(n, 2 * (p - 1), p) : share(n, p - 1, p);
  const std::int64_t ring_steps = op == Op::AllReduce ? 2 * (p - 1) : p - 1;
  if (const std::int64_t k = rails(l); k > 0) {  // NCCL's rings over the rails (header): NVLink and rails at once
    const auto m = static_cast<std::int64_t>(l.domains.size());
    add_rings_over_rails(out, l, k, ring_bytes, ring_steps, op == Op::AllReduce ? 2 * (m - 1) : m - 1);
    return out;
  }
  PhaseSpec s{{}, ring_bytes, ring_steps};
  add_ring(s.edges, ring_order(l));
  out.push_back(std::move(s));
  return out;
}

struct PhaseCost {
  base::Time latency;
  base::Time transfer;
};

PhaseCost evaluate(const PhaseSpec& s, const topology::Topology& topo, const ProtocolTerms& terms) {
  std::vector<LinkId> path;
  std::vector<LinkId> crossed;
  crossed.reserve(s.edges.size() * 4);
  base::Time slowest = base::Time::zero();
  for (const auto& [src, dst] : s.edges) {
    path.clear();
    topo.append_path(src, dst, path);
    const bool network = topo.nvlink_domain_of(src) != topo.nvlink_domain_of(dst);
    slowest = std::max(slowest, terms.latency(topo.path_latency(path), network));
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
  rate = terms.effective(rate);
  if (s.bytes.n > 0 && !std::isinf(rate))
    c.transfer = rate > 0 ? base::transfer_time(s.bytes, base::Bandwidth{rate}) : base::Time::max();
  return c;
}

base::Time time_of(const std::vector<PhaseSpec>& specs, const topology::Topology& topo,
                   const ProtocolTerms& terms = identity_terms()) {
  base::Time total = base::Time::zero();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const PhaseCost c = evaluate(specs[i], topo, terms);
    if (i + 1 < specs.size() && specs[i + 1].concurrent) {
      const PhaseCost d = evaluate(specs[++i], topo, terms);
      total = add_concurrent(total, c.latency, c.transfer, d.latency, d.transfer);
      continue;
    }
    total = add_phase(total, c.latency, c.transfer);
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
    case Algorithm::Nvls:
      return "nvls";
  }
  return "?";
}

std::optional<Op> op_from_string(std::string_view s) {
  for (Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll, Op::SendRecv, Op::Broadcast})
    if (s == to_string(op)) return op;
  return std::nullopt;
}

std::optional<Algorithm> algorithm_from_string(std::string_view s) {
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Auto, Algorithm::Nvls})
    if (s == to_string(a)) return a;
  return std::nullopt;
}

Algorithm resolve(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                  const topology::Topology& topo) {
  return CollectiveCostModel(topo).resolve(op, algorithm, group, n);
}

std::vector<Phase> lower(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                         const topology::Topology& topo) {
  CollectiveCostModel model(topo);
  return lower(model, op, algorithm, group, n, topo);
}

std::vector<Phase> lower(CollectiveCostModel& model, Op op, Algorithm algorithm, std::span<const GpuId> group,
                         base::Bytes n, const topology::Topology& topo) {
  const auto chosen = model.choice(op, algorithm, group, n);
  const Algorithm a = chosen.algorithm;
  // The chosen protocol's step latencies and fixed cost (in the first phase); its bandwidth fraction as transfers
  // that many times larger (the flow model gives them the links' full rate). LL's cap on small messages is not
  // carried: a replay's flows see it only through their latency.
  ProtocolTerms terms = a == Algorithm::Nvls ? nvls_terms() : identity_terms();
  if (group.size() <= 1 || n.n <= 0) return {};
  const Layout l = layout_of(group, topo);
  if (a != Algorithm::Nvls && op != Op::AllToAll && op != Op::SendRecv && op != Op::Broadcast) {
    int most = 0;
    for (const auto& d : l.domains)
      most = std::max(most, static_cast<int>(d.size()));
    terms = protocol_terms(chosen.protocol, a == Algorithm::Tree, static_cast<int>(l.domains.size()), most,
                           op == Op::AllGather || op == Op::ReduceScatter);
    if (a == Algorithm::Tree) terms.correct(tree_correction(chosen.protocol, n));
  }
  std::vector<Phase> phases;
  std::vector<LinkId> path;
  for (PhaseSpec& s : plan(op, a, group, l, n, topo)) {
    Phase ph;
    base::Time slowest = base::Time::zero();
    ph.transfers.reserve(s.edges.size());
    const base::Bytes bytes =
        terms.rate == 1.0
            ? s.bytes
            : base::Bytes{static_cast<std::int64_t>(std::llround(static_cast<double>(s.bytes.n) / terms.rate))};
    for (const auto& [src, dst] : s.edges) {
      path.clear();
      topo.append_path(src, dst, path);
      const bool network = topo.nvlink_domain_of(src) != topo.nvlink_domain_of(dst);
      slowest = std::max(slowest, terms.latency(topo.path_latency(path), network));
      ph.transfers.push_back({src, dst, bytes});
    }
    ph.latency = base::Time{slowest.ns * s.steps};
    if (phases.empty()) ph.latency += terms.base;
    if (s.concurrent && !phases.empty()) {  // one phase of both transfer sets, on disjoint links
      Phase& prev = phases.back();
      prev.transfers.insert(prev.transfers.end(), ph.transfers.begin(), ph.transfers.end());
      prev.latency += ph.latency;
      continue;
    }
    phases.push_back(std::move(ph));
  }
  return phases;
}

base::Time collective_time(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                           const topology::Topology& topo) {
  return CollectiveCostModel(topo).time(op, algorithm, group, n);
}

namespace {

struct Timed {
  base::Time time = base::Time::max();
  Protocol protocol = Protocol::LL;
};

// The algorithm's time with its fastest protocol (ties: LL, LL128, Simple), as CollectiveCostModel::fastest().
Timed fastest_protocol(Op op, Algorithm a, std::span<const GpuId> group, base::Bytes n,
                       const topology::Topology& topo) {
  const Layout l = layout_of(group, topo);
  const auto specs = group.size() <= 1 || n.n <= 0 ? std::vector<PhaseSpec>{} : plan(op, a, group, l, n, topo);
  if (a == Algorithm::Nvls) return {time_of(specs, topo, nvls_terms()), Protocol::Simple};
  if (op == Op::AllToAll || op == Op::SendRecv || op == Op::Broadcast) return {time_of(specs, topo), Protocol::LL};
  int most = 0;
  for (const auto& d : l.domains)
    most = std::max(most, static_cast<int>(d.size()));
  const bool gather_or_scatter = op == Op::AllGather || op == Op::ReduceScatter;
  Timed best;
  for (Protocol p : kProtocols) {
    ProtocolTerms terms =
        protocol_terms(p, a == Algorithm::Tree, static_cast<int>(l.domains.size()), most, gather_or_scatter);
    if (a == Algorithm::Tree) terms.correct(tree_correction(p, n));
    const base::Time t = detail::saturating_add(terms.base, time_of(specs, topo, terms));
    if (t < best.time) best = {t, p};
  }
  return best;
}

}  // namespace

namespace detail {

Algorithm reference_resolve(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                            const topology::Topology& topo) {
  if (group.size() <= 1 || op == Op::AllToAll || op == Op::SendRecv || op == Op::Broadcast) return Algorithm::Ring;
  const Layout l = layout_of(group, topo);
  const bool hierarchical = hierarchical_applies(l);
  const bool nvls = nvls_applies(op, l, topo);
  switch (algorithm) {
    case Algorithm::Ring:
      return Algorithm::Ring;
    case Algorithm::Tree:
      return op == Op::AllReduce ? Algorithm::Tree : Algorithm::Ring;
    case Algorithm::Hierarchical:
      return hierarchical ? Algorithm::Hierarchical : Algorithm::Ring;
    case Algorithm::Nvls:
      return nvls ? Algorithm::Nvls : Algorithm::Ring;
    case Algorithm::Auto:
      break;
  }
  if (n.n <= 0) return Algorithm::Ring;  // nothing to move: every candidate costs 0, ring wins the tie
  Algorithm best = Algorithm::Ring;
  base::Time best_time = fastest_protocol(op, Algorithm::Ring, group, n, topo).time;
  auto consider = [&](Algorithm a) {
    const base::Time t = fastest_protocol(op, a, group, n, topo).time;
    if (t < best_time) {
      best = a;
      best_time = t;
    }
  };
  if (hierarchical && op == Op::AllReduce) consider(Algorithm::Hierarchical);
  if (op == Op::AllReduce) consider(Algorithm::Tree);
  if (nvls && l.domains.size() <= 2) consider(Algorithm::Nvls);
  return best;
}

base::Time reference_collective_time(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                                     const topology::Topology& topo) {
  if (group.size() <= 1 || n.n <= 0) return base::Time::zero();
  return fastest_protocol(op, reference_resolve(op, algorithm, group, n, topo), group, n, topo).time;
}

}  // namespace detail

}  // namespace sim::collectives
