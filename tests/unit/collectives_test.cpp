// tests/unit/collectives_test.cpp: collectives: closed forms, lowering driven through the flow model, algorithm choice.
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
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
  const Time expected = ring_allreduce_time(8, n, kNvl, kNvlBw);
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo), expected);
  const auto phases = lower(Op::AllReduce, Algorithm::Ring, group, n, topo);
  ASSERT_EQ(phases.size(), 1U);
  EXPECT_EQ(phases[0].transfers.size(), 8U);
  EXPECT_EQ(phases[0].latency, kNvl * 14);
  expect_rel_near(simulate_one(phases, topo), expected, 1e-6, "T = 2(p-1)a + 2(p-1)/p n/B over NVLink");
}

TEST(Collectives, RingAllReduceOver16NodesOneRankEachMatchesClosedForm) {
  const Topology topo(h100(16 * 8));
  const auto group = iota(0, 16, 8);  // local rank 0 of 16 nodes: one rail leaf
  const Bytes n = 1_GiB;
  const Time expected = ring_allreduce_time(16, n, kNet, kNicBw);
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo), expected);
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Ring, group, n, topo), topo), expected, 1e-6,
                  "T = 2(p-1)a + 2(p-1)/p n/B over the network");
}

TEST(Collectives, RingAcrossRailGroupsPaysTheSlowestStep) {
  const Topology topo(h100(64 * 8));  // two groups of 32 nodes: the ring crosses spines twice
  const auto group = iota(0, 64, 8);
  const Bytes n = 256_MiB;
  const Time expected = ring_allreduce_time(64, n, topology::kDefaultNicLatency * 4, kNicBw);
  EXPECT_EQ(collective_time(Op::AllReduce, Algorithm::Ring, group, n, topo), expected);
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Ring, group, n, topo), topo), expected, 1e-6,
                  "a = the slowest ring step (through a spine)");
}

TEST(Collectives, HierarchicalAllReduceOver4NodesOf8MatchesClosedForm) {
  const Topology topo(h100(32));
  const auto group = iota(0, 32);
  const Bytes n = 1_GiB;
  const TwoLevel levels{8, 4, kNvl, kNvlBw, kNet, kNicBw};
  const Time expected = hierarchical_allreduce_time(levels, n);
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
  const TwoLevel levels{8, 4, kNvl, kNvlBw, kNet, kNicBw};
  const Time rs = hierarchical_reducescatter_time(levels, n);
  const Time ag = hierarchical_allgather_time(levels, n);
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
  const Time one_node = tree_allreduce_time(8, n, kNvl, kNvlBw);
  EXPECT_NEAR(static_cast<double>(collective_time(Op::AllReduce, Algorithm::Tree, iota(0, 8), n, node).ns),
              static_cast<double>(one_node.ns), 1.0);
  expect_rel_near(simulate_one(lower(Op::AllReduce, Algorithm::Tree, iota(0, 8), n, node), node), one_node, 1e-6,
                  "T = 2 log2(p) a + 2n/B: four half-buffers per rank link");
  const Topology nodes(h100(16 * 8));
  const Time across = tree_allreduce_time(16, n, kNet, kNicBw);
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
       {Case{Op::AllGather, ring_allgather_time(8, n, kNvl, kNvlBw)},
        Case{Op::ReduceScatter, ring_reducescatter_time(8, n, kNvl, kNvlBw)},
        Case{Op::AllToAll, alltoall_time(8, n, kNvl, kNvlBw)}, Case{Op::Broadcast, broadcast_time(8, n, kNvl, kNvlBw)},
        Case{Op::SendRecv, sendrecv_time(n, kNvl, kNvlBw)}}) {
    const auto g = c.op == Op::SendRecv ? std::vector<GpuId>{2, 5} : group;
    EXPECT_NEAR(static_cast<double>(collective_time(c.op, Algorithm::Auto, g, n, topo).ns),
                static_cast<double>(c.expected.ns), 1.0)
        << to_string(c.op);
    expect_rel_near(simulate_one(lower(c.op, Algorithm::Auto, g, n, topo), topo), c.expected, 1e-6, to_string(c.op));
  }
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
  EXPECT_EQ(resolve(Op::AllReduce, Algorithm::Auto, iota(0, 32), 1_GiB, topo), Algorithm::Hierarchical)
      << "4 full nodes, large buffer: only n/k crosses the network";
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

TEST(Registry, DescribesTheBuiltinAlgorithms) {
  Registry r;
  register_builtin_algorithms(r);
  std::vector<std::string> names;
  for (const AlgorithmInfo& e : r.entries()) {
    names.push_back(e.name);
    EXPECT_FALSE(e.description.empty());
    EXPECT_EQ(algorithm_from_string(e.name), e.algorithm) << "registry names are the algorithms' names";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ring", "tree", "hierarchical", "auto"}));
  ASSERT_NE(r.find("tree"), nullptr);
  EXPECT_EQ(r.find("tree")->algorithm, Algorithm::Tree);
  EXPECT_EQ(r.find("nope"), nullptr);
  EXPECT_EQ(describe_algorithms().size(), 4U);
}

}  // namespace
}  // namespace sim::collectives
