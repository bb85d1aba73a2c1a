// tests/unit/collectives_test.cpp: collectives: closed forms, lowering driven through the flow model, algorithm choice,
// the fast cost model against the reference.
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/rng.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <vector>

namespace sim::collectives {
namespace {

using base::Bandwidth;
using base::Bytes;
using base::Time;
using topology::GpuId;
using topology::Topology;
using topology::TopologyConfig;
using namespace base::literals;  // NOLINT(google-build-using-namespace): unit literals only

TopologyConfig h100(int gpus) {
  TopologyConfig c;
  c.gpus = gpus;
  c.nvlink_bw = 450_GBps;
  c.nic_bw = 400_Gbps;
  return c;
}

const Time kNvl = topology::kDefaultNvlinkLatency;   // one NVLink step
const Time kNet = topology::kDefaultNicLatency * 2;  // one rail-local network step: NIC -> leaf -> NIC
const Bandwidth kNvlBw = 450_GBps;
const Bandwidth kNicBw = 400_Gbps;

// A closed form with NCCL's fastest protocol (sim/collectives/protocol.hpp): `form(a, b)` gets the protocol's step
// latency a(latency, network) and bandwidth b(bandwidth); the protocol's fixed cost is added. LL is the identity, so
// these are the closed forms of closed_form.hpp whenever LL wins.
template <typename Form>
Time fastest_protocol(bool tree, int domains, int ranks_per_domain, bool gather_or_scatter, Form form) {
  Time best = Time::max();
  for (Protocol p : kProtocols) {
    const ProtocolTerms t = protocol_terms(p, tree, domains, ranks_per_domain, gather_or_scatter);
    const auto a = [&t](Time x, bool network) { return t.latency(x, network); };
    const auto b = [&t](Bandwidth bw) { return Bandwidth{t.effective(bw.bytes_per_s)}; };
    best = std::min(best, t.base + form(a, b));
  }
  return best;
}

std::vector<GpuId> iota(int first, int count, int stride = 1) {
  std::vector<GpuId> g;
  for (int i = 0; i < count; ++i)
    g.push_back(first + i * stride);
  return g;
}

// The engine's job in miniature: runs collectives concurrently, each phase after the previous one of the same
// collective: wait its latency, start its transfers on their topology paths, end when the last completes.
// Returns each collective's completion time.
std::vector<Time> simulate(const std::vector<std::vector<Phase>>& collectives, const Topology& topo) {
  struct Run {
    std::size_t next = 0;  // next phase to start
    std::size_t outstanding = 0;
    Time ready = 0_ns;  // when the previous phase ended
  };
  std::vector<Run> runs(collectives.size());
  network::FlowModel model(topo);
  std::map<network::FlowId, std::size_t> owner;
  std::vector<Time> done(collectives.size(), Time::max());
  while (true) {
    // The earliest phase start among runs between phases.
    std::size_t starter = runs.size();
    Time start_at = Time::max();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const Run& r = runs[i];
      if (r.outstanding != 0) continue;
      if (r.next == collectives[i].size()) {
        done[i] = std::min(done[i], r.ready);
        continue;
      }
      const Time at = r.ready + collectives[i][r.next].latency;
      if (at < start_at) {
        start_at = at;
        starter = i;
      }
    }
    const auto completion = model.next_completion();
    if (completion && completion->first <= start_at) {
      model.finish(completion->first, completion->second);
      Run& r = runs[owner.at(completion->second)];
      owner.erase(completion->second);
      if (--r.outstanding == 0) {
        r.ready = completion->first;
        ++r.next;
      }
      continue;
    }
    if (starter == runs.size()) break;
    Run& r = runs[starter];
    const Phase& ph = collectives[starter][r.next];
    for (const Transfer& x : ph.transfers)
      owner[model.start(start_at, topo.path(x.src, x.dst), x.bytes)] = starter;
    r.outstanding = ph.transfers.size();
    if (r.outstanding == 0) {
      r.ready = start_at;
      ++r.next;
    }
  }
  return done;
}

Time simulate_one(const std::vector<Phase>& phases, const Topology& topo) {
  return simulate({phases}, topo).front();
}

void expect_rel_near(Time actual, Time expected, double rel, const char* why) {
  EXPECT_NEAR(static_cast<double>(actual.ns), static_cast<double>(expected.ns), rel * static_cast<double>(expected.ns))
      << why << ": simulated " << actual.ns << " ns, closed form " << expected.ns << " ns";
}

TEST(ClosedForm, RingAllReduceFormula) {
  // 2(p-1) a + 2(p-1)/p n/B with p = 8, a = 1 us, n = 8 GB, B = 100 GB/s: 14 us + 140 ms.
  EXPECT_EQ(ring_allreduce_time(8, Bytes{8'000'000'000}, 1_us, 100_GBps), 14_us + 140_ms);
  EXPECT_EQ(ring_allgather_time(8, Bytes{8'000'000'000}, 1_us, 100_GBps), 7_us + 70_ms);
  EXPECT_EQ(ring_reducescatter_time(8, Bytes{8'000'000'000}, 1_us, 100_GBps), 7_us + 70_ms);
  EXPECT_EQ(alltoall_time(8, Bytes{8'000'000'000}, 1_us, 100_GBps), 7_us + 70_ms);
  EXPECT_EQ(sendrecv_time(Bytes{8'000'000'000}, 1_us, 100_GBps), 1_us + 80_ms);
  EXPECT_EQ(broadcast_time(8, Bytes{8'000'000'000}, 1_us, 100_GBps), 7_us + 80_ms);
  EXPECT_EQ(tree_allreduce_time(8, Bytes{8'000'000'000}, 1_us, 100_GBps), 6_us + 160_ms) << "2 log2(8) a + 2n/B";
  EXPECT_EQ(ring_allreduce_time(1, 1_GB, 1_us, 100_GBps), 0_ns);
}

TEST(ClosedForm, DoubleBinaryTreeFanout) {
  EXPECT_EQ(double_binary_tree_fanout(2), 2);
  EXPECT_EQ(double_binary_tree_fanout(3), 3);
  for (int p = 4; p <= 130; ++p)
    EXPECT_EQ(double_binary_tree_fanout(p), 4) << "p = " << p;
  for (int p : {2, 3, 8, 13, 64}) {
    const DoubleBinaryTree t = double_binary_tree(p);
    for (const auto& parent : t.parent) {
      EXPECT_EQ(std::count(parent.begin(), parent.end(), -1), 1) << "one root";
      for (int r = 0; r < p; ++r) {  // every rank reaches the root within ceil(log2 p) + 1 hops
        int hops = 0;
        for (int x = r; parent[static_cast<std::size_t>(x)] >= 0; x = parent[static_cast<std::size_t>(x)])
          ++hops;
        EXPECT_LE(hops, ceil_log2(p) + 1);
      }
    }
  }
}

TEST(ClosedForm, BusBandwidthFactorsOfNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::ReduceScatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllToAll, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::SendRecv, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::Broadcast, 8), 1.0);
  // A bandwidth-bound ring all-reduce runs at bus bandwidth = link bandwidth, whatever p.
  for (int p : {2, 8, 64}) {
    const Bytes n{1'000'000'000'000};
    const Time t = ring_allreduce_time(p, n, 0_ns, 100_GBps);
    EXPECT_NEAR(busbw(Op::AllReduce, p, n, t).bytes_per_s, 100e9, 1e-6 * 100e9) << "p = " << p;
  }
  EXPECT_DOUBLE_EQ(algbw(1_GB, 10_ms).bytes_per_s, 100e9);
}

TEST(Collectives, RingAllReduceOverOneNodeMatchesClosedForm) {
  const Topology topo(h100(8));
  const auto group = iota(0, 8);
  const Bytes n = 1_GiB;
  const Time expected = fastest_protocol(
      false, 1, 8, false, [&](auto a, auto b) { return ring_allreduce_time(8, n, a(kNvl, false), b(kNvlBw)); });
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo), expected);
  const auto phases = lower(Op::AllReduce, Algorithm::Ring, group, n, topo);
  ASSERT_EQ(phases.size(), 1U);
  EXPECT_EQ(phases[0].transfers.size(), 8U);
  const auto chosen = CollectiveCostModel(topo).choice(Op::AllReduce, Algorithm::Ring, group, n);
  EXPECT_EQ(chosen.protocol, Protocol::Simple) << "1 GiB: the full bandwidth is worth Simple's longer steps";
  const ProtocolTerms simple = protocol_terms(Protocol::Simple, false, 1, 8, false);
  EXPECT_EQ(phases[0].latency, simple.latency(kNvl, false) * 14 + simple.base);
  expect_rel_near(simulate_one(phases, topo), expected, 1e-6, "T = 2(p-1)a + 2(p-1)/p n/B over NVLink");
}

TEST(Collectives, RingAllReduceOver16NodesOneRankEachMatchesClosedForm) {
  const Topology topo(h100(16 * 8));
  const auto group = iota(0, 16, 8);  // local rank 0 of 16 nodes: one rail leaf
  const Bytes n = 1_GiB;
  const Time expected = fastest_protocol(
      false, 16, 1, false, [&](auto a, auto b) { return ring_allreduce_time(16, n, a(kNet, true), b(kNicBw)); });
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo), expected);
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Ring, group, n, topo), topo), expected, 1e-6,
                  "T = 2(p-1)a + 2(p-1)/p n/B over the network");
}

TEST(Collectives, RingAcrossRailGroupsPaysTheSlowestStep) {
  const Topology topo(h100(64 * 8));  // two groups of 32 nodes: the ring crosses spines twice
  const auto group = iota(0, 64, 8);
  const Bytes n = 256_MiB;
  const Time expected = fastest_protocol(false, 64, 1, false, [&](auto a, auto b) {
    return ring_allreduce_time(64, n, a(topology::kDefaultNicLatency * 4, true), b(kNicBw));
  });
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo), expected);
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Ring, group, n, topo), topo), expected, 1e-6,
                  "a = the slowest ring step (through a spine)");
}

// A group spread unevenly over domains (8, 8 and 4 ranks, as a data-parallel group 9/9/9/5 over NVL72 domains):
// NCCL aligns every rank to the smallest domain's channels, so the rings cross domains over its k = 4 rails, and the
// ranks beyond a domain's first 4 forward every ring over NVLink (collective.hpp). Before, one ring through one NIC
// per domain moved all the ring bytes through a single NIC: 4x the network time of the same rails.
TEST(Collectives, RingOverAnUnevenGroupUsesTheSmallestDomainsRails) {
  const Topology topo(h100(3 * 8));
  std::vector<GpuId> group = iota(0, 16);
  for (GpuId g : iota(16, 4))
    group.push_back(g);
  const Bytes n = 1_GiB;
  const std::int64_t p = 20, m = 3, k = 4;
  const Bytes ring = share(n, 2 * (p - 1), p);
  const Time expected = fastest_protocol(false, 3, 8, false, [&](auto a, auto b) {
    const Time latency = a(kNvl, false) * (2 * (p - 1) - 2 * (m - 1)) + a(kNet, true) * (2 * (m - 1));
    return latency + std::max(base::transfer_time(ring, b(kNvlBw)), base::transfer_time(share(ring, 1, k), b(kNicBw)));
  });
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo), expected);
  const auto phases = lower(Op::AllReduce, Algorithm::Ring, group, n, topo);
  ASSERT_EQ(phases.size(), 1U) << "the NVLink rings and the rail rings run at once";
  EXPECT_EQ(phases[0].transfers.size(), 8U + 8U + 4U + 4U * 3U) << "a ring in each domain, 4 rails x 3 domains";
  expect_rel_near(simulate_one(phases, topo), expected, 1e-6, "T = latency + max(R/B_nvl, R/(k B_net))");
  const Time single_nic = base::transfer_time(ring, kNicBw);
  EXPECT_LT(expected * 3, single_nic) << "the rails carry what one NIC per domain would have carried alone";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Hierarchical, group, n, topo), Algorithm::Ring)
      << "the hierarchical algorithm still needs the same ranks in every domain";
}

// The data-parallel groups of the 8 TP ranks of a GB200 job (trays of 4 GPUs, 72-GPU NVLink domains) reduce-scatter
// at the same moment; ranks t and t + 4 sit on the same rail, so their rings cross the same leaves' uplinks, where
// ECMP may put several on one. The cost beside the siblings is the last group's time among the eight replayed as
// flows, exactly; alone, the group takes less (its own flows only). Even (288 GPUs, 9 per domain) and uneven (256:
// 9/9/9/5, 5 rails).
TEST(Collectives, SiblingGroupsShareTheSwitchLinksAsTheirFlowsDo) {
  for (int gpus : {256, 288}) {
    TopologyConfig c;
    c.gpus = gpus;
    c.gpus_per_node = 4;
    c.nvlink_domain = 72;
    c.nvlink_bw = 900_GBps;
    c.nic_bw = 400_Gbps;
    const Topology topo(c);
    ASSERT_EQ(topo.tiers(), 2) << "more than one rail group: rings between domains cross the spines";
    const Bytes n = 1_GiB;
    for (Op op : {Op::ReduceScatter, Op::AllGather, Op::AllReduce}) {
      std::vector<std::vector<Phase>> groups;
      for (int t = 0; t < 8; ++t)
        groups.push_back(lower(op, Algorithm::Auto, iota(t, gpus / 8, 8), n, topo));
      const auto done = simulate(groups, topo);
      const Time last = *std::max_element(done.begin(), done.end());
      CollectiveCostModel model(topo);
      const std::vector<GpuId> siblings = {1, 2, 3, 4, 5, 6, 7};
      const Time beside = model.time(op, Algorithm::Auto, iota(0, gpus / 8, 8), n, siblings);
      expect_rel_near(beside, last, 1e-6, to_string(op));
      EXPECT_GT(beside, collective_time(op, Algorithm::Auto, iota(0, gpus / 8, 8), n, topo)) << gpus << to_string(op);
      EXPECT_EQ(model.time(op, Algorithm::Auto, iota(0, gpus / 8, 8), n, {}),
                collective_time(op, Algorithm::Auto, iota(0, gpus / 8, 8), n, topo));
    }
  }
}

TEST(Collectives, HierarchicalAllReduceOver4NodesOf8MatchesClosedForm) {
  const Topology topo(h100(32));
  const auto group = iota(0, 32);
  const Bytes n = 1_GiB;
  const Time expected = fastest_protocol(false, 4, 8, false, [&](auto a, auto b) {
    return hierarchical_allreduce_time(TwoLevel{8, 4, a(kNvl, false), b(kNvlBw), a(kNet, true), b(kNicBw)}, n);
  });
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Hierarchical, group, n, topo), expected);
  const auto phases = lower(Op::AllReduce, Algorithm::Hierarchical, group, n, topo);
  ASSERT_EQ(phases.size(), 3U);
  EXPECT_EQ(phases[1].transfers.size(), 32U) << "8 rails x a ring of 4 nodes";
  expect_rel_near(simulate_one(phases, topo), expected, 1e-6,
                  "T = 2[(k-1)a + (k-1)/k n/B_nvl] + 2(m-1)a + 2(m-1)/m (n/k)/B_net");
}

TEST(Collectives, HierarchicalReduceScatterAndAllGatherMatchClosedForms) {
  const Topology topo(h100(32));
  const auto group = iota(0, 32);
  const Bytes n = 1_GiB;
  const Time rs = fastest_protocol(false, 4, 8, true, [&](auto a, auto b) {
    return hierarchical_reducescatter_time(TwoLevel{8, 4, a(kNvl, false), b(kNvlBw), a(kNet, true), b(kNicBw)}, n);
  });
  const Time ag = fastest_protocol(false, 4, 8, true, [&](auto a, auto b) {
    return hierarchical_allgather_time(TwoLevel{8, 4, a(kNvl, false), b(kNvlBw), a(kNet, true), b(kNicBw)}, n);
  });
  EXPECT_EQ(collective_time(Op::ReduceScatter, Algorithm::Hierarchical, group, n, topo), rs);
  EXPECT_EQ(collective_time(Op::AllGather, Algorithm::Hierarchical, group, n, topo), ag);
  expect_rel_near(simulate_one(lower(Op::ReduceScatter, Algorithm::Hierarchical, group, n, topo), topo), rs, 1e-6,
                  "hierarchical reduce-scatter");
  expect_rel_near(simulate_one(lower(Op::AllGather, Algorithm::Hierarchical, group, n, topo), topo), ag, 1e-6,
                  "hierarchical all-gather");
}

TEST(Collectives, TreeAllReduceMatchesClosedForm) {
  const Bytes n = 1_GiB;
  const Topology node(h100(8));
  const Time one_node = fastest_protocol(
      true, 1, 8, false, [&](auto a, auto b) { return tree_allreduce_time(8, n, a(kNvl, false), b(kNvlBw)); });
  EXPECT_NEAR(static_cast<double>(collective_time(Op::AllReduce, Algorithm::Tree, iota(0, 8), n, node).ns),
              static_cast<double>(one_node.ns), 1.0);
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Tree, iota(0, 8), n, node), node), one_node, 1e-6,
                  "T = 2 log2(p) a + 2n/B: four half-buffers per rank link");
  const Topology nodes(h100(16 * 8));
  const Time across = fastest_protocol(
      true, 16, 1, false, [&](auto a, auto b) { return tree_allreduce_time(16, n, a(kNet, true), b(kNicBw)); });
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Tree, iota(0, 16, 8), n, nodes), nodes), across, 1e-6,
                  "tree over 16 nodes");
}

