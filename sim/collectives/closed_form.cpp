// sim/collectives/closed_form.cpp: alpha-beta cost formulas of collectives and nccl-tests' bus bandwidth.
#include "sim/collectives/closed_form.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sim::collectives {

namespace {

__extension__ using I128 = __int128;  // GCC/Clang extension (as in base/rng.hpp); silences -Wpedantic

base::Time steps(std::int64_t k, base::Time a) {
  return a * k;
}

base::Time bw_term(base::Bytes bytes, base::Bandwidth b) {
  return base::transfer_time(bytes, b);
}

}  // namespace

base::Bytes share(base::Bytes n, std::int64_t num, std::int64_t den) {
  SIM_ASSERT(den > 0 && num >= 0, "share of a buffer with a negative fraction");
  if (n.n <= 0 || num == 0) return base::Bytes{0};
  const I128 v = (static_cast<I128>(n.n) * num + den - 1) / den;
  SIM_ASSERT(v <= static_cast<I128>(std::numeric_limits<std::int64_t>::max()), "byte count overflows 64 bits");
  return base::Bytes{static_cast<std::int64_t>(v)};
}

base::Time ring_allreduce_time(int p, base::Bytes n, base::Time a, base::Bandwidth b) {
  if (p <= 1 || n.n <= 0) return base::Time::zero();
  return steps(2 * (p - 1), a) + bw_term(share(n, 2 * (p - 1), p), b);
}

base::Time ring_allgather_time(int p, base::Bytes n, base::Time a, base::Bandwidth b) {
  if (p <= 1 || n.n <= 0) return base::Time::zero();
  return steps(p - 1, a) + bw_term(share(n, p - 1, p), b);
}

base::Time ring_reducescatter_time(int p, base::Bytes n, base::Time a, base::Bandwidth b) {
  return ring_allgather_time(p, n, a, b);
}

base::Time alltoall_time(int p, base::Bytes n, base::Time a, base::Bandwidth b) {
  return ring_allgather_time(p, n, a, b);
}

base::Time sendrecv_time(base::Bytes n, base::Time a, base::Bandwidth b) {
  if (n.n <= 0) return base::Time::zero();
  return a + bw_term(n, b);
}

base::Time broadcast_time(int p, base::Bytes n, base::Time a, base::Bandwidth b) {
  if (p <= 1 || n.n <= 0) return base::Time::zero();
  return steps(p - 1, a) + bw_term(n, b);
}

int ceil_log2(int p) {
  SIM_ASSERT(p >= 1, "log2 of a non-positive count");
  int k = 0;
  while ((1LL << k) < p)
    ++k;
  return k;
}

namespace {

// One binary tree of NCCL's construction over ranks 0..p-1: the parent of `rank`, -1 for the root (rank 0). A rank's
// lowest set bit gives its level; its parent clears that bit and sets the next one (or only clears it when that
// would leave the range).
int btree_parent(int p, int rank) {
  if (rank == 0) return -1;
  const int bit = rank & -rank;  // the lowest set bit
  const int up = (rank ^ bit) | (bit << 1);
  return up >= p ? (rank ^ bit) : up;
}

}  // namespace

int double_binary_tree_parent(int p, int tree, int rank) {
  if (tree == 0) return btree_parent(p, rank);
  if (p % 2 == 1) {  // shift by one
    const int u = btree_parent(p, (rank - 1 + p) % p);
    return u < 0 ? -1 : (u + 1) % p;
  }
  const int u = btree_parent(p, p - 1 - rank);  // mirror
  return u < 0 ? -1 : p - 1 - u;
}

DoubleBinaryTree double_binary_tree(int p) {
  SIM_ASSERT(p >= 1, "a tree needs at least one rank");
  DoubleBinaryTree t;
  for (int tree = 0; tree < 2; ++tree) {
    auto& parent = t.parent[static_cast<std::size_t>(tree)];
    parent.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      parent[static_cast<std::size_t>(r)] = double_binary_tree_parent(p, tree, r);
  }
  return t;
}

