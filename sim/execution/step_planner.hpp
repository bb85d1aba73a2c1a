// sim/execution/step_planner.hpp: the builder of a step plan (step_plan.cpp: the stages; step_plan_layers.cpp: the
// layer-level timings a plan's stages are made of, cached across plans). Internal to sim/execution.
#pragma once
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_plan_cache.hpp"
#include "sim/execution/step_plan_cache_impl.hpp"
#include "sim/execution/layer_timing.hpp"
#include "sim/execution/tp_overlap.hpp"
#include "sim/execution/cp_overlap.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/workload/layer_costs.hpp"
#include "sim/workload/params.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace sim::execution::detail {

using base::Bytes;
using base::Time;

/// The dimensions of a layer's collectives (tensor, context, expert, expert-tensor parallelism).
inline constexpr std::array<parallel::Dim, 4> kLayerDims{parallel::Dim::Tp, parallel::Dim::Cp, parallel::Dim::Ep,
                                                         parallel::Dim::Etp};
/// NVLink domains holding at least one member of `group` (step_plan_groups.cpp).
int domains_spanned(const topology::Topology& topo, const std::vector<int>& group);
/// For each pipeline rank, the GPU whose layer collective groups (tensor, context, expert) span the most NVLink
/// domains: the rank's slowest groups, which its data-parallel peers wait for (step_plan_groups.cpp).
std::vector<int> layer_group_gpus(const parallel::Placement& placement, const topology::Topology& topo, int pp);

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

  /// A layer collective's time on the groups of base_gpu_ (the first GPU of the pipeline rank being timed).
  Time comm_time(workload::CommKind kind, double bytes) {
    const auto key = std::make_tuple(static_cast<int>(kind), bytes, base_gpu_);
    if (auto it = comm_cache_.find(key); it != comm_cache_.end()) return it->second;
    const auto [op, dim] = layer_collective(kind);
    const auto group = placement_.group(dim, base_gpu_);
    const double n = layer_collective_payload(in_, kind, group, bytes);
    Time t = group.size() < 2 ? Time::zero() : collective(op, group, n);
    comm_cache_.emplace(key, t);
    return t;
  }

  /// A collective's time on a concrete group, memoised: an iteration repeats the same few shapes (every layer's TP
  /// collectives, equal-sized gradient buckets), and the planner builds thousands of plans. Alone on the network, or
  /// beside `siblings` (offsets to the groups that run it at the same moment: CollectiveCostModel::time).
  Time collective(collectives::Op op, const std::vector<int>& group, double bytes,
                  const std::vector<int>& siblings = {}) {
    const Bytes n{static_cast<std::int64_t>(std::llround(bytes))};
    const auto key = CollectiveKey{static_cast<int>(op),           group.front(), group.size() > 1 ? group[1] : -1,
                                   static_cast<int>(group.size()), n.n,           static_cast<int>(siblings.size())};
    if (auto it = collective_cache_.find(key); it != collective_cache_.end()) return it->second;
    auto cost = [&] { return cost_model_.time(op, collectives::Algorithm::Auto, group, n, siblings); };
    Time t;
    if (cache_ == nullptr) {
      t = cost();
    } else {
      auto& by_members = cache_->collectives[std::make_tuple(&topo_, static_cast<int>(op), n.n)];
      std::vector<int> with_siblings;  // the members, then -1 (no member) and the offsets
      if (!siblings.empty()) {
        with_siblings = group;
        with_siblings.push_back(-1);
        with_siblings.insert(with_siblings.end(), siblings.begin(), siblings.end());
      }
      const std::vector<int>& members = siblings.empty() ? group : with_siblings;
      if (auto it = by_members.find(members); it != by_members.end()) {
        t = it->second;
      } else {
        t = cost();
        by_members.emplace(members, t);
      }
    }
    collective_cache_.emplace(key, t);
    return t;
  }

  /// The tensor-parallel siblings of a data-parallel group: offsets to the data-parallel groups of the other TP ranks
  /// (the placement is affine, so each is the group shifted), which reduce and gather their shards of the same
  /// buckets at the same moment. None where no two of these groups share a leaf (TP inside a rail-optimised node: each
  /// TP rank on rails of its own), as then they share no switch link either and the group alone is each one's time.
  /// Else those laid out as the group is, on rails of their own or the group's (each member in the same NVLink domain
  /// and leaf relative to the first, every local rank moved alike): another layout would run another pattern
  /// (CollectiveCostModel::time).
  std::vector<int> tp_siblings(const std::vector<int>& group) const {
    const int tp = placement_.size(parallel::Dim::Tp);
    if (tp < 2) return {};
    const int first = placement_.gpu(0, 0, 0, 0);
    const int last = *std::max_element(group.begin(), group.end());
    std::vector<int> all;  // every TP rank's offset that keeps the group in the cluster, 0 first
    for (int t = 0; t < tp; ++t)
      if (const int o = placement_.gpu(t, 0, 0, 0) - first; last + o < topo_.gpus()) all.push_back(o);
    std::vector<int> owner(static_cast<std::size_t>(topo_.leaves()), -1);  // per leaf: the first group seen on it
    bool shared = false;
    for (std::size_t s = 0; s < all.size() && !shared; ++s)
      for (int g : group) {
        int& o = owner[static_cast<std::size_t>(topo_.leaf_of(g + all[s]))];
        if (o == -1) o = static_cast<int>(s);
        shared = shared || o != static_cast<int>(s);
      }
    if (!shared) return {};
    std::vector<int> offsets;
    for (std::size_t s = 1; s < all.size(); ++s) {
      std::vector<int> shifted(group);
      for (int& g : shifted)
        g += all[s];
      const int rail_shift = topo_.local_rank(shifted[0]) - topo_.local_rank(group[0]);
      bool alike = true;
      for (std::size_t i = 0; alike && i < group.size(); ++i) {
        const auto a = placed(shifted, i), b = placed(group, i);
        alike = a[0] == b[0] && a[1] == b[1] && a[2] - b[2] == rail_shift;
      }
      if (alike) offsets.push_back(all[s]);
    }
    return offsets;
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
  std::map<std::tuple<int, double, int>, Time> comm_cache_;
  /// The GPU whose tensor-, context- and expert-parallel groups the layer collectives run on: 0, or the first GPU of a
  /// pipeline rank whose groups sit in the topology otherwise (build(), timings_of).
  int base_gpu_ = 0;
  CollectiveMemo collective_cache_;
  StepPlanCache::Impl* cache_ = nullptr;  // null: nothing kept across plans
  /// The layer-level timings of this plan on the groups of `base_gpu` (0, or a pipeline rank's first GPU), from cache_
  /// or computed (and then kept there).
  const LayerTimings& layer_timings(const workload::LayerShape& shape, bool mixed, int base_gpu = 0);
  /// Where a group sits in the topology, as its collectives see it: each member's NVLink domain and leaf relative to
  /// the first member's and its local rank; with a link down, the members themselves. Layer
  /// timings are cached under it, so pipeline ranks and plans whose groups sit alike share one entry.
  std::vector<int> placement_key(const std::vector<int>& g) const {
    std::vector<int> k;
    if (topo_.links_down() != 0) {
      k.push_back(-1);
      k.insert(k.end(), g.begin(), g.end());
      return k;
    }
    k.reserve(3 * g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      const auto p = placed(g, i);
      k.insert(k.end(), p.begin(), p.end());
    }
    return k;
  }
  /// Member i of `group`: its NVLink domain and leaf relative to the first member's, and its local rank.
  std::array<int, 3> placed(const std::vector<int>& group, std::size_t i) const {
    return {topo_.nvlink_domain_of(group[i]) - topo_.nvlink_domain_of(group[0]),
            topo_.leaf_of(group[i]) - topo_.leaf_of(group[0]), topo_.local_rank(group[i])};
  }
  /// Whether `g` sits in the topology as the group whose placed() members are `placed0` does: each member in the same
  /// NVLink domain, leaf and local rank relative to the first member, and no link down. Collectives on such groups
  /// take the same time. (`placed0` computed once per group compared against: this runs per pipeline rank and group.)
  bool placed_alike(const std::vector<int>& g, const std::vector<std::array<int, 3>>& placed0) const {
    if (topo_.links_down() != 0 || g.size() != placed0.size()) return false;
    const int domain = topo_.nvlink_domain_of(g[0]), leaf = topo_.leaf_of(g[0]);
    for (std::size_t i = 0; i < g.size(); ++i) {
      const std::array<int, 3> p = {topo_.nvlink_domain_of(g[i]) - domain, topo_.leaf_of(g[i]) - leaf,
                                    topo_.local_rank(g[i])};
      if (p != placed0[i]) return false;
    }
    return true;
  }
  std::vector<std::array<int, 3>> placed_members(const std::vector<int>& g) const {
    std::vector<std::array<int, 3>> out;
    out.reserve(g.size());
    for (std::size_t i = 0; i < g.size(); ++i)
      out.push_back(placed(g, i));
    return out;
  }
  std::deque<LayerTimings> own_timings_;  // without a cache, and pipeline ranks' copies with their labels renumbered
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

}  // namespace sim::execution::detail
