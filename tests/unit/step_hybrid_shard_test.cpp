// Hybrid sharding's collectives (parallel.dp_shard; PyTorch FSDP's HYBRID_SHARD, TorchTitan's HSDP): the weights are
// gathered within a copy's group, and the gradients reduce-scattered within it and then all-reduced across the copies,
// in the closed forms and in the full replay's flows.
#include "tests/support/step.hpp"

#include "sim/collectives/collective.hpp"
#include "sim/execution/data_parallel_bytes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sim::execution {
namespace {

using base::Bytes;
using base::Time;
using support::load_step;
using support::run_step;

/// Llama 3 8B on 128 H100s (16 nodes of 8), data parallel only, sharded over a copy of `shard` GPUs (0: all 128).
support::LoadedStep llama8b(int zero, int shard, const char* nic = "400 Gbit/s") {
  std::vector<scenario::Override> o = {{"model", "\"llama3-8b\""},
                                       {"cluster.gpus", "128"},
                                       {"cluster.network.nic_bandwidth", std::string("\"") + nic + "\""},
                                       {"parallel.tp", "1"},
                                       {"parallel.pp", "1"},
                                       {"parallel.dp", "128"},
                                       {"parallel.sequence_parallel", "false"},
                                       {"parallel.zero_stage", std::to_string(zero)},
                                       {"parallel.micro_batch", "1"},
                                       {"parallel.global_batch", "256"}};
  if (shard > 0) o.push_back({"parallel.dp_shard", std::to_string(shard)});
  return load_step("scenarios/default.json", o);
}

std::vector<int> ranks(int first, int count, int stride) {
  std::vector<int> g(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    g[static_cast<std::size_t>(i)] = first + i * stride;
  return g;
}

Time time_of(collectives::Op op, const std::vector<int>& group, double bytes, const topology::Topology& topo) {
  return collectives::collective_time(op, collectives::Algorithm::Auto, group, Bytes{static_cast<std::int64_t>(bytes)},
                                      topo);
}

/// ZeRO-1 with copies of 8 (one node each): every bucket is a reduce-scatter over its node's 8 GPUs, then an
/// all-reduce of the eighth each GPU holds over the 16 GPUs of its rail, one per node; the updated weights are
/// gathered in the node. Each figure is the collectives' own closed form on those groups.
TEST(HybridSharding, GradientsReduceScatterInACopyThenAllReduceItsShardAcrossTheCopies) {
  const auto s = llama8b(1, 8);
  EXPECT_EQ(s.plan.dp_shard, 8);
  const auto& topo = *s.plan.topology;
  const auto& st = s.plan.stage(0, 0);
  ASSERT_FALSE(st.buckets.empty());
  const auto node = ranks(0, 8, 1), rail = ranks(0, 16, 8);
  for (const auto& b : st.buckets) {
    const double n = static_cast<double>(b.bytes.n);
    const Time expected =
        time_of(collectives::Op::ReduceScatter, node, n, topo) + time_of(collectives::Op::AllReduce, rail, n / 8, topo);
    EXPECT_NEAR(b.duration.seconds(), expected.seconds(), 1e-9);
  }
  EXPECT_NEAR(
      st.param_gather.seconds(),
      time_of(collectives::Op::AllGather, node, st.params_local * param_bytes(hardware::Dtype::Bf16), topo).seconds(),
      1e-9);
  // The whole group's reduce-scatter and gather, as without dp_shard.
  const auto whole = llama8b(1, 0);
  EXPECT_EQ(whole.plan.dp_shard, 0);
  const auto all = ranks(0, 128, 1);
  const auto& wb = whole.plan.stage(0, 0).buckets.front();
  EXPECT_NEAR(wb.duration.seconds(),
              time_of(collectives::Op::ReduceScatter, all, static_cast<double>(wb.bytes.n), topo).seconds(), 1e-9);
  // dp_shard = dp is one copy: the same plan as without the key.
  const auto one_copy = llama8b(1, 128);
  EXPECT_EQ(one_copy.plan.dp_shard, 0);
  EXPECT_EQ(one_copy.plan.stage(0, 0).buckets.front().duration, wb.duration);
  EXPECT_EQ(one_copy.plan.stage(0, 0).param_gather, whole.plan.stage(0, 0).param_gather);
}

/// The full replay runs every copy's reduce-scatter side by side, then every rail's all-reduce, as flows sharing the
/// network: on this symmetric cluster it agrees with the closed forms the replica replays.
TEST(HybridSharding, TheFullReplaysFlowsAgreeWithTheClosedForms) {
  for (const int zero : {1, 2, 3}) {
    const auto s = llama8b(zero, 8, "100 Gbit/s");
    const double replica = run_step(s, Fidelity::Replica).step_time.seconds();
    EXPECT_NEAR(run_step(s, Fidelity::Full).step_time.seconds() / replica, 1.0, 0.02) << "ZeRO-" << zero;
    EXPECT_NEAR(run_step(s, Fidelity::Analytic).step_time.seconds() / replica, 1.0, 0.02) << "ZeRO-" << zero;
  }
}

/// What HSDP trades on a rail-optimised fabric (100 Gbit/s per GPU here): ZeRO-3's weight gathers stay on NVLink, but
/// a shard's all-reduce across the copies moves 2 (c - 1) / c of the shard through each GPU's own NIC, where the whole
/// group's reduce-scatter, NCCL's rings over the node's rails, moves (n - 1) / n of it over the node's 8 NICs: per
/// gradient byte HSDP's network share is about twice FSDP's. The forward is faster, the backward slower; on this
/// 16-node cluster the step comes out slower, as the bytes say (HSDP pays where groups of thousands of GPUs make the
/// whole group's rings slow, which the closed forms count in their latency).
TEST(HybridSharding, GathersStayInTheNodeAndTheShardsAllReduceCrossesTheNetwork) {
  const auto fsdp = llama8b(3, 0, "100 Gbit/s"), hsdp = llama8b(3, 8, "100 Gbit/s");
  const auto& topo = *hsdp.plan.topology;
  const double s = 1e9;
  const Time rs_all = time_of(collectives::Op::ReduceScatter, ranks(0, 128, 1), s, topo);
  const Time ar_rail = time_of(collectives::Op::AllReduce, ranks(0, 16, 8), s / 8, topo);
  const Time rs_node = time_of(collectives::Op::ReduceScatter, ranks(0, 8, 1), s, topo);
  EXPECT_NEAR(ar_rail.seconds() / rs_all.seconds(), 2 * (15.0 / 16) / (127.0 / 128), 0.15);
  EXPECT_LT(3 * rs_node.seconds(), rs_all.seconds()) << "NVLink";
  // The forward's exposed gathers (the first unit's whole, the rest what the previous unit's compute does not hide).
  const auto &h = hsdp.plan.stage(0, 0), &f = fsdp.plan.stage(0, 0);
  EXPECT_LT(3 * h.forward.total(SegKind::Dp).seconds(), f.forward.total(SegKind::Dp).seconds());
  EXPECT_GT(h.backward.total(SegKind::Dp), f.backward.total(SegKind::Dp));
  EXPECT_GT(run_step(hsdp, Fidelity::Replica).step_time, run_step(fsdp, Fidelity::Replica).step_time);
}

}  // namespace
}  // namespace sim::execution