int double_binary_tree_fanout(int p) {
  if (p <= 1) return 0;
  const DoubleBinaryTree t = double_binary_tree(p);
  std::vector<int> degree(static_cast<std::size_t>(p), 0);
  for (const auto& parent : t.parent) {
    for (int r = 0; r < p; ++r) {
      const int u = parent[static_cast<std::size_t>(r)];
      if (u < 0) continue;
      ++degree[static_cast<std::size_t>(r)];  // r sends its half up (reduce) and receives it back (broadcast)
      ++degree[static_cast<std::size_t>(u)];  // u sends the broadcast down to r and receives r's reduction
    }
  }
  return *std::max_element(degree.begin(), degree.end());
}

base::Time tree_allreduce_time(int p, base::Bytes n, base::Time a, base::Bandwidth b) {
  if (p <= 1 || n.n <= 0) return base::Time::zero();
  const base::Bytes half = share(n, 1, 2);
  return steps(2 * ceil_log2(p), a) + bw_term(half * double_binary_tree_fanout(p), b);
}

base::Time nvls_allreduce_time(int k, base::Bytes n, base::Time a, base::Bandwidth b_nvls) {
  if (k <= 1 || n.n <= 0) return base::Time::zero();
  return steps(2, a) + bw_term(share(n, k + 1, k), b_nvls);
}

base::Bytes nvls_link_bytes(int k, base::Bytes n, base::Bandwidth b_link, base::Bandwidth b_nvls) {
  SIM_ASSERT(k >= 1 && b_nvls.bytes_per_s > 0 && b_link.bytes_per_s > 0, "NVLS bytes without an NVLS rate");
  const base::Bytes traffic = share(n, k + 1, k);
  const double scaled = std::ceil(static_cast<double>(traffic.n) * (b_link.bytes_per_s / b_nvls.bytes_per_s));
  SIM_ASSERT(scaled < 9.2e18, "byte count overflows 64 bits");
  return base::Bytes{static_cast<std::int64_t>(scaled)};
}

base::Time hierarchical_allreduce_time(const TwoLevel& t, base::Bytes n) {
  const int k = t.ranks_per_domain;
  const int m = t.domains;
  return ring_reducescatter_time(k, n, t.intra_latency, t.intra_bw) +
         (m <= 1 || n.n <= 0
              ? base::Time::zero()
              : steps(2 * (m - 1), t.inter_latency) + bw_term(share(n, 2 * (m - 1), std::int64_t{m} * k), t.inter_bw)) +
         ring_allgather_time(k, n, t.intra_latency, t.intra_bw);
}

base::Time hierarchical_reducescatter_time(const TwoLevel& t, base::Bytes n) {
  const int k = t.ranks_per_domain;
  const int m = t.domains;
  return ring_reducescatter_time(k, n, t.intra_latency, t.intra_bw) +
         (m <= 1 || n.n <= 0
              ? base::Time::zero()
              : steps(m - 1, t.inter_latency) + bw_term(share(n, m - 1, std::int64_t{m} * k), t.inter_bw));
}

base::Time hierarchical_allgather_time(const TwoLevel& t, base::Bytes n) {
  return hierarchical_reducescatter_time(t, n);
}

double busbw_factor(Op op, int p) {
  if (p <= 1) return op == Op::SendRecv || op == Op::Broadcast ? 1.0 : 0.0;
  const double pd = p;
  switch (op) {
    case Op::AllReduce:
      return 2.0 * (pd - 1.0) / pd;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll:
      return (pd - 1.0) / pd;
    case Op::SendRecv:
    case Op::Broadcast:
      return 1.0;
  }
  return 1.0;
}

base::Bandwidth algbw(base::Bytes n, base::Time t) {
  SIM_ASSERT(t > base::Time::zero(), "bandwidth over a zero duration");
  return base::Bandwidth{static_cast<double>(n.n) / t.seconds()};
}

base::Bandwidth busbw(Op op, int p, base::Bytes n, base::Time t) {
  return base::Bandwidth{algbw(n, t).bytes_per_s * busbw_factor(op, p)};
}

}  // namespace sim::collectives
