// sim/execution/step_plan.cpp: timing every kernel and collective of an iteration once, per virtual stage.
#include "sim/execution/step_plan.hpp"

#include "sim/collectives/collective.hpp"
#include "sim/hardware/compute_model.hpp"
#include "sim/workload/layer_costs.hpp"
#include "sim/workload/params.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace sim::execution {

using base::Bytes;
using base::Time;

Time OpWork::total() const {
  Time t;
  for (const auto& s : segments)
    t += s.duration;
  return t;
}

Time OpWork::total(SegKind kind) const {
  Time t;
  for (const auto& s : segments)
    if (s.kind == kind) t += s.duration;
  return t;
}

namespace {

/// Megatron-Core's gradient bucket: max(40M, 1M x dp) parameters (DistributedDataParallelConfig.bucket_size).
double bucket_params(int dp) {
  return std::max(40e6, 1e6 * dp);
}

/// Adam in mixed precision touches per local parameter: fp32 grad read (4), master weight, m, v read and written
/// (3 x 8), 16-bit weight written (2), plus the gradient-norm pass (4): 34 bytes (Megatron's fused Adam).
constexpr double kOptimizerBytesPerParam = 34.0;
/// Gradient bytes on the wire: bf16 training reduces fp32 main gradients (Megatron-LM forces
/// accumulate_allreduce_grads_in_fp32 for bf16, arguments.py); fp16 training reduces the 16-bit gradients (the flag's
/// default), as the 2021-22 Megatron-LM runs of Narayanan et al. and Korthikanti et al. did.
double grad_bytes(hardware::Dtype dtype, bool fp32_main_grads) {
  return dtype == hardware::Dtype::Fp16 || !fp32_main_grads ? 2.0 : 4.0;
}
constexpr double kParamBytes = 2.0;

class Planner {
 public:
  explicit Planner(const StepInputs& in)
      : in_(in), model_(*in.model), hw_(*in.hardware), topo_(*in.topology), placement_(in.layout, in.parallel.order) {}

  StepPlan build();

 private:
  std::uint16_t label(const std::string& s) {
    auto [it, inserted] = label_ids_.try_emplace(s, static_cast<std::uint16_t>(labels_.size()));
    if (inserted) labels_.push_back(s);
    return it->second;
  }

  Time kernel_time(const workload::Kernel& k) const {
    switch (k.kind) {
      case workload::KernelKind::Gemm:
        // FP8 training keeps the GEMMs outside the transformer blocks' linears (output layer, router, unfused
        // attention) in 16 bits.
        return hardware::gemm_time(hw_.gpu, k.fp8 ? in_.dtype : gemm_16bit_, hw_.efficiency, k.m, k.n, k.k, k.batch);
      case workload::KernelKind::Attention:
        return hardware::attention_time(hw_.gpu, in_.dtype, hw_.efficiency, k.flops, in_.attention_flash2);
      case workload::KernelKind::Memory:
        return hardware::memory_time(hw_.gpu, hw_.efficiency, k.bytes);
    }
    return Time::zero();
  }

  Time comm_time(workload::CommKind kind, double bytes) {
    const auto key = std::make_pair(static_cast<int>(kind), bytes);
    if (auto it = comm_cache_.find(key); it != comm_cache_.end()) return it->second;
    collectives::Op op = collectives::Op::AllReduce;
    parallel::Dim dim = parallel::Dim::Tp;
    switch (kind) {
      case workload::CommKind::TpAllReduce:
        op = collectives::Op::AllReduce;
        break;
      case workload::CommKind::TpAllGather:
        op = collectives::Op::AllGather;
        break;
      case workload::CommKind::TpReduceScatter:
        op = collectives::Op::ReduceScatter;
        break;
      case workload::CommKind::CpExchange:
        op = collectives::Op::AllGather;  // cp-1 ring steps of one chunk each: an all-gather of cp chunks
        dim = parallel::Dim::Cp;
        break;
      case workload::CommKind::EpAllToAll:
        op = collectives::Op::AllToAll;
        dim = parallel::Dim::Ep;
        break;
    }
    const auto group = placement_.group(dim, 0);
    // Collective formulas take the total payload n; ring all-gather of cp chunks moves (cp-1)/cp of cp*chunk.
    const double n = kind == workload::CommKind::CpExchange ? bytes * static_cast<double>(group.size()) : bytes;
    Time t = group.size() < 2 ? Time::zero() : collective(op, group, n);
    comm_cache_.emplace(key, t);
    return t;
  }

