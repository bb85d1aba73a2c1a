// sim/execution/layer_timing.cpp: the layer shape, kernel times and layer collectives of layer_timing.hpp.
#include "sim/execution/layer_timing.hpp"

#include "sim/execution/moe_dispatch.hpp"
#include "sim/hardware/compute_model.hpp"
#include "sim/parallel/feasibility.hpp"

#include <algorithm>

namespace sim::execution {

workload::LayerShape layer_shape(const StepInputs& in) {
  const auto& L = in.layout;
  workload::LayerShape shape;
  shape.micro_batch = L.micro_batch;
  shape.seq_len = in.seq_len;
  shape.tp = L.tp;
  shape.cp = L.cp;
  shape.ep = L.ep;
  shape.expert_tp = L.expert_tp;
  shape.sequence_parallel = in.parallel.sequence_parallel && L.tp > 1;
  shape.flash_attention = in.flash_attention;
  shape.dropout = in.dropout;
  shape.attention_dropout = in.attention_dropout;
  shape.eager_kernels = in.eager_kernels;
  shape.repeated_kv = in.repeated_kv;
  shape.loss = in.cross_entropy;
  shape.sp_batch_first = in.sp_batch_first;
  shape.moe_imbalance = in.moe_imbalance;
  shape.fp8 = in.dtype == hardware::Dtype::Fp8 || in.dtype == hardware::Dtype::Fp4 ? in.fp8_scaling
                                                                                   : workload::Fp8Scaling::None;
  shape.moe_dispatch_fp8 = in.parallel.moe_dispatch_fp8 && shape.fp8 != workload::Fp8Scaling::None;
  shape.act_bytes = hardware::tensor_bytes(in.dtype);  // a function of dtype, which the layer cache's key holds
  // A vocabulary tp does not divide runs padded to Megatron-LM's multiple of 128 x tp (GPT-3's 50,257 over TP 4: a
  // slice of 12,672 where vocab / tp gave 12,564.25, a user trial); one it divides runs as given (megatron_flags
  // writes --make-vocab-size-divisible-by so). A function of the model and tp, which the layer cache's key holds.
  if (in.model != nullptr && L.tp > 1 && in.model->vocab % L.tp != 0)
    shape.vocab_per_rank = static_cast<double>(parallel::padded_vocab(in.model->vocab, L.tp)) / L.tp;
  return shape;
}

base::Time kernel_time(const StepInputs& in, const workload::Kernel& k) {
  const auto& hw = *in.hardware;
  switch (k.kind) {
    case workload::KernelKind::Gemm: {
      // FP8 training keeps the GEMMs outside the transformer blocks' linears (output layer, router, unfused
      // attention) in 16 bits.
      const bool low = in.dtype == hardware::Dtype::Fp8 || in.dtype == hardware::Dtype::Fp4;
      const hardware::Dtype gemm_16bit = low ? hardware::Dtype::Bf16 : in.dtype;
      return hardware::gemm_time(hw.gpu, k.fp8 ? in.dtype : gemm_16bit, hw.efficiency, k.m, k.n, k.k, k.batch);
    }
    case workload::KernelKind::Attention:
      // m and n are the call's query and key lengths (the local chunk against the keys it attends to).
      return hardware::attention_time(hw.gpu, in.dtype, hw.efficiency, k.flops,
                                      {in.attention_kernel, k.backward, std::min(k.m, k.n), k.causal}) +
             hw.efficiency.kernel_overhead * (k.calls - 1);  // attention_time charges one launch
    case workload::KernelKind::Memory:
      return hardware::memory_time(hw.gpu, hw.efficiency, k.bytes);
  }
  return base::Time::zero();
}

LayerCollective layer_collective(workload::CommKind kind) {
  using collectives::Op;
  using parallel::Dim;
  switch (kind) {
    case workload::CommKind::TpAllReduce:
      return {Op::AllReduce, Dim::Tp};
    case workload::CommKind::TpAllGather:
      return {Op::AllGather, Dim::Tp};
    case workload::CommKind::TpReduceScatter:
      return {Op::ReduceScatter, Dim::Tp};
    case workload::CommKind::CpExchange:
      return {Op::AllGather, Dim::Cp};  // cp-1 ring steps of one chunk each: an all-gather of cp chunks
    case workload::CommKind::EpAllToAll:
      return {Op::AllToAll, Dim::Ep};
    case workload::CommKind::EtpAllGather:
      return {Op::AllGather, Dim::Etp};
    case workload::CommKind::EtpReduceScatter:
      return {Op::ReduceScatter, Dim::Etp};
  }
  return {};
}

double layer_collective_payload(const StepInputs& in, workload::CommKind kind, const std::vector<int>& group,
                                double bytes) {
  // Collective formulas take the total payload n; ring all-gather of cp chunks moves (cp-1)/cp of cp*chunk.
  double n = kind == workload::CommKind::CpExchange ? bytes * static_cast<double>(group.size()) : bytes;
  if (kind == workload::CommKind::EpAllToAll && in.parallel.moe_dispatcher == parallel::MoeDispatcher::DeepEp)
    n *= deepep_network_share(*in.model, *in.topology, group);
  return n;
}

}  // namespace sim::execution