TEST(Collectives, OtherRingOpsMatchClosedForms) {
  const Topology topo(h100(8));
  const auto group = iota(0, 8);
  const Bytes n = 1_GiB;
  struct Case {
    Op op;
    Time expected;
  };
  for (const Case& c :
       {Case{Op::AllGather,
             fastest_protocol(false, 1, 8, true,
                              [&](auto a, auto b) { return ring_allgather_time(8, n, a(kNvl, false), b(kNvlBw)); })},
        Case{Op::ReduceScatter, fastest_protocol(false, 1, 8, true,
                                                 [&](auto a, auto b) {
                                                   return ring_reducescatter_time(8, n, a(kNvl, false), b(kNvlBw));
                                                 })},
        Case{Op::AllToAll, alltoall_time(8, n, kNvl, kNvlBw)}, Case{Op::Broadcast, broadcast_time(8, n, kNvl, kNvlBw)},
        Case{Op::SendRecv, sendrecv_time(n, kNvl, kNvlBw)}}) {
    const auto g = c.op == Op::SendRecv ? std::vector<GpuId>{2, 5} : group;
    EXPECT_NEAR(static_cast<double>(collective_time(c.op, Algorithm::Auto, g, n, topo).ns),
                static_cast<double>(c.expected.ns), 1.0)
        << to_string(c.op);
    expect_rel_near(simulate_one(lower(c.op, Algorithm::Auto, g, n, topo), topo), c.expected, 1e-6, to_string(c.op));
  }
}

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

