// sim/execution/overlap_interference.hpp: what a collective running beside compute costs that compute.
#pragma once
#include "sim/base/units.hpp"

#include <cmath>
#include <cstdint>

namespace sim::execution {

/// Thread blocks an NCCL collective kernel occupies while it runs beside compute: Nsight Systems shows
/// ncclAllGather launched with 24 blocks on an H100 (132 SMs) overlapping a GEMM, as FSDP's prefetch does (NVIDIA
/// developer forum, "Compute-Communication Overlap Causes Severe GEMM Performance Degradation because of Tail Effect",
/// thread 337991, 2025). Compute overlapped with a collective runs on the SMs left: 24 / 132 = 18.2% slower on H100,
/// against the 18.9% mean compute slowdown under overlap measured on A100 and H100 training kernels (Lee et al.,
/// "Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning", arXiv:2507.03114).
inline constexpr int kNcclCollectiveSms = 24;
/// SMs DeepEP's dispatch and combine kernels take: 20 (DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 3.2.2).
inline constexpr int kDeepEpSms = 20;

/// The compute time a collective of duration `overlapped`, run beside compute, adds to it: during the collective
/// the compute runs on sms - comm_sms SMs, so it falls behind by overlapped x comm_sms / sms.
inline base::Time overlap_interference(base::Time overlapped, int sms, int comm_sms = kNcclCollectiveSms) {
  if (sms <= comm_sms || overlapped <= base::Time::zero()) return base::Time::zero();
  return base::Time{static_cast<std::int64_t>(
      std::llround(static_cast<double>(overlapped.ns) * comm_sms / static_cast<double>(sms)))};
}

}  // namespace sim::execution
