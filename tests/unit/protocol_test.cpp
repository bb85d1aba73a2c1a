// NCCL's protocols in the collective cost (sim/collectives/protocol.hpp): the terms are tuning.cc's table, tiny
// messages run LL, large ones Simple, and the protocol never makes a collective slower than the best single one.
#include "sim/collectives/collective.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/topology/topology.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace sim::collectives {
namespace {

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

std::vector<GpuId> iota(int first, int count, int stride = 1) {
  std::vector<GpuId> g(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    g[static_cast<std::size_t>(i)] = first + i * stride;
  return g;
}

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

}  // namespace
}  // namespace sim::collectives