// NCCL's protocols (sim/collectives/protocol.hpp): the terms are tuning.cc's table, tiny messages run LL, large
// ones Simple.
TEST(NcclProtocols, TermsAreTuningCcs) {
  // NVIDIA/nccl src/graph/tuning.cc @ b6475625: baseLat, hwLat (ring, tree), the LL / LL128 bandwidth refinements.
  const auto simple = protocol_terms(Protocol::Simple, false, 4, 8, false);
  EXPECT_EQ(simple.base, Time{8400});
  EXPECT_DOUBLE_EQ(simple.nvlink_latency, 3.4 / 0.6);
  EXPECT_DOUBLE_EQ(simple.network_latency, 14.0 / 2.7);
  EXPECT_DOUBLE_EQ(simple.rate, 1.0);
  const auto ll128 = protocol_terms(Protocol::LL128, false, 4, 8, false);
  EXPECT_EQ(ll128.base, Time{14000});
  EXPECT_DOUBLE_EQ(ll128.rate, 0.92);
  EXPECT_DOUBLE_EQ(protocol_terms(Protocol::LL128, false, 16, 1, false).rate, 0.7) << "one rank per node";
  const auto ll = protocol_terms(Protocol::LL, false, 4, 8, false);
  EXPECT_EQ(ll.base, Time{6600});
  EXPECT_DOUBLE_EQ(ll.nvlink_latency, 1.0) << "the profile's latencies are LL's";
  EXPECT_DOUBLE_EQ(ll.rate, 0.25);
  EXPECT_DOUBLE_EQ(ll.rate_cap, 19.0e9) << "llMaxBw beyond two nodes";
  EXPECT_DOUBLE_EQ(protocol_terms(Protocol::LL, false, 1, 8, true).rate, 1.0 / 3.0)
      << "one node, all-gather / reduce-scatter";
  EXPECT_DOUBLE_EQ(protocol_terms(Protocol::Simple, true, 4, 8, false).nvlink_latency, 28.0 / 0.6);
  EXPECT_EQ(protocol_terms(Protocol::Simple, true, 4, 8, false).base, Time::zero());
}

