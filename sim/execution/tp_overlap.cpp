// sim/execution/tp_overlap.cpp: the pair times of tp_overlap.hpp.
#include "sim/execution/tp_overlap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace sim::execution {

using base::Time;

namespace {

Time extra(Time pair, Time gemm) {
  return pair > gemm ? pair - gemm : Time::zero();
}

Time scaled(Time t, double f) {
  return Time{static_cast<std::int64_t>(std::llround(static_cast<double>(t.ns) * f))};
}

}  // namespace

Time ring_exchange_extra(Time gemm, Time chunk, Time comm, int tp) {
  if (tp < 2) return Time::zero();
  const Time step = scaled(comm, 1.0 / (tp - 1));
  return extra(chunk + Time{(tp - 1) * std::max(chunk, step).ns}, gemm);
}

Time pipeline_extra(Time gemm, Time chunk, Time comm, int sms, int comm_sms, int splits) {
  if (splits < 1) return comm;
  const double left = std::max(1, sms - comm_sms);
  const Time c = sms > comm_sms ? scaled(chunk, static_cast<double>(sms) / left) : chunk;
  const Time piece = scaled(comm, 1.0 / splits);
  return extra(c + Time{(splits - 1) * std::max(c, piece).ns} + piece, gemm);
}

Time bulk_extra(Time gemm, Time comm) {
  return extra(std::max(gemm, comm), gemm);
}

std::optional<Time> tp_overlap_exposed(const workload::PassWork& pass, std::size_t i, bool backward, Time comm, int tp,
                                       int sms, const std::function<Time(const workload::Kernel&)>& kernel_time,
                                       parallel::TpOverlapMethod method) {
  const auto& s = pass.segments[i];
  const bool gather = s.comm == workload::CommKind::TpAllGather;
  if (tp < 2 || !s.is_comm || (!gather && s.comm != workload::CommKind::TpReduceScatter)) return std::nullopt;
  // Async TP fuses no backward reduce-scatter: its input is a sum of input-gradient GEMMs (tp_overlap.hpp).
  if (method == parallel::TpOverlapMethod::AsyncTp && !gather && backward) return std::nullopt;
  // The partner is the compute segment beside the collective in data flow. A context-parallel key/value exchange
  // between them does not separate them: it runs on the context-parallel group, inside the attention (Transformer
  // Engine's ring attention), and needs neither the gathered activations nor the GEMM's output. Nor does the layout
  // copy of a batch-first sequence-parallel tensor (workload::LayerShape::sp_batch_first): PyTorch's fused
  // all-gather-matmul still writes the gathered tensor in its layout, a copy beside the pair.
  auto between = [](const workload::Segment& seg) {
    if (seg.is_comm) return seg.comm == workload::CommKind::CpExchange;
    return !seg.kernels.empty() &&
           std::all_of(seg.kernels.begin(), seg.kernels.end(), [](const workload::Kernel& k) { return k.mirror_once; });
  };
  std::size_t j = i;
  do {
    if (gather ? j + 1 >= pass.segments.size() : j == 0) return std::nullopt;
    j = gather ? j + 1 : j - 1;
  } while (between(pass.segments[j]));
  const auto& partner_segment = pass.segments[j];
  if (partner_segment.is_comm) return std::nullopt;
  // The partner's name: the linear layer beside the collective in data flow.
  const bool entering = gather != backward;  // forward all-gather, backward reduce-scatter: QKV / MLP up
  const std::string_view a = entering ? "qkv" : "attn_out", b = entering ? "mlp_up" : "mlp_down";
  for (const auto& k : partner_segment.kernels) {
    if (k.kind != workload::KernelKind::Gemm || (k.name != a && k.name != b)) continue;
    const Time gemm = kernel_time(k);
    if (!gather && backward) return bulk_extra(gemm, comm);
    workload::Kernel chunk = k;
    chunk.m = k.m / (gather ? tp : kTpOverlapSplits);
    const Time c = kernel_time(chunk);
    return gather ? ring_exchange_extra(gemm, c, comm, tp) : pipeline_extra(gemm, c, comm, sms);
  }
  return std::nullopt;
}

}  // namespace sim::execution
