// tests/unit/collectives_cost_model_test.cpp: the fast CollectiveCostModel bit for bit against the reference.
// The reference is detail::reference_*: random groups on varied clusters, links down included; also the exact integer
// division (topology::Divisor) the model relies on.
#include "tests/unit/collectives_test_support.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/rng.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace sim::collectives::tests {
namespace {

// --- CollectiveCostModel against the straightforward implementation (detail::reference_*) -------------------------

// Clusters that exercise every routing case: three tiers (cross-pod paths), two, one leaf; rail-optimised and plain fat
// trees; NVLink domains spanning nodes (NVL72-like); bonded NICs; oversubscribed leaves (fewer, faster uplinks).
std::vector<TopologyConfig> varied_clusters() {
  std::vector<TopologyConfig> out;
  out.push_back(h100(16384));  // 512 rail leaves: three tiers
  out.push_back(h100(512));    // two rail groups: two tiers
  TopologyConfig plain = h100(1024);
  plain.kind = TopologyConfig::Kind::FatTree;  // 4 whole nodes per leaf
  plain.oversubscription = 2.0;
  out.push_back(plain);
  TopologyConfig nvl = h100(1152);  // 16 domains of 72 GPUs, 4 GPUs per node
  nvl.gpus_per_node = 4;
  nvl.nvlink_domain = 72;
  nvl.nics_per_gpu = 2;
  nvl.leaf_downlinks = 8;  // radix 16: 288 leaves make three tiers on a small cluster
  out.push_back(nvl);
  TopologyConfig one_leaf = h100(32);
  one_leaf.kind = TopologyConfig::Kind::FatTree;  // every node on one leaf: one tier
  out.push_back(one_leaf);
  TopologyConfig sharp = h100_sharp(512);  // NVLink SHARP: NVLS and NVLS-tree
  out.push_back(sharp);
  TopologyConfig nvl_sharp = nvl;
  nvl_sharp.nvls_bw = Bandwidth{0.69 * kNvlBw.bytes_per_s};
  out.push_back(nvl_sharp);
  return out;
}

void shuffle(std::vector<GpuId>& g, base::Rng& rng) {
  for (std::size_t i = g.size(); i > 1; --i)
    std::swap(g[i - 1], g[static_cast<std::size_t>(rng.below(i))]);
}

// A random group of at most max_ranks distinct GPUs, shaped like a parallelism group or not, in id order or shuffled.
std::vector<GpuId> random_group(base::Rng& rng, const Topology& topo, int max_ranks) {
  const int gpn = topo.config().gpus_per_node;
  const int nodes = topo.nodes();
  std::vector<GpuId> g;
  const std::uint64_t shape = rng.below(5);
  switch (shape) {
    case 0: {  // anywhere
      const auto p = static_cast<int>(1 + rng.below(static_cast<std::uint64_t>(std::min(max_ranks, topo.gpus()))));
      std::set<GpuId> picked;
      while (static_cast<int>(picked.size()) < p)
        picked.insert(static_cast<GpuId>(rng.below(static_cast<std::uint64_t>(topo.gpus()))));
      g.assign(picked.begin(), picked.end());
      break;
    }
    case 1: {  // one rank per node, strided nodes, one rail (a DP or PP group)
      const auto stride = static_cast<int>(1 + rng.below(4));
      const int most = std::min(max_ranks, (nodes + stride - 1) / stride);
      const auto p = static_cast<int>(1 + rng.below(static_cast<std::uint64_t>(most)));
      const auto first = static_cast<int>(rng.below(static_cast<std::uint64_t>(nodes - (p - 1) * stride)));
      const auto rail = static_cast<int>(rng.below(static_cast<std::uint64_t>(gpn)));
      for (int i = 0; i < p; ++i)
        g.push_back((first + i * stride) * gpn + rail);
      break;
    }
    case 2:    // k ranks in each of m nodes (hierarchical applies when m >= 2 and k >= 2)
    case 3: {  // a random number of ranks per node (uneven)
      const bool even = shape == 2;
      const auto k = static_cast<int>(1 + rng.below(static_cast<std::uint64_t>(gpn)));
      const int most = std::min(nodes, max_ranks / (even ? k : gpn));
      const auto m = static_cast<int>(1 + rng.below(static_cast<std::uint64_t>(most)));
      std::set<int> picked_nodes;
      while (static_cast<int>(picked_nodes.size()) < m)
        picked_nodes.insert(static_cast<int>(rng.below(static_cast<std::uint64_t>(nodes))));
      for (int node : picked_nodes) {
        std::vector<GpuId> local = iota(node * gpn, gpn);
        shuffle(local, rng);
        const int take = even ? k : static_cast<int>(1 + rng.below(static_cast<std::uint64_t>(gpn)));
        g.insert(g.end(), local.begin(), local.begin() + take);
      }
      std::sort(g.begin(), g.end());
      break;
    }
    default: {  // consecutive GPUs (a TP group, a whole block of nodes)
      const auto p = static_cast<int>(1 + rng.below(static_cast<std::uint64_t>(std::min(max_ranks, topo.gpus()))));
      g = iota(static_cast<int>(rng.below(static_cast<std::uint64_t>(topo.gpus() - p + 1))), p);
      break;
    }
  }
  if (rng.below(3) == 0) shuffle(g, rng);
  return g;
}

Bytes random_bytes(base::Rng& rng) {
  constexpr std::array<std::int64_t, 6> kFixed = {0, 1, 3, 4096, (1 << 20) + 7, std::int64_t{1} << 30};
  if (rng.below(2) == 0) return Bytes{kFixed[static_cast<std::size_t>(rng.below(kFixed.size()))]};
  return Bytes{static_cast<std::int64_t>(rng.below(std::uint64_t{8} << 30))};
}

constexpr std::array<Op, 6> kOps = {Op::AllReduce, Op::AllGather, Op::ReduceScatter,
                                    Op::AllToAll,  Op::SendRecv,  Op::Broadcast};
constexpr std::array<Algorithm, 5> kAlgorithms = {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical,
                                                  Algorithm::Auto, Algorithm::Nvls};

// What the random cases covered: Auto's choices, and collectives stalled on a down link.
struct Coverage {
  std::map<Algorithm, int> auto_chose;
  int stalled = 0;
};

// Every op and algorithm on `groups` random groups: the model (one instance, reused, so scratch sized for one group
// serves the next) and the free functions give exactly the reference's times and choices.
void expect_model_matches_reference(const Topology& topo, base::Rng& rng, int groups, int max_ranks,
                                    Coverage& coverage) {
  CollectiveCostModel model(topo);
  for (int i = 0; i < groups; ++i) {
    const std::vector<GpuId> group = random_group(rng, topo, max_ranks);
    const Bytes n = random_bytes(rng);
    for (Op op : kOps) {
      if (op == Op::AllToAll && group.size() > 48) continue;  // the reference is O(p^2 log p)
      for (Algorithm a : kAlgorithms) {
        const Time expected = detail::reference_collective_time(op, a, group, n, topo);
        ASSERT_EQ(model.time(op, a, group, n), expected)
            << to_string(op) << " " << to_string(a) << " on " << group.size() << " ranks (first " << group.front()
            << "), " << n.n << " bytes, " << topo.gpus() << " GPUs, " << topo.links_down() << " links down";
        ASSERT_EQ(collective_time(op, a, group, n, topo), expected);
        const Algorithm chosen = model.resolve(op, a, group, n);
        ASSERT_EQ(chosen, detail::reference_resolve(op, a, group, n, topo))
            << to_string(op) << " " << to_string(a) << " on " << group.size() << " ranks";
        if (a == Algorithm::Auto) ++coverage.auto_chose[chosen];
        if (expected == Time::max()) ++coverage.stalled;
      }
    }
  }
}

TEST(CollectiveCostModel, MatchesTheReferenceBitForBitOnRandomGroups) {
  const base::RngStreams streams(2024);
  std::uint64_t cluster = 0;
  Coverage coverage;
  for (const TopologyConfig& c : varied_clusters()) {
    const Topology topo(c);
    base::Rng rng = streams.stream("collective-groups", cluster++);
    expect_model_matches_reference(topo, rng, /*groups=*/60, /*max_ranks=*/160, coverage);
  }
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical})
    EXPECT_GE(coverage.auto_chose[a], 10) << "the random groups should make Auto pick " << to_string(a);
}