  /// A collective's uncontended time on a concrete group, memoised: an iteration repeats the same few shapes
  /// (every layer's TP collectives, equal-sized gradient buckets), and the planner builds thousands of plans.
  Time collective(collectives::Op op, const std::vector<int>& group, double bytes) {
    const Bytes n{static_cast<std::int64_t>(std::llround(bytes))};
    const auto key = CollectiveKey{static_cast<int>(op), group.front(), group.size() > 1 ? group[1] : -1,
                                   static_cast<int>(group.size()), n.n};
    if (auto it = collective_cache_.find(key); it != collective_cache_.end()) return it->second;
    const Time t = cost_model_.time(op, collectives::Algorithm::Auto, group, n);
    collective_cache_.emplace(key, t);
    return t;
  }

  /// Timed segments of one pass, adjacent compute merged (fewer events, same time).
  std::vector<TimedSegment> timed(const workload::PassWork& p) {
    std::vector<TimedSegment> out;
    for (const auto& s : p.segments) {
      if (s.is_comm) {
        const SegKind kind = s.comm == workload::CommKind::CpExchange   ? SegKind::Cp
                             : s.comm == workload::CommKind::EpAllToAll ? SegKind::Ep
                                                                        : SegKind::Tp;
        const Time t = comm_time(s.comm, s.comm_bytes);
        if (t > Time::zero()) out.push_back({t, kind, label(s.label)});
        continue;
      }
      Time t;
      for (const auto& k : s.kernels)
        t += kernel_time(k);
      if (!out.empty() && out.back().kind == SegKind::Compute) {
        out.back().duration += t;
        continue;
      }
      out.push_back({t, SegKind::Compute, label(s.label)});
    }
    return out;
  }

  static void append(OpWork& w, const std::vector<TimedSegment>& segs) {
    for (const auto& s : segs) {
      if (!w.segments.empty() && s.kind == SegKind::Compute && w.segments.back().kind == SegKind::Compute) {
        w.segments.back().duration += s.duration;
        continue;
      }
      w.segments.push_back(s);
    }
  }

