// sim/collectives/cost_model_choice.cpp: CollectiveCostModel's algorithm choice (resolve()'s rules, Auto's fastest
// algorithm and protocol, the time beside sibling groups) and the group's layout (its NVLink domains, evenness, rails
// and ring order); cost_model.cpp costs the chosen algorithm's phases.
#include "sim/collectives/collective.hpp"

#include "sim/base/assert.hpp"
#include "sim/collectives/phase_sum.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>

namespace sim::collectives {

using topology::GpuId;

namespace {

std::size_t index(int i) {
  return static_cast<std::size_t>(i);
}

}  // namespace

base::Time CollectiveCostModel::time(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n) {
  return choose(op, algorithm, group, n, /*need_time=*/true).time;
}

// The algorithm and protocol of the group alone (NCCL's tuner sees no other traffic), costed again with the siblings'
// transfers on the switch links (end_phase_raw()).
base::Time CollectiveCostModel::time(Op op, Algorithm algorithm, std::span<const GpuId> group, base::Bytes n,
                                     std::span<const GpuId> sibling_offsets) {
  const Choice alone = choose(op, algorithm, group, n, /*need_time=*/true);
  if (sibling_offsets.empty() || alone.time == base::Time::zero() || alone.time == base::Time::max() ||
      op == Op::AllToAll || op == Op::SendRecv || op == Op::Broadcast)
    return alone.time;
  for (GpuId o : sibling_offsets)
    for (GpuId g : nodes_)
      SIM_ASSERT(o != 0 && g + o >= 0 && g + o < topo_.gpus(), "a sibling group lies outside the cluster");
  siblings_ = sibling_offsets;
  const Choice with = alone.algorithm == Algorithm::Nvls ? nvls_choice(n)
                                                         : fastest(op, alone.algorithm, n, base::Time::max(),
                                                                   /*only=*/alone.protocol);
  siblings_ = {};
  return with.time;
}

CollectiveCostModel::Choice CollectiveCostModel::choice(Op op, Algorithm algorithm, std::span<const GpuId> group,
                                                        base::Bytes n) {
  return choose(op, algorithm, group, n, /*need_time=*/true);
}

// The algorithm's phases, built once, costed with each protocol's terms and fixed cost; the fastest kept (ties: LL,
// LL128, Simple), or `only` that protocol. A tree that no protocol can bring below `beat` is not routed and returns
// Time::max() (the caller has a faster candidate already).
CollectiveCostModel::Choice CollectiveCostModel::fastest(Op op, Algorithm a, base::Bytes n, base::Time beat,
                                                         std::optional<Protocol> only) {
  int most = 0;
  for (int d = 0; d < domains_; ++d)
    most = std::max(most, domain_start_[index(d + 1)] - domain_start_[index(d)]);
  const bool gather_or_scatter = op == Op::AllGather || op == Op::ReduceScatter;
  for (std::size_t i = 0; i < kProtocols.size(); ++i) {
    candidates_[i] = protocol_terms(kProtocols[i], a == Algorithm::Tree, domains_, most, gather_or_scatter);
    if (a == Algorithm::Tree) candidates_[i].correct(tree_correction(kProtocols[i], n));
  }
  Program prog;
  switch (a) {
    case Algorithm::Tree: {
      bool cut = false;
      prog = tree_program(n, beat, &cut);
      if (cut) return {a, base::Time::max(), Protocol::LL};
      break;
    }
    case Algorithm::Hierarchical:
      prog = hierarchical_program(op, n);
      break;
    default:
      prog = ring_program(op, n);
      break;
  }
  Choice best{a, base::Time::max(), Protocol::LL};
  for (std::size_t i = 0; i < kProtocols.size(); ++i) {
    if (only && kProtocols[i] != *only) continue;
    const base::Time t = detail::saturating_add(candidates_[i].base, run(prog, candidates_[i]));
    if (t < best.time) best = {a, t, kProtocols[i]};
  }
  return best;
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
  load_nodes(sorted(group));
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
    case Algorithm::Nvls:
      chosen = nvls_applies(op) ? Algorithm::Nvls : Algorithm::Ring;
      break;
    case Algorithm::Auto: {  // every candidate costs 0 when n <= 0: ring wins the tie
      if (n.n <= 0) return {};
      Choice best = fastest(op, Algorithm::Ring, n, base::Time::max());
      auto consider = [&best](const Choice& c) {
        if (c.time < best.time) best = c;
      };
      if (hierarchical && op == Op::AllReduce) consider(fastest(op, Algorithm::Hierarchical, n, base::Time::max()));
      if (op == Op::AllReduce) consider(fastest(op, Algorithm::Tree, n, /*beat=*/best.time));
      if (domains_ <= 2 && nvls_applies(op)) consider(nvls_choice(n));  // collective.hpp: NVLS-tree on 2 only
      return best;
    }
  }
  if (!need_time || n.n <= 0) return {chosen, base::Time::zero()};
  if (chosen == Algorithm::Nvls) return nvls_choice(n);
  return fastest(op, chosen, n, base::Time::max());
}

