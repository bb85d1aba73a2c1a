// tests/unit/network_test.cpp: max-min fair sharing of links by concurrent flows, against hand-computed answers.
#include "sim/network/flow_model.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/rng.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace sim::network {
namespace {

using base::Bandwidth;
using base::Bytes;
using base::Time;
using topology::GpuId;
using topology::LinkId;
using topology::Topology;
using topology::TopologyConfig;
using namespace base::literals;  // NOLINT(google-build-using-namespace): unit literals only

// Round numbers: NVLink 100 GB/s, NIC 10 GB/s, 4 nodes of 8 GPUs on one rail group.
TopologyConfig round_numbers(int gpus = 32) {
  TopologyConfig c;
  c.gpus = gpus;
  c.nvlink_bw = 100_GBps;
  c.nic_bw = 10_GBps;
  return c;
}

LinkId nvlink_up(const Topology& t, GpuId g) {
  return t.path(g, g ^ 1).front();
}
LinkId nvswitch_down(const Topology& t, GpuId g) {
  return t.path(g ^ 1, g).back();
}
LinkId nic_up(const Topology& t, GpuId g) {
  return t.path(g, (g + 8) % t.gpus()).front();
}

double gbps(Bandwidth b) {
  return b.bytes_per_s / 1e9;
}

// Runs the model to completion, returning (time, flow) in completion order.
std::vector<std::pair<Time, FlowId>> drain(FlowModel& m) {
  std::vector<std::pair<Time, FlowId>> out;
  while (auto next = m.next_completion()) {
    out.push_back(*next);
    m.finish(next->first, next->second);
  }
  return out;
}

TEST(FlowModel, OneFlowOnAnIdlePathTakesBytesOverTheBottleneck) {
  const Topology t(round_numbers());
  FlowModel m(t);
  const FlowId f = m.start(5_us, t.path(0, 8), 1_GiB);  // NIC -> leaf -> NIC: 10 GB/s
  EXPECT_EQ(gbps(m.rate(f)), 10.0);
  const auto next = m.next_completion();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->second, f);
  EXPECT_EQ(next->first, 5_us + base::transfer_time(1_GiB, 10_GBps)) << "exactly 2^30 B / 10 GB/s, rounded up";
}

TEST(FlowModel, TwoFlowsSharingOneLinkEachGetHalf) {
  const Topology t(round_numbers());
  FlowModel m(t);
  const FlowId a = m.start(0_ns, t.path(0, 8), 1_GB);   // same rail
  const FlowId b = m.start(0_ns, t.path(0, 17), 1_GB);  // another rail, through a spine: shares GPU 0's NIC
  EXPECT_EQ(gbps(m.rate(a)), 5.0);
  EXPECT_EQ(gbps(m.rate(b)), 5.0);
  EXPECT_EQ(m.next_completion()->first, 200_ms) << "1 GB at 5 GB/s";
}

TEST(FlowModel, ClassicWaterFilling) {
  // Links: L1 = GPU 0's NVLink (100 GB/s), L2 = GPU 0's NIC (10 GB/s), L3 = GPU 1's NVSwitch downlink (100 GB/s).
  // Flows: f1 {L1, L3}, f2 {L1, L2}, f3 {L1}, f4 {L3}.
  // Level 1: shares L1 100/3 = 33.3, L2 10/1 = 10, L3 100/2 = 50 -> L2 saturates: f2 = 10.
  // Level 2: L1 (100 - 10)/2 = 45, L3 100/2 = 50 -> L1 saturates: f1 = f3 = 45.
  // Level 3: L3 (100 - 45)/1 = 55 -> f4 = 55.
  const Topology t(round_numbers());
  const LinkId l1 = nvlink_up(t, 0);
  const LinkId l2 = nic_up(t, 0);
  const LinkId l3 = nvswitch_down(t, 1);
  FlowModel m(t);
  const FlowId f1 = m.start(0_ns, {l1, l3}, 1_GB);
  const FlowId f2 = m.start(0_ns, {l1, l2}, 1_GB);
  const FlowId f3 = m.start(0_ns, {l1}, 1_GB);
  const FlowId f4 = m.start(0_ns, {l3}, 1_GB);
  EXPECT_DOUBLE_EQ(gbps(m.rate(f1)), 45.0);
  EXPECT_DOUBLE_EQ(gbps(m.rate(f2)), 10.0);
  EXPECT_DOUBLE_EQ(gbps(m.rate(f3)), 45.0);
  EXPECT_DOUBLE_EQ(gbps(m.rate(f4)), 55.0);
}