TEST(NcclProtocols, TinyMessagesRunLlLargeOnesSimple) {
  const Topology topo(h100(8));
  CollectiveCostModel model(topo);
  const auto group = iota(0, 8);
  EXPECT_EQ(model.choice(Op::AllReduce, Algorithm::Ring, group, Bytes{8}).protocol, Protocol::LL);
  EXPECT_EQ(model.choice(Op::AllReduce, Algorithm::Ring, group, 1_GiB).protocol, Protocol::Simple);
  // 8 B over 8 NVLink ranks: LL's 6.6 us + 14 steps x 0.6 us (and a few ns of data).
  const Time tiny = model.time(Op::AllReduce, Algorithm::Ring, group, Bytes{8});
  EXPECT_GE(tiny, Time{6600 + 14 * 600});
  EXPECT_LT(tiny, Time{6600 + 14 * 600 + 100});
}

TEST(NcclProtocols, LoweredPhasesCarryTheChosenProtocolsFixedCost) {
  // 64 ranks on 8 nodes: at every size the phases the flow model replays start with the chosen protocol's fixed cost,
  // and 64 MiB (where the nccl-tests logs showed LL's latencies too optimistic, docs/validation.md "Collectives")
  // runs LL128 or Simple.
  const Topology topo(h100(64));
  CollectiveCostModel model(topo);
  const auto group = iota(0, 64);
  for (std::int64_t n = 1 << 10; n <= (std::int64_t{1} << 32); n <<= 3) {
    const auto c = model.choice(Op::AllReduce, Algorithm::Ring, group, Bytes{n});
    EXPECT_GT(c.time, Time::zero());
    const auto phases = lower(Op::AllReduce, Algorithm::Ring, group, Bytes{n}, topo);
    ASSERT_FALSE(phases.empty());
    EXPECT_GE(phases[0].latency, protocol_terms(c.protocol, false, 8, 8, false).base) << n;
  }
  EXPECT_NE(model.choice(Op::AllReduce, Algorithm::Ring, group, 64_MiB).protocol, Protocol::LL);
}

