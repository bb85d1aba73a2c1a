// sim/reliability/checkpoint_io.cpp: checkpoint bytes and their transfer times (see the header for the formulas).
#include "sim/reliability/checkpoint_io.hpp"

#include <algorithm>
#include <cmath>

namespace sim::reliability {
namespace {

base::Bytes bytes(double b) {
  return base::Bytes{static_cast<std::int64_t>(std::ceil(std::max(0.0, b)))};
}

// The slower of the per-node and the aggregate transfer; the aggregate is the checkpoint path's own rate or what the
// data pipeline leaves of the shared storage, whichever is lower.
CheckpointTransfer slower(base::Bytes per_node, base::Bytes total, base::Bandwidth node, base::Bandwidth path,
                          const CheckpointStorage& st) {
  const double left = st.shared.bytes_per_s - st.data_reads.bytes_per_s;
  const bool shared_binds = left < path.bytes_per_s;
  const base::Bandwidth agg{std::max(1.0, shared_binds ? left : path.bytes_per_s)};
  const base::Time t_agg = base::transfer_time(total, agg);
  const base::Time t_node = base::transfer_time(per_node, node);
  if (t_node > t_agg) return {t_node, node, "per node"};
  return {t_agg, agg, shared_binds ? "shared storage" : "aggregate"};
}

}  // namespace

CheckpointIo checkpoint_io(const CheckpointShape& sh, const CheckpointStorage& st) {
  CheckpointIo io;
  const int gpus = std::max(1, sh.gpus);
  const int replica = std::max(1, gpus / std::max(1, sh.dp));  // GPUs of one data-parallel replica
  const double experts = std::clamp(sh.expert_params, 0.0, sh.params) * sh.weight_bytes;
  const double weights = sh.params * sh.weight_bytes - experts;  // all but the routed experts
  const double optimizer = sh.params * sh.optimizer_bytes;
  const int shards = std::clamp(sh.expert_shards, 1, gpus);  // GPUs one copy of the experts spreads over
  const double sharded_over = std::max(1, gpus / std::max(1, sh.shard_copies));  // GPUs one copy of the shards spans
  io.total = bytes(weights + experts + optimizer);
  const double gpu = weights / (sh.weights_sharded ? sharded_over : replica) +
                     experts / (sh.weights_sharded ? sharded_over : shards) +
                     optimizer / (sh.optimizer_sharded ? sharded_over : replica);
  io.per_gpu_max = bytes(gpu * std::max(1.0, sh.busiest_rank_factor));
  // The busiest node holds replica 0's first GPUs: node_gpus of them, of which in_replica belong to replica 0 and
  // in_shards hold a distinct shard of the experts' first copy.
  const double node_gpus = std::min(std::max(1, sh.gpus_per_node), gpus);
  const double in_replica = std::min(node_gpus, static_cast<double>(replica));
  const double in_shards = std::min(node_gpus, static_cast<double>(shards));
  const double in_copy = std::min(node_gpus, sharded_over);
  io.per_node_max = bytes(weights * (sh.weights_sharded ? in_copy / sharded_over : in_replica / replica) +
                          experts * (sh.weights_sharded ? in_copy / sharded_over : in_shards / shards) +
                          optimizer * (sh.optimizer_sharded ? in_copy / sharded_over : in_replica / replica));
  io.write = slower(io.per_node_max, io.total, st.per_node, st.write, st);
  io.load = slower(io.per_node_max, io.total, st.per_node, st.read, st);
  io.snapshot = base::transfer_time(io.per_gpu_max, st.snapshot);
  return io;
}

}  // namespace sim::reliability