// NVLS applies to whole layouts (one domain, or the same ranks in each of several), which random groups rarely are:
// groups of k ranks in each of m domains, on the clusters whose switches reduce.
TEST(CollectiveCostModel, MatchesTheReferenceOnNvlsLayouts) {
  const base::RngStreams streams(2025);
  base::Rng rng = streams.stream("nvls-layouts", 0);
  std::map<Algorithm, int> auto_chose;
  for (const TopologyConfig& c : varied_clusters()) {
    if (!(c.nvls_bw.bytes_per_s > 0)) continue;
    const Topology topo(c);
    CollectiveCostModel model(topo);
    const int per_domain = c.nvlink_domain;
    for (int i = 0; i < 60; ++i) {
      const auto k = static_cast<int>(2 + rng.below(static_cast<std::uint64_t>(std::min(per_domain, 16) - 1)));
      const auto m = static_cast<int>(1 + rng.below(4));
      std::vector<GpuId> group;
      for (int d = 0; d < m; ++d)
        for (int j = 0; j < k; ++j)
          group.push_back(d * per_domain + j);
      const Bytes n = random_bytes(rng);
      for (Algorithm a : {Algorithm::Auto, Algorithm::Nvls}) {
        const Time expected = detail::reference_collective_time(Op::AllReduce, a, group, n, topo);
        ASSERT_EQ(model.time(Op::AllReduce, a, group, n), expected)
            << to_string(a) << " on " << m << " domains of " << k << ", " << n.n << " bytes";
        const Algorithm chosen = model.resolve(Op::AllReduce, a, group, n);
        ASSERT_EQ(chosen, detail::reference_resolve(Op::AllReduce, a, group, n, topo));
        if (a == Algorithm::Auto) ++auto_chose[chosen];
      }
    }
  }
  EXPECT_GE(auto_chose[Algorithm::Nvls], 10) << "Auto should pick NVLS on whole domains with large buffers";
  EXPECT_GE(auto_chose[Algorithm::Ring] + auto_chose[Algorithm::Hierarchical] + auto_chose[Algorithm::Tree], 10);
}

