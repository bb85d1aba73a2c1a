// sim/execution/step_plan_layers.cpp: the layer-level timings a step plan's stages are made of (every kernel and
// collective of a layer's passes, the embedding's and the output layer's), computed once and kept in the plan cache.
#include "sim/execution/step_planner.hpp"

#include "sim/execution/ep_overlap.hpp"
#include "sim/execution/recompute.hpp"

#include <optional>

namespace sim::execution::detail {

namespace {

void renumber(std::vector<TimedSegment>& segs, const std::vector<std::uint16_t>& ids) {
  for (auto& s : segs)
    s.label = ids[s.label];
}

}  // namespace

const LayerTimings& Planner::layer_timings(const workload::LayerShape& shape, bool mixed, int base_gpu) {
  base_gpu_ = base_gpu;
  std::optional<LayerKey> key;
  if (cache_ != nullptr) {
    key.emplace();
    key->model = &model_;
    key->hardware = &hw_;
    key->topology = &topo_;
    key->dtype = static_cast<int>(in_.dtype);
    key->fp8 = static_cast<int>(shape.fp8);
    key->recompute = static_cast<int>(in_.parallel.recompute);
    key->recompute_modules =
        in_.parallel.recompute == parallel::Recompute::Selective ? in_.parallel.recompute_modules : 0;
    key->attention_kernel = static_cast<int>(in_.attention_kernel);
    key->eager_kernels = shape.eager_kernels;
    key->repeated_kv = shape.repeated_kv;
    key->loss = shape.loss;
    key->sp_batch_first = shape.sp_batch_first;
    key->moe_imbalance = shape.moe_imbalance;
    key->flash_attention = shape.flash_attention;
    key->dropout = shape.dropout;
    key->attention_dropout = shape.attention_dropout;
    key->sequence_parallel = shape.sequence_parallel;
    key->micro_batch = shape.micro_batch;
    key->seq_len = shape.seq_len;
    key->tp = shape.tp;
    key->cp = shape.cp;
    key->ep = shape.ep;
    key->expert_tp = shape.expert_tp;
    key->moe_dispatcher = static_cast<int>(in_.parallel.moe_dispatcher);
    key->moe_dispatch_fp8 = shape.moe_dispatch_fp8;
    key->tp_comm_overlap = in_.parallel.tp_comm_overlap;
    key->tp_comm_overlap_method = static_cast<int>(in_.parallel.tp_comm_overlap_method);
    key->tp_group = placement_key(placement_.group(parallel::Dim::Tp, base_gpu));
    key->cp_group = placement_key(placement_.group(parallel::Dim::Cp, base_gpu));
    key->ep_group = placement_key(placement_.group(parallel::Dim::Ep, base_gpu));
    if (auto it = cache_->layers.find(*key); it != cache_->layers.end() && base_gpu != 0) {
      // Another pipeline rank's timings, after rank 0's: a copy whose label ids are this plan's.
      LayerTimings& t = own_timings_.emplace_back(it->second);
      std::vector<std::uint16_t> ids;
      ids.reserve(t.labels.size());
      for (const auto& l : t.labels)
        ids.push_back(label(l));
      for (auto* segs : {&t.l_fwd, &t.l_rec, &t.l_b, &t.l_w, &t.d_fwd, &t.d_rec, &t.d_b, &t.d_w, &t.e_fwd, &t.e_b,
                         &t.e_w, &t.o_fwd, &t.o_b, &t.o_w, &t.p_fwd, &t.p_b, &t.p_w})
        renumber(*segs, ids);
      base_gpu_ = 0;
      return t;
    } else if (it != cache_->layers.end()) {
      // The state a fresh build has after timing the layers: its labels and its memo of collectives.
      labels_ = it->second.labels;  // label() finds later labels by position (label_ids_ stays empty)
      collective_cache_ = it->second.collectives;
      return it->second;
    }
  }
  LayerTimings t;
  const auto modules = recompute_set(in_.parallel.recompute_modules);
  const auto lw = workload::layer_work(model_, shape, recompute_mode(in_.parallel.recompute), modules);
  // An MoE model's dense layers (first_k_dense, layer_freq) run the model's dense MLP instead of the experts.
  const workload::ModelSpec dense_model = model_.dense_variant();
  const auto dw =
      mixed ? workload::layer_work(dense_model, shape, recompute_mode(in_.parallel.recompute), modules) : lw;
  const auto emb = workload::embedding_work(model_, shape);
  const auto out = workload::output_work(model_, shape);
  t.l_fwd = timed(lw.forward);
  t.l_rec = timed(lw.recompute);
  t.l_b = timed(lw.backward_input, true);
  t.l_w = timed(lw.backward_weight);
  t.l_w_mlp = mlp_weight_grad_time(lw.backward_weight, [this](const workload::Kernel& k) { return kernel_time(k); });
  t.d_fwd = mixed ? timed(dw.forward) : t.l_fwd;
  t.d_rec = mixed ? timed(dw.recompute) : t.l_rec;
  t.d_b = mixed ? timed(dw.backward_input, true) : t.l_b;
  t.d_w = mixed ? timed(dw.backward_weight) : t.l_w;
  t.e_fwd = timed(emb.forward);
  t.e_b = timed(emb.backward_input, true);
  t.e_w = timed(emb.backward_weight);
  t.o_fwd = timed(out.forward);
  t.o_b = timed(out.backward_input, true);
  t.o_w = timed(out.backward_weight);
  if (model_.mtp_layers > 0) {
    const auto proj = workload::mtp_projection_work(model_, shape);
    t.p_fwd = timed(proj.forward);
    t.p_b = timed(proj.backward_input, true);
    t.p_w = timed(proj.backward_weight);
  }
  auto recompute_gemm_flops = [](const workload::LayerWork& w) {
    double f = 0;
    for (const auto& seg : w.recompute.segments)
      for (const auto& k : seg.kernels)
        if (k.kind == workload::KernelKind::Gemm && !k.attention_core) f += k.flops;
    return f;
  };
  t.layer_forward_model_flops = lw.forward.model_flops;
  t.layer_recompute_flops = lw.recompute.executed_flops;
  t.layer_recompute_gemm_flops = recompute_gemm_flops(lw);
  t.dense_forward_model_flops = dw.forward.model_flops;
  t.dense_recompute_flops = dw.recompute.executed_flops;
  t.dense_recompute_gemm_flops = recompute_gemm_flops(dw);
  t.params = workload::count_params(model_);
  base_gpu_ = 0;
  if (cache_ == nullptr) return own_timings_.emplace_back(std::move(t));
  // The label build() names next (whatever the plan), named here so that a plan from the cache finds it.
  label(kGatherLabel);
  label(kInterferenceLabel);
  label(kReduceLabel);
  t.labels = labels_;
  t.collectives = collective_cache_;
  return cache_->layers.emplace(std::move(*key), std::move(t)).first->second;
}

}  // namespace sim::execution::detail
