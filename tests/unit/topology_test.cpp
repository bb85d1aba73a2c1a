// tests/unit/topology_test.cpp: the cluster graph: structure, placement queries, paths, ECMP, failures, validation.
#include "sim/topology/topology.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace sim::topology {
namespace {

using namespace base::literals;  // NOLINT(google-build-using-namespace): unit literals only

// DGX H100-like nodes: 8 GPUs on one NVSwitch domain at 450 GB/s, one 400 Gbit/s NIC per GPU.
TopologyConfig h100(int gpus, TopologyConfig::Kind kind = TopologyConfig::Kind::RailFatTree) {
  TopologyConfig c;
  c.gpus = gpus;
  c.nvlink_bw = 450_GBps;
  c.nic_bw = 400_Gbps;
  c.kind = kind;
  return c;
}

std::vector<LinkKind> kinds(const Topology& t, const std::vector<LinkId>& path) {
  std::vector<LinkKind> out;
  for (LinkId id : path)
    out.push_back(t.link(id).kind);
  return out;
}

// Consecutive links of a path meet at a vertex.
void expect_chained(const Topology& t, const std::vector<LinkId>& path) {
  for (std::size_t i = 1; i < path.size(); ++i)
    EXPECT_EQ(t.link(path[i - 1]).to, t.link(path[i]).from);
}

TEST(Topology, SmallRailOptimisedClusterHasOneGroupAndTwoTiers) {
  const Topology t(h100(64));
  EXPECT_EQ(t.nodes(), 8);
  EXPECT_EQ(t.count(DomainKind::NvlinkDomain), 8);
  EXPECT_EQ(t.leaves(), 8) << "one group of up to 32 nodes: one leaf per rail";
  EXPECT_EQ(t.tiers(), 2);
  EXPECT_EQ(t.spines(), 32) << "32 NIC ports per leaf at 1:1 -> 32 uplinks, one per spine";
  EXPECT_EQ(t.links(), 6 * 64 + 2 * 8 * 32) << "per GPU: NVLink up/down, PCIe x2, NIC up/down; per leaf: 32 up/down";
  EXPECT_EQ(t.vertices(), 64 + 8 + 64 + 8 + 32);
}

TEST(Topology, PlacementQueriesOnRailOptimisedTree) {
  const Topology t(h100(512));  // 64 nodes: two groups of 32
  const GpuId g = 8 * 40 + 3;   // node 40, local rank 3: group 1
  EXPECT_EQ(t.node_of(g), 40);
  EXPECT_EQ(t.local_rank(g), 3);
  EXPECT_EQ(t.nvlink_domain_of(g), 40);
  EXPECT_EQ(t.leaf_of(g), 8 * 1 + 3) << "rail-3 leaf of group 1";
  EXPECT_EQ(t.leaf_of(3), 3);
  EXPECT_EQ(t.rack_of(g), 10) << "4 nodes per rack by default";
  EXPECT_EQ(t.gpus_in(DomainKind::Leaf, 11).size(), 32U) << "one GPU of every node of group 1";
  EXPECT_EQ(t.gpus_in(DomainKind::Leaf, 11).front(), 8 * 32 + 3);
}

TEST(Topology, PlainFatTreePutsWholeNodesOnALeaf) {
  const Topology t(h100(512, TopologyConfig::Kind::FatTree));
  EXPECT_EQ(t.leaves(), 16) << "32 ports per leaf hold 4 nodes of 8";
  for (GpuId g = 8 * 5; g < 8 * 6; ++g)
    EXPECT_EQ(t.leaf_of(g), 1);
  EXPECT_EQ(t.gpus_in(DomainKind::Leaf, 1), t.gpus_in(DomainKind::Rack, 1)) << "4 nodes per leaf and per rack";
}

void expect_partition(const Topology& t, DomainKind kind) {
  std::vector<int> seen(static_cast<std::size_t>(t.gpus()), 0);
  for (int d = 0; d < t.count(kind); ++d) {
    const auto members = t.gpus_in(kind, d);
    EXPECT_FALSE(members.empty());
    EXPECT_TRUE(std::is_sorted(members.begin(), members.end()));
    for (GpuId g : members)
      ++seen[static_cast<std::size_t>(g)];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; })) << "every GPU in exactly one";
}