TEST(FlowModel, FinishingAFlowSpeedsUpTheOthers) {
  // 1 GB and 3 GB share a 10 GB/s NIC: 5 GB/s each until the first is done at 0.2 s; the second then has 2 GB left
  // at 10 GB/s: done at 0.4 s, i.e. (1 + 3) GB / 10 GB/s.
  const Topology t(round_numbers());
  FlowModel m(t);
  const FlowId small = m.start(0_ns, t.path(0, 8), 1_GB);
  const FlowId big = m.start(0_ns, t.path(0, 16), 3_GB);
  auto first = m.next_completion();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->second, small);
  EXPECT_EQ(first->first, 200_ms);
  m.finish(first->first, small);
  EXPECT_EQ(gbps(m.rate(big)), 10.0);
  EXPECT_NEAR(m.remaining_bytes(200_ms, big), 2e9, 1e-3);
  EXPECT_EQ(m.next_completion()->first, 400_ms);
}

TEST(FlowModel, StartingAFlowSlowsTheOthersFromThatInstant) {
  const Topology t(round_numbers());
  FlowModel m(t);
  const FlowId a = m.start(0_ns, t.path(0, 8), 2_GB);  // alone at 10 GB/s for 0.1 s: 1 GB left
  const FlowId b = m.start(100_ms, t.path(0, 16), 1_GB);
  EXPECT_EQ(gbps(m.rate(a)), 5.0);
  EXPECT_NEAR(m.remaining_bytes(100_ms, a), 1e9, 1e-3);
  const auto order = drain(m);
  ASSERT_EQ(order.size(), 2U);
  EXPECT_EQ(order[0].first, 300_ms) << "both have 1 GB at 5 GB/s; a started first, so it wins the tie";
  EXPECT_EQ(order[0].second, a);
  EXPECT_EQ(order[1].first, 300_ms);
  EXPECT_EQ(order[1].second, b);
}

TEST(FlowModel, CompletionsRoundUpToWholeNanoseconds) {
  TopologyConfig c = round_numbers();
  c.nic_bw = Bandwidth{3e9};
  const Topology t(c);
  FlowModel m(t);
  m.start(0_ns, t.path(0, 8), Bytes{10});
  EXPECT_EQ(m.next_completion()->first, 4_ns) << "10 B / 3 GB/s = 3.33 ns";
}

TEST(FlowModel, EmptyFlowsCompleteAtOnce) {
  const Topology t(round_numbers());
  FlowModel m(t);
  const FlowId none = m.start(7_us, {}, 1_GB);
  const FlowId zero = m.start(7_us, t.path(0, 8), Bytes{0});
  const auto order = drain(m);
  ASSERT_EQ(order.size(), 2U);
  EXPECT_EQ(order[0], std::pair(7_us, none));
  EXPECT_EQ(order[1], std::pair(7_us, zero));
}

TEST(FlowModel, ChangesAtOneInstantAreSharedOnce) {
  const Topology t(round_numbers());
  FlowModel m(t);
  for (GpuId g = 0; g < 8; ++g)
    m.start(0_ns, t.path(g, g + 8), 1_GB);
  EXPECT_EQ(m.active(), 8U);
  m.next_completion();
  EXPECT_EQ(m.stats().reshares, 1U);
}

TEST(FlowModel, OnlyTheTouchedComponentIsReshared) {
  const Topology t(round_numbers());
  FlowModel m(t);
  for (GpuId g = 0; g < 8; ++g)
    m.start(0_ns, t.path(g, g + 8), 1_GB);  // 8 disjoint rail-local flows
  m.next_completion();
  const auto before = m.stats();
  m.start(1_ms, t.path(0, 16), 1_GB);  // shares GPU 0's NIC with one of them
  m.next_completion();
  EXPECT_EQ(m.stats().flows_rerated - before.flows_rerated, 2U);
}