TEST(CollectiveCostModel, MatchesTheReferenceOnLargeDataParallelGroups) {
  const Topology topo(h100(16384));
  CollectiveCostModel model(topo);
  for (int ranks : {1024, 2048}) {
    for (int per_node : {1, 8}) {
      std::vector<GpuId> group;
      for (int i = 0; i < ranks; ++i)
        group.push_back(per_node == 1 ? i * 8 : i);
      for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather})
        EXPECT_EQ(model.time(op, Algorithm::Auto, group, 1_GiB),
                  detail::reference_collective_time(op, Algorithm::Auto, group, 1_GiB, topo))
            << to_string(op) << " on " << ranks << " ranks, " << per_node << " per node";
    }
  }
}

TEST(CollectiveCostModel, MatchesTheReferenceWithLinksDown) {
  const base::RngStreams streams(77);
  std::uint64_t cluster = 0;
  Coverage coverage;
  for (const TopologyConfig& c : varied_clusters()) {
    Topology topo(c);
    base::Rng rng = streams.stream("collective-links-down", cluster++);
    // A few GPU links (NVLink or NIC, either way) and switch links down: rates drop to 0 or re-route over other planes.
    std::vector<topology::LinkId> down;
    for (int i = 0; i < 12; ++i) {
      const auto g = static_cast<GpuId>(rng.below(static_cast<std::uint64_t>(topo.gpus())));
      const topology::LinkId own[] = {topo.nvlink_out(g), topo.nvlink_in(g), topo.nic_out(g), topo.nic_in(g)};
      down.push_back(own[rng.below(4)]);
      down.push_back(static_cast<topology::LinkId>(rng.below(static_cast<std::uint64_t>(topo.links()))));
    }
    for (topology::LinkId l : down)
      topo.set_link_up(l, false);
    ASSERT_GT(topo.links_down(), 0);
    expect_model_matches_reference(topo, rng, /*groups=*/25, /*max_ranks=*/160, coverage);
    for (topology::LinkId l : down)
      topo.set_link_up(l, true);
    EXPECT_EQ(topo.links_down(), 0) << "set_link_up counts transitions, not calls";
    expect_model_matches_reference(topo, rng, /*groups=*/8, /*max_ranks=*/160, coverage);
  }
  EXPECT_GE(coverage.stalled, 10) << "some random groups should cross a down GPU link and stall";
}

