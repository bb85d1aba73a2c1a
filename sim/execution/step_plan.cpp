// sim/execution/step_plan.cpp: timing every kernel and collective of an iteration once, per virtual stage.
#include "sim/execution/step_plan.hpp"

#include "sim/execution/data_parallel_bytes.hpp"
#include "sim/execution/step_plan_cache.hpp"
#include "sim/execution/step_plan_cache_impl.hpp"
#include "sim/execution/layer_timing.hpp"
#include "sim/execution/recompute.hpp"
#include "sim/execution/tp_overlap.hpp"
#include "sim/execution/cp_overlap.hpp"
#include "sim/execution/ep_overlap.hpp"
#include "sim/execution/overlap_interference.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/hardware/compute_model.hpp"
#include "sim/workload/layer_costs.hpp"
#include "sim/workload/params.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace sim::execution {

using base::Bytes;
using base::Time;

namespace {

using detail::CollectiveKey;
using detail::CollectiveMemo;
using detail::LayerKey;
using detail::LayerTimings;

class Planner {
 public:
  Planner(const StepInputs& in, StepPlanCache::Impl* cache)
      : in_(in),
        model_(*in.model),
        hw_(*in.hardware),
        topo_(*in.topology),
        placement_(in.layout, in.parallel.order),
        cache_(cache) {}

  StepPlan build();

 private:
  std::uint16_t label(std::string_view s) {
    if (label_ids_.size() != labels_.size()) {  // labels restored from the cache: an id is the label's position
      const auto found = std::find(labels_.begin(), labels_.end(), s);
      if (found != labels_.end()) return static_cast<std::uint16_t>(found - labels_.begin());
      labels_.emplace_back(s);
      return static_cast<std::uint16_t>(labels_.size() - 1);
    }
    if (auto it = label_ids_.find(s); it != label_ids_.end()) return it->second;
    const auto id = static_cast<std::uint16_t>(labels_.size());
    label_ids_.emplace(std::string(s), id);
    labels_.emplace_back(s);
    return id;
  }

  Time kernel_time(const workload::Kernel& k) const { return execution::kernel_time(in_, k); }

  Time comm_time(workload::CommKind kind, double bytes) {
    const auto key = std::make_pair(static_cast<int>(kind), bytes);
    if (auto it = comm_cache_.find(key); it != comm_cache_.end()) return it->second;
    const auto [op, dim] = layer_collective(kind);
    const auto group = placement_.group(dim, 0);
    const double n = layer_collective_payload(in_, kind, group, bytes);
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
    Time t;
    if (cache_ == nullptr) {
      t = cost_model_.time(op, collectives::Algorithm::Auto, group, n);
    } else {
      auto& by_members = cache_->collectives[std::make_tuple(&topo_, static_cast<int>(op), n.n)];
      if (auto it = by_members.find(group); it != by_members.end()) {
        t = it->second;
      } else {
        t = cost_model_.time(op, collectives::Algorithm::Auto, group, n);
        by_members.emplace(group, t);
      }
    }
    collective_cache_.emplace(key, t);
    return t;
  }

