// sim/collectives/protocol.cpp: NCCL's protocol terms (protocol.hpp has the source table).
#include "sim/collectives/protocol.hpp"

namespace sim::collectives {

const char* to_string(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return "LL";
    case Protocol::LL128:
      return "LL128";
    case Protocol::Simple:
      return "Simple";
  }
  return "?";
}

ProtocolTerms protocol_terms(Protocol p, bool tree, int domains, int ranks_per_domain, bool gather_or_scatter) {
  // tuning.cc's tables, indexed [protocol] = {LL, LL128, Simple}; LL's per-step latencies are the profile's own.
  constexpr double kRingBase[] = {6.6, 14.0, 8.4}, kTreeBase[] = {6.8, 14.0, 0.0};
  constexpr double kRingNvlink[] = {0.6, 1.9, 3.4}, kTreeNvlink[] = {0.6, 1.25, 28.0};
  constexpr double kRingNet[] = {2.7, 4.0, 14.0}, kTreeNet[] = {5.0, 8.5, 28.0};
  constexpr double kGBps = 1e9;
  const auto i = static_cast<std::size_t>(p);
  ProtocolTerms t;
  t.base = base::Time{static_cast<std::int64_t>(std::llround((tree ? kTreeBase : kRingBase)[i] * 1e3))};
  t.nvlink_latency = (tree ? kTreeNvlink : kRingNvlink)[i] / kRingNvlink[0];
  t.network_latency = (tree ? kTreeNet : kRingNet)[i] / kRingNet[0];
  const bool multi = domains > 1;
  // llMaxBw for Hopper GPUs on Intel hosts (index1 = compute capability on one node, CPU vendor beyond).
  const double ll_max = domains <= 1 ? 87.7 * kGBps : domains == 2 ? 22.5 * kGBps : 19.0 * kGBps;
  if (!tree) {
    switch (p) {
      case Protocol::LL:
        t.rate = multi || !gather_or_scatter ? 1.0 / 4.0 : 1.0 / 3.0;
        t.rate_cap = ll_max;
        break;
      case Protocol::LL128:
        t.rate = ranks_per_domain < 2 && multi ? 0.7 : 0.92;
        break;
      case Protocol::Simple:
        break;
    }
    return t;
  }
  t.rate = 0.92;
  if (p == Protocol::LL) {
    t.rate /= 3.8;
    t.rate_cap = ll_max;
  } else if (p == Protocol::LL128) {
    t.rate *= multi ? 120.0 / 128.0 : 7.0 / 9.0;
  }
  return t;
}

double tree_correction(Protocol p, base::Bytes n) {
  // Tenths, [protocol = LL, LL128, Simple][floor(log2(n / 64 B))], 64 B to 256 MiB.
  constexpr int kTenths[3][23] = {{10, 10, 10, 10, 9, 8, 7, 7, 7, 7, 6, 5, 4, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10},
                                  {10, 10, 10, 10, 10, 9, 8, 8, 8, 7, 6, 6, 6, 6, 6, 6, 8, 9, 9, 9, 9, 10, 10},
                                  {9, 9, 9, 9, 9, 9, 9, 8, 7, 6, 6, 5, 5, 5, 5, 6, 7, 8, 7, 7, 8, 9, 9}};
  if (n.n < 64) return 1.0;
  int log_size = 0;
  for (std::int64_t units = n.n >> 6; units > 1; units >>= 1)
    ++log_size;
  if (log_size >= 23) return 1.0;
  return kTenths[static_cast<std::size_t>(p)][log_size] / 10.0;
}

ProtocolTerms nvls_terms() {
  ProtocolTerms t;
  t.nvlink_latency = 23.0 / 2 / 0.6;  // hwLat[NVLINK][NVLS][SIMPLE] over two steps, per LL ring step
  t.network_latency = 14.0 / 2.7;     // hwLat[NET][NVLS_TREE][SIMPLE] per LL ring step
  return t;
}

}  // namespace sim::collectives