TEST(NcclProtocols, NamesAreNcclsSpelling) {
  EXPECT_STREQ(to_string(Protocol::LL), "LL");
  EXPECT_STREQ(to_string(Protocol::LL128), "LL128");
  EXPECT_STREQ(to_string(Protocol::Simple), "Simple");
}

TEST(Collectives, AllToAllSendsASliceToEveryOtherRank) {
  const Topology topo(h100(16));
  const auto phases = lower(Op::AllToAll, Algorithm::Auto, iota(0, 16), 16_MiB, topo);
  ASSERT_EQ(phases.size(), 1U);
  EXPECT_EQ(phases[0].transfers.size(), 16U * 15U);
  for (const Transfer& x : phases[0].transfers) {
    EXPECT_NE(x.src, x.dst);
    EXPECT_EQ(x.bytes, 1_MiB);
  }
}

TEST(Collectives, TwoAllReducesSharingNicsTakeTwiceAsLong) {
  const Topology topo(h100(16 * 8));
  const auto group = iota(0, 16, 8);
  const Bytes n = 1_GiB;
  const auto phases = lower(Op::AllReduce, Algorithm::Ring, group, n, topo);
  const Time latency = phases[0].latency;
  const Time alone = simulate_one(phases, topo);
  const auto both = simulate({phases, phases}, topo);
  ASSERT_EQ(both.size(), 2U);
  EXPECT_EQ(both[0], both[1]);
  expect_rel_near(both[0] - latency, (alone - latency) * 2, 1e-6, "the bandwidth term doubles when NICs are shared");
}

