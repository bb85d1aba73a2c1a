// sim/collectives/closed_form.hpp: alpha-beta cost formulas of collectives and nccl-tests' bus bandwidth.
#pragma once
#include "sim/base/units.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace sim::collectives {

enum class Op { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast };

// What n means, per op (the nccl-tests convention, so that algbw = n / t matches their tables):
//   AllReduce      the buffer on each rank;
//   AllGather      the gathered output on each rank (each rank contributes n / p);
//   ReduceScatter  the input on each rank (each rank ends with n / p);
//   AllToAll       each rank's send buffer (n / p to every rank, itself included);
//   SendRecv       the bytes sent; Broadcast  the bytes sent from the root.
// Notation: p ranks, a = per-step latency (alpha), B = per-rank bandwidth per direction (beta = 1/B). Every
// bandwidth term moves whole bytes (rounded up) and is rounded up to whole ns like base::transfer_time; p <= 1 or
// n <= 0 costs nothing.

/// ceil(n * num / den) bytes without overflow: the per-rank share of a buffer that a formula moves.
base::Bytes share(base::Bytes n, std::int64_t num, std::int64_t den);

/// Ring all-reduce (reduce-scatter then all-gather, 2(p-1) steps of n/p each):
///   T = 2(p-1) a + 2(p-1)/p * n/B
/// Source: Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 2005.
base::Time ring_allreduce_time(int p, base::Bytes n, base::Time a, base::Bandwidth b);

/// Ring all-gather and ring reduce-scatter (p-1 steps of n/p each):
///   T = (p-1) a + (p-1)/p * n/B
/// Source: Thakur, Rabenseifner, Gropp 2005 (as above).
base::Time ring_allgather_time(int p, base::Bytes n, base::Time a, base::Bandwidth b);
base::Time ring_reducescatter_time(int p, base::Bytes n, base::Time a, base::Bandwidth b);

/// All-to-all by direct pairwise exchange (each rank sends n/p to each of the p-1 others):
///   T = (p-1) a + (p-1)/p * n/B
/// Source: Thakur, Rabenseifner, Gropp 2005 (pairwise exchange for long messages).
base::Time alltoall_time(int p, base::Bytes n, base::Time a, base::Bandwidth b);

/// One point-to-point message (Hockney's model): T = a + n/B.
base::Time sendrecv_time(base::Bytes n, base::Time a, base::Bandwidth b);

/// Broadcast as a pipelined chain (NCCL's ring broadcast), in the limit of many small chunks:
///   T = (p-1) a + n/B
/// Every rank but the last forwards all n bytes, so the root's link bounds it at n/B, which is why nccl-tests use
/// a bus-bandwidth factor of 1 for broadcast (doc/PERFORMANCE.md in NVIDIA/nccl-tests).
base::Time broadcast_time(int p, base::Bytes n, base::Time a, base::Bandwidth b);

/// All-reduce over NCCL's double binary tree: two binary trees, each reducing then broadcasting half of the buffer,
/// built so that a rank is an inner node in at most one of them (Sanders, Speck, Traeff, "Two-tree algorithms for
/// full bandwidth broadcast, reduction and scan", Parallel Computing 2009; S. Jeaugey, "Massively Scale Your Deep
/// Learning Training with NCCL 2.4", NVIDIA blog 2019). Reduction and broadcast are pipelined, so
///   T = 2 ceil(log2 p) a + c(p) * ceil(n/2) / B
/// where c(p) is the most half-buffer messages any rank sends (or receives) across both trees: an inner node sends
/// one half up and two down in its inner tree and one half up in the other, so c = 4 and the bandwidth term is
/// 2n/B once p >= 4 (NCCL's model likewise takes tree algbw as half the bus bandwidth: ratio .5 in
/// src/graph/tuning.cc); c(2) = 2 and c(3) = 3.
base::Time tree_allreduce_time(int p, base::Bytes n, base::Time a, base::Bandwidth b);

