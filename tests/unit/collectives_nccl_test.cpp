// tests/unit/collectives_nccl_test.cpp: NCCL's protocols (LL, LL128, Simple) and NVLink SHARP (NVLS) in collectives.
// The protocols' terms are tuning.cc's table; NVLS moves each shard up to the switch and down once.
#include "tests/unit/collectives_test_support.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sim::collectives::tests {
namespace {

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

// NCCL's tree correction multiplies the tuned bandwidth, which LL's llMaxBw has already capped (tuning.cc:
// ncclTopoTuneModel caps, ncclTopoGetAlgoTime corrects), so a capped LL tree runs at the cap times the factor.
TEST(NcclProtocols, TreeCorrectionScalesTheCappedBandwidth) {
  auto ll = protocol_terms(Protocol::LL, true, 4, 8, false);
  const double factor = tree_correction(Protocol::LL, Bytes{1 << 20});  // 1 MiB: 0.5
  EXPECT_DOUBLE_EQ(factor, 0.5);
  const double fast_link = 1e12;  // past the cap: the cap decides
  ASSERT_EQ(ll.effective(fast_link), 19.0e9);
  ll.correct(factor);
  EXPECT_DOUBLE_EQ(ll.effective(fast_link), 0.5 * 19.0e9);
  EXPECT_DOUBLE_EQ(ll.effective(1e9), 1e9 * 0.92 / 3.8 * 0.5) << "below the cap, the rate alone";
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

}  // namespace
}  // namespace sim::collectives::tests