TEST(Collectives, AutoChoosesLikeNccl) {
  const Topology topo(h100(64 * 8));
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, iota(0, 32), 1_GiB, topo), Algorithm::Ring)
      << "4 full nodes, large buffer: NCCL's rings over the 8 rails move (k-1)/k of the ring bytes over NVLink and "
         "1/k over each NIC at the same time, faster than the hierarchical algorithm's phases one after another";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, iota(0, 32), 256_KiB, topo), Algorithm::Hierarchical)
      << "4 full nodes, mid-size buffer: the ring's 2(p-1) steps cost more than hierarchical's 2(k-1) + 2(m-1)";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, iota(0, 8), 1_GiB, topo), Algorithm::Ring)
      << "one node, large buffer: ring's 2(p-1)/p n/B beats the tree's 2n/B";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, iota(0, 64, 8), 4_KiB, topo), Algorithm::Tree)
      << "64 nodes, tiny buffer: 2 log2(p) steps beat 2(p-1)";
  EXPECT_EQ(resolve(Op::AllGather, Algorithm::Tree, iota(0, 8), 1_GiB, topo), Algorithm::Ring) << "trees: all-reduce";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Hierarchical, std::vector<GpuId>{0, 1, 2, 8}, 1_GiB, topo),
            Algorithm::Ring)
      << "uneven group";
  const auto group = iota(0, 32);
  const Time best = collective_time(Op::AllReduce, Algorithm::Auto, group, 1_GiB, topo);
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical})
    EXPECT_LE(best, collective_time(Op::AllReduce, a, group, 1_GiB, topo)) << to_string(a);
}