TEST(Topology, DomainsPartitionTheGpus) {
  for (auto kind : {TopologyConfig::Kind::RailFatTree, TopologyConfig::Kind::FatTree}) {
    TopologyConfig c = h100(40 * 8, kind);  // 40 nodes: a partial second rail group
    const Topology t(c);
    for (auto d : {DomainKind::Node, DomainKind::NvlinkDomain, DomainKind::Leaf, DomainKind::Rack})
      expect_partition(t, d);
  }
  TopologyConfig nvl72 = h100(4 * 40);  // GB200-like: 4 GPUs per tray, 72 per NVLink domain; last domain partial
  nvl72.gpus_per_node = 4;
  nvl72.nvlink_domain = 72;
  const Topology t(nvl72);
  EXPECT_EQ(t.count(DomainKind::NvlinkDomain), 3);
  EXPECT_EQ(t.gpus_in(DomainKind::NvlinkDomain, 2).size(), 160U - 144U);
  EXPECT_EQ(t.count(DomainKind::Rack), 3) << "an NVL72 domain is one rack";
  for (auto d : {DomainKind::Node, DomainKind::NvlinkDomain, DomainKind::Leaf, DomainKind::Rack})
    expect_partition(t, d);
}

TEST(Topology, PathInsideAnNvlinkDomainCrossesTheNvSwitch) {
  const Topology t(h100(64));
  const auto p = t.path(1, 6);
  EXPECT_EQ(kinds(t, p), (std::vector{LinkKind::NvLink, LinkKind::NvSwitch}));
  expect_chained(t, p);
  EXPECT_EQ(t.path_latency(p), kDefaultNvlinkLatency);
  EXPECT_EQ(t.path_bandwidth(p), 450_GBps);
  EXPECT_TRUE(t.path(5, 5).empty());
}

TEST(Topology, SameRailPathStaysOnTheLeaf) {
  const Topology t(h100(64));
  const auto p = t.path(3, 8 * 5 + 3);
  EXPECT_EQ(kinds(t, p), (std::vector{LinkKind::Nic, LinkKind::LeafDown}));
  EXPECT_EQ(t.path_latency(p), kDefaultNicLatency * 2);
  EXPECT_EQ(t.path_bandwidth(p), 400_Gbps);
}

TEST(Topology, CrossRailPathGoesThroughASpine) {
  const Topology t(h100(64));
  const auto p = t.path(3, 8 * 5 + 4);
  EXPECT_EQ(kinds(t, p), (std::vector{LinkKind::Nic, LinkKind::LeafUp, LinkKind::SpineDown, LinkKind::LeafDown}));
  expect_chained(t, p);
  EXPECT_EQ(t.path_latency(p), kDefaultNicLatency * 4);
  EXPECT_EQ(t.path_bandwidth(p), 400_Gbps) << "each leaf-spine link is one 400 Gbit/s port at 1:1";
}

TEST(Topology, ThreeTiersWhenOneSpineLayerCannotHoldTheLeaves) {
  const Topology t(h100(16384));  // 2048 nodes, 64 groups, 512 leaves > 64-port spines
  EXPECT_EQ(t.tiers(), 3);
  EXPECT_EQ(t.leaves(), 512);
  EXPECT_EQ(t.spines(), 16 * 32) << "pods of 32 leaves, 32 spines each";
  EXPECT_EQ(t.cores(), 32 * 32);
  const GpuId far = 16384 - 8;  // last node, local rank 0: another pod
  const auto p = t.path(0, far);
  EXPECT_EQ(kinds(t, p), (std::vector{LinkKind::Nic, LinkKind::LeafUp, LinkKind::SpineUp, LinkKind::CoreDown,
                                      LinkKind::SpineDown, LinkKind::LeafDown}));
  expect_chained(t, p);
  EXPECT_EQ(t.path_latency(p), kDefaultNicLatency * 6);
}