  /// Timed segments of one pass, adjacent compute merged (fewer events, same time).
  std::vector<TimedSegment> timed(const workload::PassWork& p, bool backward = false) {
    std::vector<TimedSegment> out;
    for (std::size_t i = 0; i < p.segments.size(); ++i) {
      const auto& s = p.segments[i];
      if (s.is_comm) {
        const SegKind kind = s.comm == workload::CommKind::CpExchange   ? SegKind::Cp
                             : s.comm == workload::CommKind::EpAllToAll ? SegKind::Ep
                                                                        : SegKind::Tp;
        Time t = comm_time(s.comm, s.comm_bytes);
        const auto kt = [this](const workload::Kernel& k) { return kernel_time(k); };
        if (in_.parallel.tp_comm_overlap)
          if (const auto exposed = tp_overlap_exposed(p, i, backward, t, in_.layout.tp, hw_.gpu.sm_count, kt,
                                                      in_.parallel.tp_comm_overlap_method))
            t = *exposed;
        if (kind == SegKind::Cp && in_.parallel.cp_comm_type == parallel::CpCommType::P2p)
          t = cp_ring_exposed(p, i, t, in_.layout.cp, kt);  // cp_overlap.hpp: Transformer Engine's ring
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

  /// Appends segments, merging adjacent compute, but never into a segment before `sealed` (the index past the one
  /// a gradient bucket closed on: its end is when the bucket is ready, so it must not grow).
  static void append(OpWork& w, const std::vector<TimedSegment>& segs, std::size_t sealed = 0) {
    for (const auto& s : segs) {
      if (w.segments.size() > sealed && s.kind == SegKind::Compute && w.segments.back().kind == SegKind::Compute) {
        w.segments.back().duration += s.duration;
        continue;
      }
      w.segments.push_back(s);
    }
  }

  const StepInputs& in_;
  const workload::ModelSpec& model_;
  const hardware::HardwareProfile& hw_;
  const topology::Topology& topo_;
  collectives::CollectiveCostModel cost_model_{topo_};  // reused scratch space: no allocation per collective
  parallel::Placement placement_;
  std::vector<std::string> labels_;
  std::map<std::string, std::uint16_t, std::less<>> label_ids_;
  std::map<std::pair<int, double>, Time> comm_cache_;
  CollectiveMemo collective_cache_;
  StepPlanCache::Impl* cache_ = nullptr;  // null: nothing kept across plans
  /// The layer-level timings of this plan, from cache_ or computed (and then kept there).
  const LayerTimings& layer_timings(const workload::LayerShape& shape, bool mixed);
  LayerTimings own_timings_;  // without a cache
  double model_flops(double sequences) {
    if (cache_ == nullptr) return workload::model_flops_per_iteration(model_, in_.seq_len, sequences);
    const auto key = std::make_tuple(&model_, in_.seq_len, sequences);
    if (auto it = cache_->model_flops.find(key); it != cache_->model_flops.end()) return it->second;
    const double flops = workload::model_flops_per_iteration(model_, in_.seq_len, sequences);
    cache_->model_flops.emplace(key, flops);
    return flops;
  }
  static constexpr const char* kGatherLabel = "zero-3 param all-gather";
  static constexpr const char* kReduceLabel = "zero-3 grad reduce-scatter";
  static constexpr const char* kInterferenceLabel = "compute beside a collective";
};

StepPlan Planner::build() {
  const auto& L = in_.layout;
  StepPlan plan;
  plan.layout = L;
  plan.schedule = in_.parallel.schedule;
  plan.order = in_.parallel.order;
  plan.topology = in_.topology;
  plan.gpus = L.tp * L.pp * L.dp * L.cp;
  plan.peak = hw_.gpu.peak_for(in_.dtype).value_or(base::FlopRate{});

  const workload::LayerShape shape = layer_shape(in_);
  const bool mixed = model_.moe && model_.moe_layers() < model_.layers;
  const LayerTimings& lt = layer_timings(shape, mixed);
  const auto& l_fwd = lt.l_fwd;
  const auto& l_rec = lt.l_rec;
  const auto& l_b = lt.l_b;
  const auto& l_w = lt.l_w;
  const auto& d_fwd = lt.d_fwd;
  const auto& d_rec = lt.d_rec;
  const auto& d_b = lt.d_b;
  const auto& d_w = lt.d_w;
  const auto &e_fwd = lt.e_fwd, &e_b = lt.e_b, &e_w = lt.e_w;
  const auto &o_fwd = lt.o_fwd, &o_b = lt.o_b, &o_w = lt.o_w;

  // Parameters per GPU per layer: matrices over tp, routed experts over ep and expert_tp, shared experts over tp.
  const auto& pc = lt.params;
  const double etp = L.expert_tp > 0 ? L.expert_tp : L.tp;
  const double layer_params =
      model_.moe ? (pc.attention_per_layer + pc.shared_mlp_per_layer + pc.router_per_layer) / L.tp +
                       (pc.mlp_per_layer - pc.shared_mlp_per_layer) / L.ep / etp + pc.norms_per_layer
                 : (pc.attention_per_layer + pc.mlp_per_layer + pc.router_per_layer) / L.tp + pc.norms_per_layer;
  const double dense_layer_params = (pc.attention_per_layer + pc.dense_mlp_per_layer) / L.tp + pc.norms_per_layer;
  // Megatron-LM's --recompute-method block: only the first recompute_num_layers layers of each virtual stage are
  // recomputed; uniform recomputes every layer (in groups).
  const bool block = in_.parallel.recompute == parallel::Recompute::Full &&
                     in_.parallel.recompute_method == parallel::RecomputeMethod::Block;
  auto recomputed = [&](int l) { return !block || l < in_.parallel.recompute_num_layers; };
  long long recomputed_layers = 0;
  const double embed_params = pc.embedding / L.tp + pc.position;
  const double mtp_params = 2.0 * model_.hidden * model_.hidden / L.tp + 2.0 * model_.hidden;  // projection, norms
  // With tied embeddings on another rank than the embedding (pp > 1; not DualPipeV's V, which puts both on rank 0),
  // the last stage keeps its own copy of the embedding for the output layer.
  const double output_params =
      (model_.tied_embeddings && L.rank_of(L.stages() - 1) != 0 ? pc.embedding : pc.output) / L.tp + pc.final_norm;

  // Gradients are reduced, and the optimizer states (ZeRO / distributed optimizer) and FSDP parameters sharded, over
  // the data-parallel group with context parallelism: CP ranks hold the same weights (Megatron-Core's
  // get_data_parallel_group(with_context_parallel=True); TorchTitan's dp_shard_cp mesh). Memory divides alike.
  // Each pipeline rank reduces over its own group (that of its first GPU): where NVLink domains do not align with the
  // pipeline ranks (72-GPU NVL72 domains under 128 GPUs) one rank's group stays in a domain and another's crosses the
  // network, as the full replay's flows show.
  // A rank whose group sits in the topology as rank 0's does (each member in the same NVLink domain, leaf and local
  // rank relative to the first member, no link down) takes rank 0's group itself: its stages are then shared and its
  // collectives found in the memo, as before groups were per rank.
  const std::vector<int> dp_group0 = placement_.group(parallel::Dim::DpCp, 0);
  auto dp_group_of = [&](int pipeline_rank) {
    if (pipeline_rank == 0) return dp_group0;
    auto g = placement_.group(parallel::Dim::DpCp, placement_.gpu(0, 0, 0, pipeline_rank));
    if (topo_.links_down() > 0 || g.size() != dp_group0.size()) return g;
    const auto placed = [this](const std::vector<int>& group, std::size_t i) {
      return std::array<int, 3>{topo_.nvlink_domain_of(group[i]) - topo_.nvlink_domain_of(group[0]),
                                topo_.leaf_of(group[i]) - topo_.leaf_of(group[0]), topo_.local_rank(group[i])};
    };
    for (std::size_t i = 0; i < g.size(); ++i)
      if (placed(g, i) != placed(dp_group0, i)) return g;
    return dp_group0;
  };
  std::vector<int> dp_group = dp_group0;
  std::vector<std::vector<int>> dp_groups(static_cast<std::size_t>(L.pp));
  const bool zero = in_.parallel.zero_stage >= 1 || in_.parallel.distributed_optimizer;
  plan.dp_reduce_scatter = zero;
  auto dp_time = [&](double grad_bytes) {
    if (dp_group.size() < 2) return Time::zero();
    return collective(zero ? collectives::Op::ReduceScatter : collectives::Op::AllReduce, dp_group, grad_bytes);
  };
  const double bucket_limit = bucket_params(L.dp);
  const bool zb = in_.parallel.schedule == parallel::Schedule::ZeroBubbleH1;

  plan.dp_every_micro_batch = in_.parallel.zero_stage >= 2;
  // DualPipeV overlaps its pairs' all-to-alls by design (DeepSeek-V3 report Sec. 3.2.1), as the key asks Megatron-Core
  // to; both need the forward's activations at hand (no full recomputation).
  plan.ep_comm_overlap =
      in_.parallel.ep_comm_overlap || (in_.parallel.schedule == parallel::Schedule::DualPipeV && L.ep > 1 &&
                                       in_.parallel.recompute != parallel::Recompute::Full);
  // ZeRO-3 (Rajbhandari et al. 2020, Sec. 5.3; 3 x the parameters on the wire per iteration instead of 2, Sec. 7.2.2)
  // and FSDP FULL_SHARD (Zhao et al., VLDB 2023, Sec. 3.3-3.4): a unit's 16-bit weights are all-gathered over the
  // data-parallel group before its forward and again before its backward, in every micro-batch, and the next unit's
  // gather is prefetched while the current one computes. Exposed on the compute stream: the first unit's gather of
  // each pass, then what of each next gather the previous unit's work does not cover.
  const bool zero3 = in_.parallel.zero_stage >= 3 && dp_group.size() > 1;
  const std::uint16_t gather_label = label(kGatherLabel);
  const std::uint16_t interference_label = label(kInterferenceLabel);
  const std::uint16_t reduce_label = label(kReduceLabel);
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
  /// Backward prefetch "post" / "none" (FSDP's BACKWARD_POST, torch/distributed/fsdp/api.py): a backward gather waits
  /// for the previous unit's compute, exposed, at half rate while that unit's reduce-scatter shares its links.
  const bool late_backward_gather = in_.parallel.backward_prefetch != parallel::BackwardPrefetch::Pre;
  auto exposed_gather = [&](OpWork& w, double params, std::optional<Time> previous, bool with_grads = false,
                            bool backward = false) {
    if (!zero3) return;
    const Time grads = with_grads ? dp_time(params * grad_bytes(in_.dtype, in_.fp32_main_grads)) : Time::zero();
    const Time gather = gather_time(params), g = gather + grads;
    const Time exposed = backward && late_backward_gather && previous ? gather + std::min(gather, grads)
                         : previous                                   ? std::max(Time::zero(), g - *previous)
                                                                      : g;
    if (exposed > Time::zero()) w.segments.push_back({exposed, SegKind::Dp, gather_label});
    // The hidden part ran beside the previous unit's compute, on SMs that compute then lacked.
    const Time slowed = overlap_interference(g - exposed, hw_.gpu.sm_count);
    if (slowed > Time::zero()) w.segments.push_back({slowed, SegKind::Compute, interference_label});
  };

  const int stages = L.pp * L.vpp;
  plan.stages.resize(static_cast<std::size_t>(stages));
  plan.first_layers.resize(static_cast<std::size_t>(stages));
  // Without a dense/MoE mix, a stage's work depends only on whether it is the first, whether it is the last and how
  // many layers it has (the layers are alike, buckets and recomputation count from the stage's own start): a stage
  // equal in those to one already built shares its StageWork (computed and stored once: the planner builds a plan
  // for every feasible point, and copies of alike stages were a tenth of the full search, in the allocator).
  struct Built {
    bool first = false;
    bool last = false;
    std::vector<int> dp_group;
    int layers = 0;
    int index = 0;
    long long recomputed = 0;
  };
  std::vector<Built> built;
  int first_layer = 0;
  for (int v = 0; v < stages; ++v) {
    const int layers = L.layers_per_stage[static_cast<std::size_t>(v)];
    const bool first = v == 0, last = v == stages - 1;
    plan.first_layers[static_cast<std::size_t>(v)] = first_layer;
    auto& rank_group = dp_groups[static_cast<std::size_t>(L.rank_of(v))];
    if (rank_group.empty()) rank_group = dp_group_of(L.rank_of(v));
    dp_group = rank_group;
    if (!mixed) {
      const auto same = std::find_if(built.begin(), built.end(), [&](const Built& b) {
        return b.first == first && b.last == last && b.layers == layers && b.dp_group == dp_group;
      });
      if (same != built.end()) {
        plan.stages[static_cast<std::size_t>(v)] = plan.stages[static_cast<std::size_t>(same->index)];
        first_layer += layers;
        recomputed_layers += same->recomputed;
        continue;
      }
    }
    auto owned = std::make_shared<StageWork>();
    StageWork& st = *owned;
    EpOverlapBuilder ep;  // parallel.ep_comm_overlap: the stage's units, for its paired passes
    plan.stages[static_cast<std::size_t>(v)] = std::move(owned);
    const long long recomputed_before = recomputed_layers;
    const int stage_first_layer = first_layer;
    st.layers = layers;
    first_layer += st.layers;
    // Room for every unit's segments (and a gather each) up front: growing them was most of the planner's allocations.
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
      if (plan.ep_comm_overlap) ep.forward(segs);
      previous = duration(segs);
    };
    if (first) forward_unit(e_fwd, embed_params);
    for (int l = 0; l < st.layers; ++l) {
      const bool moe = !mixed || model_.is_moe_layer(stage_first_layer + l);
      forward_unit(moe ? l_fwd : d_fwd, moe ? layer_params : dense_layer_params);
    }
    if (last) forward_unit(o_fwd, output_params);
    // Multi-token prediction (DeepSeek-V3 Sec. 2.2; Megatron-Core puts the modules with the loss, on the last stage):
    // each module's projection, its transformer layer and the shared output head and loss, after the main loss.
    for (int k = 0; last && k < model_.mtp_layers; ++k) {
      forward_unit(lt.p_fwd, mtp_params);
      forward_unit(l_fwd, layer_params);
      forward_unit(o_fwd, 0);
    }

    // Backward in reverse layer order; gradient buckets close at layer boundaries.
    double pending = 0;
    OpWork& grad_op = zb ? st.backward_weight : st.backward;
    // A bucket is ready when the segment it closed on ends: later compute must not merge into that segment.
    std::size_t sealed = 0;
    auto close_bucket = [&](bool force) {
      if (pending <= 0 || (!force && pending < bucket_limit)) return;
      const double bytes = pending * grad_bytes(in_.dtype, in_.fp32_main_grads);
      st.buckets.push_back({Bytes{static_cast<std::int64_t>(bytes)}, static_cast<int>(grad_op.segments.size()) - 1,
                            dp_time(bytes), Time{}});
      sealed = grad_op.segments.size();
      pending = 0;
    };
    auto append_to = [&](OpWork& w, const std::vector<TimedSegment>& segs) {
      append(w, segs, &w == &grad_op ? sealed : 0);
    };
    std::optional<Time> previous_b, previous_bi;
    // Split backwards (zero-bubble B and W) with ZeRO-3: B gathers the weights, W makes the gradients, so a unit's
    // reduce-scatter runs beside the next unit's W (the previous unit's, in the pass's order, is `pending_reduce`);
    // what it does not cover is exposed. The pass's last unit leaves its reduce-scatter to a bucket, as without the
    // split.
    Time pending_reduce;
    auto exposed_reduce = [&](OpWork& w, Time beside) {
      const Time exposed = std::max(Time::zero(), pending_reduce - beside);
      if (exposed > Time::zero()) w.segments.push_back({exposed, SegKind::Dp, reduce_label});
      const Time slowed = overlap_interference(pending_reduce - exposed, hw_.gpu.sm_count);
      if (slowed > Time::zero()) w.segments.push_back({slowed, SegKind::Compute, interference_label});
    };
    auto layer_backward = [&](const std::vector<TimedSegment>& rec, const std::vector<TimedSegment>& b,
                              const std::vector<TimedSegment>& w, double params, Time mlp_dw = Time::zero()) {
      if (plan.ep_comm_overlap) ep.backward(rec, b, w, mlp_dw);
      // Weights are needed for the recomputed forward and the input gradients (zero-bubble B), not for W.
      exposed_gather(st.backward, params, previous_b, /*with_grads=*/true, /*backward=*/true);
      exposed_gather(st.backward_input, params, previous_bi, /*with_grads=*/false, /*backward=*/true);
      append_to(st.backward, rec);
      append_to(st.backward, b);
      append_to(st.backward, w);
      append_to(st.backward_input, rec);
      append_to(st.backward_input, b);
      append_to(st.backward_weight, w);
      if (zero3) {
        exposed_reduce(st.backward_weight, duration(w));
        pending_reduce = dp_time(params * grad_bytes(in_.dtype, in_.fp32_main_grads));
      }
      previous_b = duration(rec) + duration(b) + duration(w);
      previous_bi = duration(rec) + duration(b);
      st.params_local += params;
      if (zero3) {
        // ZeRO-3 / FSDP: each unit's gradients are reduce-scattered on the links its next gather uses, counted with
        // that gather above; only the pass's last unit (the first layers) leaves its reduce-scatter to a bucket.
        pending = params;
        return;
      }
      pending += params;
      close_bucket(false);
    };
    static const std::vector<TimedSegment> kNone;
    for (int k = 0; last && k < model_.mtp_layers; ++k) {
      layer_backward({}, o_b, o_w, 0);
      layer_backward(recomputed(st.layers) ? l_rec : kNone, l_b, l_w, layer_params, lt.l_w_mlp);
      layer_backward({}, lt.p_b, lt.p_w, mtp_params);
    }
    if (last) layer_backward({}, o_b, o_w, output_params);
    for (int l = st.layers - 1; l >= 0; --l) {
      const bool moe = !mixed || model_.is_moe_layer(stage_first_layer + l);
      const bool rec = recomputed(l);
      recomputed_layers += rec ? 1 : 0;
      layer_backward(rec ? (moe ? l_rec : d_rec) : kNone, moe ? l_b : d_b, moe ? l_w : d_w,
                     moe ? layer_params : dense_layer_params, moe ? lt.l_w_mlp : Time::zero());
    }
    if (first) layer_backward({}, e_b, e_w, embed_params);
    close_bucket(true);
    // Ready times from the pass's start: each bucket's segment ends where the bucket closed (sealed above).
    Time ready;
    for (std::size_t i = 0; auto& bucket : st.buckets) {
      for (; static_cast<int>(i) <= bucket.ready_after; ++i)
        ready += grad_op.segments[i].duration;
      bucket.ready_at = ready;
    }
    if (!zero3 && !st.buckets.empty()) {
      // The buckets are reduced beside the rest of their gradient pass, whose compute runs on the SMs the collectives
      // leave (the buckets back to back from the first one's ready time, the pass's rest the most they overlap):
      // in every micro-batch with ZeRO-2, in the last one with ZeRO 0-1, whose slowdown is spread over the
      // micro-batches' passes (the step's total is the same; a pass's segments are alike in every micro-batch).
      // ZeRO-3's reduce-scatters are counted with its gathers.
      const Time pass = grad_op.total();
      Time dp;
      for (const auto& bucket : st.buckets)
        dp += bucket.duration;
      const Time beside = std::min(dp, pass - st.buckets.front().ready_at);
      const int passes = plan.dp_every_micro_batch ? 1 : std::max(1, L.micro_batches);
      const Time slowed{overlap_interference(beside, hw_.gpu.sm_count).ns / passes};
      if (slowed > Time::zero()) grad_op.segments.push_back({slowed, SegKind::Compute, interference_label});
      if (slowed > Time::zero() && zb) st.backward.segments.push_back({slowed, SegKind::Compute, interference_label});
      // DualPipeV's split backwards reduce their buckets after their W ops: those carry the slowdown too.
      if (slowed > Time::zero() && in_.parallel.schedule == parallel::Schedule::DualPipeV)
        st.backward_weight.segments.push_back({slowed, SegKind::Compute, interference_label});
    }
    if (plan.ep_comm_overlap)
      ep.finish(st, hw_.gpu.sm_count,
                in_.parallel.moe_dispatcher == parallel::MoeDispatcher::DeepEp ? kDeepEpSms : kNcclCollectiveSms,
                interference_label);

    // Optimizer on this GPU's shard; ZeRO 1-2 all-gather the updated 16-bit weights after it (ZeRO-3: next forward).
    const double shard = zero ? st.params_local / (static_cast<double>(L.dp) * L.cp) : st.params_local;
    st.optimizer = hardware::memory_time(hw_.gpu, hw_.efficiency, shard * kOptimizerBytesPerParam);
    const bool gather_after = zero && !zero3 && dp_group.size() > 1;
    if (gather_after) st.param_gather = collective(collectives::Op::AllGather, dp_group, st.params_local * kParamBytes);
    if (gather_after && in_.parallel.overlap_param_gather && !st.buckets.empty()) {
      // --overlap-param-gather (Megatron-Core DistributedDataParallel: the all-gathers are issued bucket by bucket, a
      // forward pre-hook waiting for its bucket and issuing the next): only the first bucket (the stage's first layers,
      // the last bucket its backward filled) waits alone; the rest hides under one micro-batch's forward.
      double all = 0;
      for (const auto& b : st.buckets)
        all += static_cast<double>(b.bytes.n);
      const double first_share = all > 0 ? static_cast<double>(st.buckets.back().bytes.n) / all : 1.0;
      const Time first_bucket{
          static_cast<std::int64_t>(std::llround(static_cast<double>(st.param_gather.ns) * first_share))};
      const Time forward = st.forward.total();
      st.param_gather = std::max(first_bucket, st.param_gather > forward ? st.param_gather - forward : Time::zero());
    }
    st.param_gather_bytes =
        gather_after ? Bytes{static_cast<std::int64_t>(std::llround(st.params_local * kParamBytes))} : Bytes{};
    built.push_back({first, last, dp_group, layers, v, recomputed_layers - recomputed_before});
  }
  if (L.v_shape) {  // built in model order; kept as StepPlan::stage() reads them, chunk * pp + rank
    const auto model_order = plan.stages;
    for (int c = 0; c < L.vpp; ++c)
      for (int r = 0; r < L.pp; ++r)
        plan.stages[static_cast<std::size_t>(c * L.pp + r)] = model_order[static_cast<std::size_t>(L.stage(c, r))];
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
  plan.model_flops = model_flops(sequences);
  // Hardware FLOPs add the recomputed forward work in the same convention (Korthikanti et al. 2022, Sec. 6.3).
  double recompute_per_layer = 0;
  if (in_.parallel.recompute == parallel::Recompute::Full) {
    recompute_per_layer = lt.layer_forward_model_flops * L.tp * L.cp;
  } else if (in_.parallel.recompute == parallel::Recompute::Selective) {
    const double s = in_.seq_len;
    // The attention core in the convention (scores and context, forward), counted whether or not a fused kernel
    // makes it free; the other modules' recomputed matmuls (an MLP, the MoE block, shared experts, MLA's up
    // projections) as they run.
    if (in_.parallel.recompute_modules & parallel::kRecomputeCoreAttn)
      recompute_per_layer = 4.0 * L.micro_batch * s * s * model_.hidden;
    recompute_per_layer += lt.layer_recompute_gemm_flops * L.tp * L.cp;
  } else if (in_.parallel.recompute == parallel::Recompute::Op) {
    recompute_per_layer = lt.layer_recompute_flops * L.tp * L.cp;  // the recomputed matmuls (every second one)
  }
  // recomputed_layers counts each virtual stage's recomputed layers once (all of them unless the method is block).
  plan.hardware_flops =
      plan.model_flops + recompute_per_layer * static_cast<double>(recomputed_layers) * L.micro_batches * L.dp;
  plan.labels = std::move(labels_);
  return plan;
}

const LayerTimings& Planner::layer_timings(const workload::LayerShape& shape, bool mixed) {
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
    key->sp_batch_first = shape.sp_batch_first;
    key->moe_imbalance = shape.moe_imbalance;
    key->flash_attention = shape.flash_attention;
    key->dropout = shape.dropout;
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
    key->tp_group = placement_.group(parallel::Dim::Tp, 0);
    key->cp_group = placement_.group(parallel::Dim::Cp, 0);
    key->ep_group = placement_.group(parallel::Dim::Ep, 0);
    if (auto it = cache_->layers.find(*key); it != cache_->layers.end()) {
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
  t.layer_forward_model_flops = lw.forward.model_flops;
  t.layer_recompute_flops = lw.recompute.executed_flops;
  for (const auto& seg : lw.recompute.segments)
    for (const auto& k : seg.kernels)
      if (k.kind == workload::KernelKind::Gemm && !k.attention_core) t.layer_recompute_gemm_flops += k.flops;
  t.params = workload::count_params(model_);
  if (cache_ == nullptr) {
    own_timings_ = std::move(t);
    return own_timings_;
  }
  // The label build() names next (whatever the plan), named here so that a plan from the cache finds it.
  label(kGatherLabel);
  label(kInterferenceLabel);
  label(kReduceLabel);
  t.labels = labels_;
  t.collectives = collective_cache_;
  return cache_->layers.emplace(std::move(*key), std::move(t)).first->second;
}

}  // namespace

StepPlan build_step_plan(const StepInputs& in) {
  return Planner(in, nullptr).build();
}

StepPlan build_step_plan(const StepInputs& in, StepPlanCache& cache) {
  return Planner(in, cache.impl_.get()).build();
}

}  // namespace sim::execution