// What the model takes from topology.hpp instead of reading paths link by link.
TEST(CollectiveCostModel, ReliesOnlyOnTheTopologyContract) {
  for (const TopologyConfig& c : varied_clusters()) {
    const Topology topo(c);
    for (topology::LinkId id = 0; id < topo.links(); ++id) {  // every link has its kind's nominal values
      const topology::Link& l = topo.link(id);
      ASSERT_EQ(l.bandwidth, topo.nominal_bandwidth(l.kind)) << "link " << id;
      ASSERT_EQ(l.latency, topo.nominal_latency(l.kind)) << "link " << id;
    }
    base::Rng rng = base::RngStreams(5).stream("contract", static_cast<std::uint64_t>(topo.gpus()));
    for (int i = 0; i < 2000; ++i) {  // a path starts with the sender's own link and ends with the receiver's
      const auto a = static_cast<GpuId>(rng.below(static_cast<std::uint64_t>(topo.gpus())));
      const auto b = static_cast<GpuId>(rng.below(static_cast<std::uint64_t>(topo.gpus())));
      if (a == b) continue;
      const auto path = topo.path(a, b);
      const bool nvlink = topo.same_nvlink_domain(a, b);
      ASSERT_EQ(path.front(), nvlink ? topo.nvlink_out(a) : topo.nic_out(a));
      ASSERT_EQ(path.back(), nvlink ? topo.nvlink_in(b) : topo.nic_in(b));
      const bool one_leaf = nvlink || topo.leaf_of(a) == topo.leaf_of(b);
      ASSERT_TRUE(!one_leaf || path.size() == 2U) << "no switch link under one leaf";
      ASSERT_EQ(topo.leaf_of(a), topo.config().kind == TopologyConfig::Kind::RailFatTree
                                     ? (a / c.gpus_per_node) / (c.leaf_downlinks / c.nics_per_gpu) * c.gpus_per_node +
                                           a % c.gpus_per_node
                                     : (a / c.gpus_per_node) / (c.leaf_downlinks / c.nics_per_gpu / c.gpus_per_node));
      ASSERT_EQ(topo.nvlink_domain_of(a), a / c.nvlink_domain);
    }
  }
}

TEST(Divisor, IsExactIntegerDivision) {
  base::Rng rng = base::RngStreams(9).stream("divisor");
  constexpr int kMax = std::numeric_limits<int>::max();
  for (int d : {1, 2, 3, 7, 8, 9, 31, 32, 33, 72, 1000, 65535, 65536, 65537, (1 << 24) - 1, 1 << 24, kMax}) {
    const topology::Divisor div(d);
    for (int n : {0, 1, d - 1, d, kMax - 1, kMax})
      ASSERT_EQ(div.quotient(n), n / d) << n << " / " << d;
    for (int i = 0; i < 20000; ++i) {
      const auto n = static_cast<int>(rng.below(std::uint64_t{1} << 31));
      ASSERT_EQ(div.quotient(n), n / d) << n << " / " << d;
    }
  }
  for (int d = 1; d <= 4096; ++d) {  // every small divisor, near each multiple
    const topology::Divisor div(d);
    for (int q = 0; q < 64; ++q)
      for (int n : {q * d, q * d + d - 1}) {
        ASSERT_EQ(div.quotient(n), n / d) << n << " / " << d;
        ASSERT_EQ(div.quotient(n + d), n / d + 1) << n + d << " / " << d;
      }
  }
}

}  // namespace
}  // namespace sim::collectives::tests