// The group sorted as layout_of() sorts it, checked as it checks it. By id is by NVLink domain then id (a domain is a
// range of ids), so a group in increasing id order, the common case, is returned as it is.
std::span<const GpuId> CollectiveCostModel::sorted(std::span<const GpuId> group) {
  if (std::adjacent_find(group.begin(), group.end(), std::greater_equal<>()) == group.end()) return group;
  sorted_.assign(group.begin(), group.end());
  std::sort(sorted_.begin(), sorted_.end());
  SIM_ASSERT(std::adjacent_find(sorted_.begin(), sorted_.end()) == sorted_.end(),
             "a collective group lists a GPU twice");
  return sorted_;
}

void CollectiveCostModel::load_nodes(std::span<const GpuId> gpus) {
  const std::size_t p = gpus.size();
  nodes_ = gpus;
  scratch_.resize((4 + kMedia) * p + 1);
  const std::span<std::int32_t> all(scratch_);
  domain_ = all.subspan(0, p);
  leaf_ = all.subspan(p, p);
  ring_ = all.subspan(2 * p, p);
  domain_start_ = all.subspan(3 * p, p + 1);
  exchanges_ = all.subspan(4 * p + 1, kMedia * p);
  bool one_domain = true;
  for (std::size_t i = 0; i < p; ++i) {
    domain_[i] = topo_.nvlink_domain_of(gpus[i]);
    one_domain = one_domain && domain_[i] == domain_[0];
  }
  if (one_domain) return;  // no transfer leaves the domain: leaves are never asked for
  for (std::size_t i = 0; i < p; ++i)
    leaf_[i] = topo_.leaf_of(gpus[i]);
}

// layout_of() and ring_order() on sorted nodes: domain boundaries, evenness, and the ring (domain by domain, every
// other domain reversed).
void CollectiveCostModel::load_layout() {
  const auto p = static_cast<int>(nodes_.size());
  domains_ = 0;
  for (int i = 0; i < p; ++i)
    if (i == 0 || domain_[index(i)] != domain_[index(i - 1)]) domain_start_[index(domains_++)] = i;
  domain_start_[index(domains_)] = p;
  even_ = true;
  fewest_ = domain_start_[1];
  for (int d = 0; d < domains_; ++d) {
    const int size = domain_start_[index(d + 1)] - domain_start_[index(d)];
    even_ = even_ && size == domain_start_[1];
    fewest_ = std::min(fewest_, size);
  }
  if (domains_ == 1 || domains_ == p) {  // one domain, or one rank in each: nothing is reversed
    for (int i = 0; i < p; ++i)
      ring_[index(i)] = i;
    return;
  }
  std::size_t at = 0;
  for (int d = 0; d < domains_; ++d) {
    const int first = domain_start_[index(d)];
    const int last = domain_start_[index(d + 1)];
    for (int i = 0; i < last - first; ++i)
      ring_[at++] = d % 2 == 0 ? first + i : last - 1 - i;
  }
}

bool CollectiveCostModel::hierarchical_applies() const {
  return domains_ >= 2 && even_ && domain_start_[1] >= 2;
}

bool CollectiveCostModel::nvls_applies(Op op) const {
  if (op != Op::AllReduce || !(topo_.config().nvls_bw.bytes_per_s > 0)) return false;
  return domains_ == 1 ? nodes_.size() >= 2 : hierarchical_applies();
}

}  // namespace sim::collectives