TEST(Topology, OversubscriptionScalesUplinks) {
  TopologyConfig c = h100(512);
  c.oversubscription = 2.0;
  const Topology t(c);
  EXPECT_EQ(t.spines(), 16) << "32 ports down, 16 up";
  const auto p = t.path(0, 8 * 40 + 1);  // cross group and rail
  ASSERT_EQ(p.size(), 4U);
  const double up_total = t.link(p[1]).bandwidth.bytes_per_s * 16;
  EXPECT_DOUBLE_EQ(up_total, 32 * (400_Gbps).bytes_per_s / 2.0);
}

TEST(Topology, EcmpIsDeterministicAndSpreadsOverSpines) {
  const Topology a(h100(512));
  const Topology b(h100(512));
  std::set<int> spines;
  for (GpuId dst = 8 * 32; dst < 512; dst += 9) {
    const auto p = a.path(0, dst);
    EXPECT_EQ(p, b.path(0, dst));
    EXPECT_EQ(p, a.path(0, dst));
    spines.insert(a.link(p[1]).to);
  }
  EXPECT_GT(spines.size(), 8U) << "flows from one GPU to many destinations use many spines";
}

TEST(Topology, PathsAreShortestRoutesOfTheGraph) {
  TopologyConfig c = h100(256);
  c.gpus_per_node = 4;
  c.nvlink_domain = 4;
  c.leaf_downlinks = 4;  // radix 8: 64 leaves need three tiers
  const Topology t(c);
  ASSERT_EQ(t.tiers(), 3);
  for (GpuId src : {0, 1, 17, 130}) {
    for (GpuId dst = 0; dst < 256; dst += 7) {
      EXPECT_EQ(t.hop_distance(src, dst), static_cast<int>(t.path(src, dst).size())) << src << " -> " << dst;
    }
  }
}

TEST(Topology, DownUplinkIsRoutedAroundDownNicIsNot) {
  Topology t(h100(64));
  const GpuId src = 3;
  const GpuId dst = 8 * 5 + 4;
  const auto before = t.path(src, dst);
  t.set_link_up(before[1], false);  // its leaf -> spine uplink
  const auto after = t.path(src, dst);
  EXPECT_NE(after[1], before[1]);
  EXPECT_TRUE(t.path_up(after)) << "re-routed to the next spine plane";
  t.set_link_up(before[1], true);
  EXPECT_EQ(t.path(src, dst), before) << "back on its hashed spine once repaired";

  t.set_link_up(before[0], false);  // the source NIC
  const auto stuck = t.path(src, dst);
  EXPECT_EQ(stuck, before) << "no alternative: the hashed route, over the down link";
  EXPECT_FALSE(t.path_up(stuck));
  EXPECT_EQ(t.hop_distance(src, dst), 4)
      << "the graph still reaches it through a neighbour's NIC: NVLink to GPU 4, its NIC, the rail-4 leaf, GPU 44";
}

TEST(Topology, InvalidConfigsAreReportedFieldByField) {
  TopologyConfig c = h100(12);
  c.nvlink_domain = 12;
  c.nic_bw = base::Bandwidth{0};
  c.oversubscription = 0.5;
  const auto problems = validate(c);
  std::set<std::string> fields;
  for (const auto& d : problems)
    fields.insert(d.path);
  EXPECT_EQ(fields, (std::set<std::string>{"/gpus", "/nvlink_domain", "/nic_bw", "/oversubscription"}));
  EXPECT_THROW(Topology{c}, base::ConfigError);

  TopologyConfig fat = h100(64, TopologyConfig::Kind::FatTree);
  fat.leaf_downlinks = 12;
  ASSERT_EQ(validate(fat).size(), 1U);
  EXPECT_EQ(validate(fat).front().path, "/leaf_downlinks");
  EXPECT_TRUE(validate(h100(64)).empty());
}

TEST(Topology, BuildsA131072GpuClusterCompactly) {
  const Topology t(h100(131072));
  EXPECT_EQ(t.tiers(), 3);
  EXPECT_EQ(t.leaves(), 4096);
  EXPECT_LT(t.memory_bytes(), std::size_t{64} << 20) << "about 40 bytes per link";
  EXPECT_EQ(t.path(0, 131071).size(), 6U);
}

}  // namespace
}  // namespace sim::topology
