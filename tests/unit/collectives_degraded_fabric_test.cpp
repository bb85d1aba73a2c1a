// tests/unit/collectives_degraded_fabric_test.cpp: collectives on a degraded fabric (issue 21): spines, uplinks down.
// A spine down shares the remaining uplinks as the closed form says; failure elements are named and checked.
#include "tests/unit/collectives_test_support.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace sim::collectives::tests {
namespace {

// A degraded fabric (issue 21): 8 nodes on a plain fat tree with 32 NIC ports per leaf (two leaves of 4 nodes) and
// 16:1 oversubscription, so each leaf has U = 2 uplinks of 32 x 400 Gb/s / 16 / 2 = one NIC's rate. A 64-GPU ring
// all-reduce runs NCCL's rings over the 8 rails: each rail's ring leaves leaf 0 once (node 3 -> 4) and leaf 1 once
// (7 -> 0), so 8 flows leave each leaf. With spine 1 down they all take plane 0: each gets 1/8 of an uplink, and the
// network part of the ring (R/k of the R ring bytes per rank) runs at that rate, in the closed form of the rings over
// rails (collective.hpp) with NCCL's fastest protocol. Healthy, the same flows split over both planes by ECMP hash,
// and the time is the same closed form at the most flows any uplink carries.
TopologyConfig two_leaves() {
  TopologyConfig c = h100(64);
  c.kind = TopologyConfig::Kind::FatTree;
  c.oversubscription = 16;
  return c;
}

Time rails_closed_form(Bytes n, int flows_per_uplink) {
  const Bytes ring = share(n, 2 * 63, 64);
  const Bandwidth uplink_share{kNicBw.bytes_per_s / flows_per_uplink};
  const Time via_spine = topology::kDefaultNicLatency * 4;  // NIC -> leaf -> spine -> leaf -> NIC
  return fastest_protocol(false, 8, 8, false, [&](auto a, auto b) {
    const Time latency = a(kNvl, false) * (126 - 14) + a(via_spine, true) * 14;
    const Time nvl = base::transfer_time(share(ring, 7, 8), b(kNvlBw));
    const Time net = base::transfer_time(share(ring, 1, 8), b(std::min(uplink_share, kNicBw)));
    return latency + std::max(nvl, net);
  });
}

TEST(DegradedFabric, ASpineDownSharesTheRemainingUplinksAsTheClosedFormSays) {
  const Bytes n = 1_GiB;
  const auto group = iota(0, 64);
  Topology topo(two_leaves());
  ASSERT_EQ(topo.tiers(), 2);
  ASSERT_EQ(topo.uplinks(), 2);
  // Healthy: count the flows leaving leaf 0 per plane (each rail's ring: node 3 -> node 4, local rank j).
  std::map<topology::LinkId, int> per_uplink;
  for (int j = 0; j < 8; ++j)
    for (topology::LinkId id : topo.path(3 * 8 + j, 4 * 8 + j))
      if (topo.link(id).kind == topology::LinkKind::LeafUp) ++per_uplink[id];
  int most = 0;
  for (const auto& [id, count] : per_uplink)
    most = std::max(most, count);
  const Time healthy = collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo);
  EXPECT_EQ(healthy, rails_closed_form(n, most)) << most << " of 8 flows on the busiest uplink";

  for (topology::LinkId id : topo.failure_links({topology::FabricFailure::Kind::Spine, 0, 1}))
    topo.set_link_up(id, false);
  EXPECT_TRUE(topo.isolated_leaves().empty());
  const Time degraded = collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo);
  EXPECT_EQ(degraded, rails_closed_form(n, 8)) << "all 8 flows of a leaf on its one remaining uplink";
  EXPECT_GT(degraded, healthy);
  // The flow model (what full fidelity runs) routes around the failed spine and takes the same time.
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Ring, group, n, topo), topo), degraded, 1e-6,
                  "flows on the degraded fabric");
}

TEST(DegradedFabric, FailureLinksNameTheirElementAndRefuseWhatIsNotThere) {
  Topology topo(two_leaves());
  EXPECT_EQ(topo.failure_links({topology::FabricFailure::Kind::LeafUplink, 1, 0}).size(), 2U) << "up and down";
  EXPECT_EQ(topo.failure_links({topology::FabricFailure::Kind::Spine, 0, 0}).size(), 4U) << "both leaves, both ways";
  EXPECT_THROW(topo.failure_links({topology::FabricFailure::Kind::Spine, 0, 2}), base::ConfigError);
  EXPECT_THROW(topo.failure_links({topology::FabricFailure::Kind::LeafUplink, 2, 0}), base::ConfigError);
  EXPECT_THROW(topo.failure_links({topology::FabricFailure::Kind::LeafUplink, 0, 5}), base::ConfigError);
  for (int spine : {0, 1})
    for (topology::LinkId id : topo.failure_links({topology::FabricFailure::Kind::Spine, 0, spine}))
      topo.set_link_up(id, false);
  EXPECT_EQ(topo.isolated_leaves(), (std::vector<int>{0, 1}));
  TopologyConfig one_leaf = h100(16);
  one_leaf.kind = TopologyConfig::Kind::FatTree;  // two nodes on one leaf
  EXPECT_THROW(Topology(one_leaf).failure_links({}), base::ConfigError) << "one leaf: no spine";
}

}  // namespace
}  // namespace sim::collectives::tests
