// sim/parallel/placement.hpp: which GPU holds which (tp, cp, dp, pp) rank, and the communication groups that follow.
#pragma once
#include "sim/parallel/feasibility.hpp"

#include <array>
#include <string_view>
#include <vector>

namespace sim::parallel {

enum class Dim { Tp, Cp, Dp, Pp, Ep };
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
/// Expert-parallel groups follow Megatron-Core's expert layout (ep divides dp*cp): the cp and dp indices combine into
/// one data-parallel-with-context index j, in the order they have in `order` (with the default, j = cp + cp_size*dp,
/// i.e. j counts the GPUs of one TP-and-PP slot in placement order), and an EP group is ep consecutive values of j.
class Placement {
 public:
  /// `order` names the four dimensions tp, cp, dp, pp innermost first, joined by '-' (validated by
  /// ParallelConfig::parse; anything else is our bug). The layout's ep must divide dp*cp (resolve_layout's rule).
  Placement(const Layout& layout, std::string_view order);

  int gpus() const { return total_; }
  /// The GPU holding rank (tp, cp, dp, pp).
  int gpu(int tp, int cp, int dp, int pp) const;
  int gpu(const Coord& c) const { return gpu(c.tp, c.cp, c.dp, c.pp); }
  Coord coord(int gpu) const;
  /// Index of `gpu` inside its expert-parallel group (0..ep-1).
  int ep_rank(int gpu) const;
  /// Every GPU that differs from `gpu` only in dimension `d` (including `gpu`), ordered by the index along `d`.
  /// For Dim::Ep: the ep GPUs of `gpu`'s expert-parallel group (same tp and pp, consecutive j), ordered by j.
  std::vector<int> group(Dim d, int gpu) const;
  /// Number of disjoint groups of dimension `d`: gpus() / size(d).
  int group_count(Dim d) const { return total_ / size(d); }
  /// Group size of dimension `d`.
  int size(Dim d) const;

 private:
  enum Axis { kTp = 0, kCp = 1, kDp = 2, kPp = 3 };
  std::array<int, 4> sizes_{};    // by Axis
  std::array<int, 4> strides_{};  // GPU-id stride of each Axis
  bool cp_inside_dp_ = true;      // cp varies faster than dp in `order` (defines the combined EP index)
  int ep_ = 1;
  int total_ = 1;

  int combined_dp(const Coord& c) const;  // j: the data-parallel-with-context index
  Coord from_combined(Coord base, int j) const;
};

}  // namespace sim::parallel