// An H100 cluster whose NVSwitches reduce: NVLS at 0.69 of the NVLink rate (hardware efficiency.nvls's default).
TopologyConfig h100_sharp(int gpus) {
  TopologyConfig c = h100(gpus);
  c.nvls_bw = Bandwidth{0.69 * kNvlBw.bytes_per_s};
  return c;
}

TEST(Nvls, OneDomainMovesEachShardUpAndDownOnce) {
  const Topology topo(h100_sharp(8));
  const auto group = iota(0, 8);
  const Bytes n = 1_GiB;
  const ProtocolTerms t = nvls_terms();
  const Time expected = nvls_allreduce_time(8, n, t.latency(kNvl, false), topo.config().nvls_bw);
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Nvls, group, n, topo), expected)
      << "T = 2a + n (k+1)/k / B_nvls with NCCL's 23 us NVLS latency (two steps of 11.5 us)";
  EXPECT_EQ(t.latency(kNvl, false), 11500_ns);
  const auto phases = lower(Op::AllReduce, Algorithm::Nvls, group, n, topo);
  ASSERT_EQ(phases.size(), 1U);
  expect_rel_near(simulate_one(phases, topo), expected, 1e-6, "the flow model times the NVLS phase alike");
  const double algbw = static_cast<double>(n.n) / (static_cast<double>(expected.ns) * 1e-9) / 1e9;
  EXPECT_NEAR(algbw, 275.0, 2.0) << "NCCL's maintainer: algbw ~275 GB/s on 8 H100s (nccl-tests issue 212)";
  const Time five = collective_time(Op::AllReduce, Algorithm::Nvls, iota(0, 5), n, topo);
  EXPECT_NEAR(static_cast<double>(n.n) / (static_cast<double>(five.ns) * 1e-9) / 1e9, 258.0, 3.0)
      << "258 GB/s measured with NCCL_ALGO=NVLS on 5 H100s (nccl issue 1455): the same B_nvls x k/(k+1)";
}

