// sim/collectives/sweep.cpp: collective sweeps in nccl-tests' terms on a cluster sized for the ranks.
#include "sim/collectives/sweep.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <string>

namespace sim::collectives {

namespace {

int per_node_of(const topology::TopologyConfig& c, int ranks, int per_node) {
  if (per_node > 0) return per_node;
  return std::min(ranks, c.gpus_per_node);
}

}  // namespace

std::vector<base::Diagnostic> validate_sweep_cluster(topology::TopologyConfig config, int ranks, int per_node) {
  std::vector<base::Diagnostic> out;
  if (ranks < 1 || ranks > kMaxSweepRanks)
    out.push_back(
        {"", "/ranks", "must be between 1 and " + std::to_string(kMaxSweepRanks) + "; found " + std::to_string(ranks)});
  if (per_node < 0 || per_node > config.gpus_per_node)
    out.push_back({"", "/per_node",
                   "must be between 1 and the node's " + std::to_string(config.gpus_per_node) + " GPUs; found " +
                       std::to_string(per_node)});
  if (!out.empty()) return out;
  const int k = per_node_of(config, ranks, per_node);
  if (per_node > 0 && ranks % k != 0)
    out.push_back({"", "/ranks",
                   std::to_string(ranks) + " ranks do not fill whole nodes of " + std::to_string(k) +
                       " ranks each (--per-node)"});
  config.gpus = (ranks + k - 1) / k * config.gpus_per_node;
  for (auto& d : topology::validate(config))
    out.push_back(std::move(d));
  return out;
}

SweepCluster sweep_cluster(topology::TopologyConfig config, int ranks, int per_node) {
  SIM_ASSERT(validate_sweep_cluster(config, ranks, per_node).empty(), "sweep cluster not validated");
  const int k = per_node_of(config, ranks, per_node);
  SweepCluster c;
  c.nodes = (ranks + k - 1) / k;
  config.gpus = c.nodes * config.gpus_per_node;
  c.group.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    c.group.push_back(r / k * config.gpus_per_node + r % k);
  c.topology = std::make_unique<const topology::Topology>(config);
  return c;
}

std::vector<SweepRow> sweep(Op op, Algorithm algorithm, std::span<const topology::GpuId> group,
                            const std::vector<base::Bytes>& sizes, const CallCosts& costs,
                            const topology::Topology& topo) {
  CollectiveCostModel model(topo);
  const auto p = static_cast<int>(group.size());
  std::vector<SweepRow> rows;
  rows.reserve(sizes.size());
  for (const base::Bytes n : sizes) {
    SweepRow r;
    r.size = n;
    const auto chosen = model.choice(op, algorithm, group, n);
    r.algorithm = chosen.algorithm;
    r.protocol = chosen.protocol;
    r.time = chosen.time;
    if (p >= 2 && n.n > 0 && r.time < base::Time::max()) {
      r.time += costs.base[static_cast<std::size_t>(op)];
      if (costs.launch > r.time) {
        r.time = costs.launch;
        r.launch_bound = true;
      }
    }
    if (r.time > base::Time::zero() && r.time < base::Time::max()) {
      r.algbw = algbw(n, r.time);
      r.busbw = busbw(op, p, n, r.time);
    }
    rows.push_back(r);
  }
  return rows;
}

const char* nccl_name(Op op) {
  switch (op) {
    case Op::AllReduce:
      return "all_reduce";
    case Op::AllGather:
      return "all_gather";
    case Op::ReduceScatter:
      return "reduce_scatter";
    case Op::AllToAll:
      return "all_to_all";
    case Op::SendRecv:
      return "send_recv";
    case Op::Broadcast:
      return "broadcast";
  }
  return "?";
}

std::optional<Op> op_from_nccl_name(std::string_view name) {
  if (name == "alltoall") return Op::AllToAll;
  if (name == "sendrecv") return Op::SendRecv;
  for (Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll, Op::SendRecv, Op::Broadcast})
    if (name == nccl_name(op)) return op;
  return op_from_string(name);
}

std::vector<base::Bytes> doubling_sizes(base::Bytes from, base::Bytes to) {
  SIM_ASSERT(from.n > 0, "a sweep starts at a positive size");
  std::vector<base::Bytes> out{from};
  while (out.back().n <= to.n / 2)
    out.push_back(base::Bytes{out.back().n * 2});
  return out;
}

}  // namespace sim::collectives