TEST(FlowModel, DownLinkStallsItsFlowsUntilRepaired) {
  Topology t(round_numbers());
  FlowModel m(t);
  const FlowId f = m.start(0_ns, t.path(0, 8), 1_GB);  // 100 ms at 10 GB/s
  const LinkId nic = nic_up(t, 0);
  t.set_link_up(nic, false);
  m.links_changed(40_ms, std::vector{nic});
  EXPECT_EQ(gbps(m.rate(f)), 0.0);
  EXPECT_FALSE(m.next_completion()) << "a stalled flow never completes";
  t.set_link_up(nic, true);
  m.links_changed(70_ms, std::vector{nic});
  EXPECT_EQ(m.next_completion()->first, 130_ms) << "100 ms of transfer plus 30 ms down";
}

TEST(FlowModel, AlphaBetaIsLatencyPlusBytesOverBandwidth) {
  EXPECT_EQ(alpha_beta(2_us, 1_GB, 100_GBps), 2_us + 10_ms);
  EXPECT_EQ(alpha_beta(2_us, Bytes{0}, 100_GBps), 2_us);
}

// Random churn on a 256-GPU cluster from a named seed: 200 flows, then each completion starts a new flow 3 times in 4.
std::vector<std::pair<Time, FlowId>> churn(const Topology& t, std::uint64_t seed) {
  base::Rng rng(seed);
  FlowModel m(t);
  auto start_random = [&](Time now) {
    const auto src = static_cast<GpuId>(rng.below(static_cast<std::uint64_t>(t.gpus())));
    const auto dst = static_cast<GpuId>((src + 1 + static_cast<GpuId>(rng.below(255))) % t.gpus());
    m.start(now, t.path(src, dst), Bytes{static_cast<std::int64_t>(1 + rng.below(1'000'000'000))});
  };
  for (int i = 0; i < 200; ++i)
    start_random(0_ns);
  std::vector<std::pair<Time, FlowId>> completions;
  while (completions.size() < 400) {
    const auto next = m.next_completion();
    if (!next) break;
    completions.push_back(*next);
    m.finish(next->first, next->second);
    if (rng.below(4) != 0) start_random(next->first);
  }
  return completions;
}

TEST(FlowModel, DeterministicUnderRandomChurn) {
  const Topology t(round_numbers(256));
  const auto a = churn(t, 42);
  ASSERT_EQ(a.size(), 400U);
  EXPECT_EQ(a, churn(t, 42));
  EXPECT_NE(a, churn(t, 43));
}

TEST(FlowModel, IncrementalSharingMatchesSharingEverything) {
  // Rates after incremental re-shares equal the rates of a fresh model that shares all the same flows in one batch.
  const Topology t(round_numbers(256));
  base::Rng rng(7);
  FlowModel m(t);
  struct Live {
    FlowId id;
    std::vector<LinkId> path;
  };
  std::vector<Live> live;
  Time now = 0_ns;
  for (int step = 0; step < 600; ++step) {
    if (live.size() < 150 || rng.below(2) == 0) {
      const auto src = static_cast<GpuId>(rng.below(256));
      const auto dst = static_cast<GpuId>((src + 1 + rng.below(255)) % 256);
      auto path = t.path(src, dst);
      live.push_back({m.start(now, path, Bytes{static_cast<std::int64_t>(1 + rng.below(1'000'000'000))}), path});
    } else {
      const auto next = m.next_completion();
      ASSERT_TRUE(next);
      now = next->first;
      m.finish(now, next->second);
      std::erase_if(live, [&](const Live& l) { return l.id == next->second; });
    }
    if (step % 50 != 49) continue;
    FlowModel fresh(t);
    std::vector<FlowId> ids;
    for (const Live& l : live)
      ids.push_back(fresh.start(now, l.path, 1_GB));
    for (std::size_t i = 0; i < live.size(); ++i) {
      const double expected = fresh.rate(ids[i]).bytes_per_s;
      EXPECT_NEAR(m.rate(live[i].id).bytes_per_s, expected, 1e-9 * expected) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace sim::network