TEST(Nvls, TwoDomainsRunTheSwitchesAndOneTreePerRailTogether) {
  const Topology topo(h100_sharp(16));
  const auto group = iota(0, 16);
  const ProtocolTerms t = nvls_terms();
  for (const Bytes n : {Bytes{4_MiB}, Bytes{1_GiB}}) {
    // Each GPU's shard n/8 crosses its NIC once each way (the two trees' halves, m = 2), while the switches move
    // n (k+1)/k per GPU: the slower of the two, after both latencies.
    const Time in_switch = nvls_allreduce_time(8, n, t.latency(kNvl, false), topo.config().nvls_bw);
    const Time across = base::transfer_time(share(n, 1, 16), Bandwidth{kNicBw.bytes_per_s / 2});
    const Time latency = t.latency(kNvl, false) * 2 + t.latency(kNet, true) * 2;
    const Time expected = latency + std::max(in_switch - t.latency(kNvl, false) * 2, across);
    expect_rel_near(collective_time(Op::AllReduce, Algorithm::Nvls, group, n, topo), expected, 1e-6,
                    "NVLS-tree: 23 us + 2 log2(m) x 14 us + max(n (k+1)/k / B_nvls, n/k / B_nic)");
    const auto phases = lower(Op::AllReduce, Algorithm::Nvls, group, n, topo);
    ASSERT_EQ(phases.size(), 1U) << "the switches' phase and the trees' phase run together";
    EXPECT_EQ(phases[0].transfers.size(), 16U + 8U * 4U) << "a ring in each domain, 8 rails x 2 trees x 2 ways";
    expect_rel_near(simulate_one(phases, topo), expected, 1e-6, "the flow model agrees");
  }
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, group, 1_GiB, topo), Algorithm::Nvls)
      << "two nodes, large buffer: each NIC carries n/k instead of the rings' ~2n/k";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, group, 4_KiB, topo), Algorithm::Hierarchical)
      << "tiny buffer: NVLS's 51 us of latency lose to LL";
}

TEST(Nvls, NeedsSwitchesThatReduceAnAllReduceAndTwoDomainsForAuto) {
  const Topology plain(h100(32));
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Nvls, iota(0, 8), 1_GiB, plain), Algorithm::Ring)
      << "no NVLink SHARP (nvls_bw 0, e.g. A100): ring";
  const Topology sharp(h100_sharp(64));
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, iota(0, 8), 1_GiB, sharp), Algorithm::Nvls);
  EXPECT_EQ(resolve(Op::AllGather, Algorithm::Nvls, iota(0, 8), 1_GiB, sharp), Algorithm::Ring) << "all-reduce only";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Nvls, std::vector<GpuId>{0, 1, 2, 8}, 1_GiB, sharp), Algorithm::Ring)
      << "uneven over domains";
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Nvls, iota(0, 32), 1_GiB, sharp), Algorithm::Nvls)
      << "asked for, NVLS-tree runs over 4 domains";
  EXPECT_NE(resolve(Op::AllReduce, Algorithm::Auto, iota(0, 32), 1_GiB, sharp), Algorithm::Nvls)
      << "Auto: NVLS-tree over 2 domains only (NCCL's tuner halves its network bandwidth beyond)";
}

TEST(Collectives, SmallGroupsAndEmptyBuffersCostNothing) {
  const Topology topo(h100(8));
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Auto, std::vector<GpuId>{3}, 1_GiB, topo), 0_ns);
  EXPECT_TRUE(lower(Op::AllReduce, Algorithm::Ring, iota(0, 8), Bytes{0}, topo).empty());
}

TEST(Collectives, DownNicMakesTheCollectiveUnreachable) {
  Topology topo(h100(16 * 8));
  const auto group = iota(0, 16, 8);
  topo.set_link_up(topo.path(0, 8).front(), false);
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, 1_GiB, topo), Time::max());
}

TEST(Collectives, NamesRoundTrip) {
  for (Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll, Op::SendRecv, Op::Broadcast})
    EXPECT_EQ(op_from_string(to_string(op)), op);
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Auto})
    EXPECT_EQ(algorithm_from_string(to_string(a)), a);
  EXPECT_FALSE(algorithm_from_string("butterfly"));
}

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
    expect_model_matches_reference(topo, rng, /*groups=*/50, /*max_ranks=*/160, coverage);
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

TEST(Registry, DescribesTheBuiltinAlgorithms) {
  Registry r;
  register_builtin_algorithms(r);
  std::vector<std::string> names;
  for (const AlgorithmInfo& e : r.entries()) {
    names.push_back(e.name);
    EXPECT_FALSE(e.description.empty());
    EXPECT_EQ(algorithm_from_string(e.name), e.algorithm) << "registry names are the algorithms' names";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ring", "tree", "hierarchical", "auto", "nvls"}));
  ASSERT_NE(r.find("tree"), nullptr);
  EXPECT_EQ(r.find("tree")->algorithm, Algorithm::Tree);
  EXPECT_EQ(r.find("nope"), nullptr);
  EXPECT_EQ(describe_algorithms().size(), 5U);
}

}  // namespace
}  // namespace sim::collectives
