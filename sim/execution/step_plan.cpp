// sim/execution/step_plan.cpp: timing every kernel and collective of an iteration once, per virtual stage.
#include "sim/execution/step_plan.hpp"

#include "sim/execution/step_planner.hpp"

#include "sim/execution/data_parallel_bytes.hpp"
#include "sim/execution/step_plan_cache.hpp"
#include "sim/execution/step_plan_cache_impl.hpp"
#include "sim/execution/layer_timing.hpp"
#include "sim/execution/recompute.hpp"
#include "sim/execution/tp_overlap.hpp"
#include "sim/execution/cp_overlap.hpp"
#include "sim/execution/ep_overlap.hpp"
#include "sim/execution/overlap_interference.hpp"
#include "sim/execution/zero3_exposure.hpp"
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

namespace detail {

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

  // Parameters per GPU per layer: matrices over tp, routed experts over ep and expert_tp, shared experts over tp.
  const auto& pc = lt.params;
  const double etp = L.expert_tp > 0 ? L.expert_tp : L.tp;
  const double layer_params =
      model_.moe ? (pc.attention_per_layer + pc.shared_mlp_per_layer + pc.router_per_layer) / L.tp +
                       (pc.mlp_per_layer - pc.shared_mlp_per_layer) / L.ep / etp + pc.norms_per_layer
                 : (pc.attention_per_layer + pc.mlp_per_layer + pc.router_per_layer) / L.tp + pc.norms_per_layer;
  const double dense_layer_params = (pc.attention_per_layer + pc.dense_mlp_per_layer) / L.tp + pc.norms_per_layer;
  // The routed experts' share of an MoE layer's parameters on this GPU: reduced, sharded and gathered over the
  // expert-data-parallel group (Megatron-Core's expert data parallelism, tp x dp x cp / (ep x expert_tp) GPUs holding
  // the same experts; DistributedDataParallel keeps them in buffers of their own, reduced over that group), which is
  // the data-parallel group itself unless ep x expert_tp differs from tp.
  const double layer_expert_params = model_.moe ? (pc.mlp_per_layer - pc.shared_mlp_per_layer) / L.ep / etp : 0.0;
  const bool expert_groups = model_.moe && L.ep * static_cast<int>(etp) != L.tp;
  // Megatron-LM's --recompute-method block: only the first recompute_num_layers layers of each virtual stage are
  // recomputed; uniform recomputes every layer (in groups).
  const bool block = in_.parallel.recompute == parallel::Recompute::Full &&
                     in_.parallel.recompute_method == parallel::RecomputeMethod::Block;
  auto recomputed = [&](int l) { return !block || l < in_.parallel.recompute_num_layers; };
  long long recomputed_layers = 0;
  long long recomputed_dense_layers = 0;  // of which dense layers of an MoE model (first_k_dense, layer_freq)
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
  const auto dp_placed0 = placed_members(dp_group0);
  // Each pipeline rank's group, found once: rank 0's itself, or one of `own_groups` (sized up front, so the pointers
  // hold).
  std::vector<std::vector<int>> own_groups;
  own_groups.reserve(static_cast<std::size_t>(L.pp));
  std::vector<const std::vector<int>*> rank_groups(static_cast<std::size_t>(L.pp), nullptr);
  auto dp_group_of = [&](int pipeline_rank) -> const std::vector<int>* {
    auto& slot = rank_groups[static_cast<std::size_t>(pipeline_rank)];
    if (slot != nullptr) return slot;
    slot = &dp_group0;
    if (pipeline_rank == 0) return slot;
    auto g = placement_.group(parallel::Dim::DpCp, placement_.gpu(0, 0, 0, pipeline_rank));
    if (!placed_alike(g, dp_placed0)) slot = &own_groups.emplace_back(std::move(g));
    return slot;
  };
  const std::vector<int>* dp_group = &dp_group0;
  // Likewise the layers' tensor-, context- and expert-parallel collectives, on each rank's slowest groups
  // (layer_group_gpus, rank 0's too): a rank whose groups sit in the topology as GPU 0's do takes the layer timings
  // above; another (an expert-parallel group across an NVL72 domain's boundary) has its own, timed on its groups.
  const std::vector<int> layer_gpus = layer_group_gpus(placement_, topo_, L.pp);
  // The groups compared: those of more than one GPU (Etp's only where it is not the TP group), rank 0's found once.
  std::vector<std::pair<parallel::Dim, std::vector<std::array<int, 3>>>> groups0;
  for (const auto dim : kLayerDims)
    if (placement_.size(dim) > 1 &&
        !(dim == parallel::Dim::Etp && placement_.size(dim) == placement_.size(parallel::Dim::Tp)))
      groups0.emplace_back(dim, placed_members(placement_.group(dim, 0)));
  std::vector<const LayerTimings*> rank_timings(static_cast<std::size_t>(L.pp), nullptr);
  auto timings_of = [&](int pipeline_rank) -> const LayerTimings* {
    auto& slot = rank_timings[static_cast<std::size_t>(pipeline_rank)];
    if (slot != nullptr) return slot;
    slot = &lt;
    const int base = layer_gpus[static_cast<std::size_t>(pipeline_rank)];
    if (base == 0) return slot;
    for (const auto& [dim, g0] : groups0)
      if (!placed_alike(placement_.group(dim, base), g0)) {
        slot = &layer_timings(shape, mixed, base);
        break;
      }
    return slot;
  };
  const bool zero = in_.parallel.zero_stage >= 1 || in_.parallel.distributed_optimizer;
  plan.dp_reduce_scatter = zero;
  // The other tensor-parallel ranks' data-parallel groups reduce and gather the same buckets at the same moment: where
  // they share switch links with this rank's (GB200's 4-GPU trays under TP 8: two TP ranks per rail), the collectives
  // are costed beside them, as the full replay's flows run them (CollectiveCostModel::time with siblings).
  std::map<const std::vector<int>*, std::vector<int>> siblings_memo;
  auto dp_siblings = [&]() -> const std::vector<int>& {
    auto it = siblings_memo.find(dp_group);
    if (it == siblings_memo.end()) it = siblings_memo.emplace(dp_group, tp_siblings(*dp_group)).first;
    return it->second;
  };
  // Hybrid sharding (parallel.dp_shard: PyTorch FSDP's HYBRID_SHARD, TorchTitan's HSDP, Megatron-LM's
  // --num-distributed-optimizer-instances): the states are sharded within groups of dp_shard x cp ranks, each holding a
  // whole copy. The weights are gathered within the group, and the gradients reduce-scattered within it, then each
  // shard all-reduced across the dp / dp_shard copies (FSDP2's foreach_reduce: reduce_scatter on the shard group, then
  // all_reduce on the replicate group, torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py; Megatron-Core's
  // DistributedDataParallel: reduce-scatter on the intra-instance group, all-reduce on the inter-instance one). A
  // copy's group is consecutive data-parallel ranks (TorchTitan's mesh puts dp_replicate outside dp_shard; Megatron's
  // instances are consecutive ranks of the data-parallel group).
  const int hybrid = in_.parallel.dp_shard > 0 && in_.parallel.dp_shard < L.dp ? in_.parallel.dp_shard : 0;
  plan.dp_shard = hybrid;
  struct HybridGroups {
    std::vector<int> shard, replicate;  // of the group's first member
  };
  std::map<const std::vector<int>*, HybridGroups> hybrid_memo;
  auto hybrid_groups = [&]() -> const HybridGroups& {
    auto it = hybrid_memo.find(dp_group);
    if (it != hybrid_memo.end()) return it->second;
    const parallel::Coord first = placement_.coord(dp_group->front());
    HybridGroups h;
    for (const int m : *dp_group) {
      const parallel::Coord c = placement_.coord(m);
      if (c.dp / hybrid == first.dp / hybrid) h.shard.push_back(m);
      if (c.dp % hybrid == first.dp % hybrid && c.cp == first.cp) h.replicate.push_back(m);
    }
    return hybrid_memo.emplace(dp_group, std::move(h)).first->second;
  };
  // What ZeRO shards over and gathers from: the data-parallel group, or a copy's group under hybrid sharding.
  auto shard_group = [&]() -> const std::vector<int>& { return hybrid ? hybrid_groups().shard : *dp_group; };
  std::map<const std::vector<int>*, std::vector<int>> sub_siblings_memo;
  auto siblings_of = [&](const std::vector<int>& g) -> const std::vector<int>& {
    if (&g == dp_group) return dp_siblings();
    auto it = sub_siblings_memo.find(&g);
    if (it == sub_siblings_memo.end()) it = sub_siblings_memo.emplace(&g, tp_siblings(g)).first;
    return it->second;
  };
  // A data-parallel group's expert-data-parallel group (its first member's).
  std::map<const std::vector<int>*, std::vector<int>> edp_memo;
  auto edp_group = [&]() -> const std::vector<int>& {
    auto it = edp_memo.find(dp_group);
    if (it == edp_memo.end())
      it = edp_memo.emplace(dp_group, placement_.group(parallel::Dim::Edp, dp_group->front())).first;
    return it->second;
  };
  // ZeRO-3 / FSDP (zero_stage 3): each gather or reduce-scatter (hybrid sharding's all-reduce too) takes at least its
  // bytes over the framework's rate (parallel.zero3_engine_gbs; 0: NCCL's time alone); none where no collective runs.
  const bool zero3 = in_.parallel.zero_stage >= 3 && dp_group->size() > 1;
  const double engine_rate = zero3 ? in_.parallel.zero3_engine_bytes_per_s : 0.0;
  auto engine_bound = [engine_rate](Time t, double bytes, bool bounded = true) {
    return bounded && engine_rate > 0 && t > Time::zero() ? std::max(t, Time::from_seconds(bytes / engine_rate)) : t;
  };
  auto dp_time = [&](double grad_bytes, bool bounded = true) {
    if (dp_group->size() < 2) return Time::zero();
    if (hybrid) {
      const HybridGroups& h = hybrid_groups();
      const double shard_bytes = grad_bytes / static_cast<double>(h.shard.size());
      Time t;
      if (h.shard.size() > 1)
        t += engine_bound(collective(collectives::Op::ReduceScatter, h.shard, grad_bytes, siblings_of(h.shard)),
                          grad_bytes, bounded);
      if (h.replicate.size() > 1)
        t += engine_bound(collective(collectives::Op::AllReduce, h.replicate, shard_bytes, siblings_of(h.replicate)),
                          shard_bytes, bounded);
      return t;
    }
    return engine_bound(collective(zero ? collectives::Op::ReduceScatter : collectives::Op::AllReduce, *dp_group,
                                   grad_bytes, dp_siblings()),
                        grad_bytes, bounded);
  };
  // The routed experts' gradients over their own group (`expert` of the `grad_bytes`; none unless expert_groups).
  auto expert_time = [&](double grad_bytes, bool bounded = true) {
    if (!expert_groups || grad_bytes <= 0 || edp_group().size() < 2) return Time::zero();
    return engine_bound(collective(zero ? collectives::Op::ReduceScatter : collectives::Op::AllReduce, edp_group(),
                                   grad_bytes, siblings_of(edp_group())),
                        grad_bytes, bounded);
  };
  auto reduce_time = [&](double params, double expert, bool bounded = true) {
    const double per = grad_bytes(in_.fp32_main_grads);
    if (!expert_groups) return dp_time(params * per, bounded);
    return dp_time((params - expert) * per, bounded) + expert_time(expert * per, bounded);
  };
  const double bucket_limit = bucket_params(L.dp);
  const bool zb = in_.parallel.schedule == parallel::Schedule::ZeroBubbleH1;
  plan.dp_every_micro_batch = in_.parallel.zero_stage >= 2;
  plan.dp_after_backward = !in_.parallel.overlap_grad_reduce && in_.parallel.zero_stage < 2;
  // DualPipeV overlaps its pairs' all-to-alls by design (DeepSeek-V3 report Sec. 3.2.1), as the key asks Megatron-Core
  // to; both need the forward's activations at hand (no full recomputation).
  plan.ep_comm_overlap =
      in_.parallel.ep_comm_overlap || (in_.parallel.schedule == parallel::Schedule::DualPipeV && L.ep > 1 &&
                                       in_.parallel.recompute != parallel::Recompute::Full);
  // ZeRO-3 (Rajbhandari et al. 2020, Sec. 5.3, 7.2.2) and FSDP FULL_SHARD (Zhao et al., VLDB 2023, Sec. 3.3-3.4): a
  // unit's 16-bit weights are all-gathered before its forward and its backward in every micro-batch, prefetched under
  // the previous unit's work (zero3_exposure.hpp). Labels in this order (the step-plan cache replays it).
  const std::uint16_t gather_label = label(kGatherLabel), interference_label = label(kInterferenceLabel);
  const std::uint16_t reduce_label = label(kReduceLabel);
  auto gather_time_dense = [&](double params) {
    if (shard_group().size() < 2) return Time::zero();
    return collective(collectives::Op::AllGather, shard_group(), params * param_bytes(in_.dtype),
                      siblings_of(shard_group()));
  };
  auto gather_time = [&](double params, double expert, bool bounded = true) {
    if (!zero3) return Time::zero();
    const double per = param_bytes(in_.dtype);  // each collective at least its own bytes over the engine's rate
    if (expert_groups && expert > 0) {
      const Time experts = edp_group().size() < 2 ? Time::zero()
                                                  : collective(collectives::Op::AllGather, edp_group(), expert * per,
                                                               siblings_of(edp_group()));
      return engine_bound(gather_time_dense(params - expert), (params - expert) * per, bounded) +
             engine_bound(experts, expert * per, bounded);
    }
    return engine_bound(gather_time_dense(params), params * per, bounded);
  };
  auto duration = [](const std::vector<TimedSegment>& segs) {
    Time t;
    for (const auto& seg : segs)
      t += seg.duration;
    return t;
  };
  /// Appends the exposed part of a unit's gather (zero3_exposure). In the backward, this unit's gather and the previous
  /// unit's reduce-scatter (`grads`: as run, and NCCL's part; none for the pass's first unit) share the data-parallel
  /// links (3 x the parameters per iteration on the wire: Rajbhandari et al. 2020, Sec. 7.2.2).
  const bool late_backward_gather = in_.parallel.backward_prefetch != parallel::BackwardPrefetch::Pre;
  auto exposed_gather = [&](OpWork& w, double params, double expert, std::optional<Time> previous,
                            std::pair<Time, Time> grads = {}, bool backward = false) {
    if (!zero3) return;
    const Time gather = gather_time(params, expert),
               nccl = engine_rate > 0 ? gather_time(params, expert, false) : gather;
    const auto e = zero3_exposure(gather, grads.first, nccl + grads.second, previous, in_.parallel.zero3_overlap,
                                  backward && late_backward_gather);
    if (e.exposed > Time::zero()) w.segments.push_back({e.exposed, SegKind::Dp, gather_label});
    const Time slowed = overlap_interference(e.hidden, hw_.gpu.sm_count);
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
    const std::vector<int>* dp_group = nullptr;
    const LayerTimings* timings = nullptr;
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
    dp_group = dp_group_of(L.rank_of(v));
    const LayerTimings& rt = *timings_of(L.rank_of(v));
    if (!mixed) {
      const auto same = std::find_if(built.begin(), built.end(), [&](const Built& b) {
        return b.first == first && b.last == last && b.layers == layers && b.timings == &rt &&
               (b.dp_group == dp_group || *b.dp_group == *dp_group);
      });
      if (same != built.end()) {
        plan.stages[static_cast<std::size_t>(v)] = plan.stages[static_cast<std::size_t>(same->index)];
        first_layer += layers;
        recomputed_layers += same->recomputed;
        continue;
      }
    }
    const auto &l_fwd = rt.l_fwd, &l_rec = rt.l_rec, &l_b = rt.l_b, &l_w = rt.l_w;
    const auto &d_fwd = rt.d_fwd, &d_rec = rt.d_rec, &d_b = rt.d_b, &d_w = rt.d_w;
    const auto &e_fwd = rt.e_fwd, &e_b = rt.e_b, &e_w = rt.e_w;
    const auto &o_fwd = rt.o_fwd, &o_b = rt.o_b, &o_w = rt.o_w;
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
    auto forward_unit = [&](const std::vector<TimedSegment>& segs, double params, double expert = 0) {
      exposed_gather(st.forward, params, expert, previous);
      append(st.forward, segs);
      if (plan.ep_comm_overlap) ep.forward(segs);
      previous = duration(segs);
    };
    if (first) forward_unit(e_fwd, embed_params);
    for (int l = 0; l < st.layers; ++l) {
      const bool moe = !mixed || model_.is_moe_layer(stage_first_layer + l);
      forward_unit(moe ? l_fwd : d_fwd, moe ? layer_params : dense_layer_params, moe ? layer_expert_params : 0);
    }
    if (last) forward_unit(o_fwd, output_params);
    // Multi-token prediction (DeepSeek-V3 Sec. 2.2; Megatron-Core puts the modules with the loss, on the last stage):
    // each module's projection, its transformer layer and the shared output head and loss, after the main loss.
    for (int k = 0; last && k < model_.mtp_layers; ++k) {
      forward_unit(rt.p_fwd, mtp_params);
      forward_unit(l_fwd, layer_params, layer_expert_params);
      forward_unit(o_fwd, 0);
    }

    // Backward in reverse layer order; gradient buckets close at layer boundaries.
    double pending = 0, pending_expert = 0;  // parameters of the open bucket, and the routed experts' of them
    // ZeRO-3: `pending` is the unit whose reduce-scatter shares the links with the next gather; the pass's first with
    // the previous pass's last (steady state: this pass's last unit, embedding, first layer or output layer).
    if (zero3) {
      const bool tail_moe = !mixed || model_.is_moe_layer(stage_first_layer);
      pending = first           ? embed_params
                : st.layers > 0 ? (tail_moe ? layer_params : dense_layer_params)
                : last          ? output_params
                                : 0.0;
      pending_expert = !first && st.layers > 0 && tail_moe ? layer_expert_params : 0.0;
    }
    double expert_local = 0;  // the stage's routed-expert parameters on this GPU
    OpWork& grad_op = zb ? st.backward_weight : st.backward;
    // A bucket is ready when the segment it closed on ends: later compute must not merge into that segment.
    std::size_t sealed = 0;
    auto close_bucket = [&](bool force) {
      if (pending <= 0 || (!force && pending < bucket_limit)) return;
      const double per = grad_bytes(in_.fp32_main_grads);
      const double expert = expert_groups ? pending_expert : 0.0;
      const Time experts = expert_time(expert * per);  // reduce_time's, computed once for the bucket's record too
      st.buckets.push_back({Bytes{static_cast<std::int64_t>((pending - expert) * per)},
                            static_cast<int>(grad_op.segments.size()) - 1, dp_time((pending - expert) * per) + experts,
                            Time{}, Bytes{static_cast<std::int64_t>(expert * per)}, experts});
      sealed = grad_op.segments.size();
      pending = pending_expert = 0;
    };
    auto append_to = [&](OpWork& w, const std::vector<TimedSegment>& segs) {
      append(w, segs, &w == &grad_op ? sealed : 0);
    };
    std::optional<Time> previous_b, previous_bi;
    // Split backwards (zero-bubble B and W) with ZeRO-3: a unit's reduce-scatter (`pending_reduce`: the previous
    // unit's; the first W's, the pass's last unit's as above) runs beside the next unit's W, the rest exposed.
    Time pending_reduce = zero3 ? reduce_time(pending, pending_expert) : Time::zero();
    Time pending_reduce_nccl = engine_rate > 0 ? reduce_time(pending, pending_expert, false) : pending_reduce;
    auto exposed_reduce = [&](OpWork& w, Time beside) {
      const auto e =
          zero3_exposure(pending_reduce, Time::zero(), pending_reduce_nccl, beside, in_.parallel.zero3_overlap, false);
      if (e.exposed > Time::zero()) w.segments.push_back({e.exposed, SegKind::Dp, reduce_label});
      const Time slowed = overlap_interference(e.hidden, hw_.gpu.sm_count);
      if (slowed > Time::zero()) w.segments.push_back({slowed, SegKind::Compute, interference_label});
    };
    auto layer_backward = [&](const std::vector<TimedSegment>& rec, const std::vector<TimedSegment>& b,
                              const std::vector<TimedSegment>& w, double params, double expert = 0,
                              Time mlp_dw = Time::zero()) {
      if (plan.ep_comm_overlap) ep.backward(rec, b, w, mlp_dw);
      // Weights are needed for the recomputed forward and the input gradients (zero-bubble B), not for W.
      // With this unit's gather, the previous unit's reduce-scatter (ZeRO-3 keeps its parameters in `pending`).
      std::pair<Time, Time> grads;  // as run, and NCCL's part
      if (zero3 && pending > 0) grads.first = grads.second = reduce_time(pending, pending_expert);
      if (zero3 && pending > 0 && engine_rate > 0) grads.second = reduce_time(pending, pending_expert, false);
      exposed_gather(st.backward, params, expert, previous_b, grads, /*backward=*/true);
      exposed_gather(st.backward_input, params, expert, previous_bi, {}, /*backward=*/true);
      append_to(st.backward, rec);
      append_to(st.backward, b);
      append_to(st.backward, w);
      append_to(st.backward_input, rec);
      append_to(st.backward_input, b);
      append_to(st.backward_weight, w);
      if (zero3) {
        exposed_reduce(st.backward_weight, duration(w));
        pending_reduce = reduce_time(params, expert);
        pending_reduce_nccl = engine_rate > 0 ? reduce_time(params, expert, false) : pending_reduce;
      }
      previous_b = duration(rec) + duration(b) + duration(w);
      previous_bi = duration(rec) + duration(b);
      st.params_local += params;
      expert_local += expert;
      if (zero3) {
        // ZeRO-3 / FSDP: each unit's gradients are reduce-scattered on the links its next gather uses, counted with
        // that gather above (the pass's last unit's with the next pass's first gather).
        pending = params;
        pending_expert = expert;
        return;
      }
      pending += params;
      pending_expert += expert;
      close_bucket(false);
    };
    static const std::vector<TimedSegment> kNone;
    for (int k = 0; last && k < model_.mtp_layers; ++k) {
      layer_backward({}, o_b, o_w, 0);
      layer_backward(recomputed(st.layers) ? l_rec : kNone, l_b, l_w, layer_params, layer_expert_params, rt.l_w_mlp);
      layer_backward({}, rt.p_b, rt.p_w, mtp_params);
    }
    if (last) layer_backward({}, o_b, o_w, output_params);
    for (int l = st.layers - 1; l >= 0; --l) {
      const bool moe = !mixed || model_.is_moe_layer(stage_first_layer + l);
      const bool rec = recomputed(l);
      recomputed_layers += rec ? 1 : 0;
      recomputed_dense_layers += rec && !moe ? 1 : 0;
      layer_backward(rec ? (moe ? l_rec : d_rec) : kNone, moe ? l_b : d_b, moe ? l_w : d_w,
                     moe ? layer_params : dense_layer_params, moe ? layer_expert_params : 0,
                     moe ? rt.l_w_mlp : Time::zero());
    }
    if (first) layer_backward({}, e_b, e_w, embed_params);
    if (zero3) pending = pending_expert = 0;  // counted with the pass's first gather
    close_bucket(true);
    // Ready times from the pass's start: each bucket's segment ends where the bucket closed (sealed above).
    Time ready;
    for (std::size_t i = 0; auto& bucket : st.buckets) {
      for (; static_cast<int>(i) <= bucket.ready_after; ++i)
        ready += grad_op.segments[i].duration;
      bucket.ready_at = ready;
    }
    // Without overlap (parallel.overlap_grad_reduce false: Megatron-LM's default, finalize_model_grads starting every
    // bucket's collective after the last backward) each bucket waits for the end of its gradient pass.
    if (!in_.parallel.overlap_grad_reduce && !zero3)
      for (auto& bucket : st.buckets) {
        bucket.ready_after = static_cast<int>(grad_op.segments.size()) - 1;
        bucket.ready_at = grad_op.total();
      }
    if (!zero3 && !st.buckets.empty()) {
      // The buckets are reduced beside the rest of their gradient pass, whose compute runs on the SMs the collectives
      // leave (the buckets back to back from the first one's ready time, the pass's rest the most they overlap):
      // in every micro-batch with ZeRO-2, in the last one with ZeRO 0-1, whose slowdown is spread over the
      // micro-batches' passes (the step's total is the same; a pass's segments are alike in every micro-batch).
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
    const int shard_dp = in_.parallel.dp_shard > 0 ? in_.parallel.dp_shard : L.dp;  // hybrid sharding's groups
    // The routed experts' states are sharded over their expert-data-parallel group (as the memory model has them).
    const double own_experts = expert_groups ? expert_local : 0.0;
    const double shard =
        zero ? (st.params_local - own_experts) / (static_cast<double>(shard_dp) * L.cp) +
                   own_experts / static_cast<double>(expert_groups ? placement_.size(parallel::Dim::Edp) : 1)
             : st.params_local;
    st.optimizer = hardware::memory_time(
        hw_.gpu, hw_.efficiency,
        shard * optimizer_bytes_per_param(in_.fp32_main_grads, in_.optimizer_state_bytes, in_.writes_16bit_weights));
    const bool gather_after =
        zero && !zero3 && (shard_group().size() > 1 || (own_experts > 0 && edp_group().size() > 1));
    if (gather_after) {
      st.param_gather = gather_time_dense(st.params_local - own_experts);
      if (own_experts > 0 && edp_group().size() > 1)
        st.param_gather += collective(collectives::Op::AllGather, edp_group(), own_experts * param_bytes(in_.dtype),
                                      siblings_of(edp_group()));
    }
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
        gather_after ? Bytes{static_cast<std::int64_t>(std::llround(st.params_local * param_bytes(in_.dtype)))}
                     : Bytes{};
    built.push_back({first, last, dp_group, &rt, layers, v, recomputed_layers - recomputed_before});
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
    const double bytes = static_cast<double>(L.micro_batch) * in_.seq_len / L.cp * model_.hidden *
                         hardware::tensor_bytes(in_.dtype) / L.tp;
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
  // Hardware FLOPs add the recomputed forward work in the same convention (Korthikanti et al. 2022, Sec. 6.3), per
  // layer kind (an MoE model's dense layers recompute their dense MLP).
  auto recompute_per_layer = [&](double forward_model_flops, double recompute_flops, double recompute_gemm_flops) {
    double f = 0;
    if (in_.parallel.recompute == parallel::Recompute::Full) {
      f = forward_model_flops * L.tp * L.cp;
    } else if (in_.parallel.recompute == parallel::Recompute::Selective) {
      const double s = in_.seq_len;
      // The attention core in the convention (scores and context, forward), run again by its fused kernel too
      // (workload::selective_recompute); the other modules' recomputed matmuls (an MLP, the MoE block, shared
      // experts, MLA's up projections) as they run.
      if (in_.parallel.recompute_modules & parallel::kRecomputeCoreAttn)
        f = 4.0 * L.micro_batch * s * s * model_.hidden;
      f += recompute_gemm_flops * L.tp * L.cp;
    } else if (in_.parallel.recompute == parallel::Recompute::Op) {
      f = recompute_flops * L.tp * L.cp;  // the recomputed matmuls (every second one)
    }
    return f;
  };
  const double per_layer =
      recompute_per_layer(lt.layer_forward_model_flops, lt.layer_recompute_flops, lt.layer_recompute_gemm_flops);
  const double per_dense_layer =
      recompute_per_layer(lt.dense_forward_model_flops, lt.dense_recompute_flops, lt.dense_recompute_gemm_flops);
  // recomputed_layers counts each virtual stage's recomputed layers once (all of them unless the method is block).
  plan.hardware_flops =
      plan.model_flops + (per_layer * static_cast<double>(recomputed_layers - recomputed_dense_layers) +
                          per_dense_layer * static_cast<double>(recomputed_dense_layers)) *
                             L.micro_batches * L.dp;
  // Token dropping and padding (Megatron-Core's capacity factor): the routed experts' GEMMs (2 x top_k x (2 or 3
  // gated matrices) x h x expert ffn per token and MoE layer, forward; x 3 with the backward) run on the kept or
  // padded tokens. MFU counts the kept tokens' (dropped tokens' work is not done), HFU what runs.
  if (model_.moe && (in_.moe_routed_done != 1 || in_.moe_routed_run != 1)) {
    const double routed = 3.0 * plan.tokens * model_.moe_layers() * 2.0 * model_.moe->top_k *
                          (model_.gated() ? 3.0 : 2.0) * model_.hidden * model_.moe->ffn_hidden;
    plan.hardware_flops += routed * (in_.moe_routed_run - 1);
    plan.model_flops += routed * (in_.moe_routed_done - 1);
  }
  plan.labels = std::move(labels_);
  return plan;
}

}  // namespace detail

StepPlan build_step_plan(const StepInputs& in) {
  return detail::Planner(in, nullptr).build();
}

StepPlan build_step_plan(const StepInputs& in, StepPlanCache& cache) {
  return detail::Planner(in, cache.impl_.get()).build();
}

}  // namespace sim::execution
