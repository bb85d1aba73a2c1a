// sim/parallel/placement.hpp: which GPU holds which (tp, cp, dp, pp) rank, and the communication groups that follow.
#pragma once
#include "sim/parallel/feasibility.hpp"

#include <array>
#include <string_view>
#include <vector>

namespace sim::parallel {

/// DpCp: data parallelism with context parallelism, the group Megatron-Core reduces gradients over and shards the
/// distributed optimizer (and FSDP its parameters) across (parallel_state's data-parallel group
/// with_context_parallel=True): context-parallel ranks hold the same weights.
enum class Dim { Tp, Cp, Dp, Pp, Ep, Etp, DpCp, Edp };
const char* to_string(Dim d);

/// A GPU's position in the parallel mesh.
struct Coord {
  int tp = 0;
  int cp = 0;
  int dp = 0;
  int pp = 0;
  auto operator<=>(const Coord&) const = default;
};

/// Rank placement on the cluster: GPU ids are mixed-radix numbers over (tp, cp, dp, pp) in a configurable order,
/// innermost (fastest-varying) first. The default "tp-cp-dp-pp" is Megatron-Core's RankGenerator default order
/// ("tp-cp-ep-dp-pp", with ep folded into dp): a TP group is tp consecutive GPUs (inside one NVLink domain when tp
/// divides it), pipeline neighbours are tp*cp*dp GPUs apart.
///
/// Expert-parallel groups follow Megatron-Core's expert rank generator (megatron/core/parallel_state.py: a second
/// RankGenerator with tp = expert_tp, ep, dp = expert data parallelism, cp = 1, in the order "tp-ep-dp-pp"). The cp and
/// dp indices combine into one data-parallel-with-context index j, in the order they have in `order` (with the
/// default, j = cp + cp_size*dp), and the GPUs of one pipeline slot are numbered i = tp + tp_size*j. The expert mesh
/// reads i as etp_index + expert_tp*(ep_index + ep*edp_index): an EP group is the ep values of ep_index at the same
/// etp_index and edp_index. Without MoE parallel folding (expert_tp = tp) that is ep consecutive values of j at the
/// same tp index; with expert_tp < tp ("MoE parallel folding", Liu et al., arXiv:2504.14960) an EP group also spans
/// tensor-parallel ranks: with expert_tp = 1 it is ep consecutive GPUs of the slot (one NVLink domain when ep
/// divides it).
class Placement {
 public:
  /// `order` names the four dimensions tp, cp, dp, pp innermost first, joined by '-' (validated by
  /// ParallelConfig::parse; anything else is our bug). The layout's ep * expert_tp must divide tp*dp*cp and expert_tp
  /// must divide tp (resolve_layout's rules).
  Placement(const Layout& layout, std::string_view order);

  int gpus() const { return total_; }
  /// The GPU holding rank (tp, cp, dp, pp).
  int gpu(int tp, int cp, int dp, int pp) const;
  int gpu(const Coord& c) const { return gpu(c.tp, c.cp, c.dp, c.pp); }
  Coord coord(int gpu) const;
  /// Index of `gpu` inside its expert-parallel group (0..ep-1).
  int ep_rank(int gpu) const;
  /// Every GPU that differs from `gpu` only in dimension `d` (including `gpu`), ordered by the index along `d`.
  /// For Dim::Ep: the ep GPUs of `gpu`'s expert-parallel group, ordered by ep index; for Dim::Etp: the expert_tp GPUs
  /// of its expert-tensor-parallel group (a part of its TP group), ordered by tp index; for Dim::DpCp: the dp x cp GPUs
  /// of its data-parallel-with-context group, ordered by the combined index; for Dim::Edp: its expert-data-parallel
  /// group (Megatron-Core's expert data parallelism: the GPUs holding the same experts, tp x dp x cp / (ep x
  /// expert_tp) of them, same etp and ep index), ordered by edp index.
  std::vector<int> group(Dim d, int gpu) const;
  /// Number of disjoint groups of dimension `d`: gpus() / size(d).
  int group_count(Dim d) const { return total_ / size(d); }
  /// Group size of dimension `d`.
  int size(Dim d) const;
  /// Whether every group of dimension `d` meets the aligned blocks of `block` consecutive GPUs (NVLink domains) alike:
  /// each axis of `d` has a stride and a window that divide `block` or are multiples of it, so the block boundaries
  /// fall between whole digits and no group is split otherwise than another.
  bool aligned_with(Dim d, int block) const;

 private:
  enum Axis { kTp = 0, kCp = 1, kDp = 2, kPp = 3 };
  std::array<int, 4> sizes_{};    // by Axis
  std::array<int, 4> strides_{};  // GPU-id stride of each Axis
  bool cp_inside_dp_ = true;      // cp varies faster than dp in `order` (defines the combined EP index)
  int ep_ = 1;
  int etp_ = 1;  // expert_tp (tp when the layout gave none)
  int total_ = 1;

  int combined_dp(const Coord& c) const;  // j: the data-parallel-with-context index
  Coord from_combined(Coord base, int j) const;
  int slot_index(const Coord& c) const { return c.tp + sizes_[kTp] * combined_dp(c); }  // i within the pp slot
  Coord from_slot(Coord base, int i) const;
};

}  // namespace sim::parallel
