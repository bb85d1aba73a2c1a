// tests/bench/network_bench.cpp: topology build, path lookup, flow-model churn and collective costing at scale.
#include "sim/collectives/collective.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/rng.hpp"
#include "sim/base/units.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace sim::network {
namespace {

using base::Bytes;
using base::Time;
using topology::GpuId;
using topology::Topology;
using topology::TopologyConfig;
using namespace base::literals;  // NOLINT(google-build-using-namespace): unit literals only

constexpr std::uint64_t kSeed = 42;
constexpr int kClusterGpus = 131072;

TopologyConfig h100(int gpus) {
  TopologyConfig c;
  c.gpus = gpus;
  c.nvlink_bw = 450_GBps;
  c.nic_bw = 400_Gbps;
  return c;
}

// Building the cluster graph: expected O(GPUs). Counters: links and the heap it holds.
void BM_TopologyBuild(benchmark::State& state) {
  const auto gpus = static_cast<int>(state.range(0));
  std::size_t bytes = 0;
  int links = 0;
  for (auto _ : state) {
    const Topology t(h100(gpus));
    bytes = t.memory_bytes();
    links = t.links();
    benchmark::DoNotOptimize(links);
  }
  state.counters["links"] = links;
  state.counters["MiB"] = static_cast<double>(bytes) / (1 << 20);
  state.SetComplexityN(gpus);
}
BENCHMARK(BM_TopologyBuild)->RangeMultiplier(8)->Range(1024, kClusterGpus)->Unit(benchmark::kMillisecond)->Complexity();

// One path lookup between random GPUs of the 131k cluster (three tiers), into a reused vector.
void BM_TopologyPath(benchmark::State& state) {
  const Topology t(h100(kClusterGpus));
  base::Rng rng(kSeed);
  std::vector<topology::LinkId> path;
  for (auto _ : state) {
    const auto src = static_cast<GpuId>(rng.below(kClusterGpus));
    const auto dst = static_cast<GpuId>(rng.below(kClusterGpus));
    path.clear();
    t.append_path(src, dst, path);
    benchmark::DoNotOptimize(path.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TopologyPath);

enum class Traffic {
  Node,    // pairs inside one node (NVLink): tiny independent components
  Rail,    // same local rank, another node of the same rail group: flows share their leaf
  Global,  // uniform random pairs over the cluster: one component through the spines and cores
};

std::pair<GpuId, GpuId> random_pair(base::Rng& rng, Traffic traffic) {
  const auto src = static_cast<GpuId>(rng.below(kClusterGpus));
  const GpuId node = src / 8;
  switch (traffic) {
    case Traffic::Node:
      return {src, node * 8 + static_cast<GpuId>((src % 8 + 1 + rng.below(7)) % 8)};
    case Traffic::Rail: {
      const GpuId group = node / 32;
      const auto other = static_cast<GpuId>((node % 32 + 1 + rng.below(31)) % 32);
      return {src, (group * 32 + other) * 8 + src % 8};
    }
    case Traffic::Global:
      break;
  }
  return {src, static_cast<GpuId>((src + 1 + rng.below(kClusterGpus - 1)) % kClusterGpus)};
}

// Steady-state churn with N concurrent flows on the 131k-GPU cluster: per iteration the earliest flow completes and a
// new one starts at that instant (one re-share of the touched component). Expected O(component size) per event:
// O(1) for Node and Rail traffic, O(N) for Global traffic, which joins every flow into one component.
template <Traffic kTraffic>
void BM_FlowModelChurn(benchmark::State& state) {
  const auto flows = static_cast<int>(state.range(0));
  const Topology t(h100(kClusterGpus));
  base::Rng rng(kSeed);
  FlowModel m(t);
  auto start = [&](Time now) {
    const auto [src, dst] = random_pair(rng, kTraffic);
    m.start(now, t.path(src, dst), Bytes{static_cast<std::int64_t>(1'000'000 + rng.below(1'000'000'000))});
  };
  for (int i = 0; i < flows; ++i)
    start(0_ns);
  m.next_completion();  // the initial batch: one water-filling over all of them
  const auto before = m.stats();
  for (auto _ : state) {
    const auto next = m.next_completion();
    m.finish(next->first, next->second);
    start(next->first);
  }
  const auto after = m.stats();
  state.counters["rerated/event"] = static_cast<double>(after.flows_rerated - before.flows_rerated) /
                                    static_cast<double>(std::max<std::int64_t>(1, state.iterations()));
  state.SetItemsProcessed(state.iterations());
  state.SetComplexityN(flows);
}
void BM_FlowModelChurnNode(benchmark::State& s) {
  BM_FlowModelChurn<Traffic::Node>(s);
}
void BM_FlowModelChurnRail(benchmark::State& s) {
  BM_FlowModelChurn<Traffic::Rail>(s);
}
void BM_FlowModelChurnGlobal(benchmark::State& s) {
  BM_FlowModelChurn<Traffic::Global>(s);
}
BENCHMARK(BM_FlowModelChurnNode)->RangeMultiplier(4)->Range(256, 131072)->Complexity();
BENCHMARK(BM_FlowModelChurnRail)->RangeMultiplier(4)->Range(256, 131072)->Complexity();
BENCHMARK(BM_FlowModelChurnGlobal)->RangeMultiplier(4)->Range(256, 65536)->Unit(benchmark::kMicrosecond)->Complexity();

// One collective phase's worth of flows started at one instant and shared once (the batch path): O(N log N).
void BM_FlowModelStartBatch(benchmark::State& state) {
  const auto flows = static_cast<int>(state.range(0));
  const Topology t(h100(kClusterGpus));
  base::Rng rng(kSeed);
  std::vector<std::vector<topology::LinkId>> paths;
  for (int i = 0; i < flows; ++i) {
    const auto [src, dst] = random_pair(rng, Traffic::Global);
    paths.push_back(t.path(src, dst));
  }
  for (auto _ : state) {
    FlowModel m(t);
    for (const auto& p : paths)
      m.start(0_ns, p, 1_GB);
    benchmark::DoNotOptimize(m.next_completion());
  }
  state.SetItemsProcessed(state.iterations() * flows);
  state.SetComplexityN(flows);
}
BENCHMARK(BM_FlowModelStartBatch)
    ->RangeMultiplier(4)
    ->Range(256, 65536)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);

// The step planner's hot path: collectives::collective_time(Auto) of an all-reduce on a concrete group of the
// 16,384-GPU cluster. Args: {ranks, ranks per node}. One rank per node is a DP group (local rank 0 of consecutive
// nodes, one rail; 1024 ranks span 32 rail groups and 8 pods); 8 per node is a hierarchical group of whole nodes. Auto
// costs every algorithm that applies (ring and tree; hierarchical when several nodes are whole), so expected O(ranks).
std::vector<GpuId> bench_group(int ranks, int per_node) {
  std::vector<GpuId> g;
  for (int i = 0; i < ranks; ++i)
    g.push_back(per_node == 1 ? i * 8 : (i / per_node) * 8 + i % per_node);
  return g;
}

void BM_CollectiveTime(benchmark::State& state) {
  const Topology t(h100(16384));
  const auto group = bench_group(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state)
    benchmark::DoNotOptimize(
        collectives::collective_time(collectives::Op::AllReduce, collectives::Algorithm::Auto, group, 256_MiB, t));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_CollectiveTime)->ArgsProduct({{8, 128, 1024}, {1, 8}})->Unit(benchmark::kMicrosecond);

// The same through one collectives::CollectiveCostModel kept across calls, as a planner holds it: its scratch
// buffers are sized once, so no call allocates.
void BM_CollectiveCostModel(benchmark::State& state) {
  const Topology t(h100(16384));
  const auto group = bench_group(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  collectives::CollectiveCostModel model(t);
  for (auto _ : state)
    benchmark::DoNotOptimize(model.time(collectives::Op::AllReduce, collectives::Algorithm::Auto, group, 256_MiB));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_CollectiveCostModel)->ArgsProduct({{8, 128, 1024}, {1, 8}})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sim::network