  const StepInputs& in_;
  const hardware::Dtype gemm_16bit_ =
      in_.dtype == hardware::Dtype::Fp8 || in_.dtype == hardware::Dtype::Fp4 ? hardware::Dtype::Bf16 : in_.dtype;
  const workload::ModelSpec& model_;
  const hardware::HardwareProfile& hw_;
  const topology::Topology& topo_;
  collectives::CollectiveCostModel cost_model_{topo_};  // reused scratch space: no allocation per collective
  parallel::Placement placement_;
  std::vector<std::string> labels_;
  std::map<std::string, std::uint16_t> label_ids_;
  std::map<std::pair<int, double>, Time> comm_cache_;
  // (op, first member, second member, size, bytes): identifies a group of this plan's placement and a payload.
  using CollectiveKey = std::tuple<int, int, int, int, std::int64_t>;
  std::map<CollectiveKey, Time> collective_cache_;
};

workload::RecomputeMode recompute_mode(parallel::Recompute r) {
  switch (r) {
    case parallel::Recompute::None:
      return workload::RecomputeMode::None;
    case parallel::Recompute::Selective:
      return workload::RecomputeMode::Selective;
    case parallel::Recompute::Full:
      return workload::RecomputeMode::Full;
  }
  return workload::RecomputeMode::None;
}

StepPlan Planner::build() {
  const auto& L = in_.layout;
  StepPlan plan;
  plan.layout = L;
  plan.schedule = in_.parallel.schedule;
  plan.order = in_.parallel.order;
  plan.topology = in_.topology;
  plan.gpus = L.tp * L.pp * L.dp * L.cp;
  plan.peak = hw_.gpu.peak_for(in_.dtype).value_or(base::FlopRate{});

  workload::LayerShape shape;
  shape.micro_batch = L.micro_batch;
  shape.seq_len = in_.seq_len;
  shape.tp = L.tp;
  shape.cp = L.cp;
  shape.ep = L.ep;
  shape.sequence_parallel = in_.parallel.sequence_parallel && L.tp > 1;
  shape.flash_attention = in_.flash_attention;
  shape.dropout = in_.dropout;
  shape.fp8 = in_.dtype == hardware::Dtype::Fp8 || in_.dtype == hardware::Dtype::Fp4 ? in_.fp8_scaling
                                                                                     : workload::Fp8Scaling::None;
  const auto lw = workload::layer_work(model_, shape, recompute_mode(in_.parallel.recompute));
  // An MoE model's dense layers (first_k_dense, layer_freq) run the model's dense MLP instead of the experts.
  const workload::ModelSpec dense_model = model_.dense_variant();
  const bool mixed = model_.moe && model_.moe_layers() < model_.layers;
  const auto dw = mixed ? workload::layer_work(dense_model, shape, recompute_mode(in_.parallel.recompute)) : lw;
  const auto emb = workload::embedding_work(model_, shape);
  const auto out = workload::output_work(model_, shape);

  const auto l_fwd = timed(lw.forward);
  const auto l_rec = timed(lw.recompute);
  const auto l_b = timed(lw.backward_input);
  const auto l_w = timed(lw.backward_weight);
  const auto d_fwd = mixed ? timed(dw.forward) : l_fwd;
  const auto d_rec = mixed ? timed(dw.recompute) : l_rec;
  const auto d_b = mixed ? timed(dw.backward_input) : l_b;
  const auto d_w = mixed ? timed(dw.backward_weight) : l_w;
  const auto e_fwd = timed(emb.forward), e_b = timed(emb.backward_input), e_w = timed(emb.backward_weight);
  const auto o_fwd = timed(out.forward), o_b = timed(out.backward_input), o_w = timed(out.backward_weight);

  // Parameters per GPU per layer: matrices split over tp, experts over ep; norms replicated.
  const auto pc = workload::count_params(model_);
  const double expert_share = model_.moe ? 1.0 / L.ep : 1.0;
  const double layer_params =
      (pc.attention_per_layer + pc.mlp_per_layer * expert_share + pc.router_per_layer) / L.tp + pc.norms_per_layer;
  const double dense_layer_params = (pc.attention_per_layer + pc.dense_mlp_per_layer) / L.tp + pc.norms_per_layer;
  // Megatron-LM's --recompute-method block: only the first recompute_num_layers layers of each virtual stage are
  // recomputed; uniform recomputes every layer (in groups).
  const bool block = in_.parallel.recompute == parallel::Recompute::Full &&
                     in_.parallel.recompute_method == parallel::RecomputeMethod::Block;
  auto recomputed = [&](int l) { return !block || l < in_.parallel.recompute_num_layers; };
  long long recomputed_layers = 0;
  const double embed_params = pc.embedding / L.tp + pc.position;
  // With tied embeddings and pp > 1 the last stage keeps its own copy of the embedding for the output layer.
  const double output_params =
      (model_.tied_embeddings && L.pp * L.vpp > 1 ? pc.embedding : pc.output) / L.tp + pc.final_norm;

  const auto dp_group = placement_.group(parallel::Dim::Dp, 0);
  const bool zero = in_.parallel.zero_stage >= 1 || in_.parallel.distributed_optimizer;
  plan.dp_reduce_scatter = zero;
  auto dp_time = [&](double grad_bytes) {
    if (dp_group.size() < 2) return Time::zero();
    return collective(zero ? collectives::Op::ReduceScatter : collectives::Op::AllReduce, dp_group, grad_bytes);
  };
  const double bucket_limit = bucket_params(L.dp);
  const bool zb = in_.parallel.schedule == parallel::Schedule::ZeroBubbleH1;

  plan.dp_every_micro_batch = in_.parallel.zero_stage >= 2;
  // ZeRO-3 (Rajbhandari et al. 2020, Sec. 5.3; 3 x the parameters on the wire per iteration instead of 2, Sec. 7.2.2)
  // and FSDP FULL_SHARD (Zhao et al., VLDB 2023, Sec. 3.3-3.4): a unit's 16-bit weights are all-gathered over the
  // data-parallel group before its forward and again before its backward, in every micro-batch, and the next unit's
  // gather is prefetched while the current one computes. Exposed on the compute stream: the first unit's gather of
  // each pass, then what of each next gather the previous unit's work does not cover.
  const bool zero3 = in_.parallel.zero_stage >= 3 && dp_group.size() > 1;
  const std::uint16_t gather_label = label("zero-3 param all-gather");
  auto gather_time = [&](double params) {
    return zero3 ? collective(collectives::Op::AllGather, dp_group, params * kParamBytes) : Time::zero();
  };
  auto duration = [](const std::vector<TimedSegment>& segs) {
    Time t;
    for (const auto& seg : segs)
      t += seg.duration;
    return t;
  };
  /// Appends the exposed part of a unit's gather (given how long the previous unit of the pass ran; none: the first).
  /// In the backward, the gather of the next unit and the reduce-scatter of this unit's gradients share the same
  /// data-parallel links (3 x the parameters per iteration on the wire: Rajbhandari et al. 2020, Sec. 7.2.2), so both
  /// must fit under the unit's compute to be hidden.
  auto exposed_gather = [&](OpWork& w, double params, std::optional<Time> previous, bool with_grads = false) {
    if (!zero3) return;
    const Time grads = with_grads ? dp_time(params * grad_bytes(in_.dtype, in_.fp32_main_grads)) : Time::zero();
    const Time g = gather_time(params) + grads;
    const Time exposed = previous ? std::max(Time::zero(), g - *previous) : g;
    if (exposed > Time::zero()) w.segments.push_back({exposed, SegKind::Dp, gather_label});
  };

  const int stages = L.pp * L.vpp;
  plan.stages.resize(static_cast<std::size_t>(stages));
  int first_layer = 0;
  for (int v = 0; v < stages; ++v) {
    StageWork& st = plan.stages[static_cast<std::size_t>(v)];
    st.first_layer = first_layer;
    st.layers = L.layers_per_stage[static_cast<std::size_t>(v)];
    first_layer += st.layers;
    const bool first = v == 0, last = v == stages - 1;
    // Room for every unit's segments (and a gather each) up front: growing these vectors was most of the
    // planner's allocations (it builds a plan for every feasible point).
    const std::size_t units = static_cast<std::size_t>(st.layers) + 2;
    const std::size_t most = std::max({l_fwd.size(), e_fwd.size(), o_fwd.size()}) + 1;
    const std::size_t most_b = std::max({l_rec.size() + l_b.size(), e_b.size(), o_b.size()}) + 1;
    const std::size_t most_w = std::max({l_w.size(), e_w.size(), o_w.size()});
    st.forward.segments.reserve(units * most);
    st.backward.segments.reserve(units * (most_b + most_w));
    st.backward_input.segments.reserve(units * most_b);
    st.backward_weight.segments.reserve(units * most_w);
    std::optional<Time> previous;
    auto forward_unit = [&](const std::vector<TimedSegment>& segs, double params) {
      exposed_gather(st.forward, params, previous);
      append(st.forward, segs);
      previous = duration(segs);
    };
    if (first) forward_unit(e_fwd, embed_params);
    for (int l = 0; l < st.layers; ++l) {
      const bool moe = !mixed || model_.is_moe_layer(st.first_layer + l);
      forward_unit(moe ? l_fwd : d_fwd, moe ? layer_params : dense_layer_params);
    }
    if (last) forward_unit(o_fwd, output_params);

    // Backward in reverse layer order; gradient buckets close at layer boundaries.
    double pending = 0;
    OpWork& grad_op = zb ? st.backward_weight : st.backward;
    auto close_bucket = [&](bool force) {
      if (pending <= 0 || (!force && pending < bucket_limit)) return;
      const double bytes = pending * grad_bytes(in_.dtype, in_.fp32_main_grads);
      st.buckets.push_back(
          {Bytes{static_cast<std::int64_t>(bytes)}, static_cast<int>(grad_op.segments.size()) - 1, dp_time(bytes)});
      pending = 0;
    };
    std::optional<Time> previous_b, previous_bi;
    auto layer_backward = [&](const std::vector<TimedSegment>& rec, const std::vector<TimedSegment>& b,
                              const std::vector<TimedSegment>& w, double params) {
      // Weights are needed for the recomputed forward and the input gradients (zero-bubble B), not for W.
      exposed_gather(st.backward, params, previous_b, /*with_grads=*/true);
      exposed_gather(st.backward_input, params, previous_bi);
      append(st.backward, rec);
      append(st.backward, b);
      append(st.backward, w);
      append(st.backward_input, rec);
      append(st.backward_input, b);
      append(st.backward_weight, w);
      previous_b = duration(rec) + duration(b) + duration(w);
      previous_bi = duration(rec) + duration(b);
      st.params_local += params;
      pending += params;
      close_bucket(false);
    };
    if (last) layer_backward({}, o_b, o_w, output_params);
    static const std::vector<TimedSegment> kNone;
    for (int l = st.layers - 1; l >= 0; --l) {
      const bool moe = !mixed || model_.is_moe_layer(st.first_layer + l);
      const bool rec = recomputed(l);
      recomputed_layers += rec ? 1 : 0;
      layer_backward(rec ? (moe ? l_rec : d_rec) : kNone, moe ? l_b : d_b, moe ? l_w : d_w,
                     moe ? layer_params : dense_layer_params);
    }
    if (first) layer_backward({}, e_b, e_w, embed_params);
    close_bucket(true);

    // Optimizer on this GPU's shard; with ZeRO 1-2 the updated 16-bit weights are all-gathered afterwards (ZeRO-3
    // keeps them sharded: the next iteration's forward gathers them).
    const double shard = zero ? st.params_local / L.dp : st.params_local;
    st.optimizer = hardware::memory_time(hw_.gpu, hw_.efficiency, shard * kOptimizerBytesPerParam);
    const bool gather_after = zero && !zero3 && dp_group.size() > 1;
    if (gather_after) st.param_gather = collective(collectives::Op::AllGather, dp_group, st.params_local * kParamBytes);
    st.param_gather_bytes =
        gather_after ? Bytes{static_cast<std::int64_t>(std::llround(st.params_local * kParamBytes))} : Bytes{};
  }

  // Pipeline transfers: the boundary activation, split over tensor-parallel ranks (scatter-gather optimisation,
  // Narayanan et al. SC21 Sec. 4.1; with sequence parallelism it is sequence-split already).
  if (L.pp > 1) {
    const int a = placement_.gpu(0, 0, 0, 0);
    const int b = placement_.gpu(0, 0, 0, 1);
    const double bytes = static_cast<double>(L.micro_batch) * in_.seq_len / L.cp * model_.hidden * 2.0 / L.tp;
    const std::array<topology::GpuId, 2> pair{a, b};
    plan.p2p = cost_model_.time(collectives::Op::SendRecv, collectives::Algorithm::Auto, pair,
                                Bytes{static_cast<std::int64_t>(bytes)});
    plan.p2p_crosses_network = topo_.node_of(a) != topo_.node_of(b);
  }

  // FLOP counts of the iteration (whole job).
  const double sequences = static_cast<double>(L.micro_batch) * L.micro_batches * L.dp;
  plan.tokens = sequences * in_.seq_len;
  plan.data_tokens_per_s = in_.data_tokens_per_s;
  plan.model_flops = workload::model_flops_per_iteration(model_, in_.seq_len, sequences);
  // Hardware FLOPs add the recomputed forward work in the same convention (Korthikanti et al. 2022, Sec. 6.3).
  double recompute_per_layer = 0;
  if (in_.parallel.recompute == parallel::Recompute::Full) {
    recompute_per_layer = lw.forward.model_flops * L.tp * L.cp;
  } else if (in_.parallel.recompute == parallel::Recompute::Selective) {
    const double s = in_.seq_len;
    recompute_per_layer = 4.0 * L.micro_batch * s * s * model_.hidden;  // attention scores and context, forward
  }
  // recomputed_layers counts each virtual stage's recomputed layers once (all of them unless the method is block).
  plan.hardware_flops =
      plan.model_flops + recompute_per_layer * static_cast<double>(recomputed_layers) * L.micro_batches * L.dp;
  plan.labels = labels_;
  return plan;
}

}  // namespace

StepPlan build_step_plan(const StepInputs& in) {
  return Planner(in).build();
}

}  // namespace sim::execution