/// NVLink SHARP all-reduce in one NVLink domain of k GPUs (NCCL's NVLS algorithm, NCCL 2.17+ with third-generation
/// NVSwitches): the buffer is cut into k shards; each GPU has its shard reduced in the switch from all k GPUs
/// (multimem load-reduce: the switch reads n/k from every GPU, n from each over all shards; the GPU receives n/k) and
/// multicasts the result (the GPU sends n/k, receives n from the others' shards). A GPU's link carries n (k+1)/k each
/// way, at the NVLS rate B_nvls (hardware efficiency.nvls), with one step up and one down:
///   T = 2 a + n (k+1)/k / B_nvls
/// Sources: NVIDIA Hopper architecture whitepaper (2022), "NVLink SHARP"; NCCL's NVLS kernels
/// (src/device/all_reduce.h, runRing of ncclPatternNvls: reduce-scatter by multimem ld_reduce, all-gather by multimem
/// st). The measured algbw of 258 GB/s on 5 and 273 GB/s on 8 H100s (https://github.com/NVIDIA/nccl/issues/1455)
/// are one B_nvls (0.69 x 450 GB/s) times k/(k+1), which is what this form predicts.
base::Time nvls_allreduce_time(int k, base::Bytes n, base::Time a, base::Bandwidth b_nvls);
/// The NVLS traffic n (k+1)/k expressed as bytes at the NVLink links' rate b_link (ceil of n (k+1)/k b_link/b_nvls),
/// so that a flow model with one rate per link times the NVLS phase as nvls_allreduce_time() does.
base::Bytes nvls_link_bytes(int k, base::Bytes n, base::Bandwidth b_link, base::Bandwidth b_nvls);

/// NCCL's double binary tree over ranks 0..p-1 (ncclGetBtree / ncclGetDtree in NVIDIA/nccl src/graph/trees.cc):
/// tree 0 is an in-order binary tree rooted at rank 0; tree 1 mirrors it (p even) or shifts it by one (p odd).
struct DoubleBinaryTree {
  std::array<std::vector<int>, 2> parent;  // parent[t][r], -1 for the root of tree t
};
DoubleBinaryTree double_binary_tree(int p);
/// double_binary_tree(p).parent[tree][rank] without building the tree (tree is 0 or 1, 0 <= rank < p).
int double_binary_tree_parent(int p, int tree, int rank);
/// c(p) above: the most messages one rank sends across both trees (children in both plus parents in both).
int double_binary_tree_fanout(int p);
/// ceil(log2 p) for p >= 1.
int ceil_log2(int p);

/// Two levels: k ranks in each of m NVLink domains.
struct TwoLevel {
  int ranks_per_domain = 1;  // k
  int domains = 1;           // m
  base::Time intra_latency;  // a over NVLink
  base::Bandwidth intra_bw;
  base::Time inter_latency;  // a over the network
  base::Bandwidth inter_bw;  // per rank: the k ranks of a domain use k NICs (rails) in parallel
};

/// Hierarchical all-reduce: reduce-scatter inside each domain over NVLink, all-reduce of the n/k shard across the m
/// domains (k rings in parallel, one per rail), then all-gather inside each domain:
///   T = 2 [(k-1) a_nvl + (k-1)/k n/B_nvl] + 2(m-1) a_net + 2(m-1)/m (n/k)/B_net
/// Source: the composition of Thakur et al. 2005's ring phases; the two-level scheme of Jia et al., "Highly
/// Scalable Deep Learning Training System with Mixed-Precision" (2018) and of Horovod's hierarchical all-reduce.
base::Time hierarchical_allreduce_time(const TwoLevel& t, base::Bytes n);
/// Hierarchical reduce-scatter: inside domains, then across them on the n/k shards:
///   T = (k-1) a_nvl + (k-1)/k n/B_nvl + (m-1) a_net + (m-1)/m (n/k)/B_net
base::Time hierarchical_reducescatter_time(const TwoLevel& t, base::Bytes n);
/// Hierarchical all-gather: across domains on the n/k shards, then inside domains (the mirror of reduce-scatter).
base::Time hierarchical_allgather_time(const TwoLevel& t, base::Bytes n);

/// nccl-tests' bus-bandwidth factor (NVIDIA/nccl-tests doc/PERFORMANCE.md): all-reduce 2(p-1)/p; all-gather,
/// reduce-scatter and all-to-all (p-1)/p; send/recv and broadcast 1. busbw = algbw * factor is comparable with the
/// hardware's per-rank link bandwidth whatever p.
double busbw_factor(Op op, int p);
/// algbw = n / t (n as defined per op above).
base::Bandwidth algbw(base::Bytes n, base::Time t);
base::Bandwidth busbw(Op op, int p, base::Bytes n, base::Time t);

}  // namespace sim::collectives
