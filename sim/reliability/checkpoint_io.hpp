// sim/reliability/checkpoint_io.hpp: checkpoint bytes from the model, optimizer and sharding; write, load and snapshot
// times from per-node and aggregate storage bandwidth, shared with the data pipeline.
#pragma once
#include "sim/base/units.hpp"

#include <string>

namespace sim::reliability {

/// What is saved and how it is spread over the job.
struct CheckpointShape {
  double params = 0;            // model parameters
  double weight_bytes = 2;      // per parameter in the training dtype (bf16: 2)
  double optimizer_bytes = 12;  // per parameter: fp32 master weights and Adam's two moments (4 + 4 + 4)
  int gpus = 1;
  int gpus_per_node = 8;
  int dp = 1;                     // data-parallel replicas
  bool optimizer_sharded = true;  // ZeRO >= 1 or Megatron's distributed optimizer: optimizer states split over DP
  bool weights_sharded = false;   // ZeRO-3 / FSDP: weights split over DP too
  /// Of `params`, the routed experts' (MoE), and the GPUs one copy of them spreads over: expert parallelism x expert
  /// tensor parallelism x pipeline stages. A replica holds its share of the other weights whole, but only
  /// 1 / expert_shards of the experts: expert parallelism spans data-parallel ranks (Megatron-Core's expert groups).
  double expert_params = 0;
  int expert_shards = 1;
  /// Copies of the sharded states (hybrid sharding: dp / dp_shard groups, each sharding one whole copy); one copy is
  /// written, so the totals do not change, but each GPU holds and snapshots shard_copies times more.
  int shard_copies = 1;
  /// The busiest pipeline rank's checkpoint bytes over the mean rank's (the first stage holds the word embedding, the
  /// last the output layer): the busiest GPU's share, and so the snapshot, is this much above an even split.
  double busiest_rank_factor = 1;
};

/// The storage a checkpoint goes to, and what else uses it.
struct CheckpointStorage {
  /// Aggregate rates the checkpoint path achieves end to end (serialisation, file-system clients, the storage itself).
  /// Defaults: ByteCheckpoint's Llama-405B-class save and load on 8,960 GPUs to HDFS, T_save 51.06 s and T_load
  /// 129.49 s (Wan et al., "ByteCheckpoint", Table 8; reliability_public.json: checkpoint_systems.bytecheckpoint,
  /// status secondary), over this model's 14 bytes per parameter of 405e9 parameters (5.67 TB): 111 GB/s and
  /// 43.8 GB/s. A derived effective rate, not a hardware figure: give your storage's measured rates.
  base::Bandwidth write{5.67e12 / 51.06};
  base::Bandwidth read{5.67e12 / 129.49};
  /// One node's link to the storage. Assumed one 200 Gbit/s front-end NIC per node (25 GB/s; DGX-class nodes carry
  /// one or two such ports beside the compute fabric).
  base::Bandwidth per_node{25e9};
  /// The shared storage's total bandwidth and the data pipeline's read rate from it: a checkpoint gets what the data
  /// pipeline leaves (Llama 3's Tectonic sustains 2 TB/s, Llama Team 2024 Sec. 3.3.1).
  base::Bandwidth shared{2e12};
  base::Bandwidth data_reads{0};
  /// GPU-to-host copy of an asynchronous checkpoint's snapshot: about half of PCIe Gen5 x16's 64 GB/s per direction
  /// (an assumption; calibration should replace it).
  base::Bandwidth snapshot{25e9};
};

/// One transfer of a checkpoint: how long, at which binding rate, and what binds ("aggregate", "shared storage" or
/// "per node").
struct CheckpointTransfer {
  base::Time time;
  base::Bandwidth rate;
  std::string bound;
};

struct CheckpointIo {
  base::Bytes total;         // one checkpoint, deduplicated (each byte saved once)
  base::Bytes per_gpu_max;   // the busiest GPU's share
  base::Bytes per_node_max;  // the busiest node's share
  CheckpointTransfer write;  // durable write
  CheckpointTransfer load;   // read back at restart
  base::Time snapshot;       // asynchronous: the blocking GPU-to-host copy
};

/// Bytes: params x (weight + optimizer bytes), saved once (Megatron's distributed checkpoint deduplicates replicas).
/// The busiest GPU holds weights / (gpus / dp) (one replica's shard; / gpus when weights are sharded), the routed
/// experts' weights / expert_shards instead, plus optimizer / gpus (sharded) or / (gpus / dp) (replicated, saved by
/// one replica), times busiest_rank_factor; the busiest node holds replica 0's share on its GPUs (all of the weights
/// when a replica fits in a node), the expert shards of its first GPUs, and its GPUs' optimizer shards. Times (each the
/// slower of two bounds, a transfer at the binding rate):
///   write = max(per_node_max / per_node, total / min(write, shared - data_reads))
///   load  = max(per_node_max / per_node, total / min(read,  shared - data_reads))
/// Loading reads each byte once and broadcasts it within the data-parallel group, as MegaScale does (Jiang et al.,
/// NSDI 2024, Sec. 4.4). snapshot = per_gpu_max / snapshot bandwidth (MegaScale's two-stage save: GPU to host
/// memory in seconds, then to HDFS in the background; reliability_public.json: checkpoint_systems.megascale_two_stage).
CheckpointIo checkpoint_io(const CheckpointShape& shape, const CheckpointStorage& storage);

}  // namespace sim::reliability
