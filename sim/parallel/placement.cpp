// sim/parallel/placement.cpp: mixed-radix rank placement and group enumeration.
#include "sim/parallel/placement.hpp"

#include "sim/base/assert.hpp"

namespace sim::parallel {

const char* to_string(Dim d) {
  switch (d) {
    case Dim::Tp:
      return "tp";
    case Dim::Cp:
      return "cp";
    case Dim::Dp:
      return "dp";
    case Dim::Pp:
      return "pp";
    case Dim::Ep:
      return "ep";
    case Dim::Etp:
      return "etp";
    case Dim::DpCp:
      return "dp-cp";
    case Dim::Edp:
      return "edp";
  }
  return "?";
}

Placement::Placement(const Layout& layout, std::string_view order)
    : ep_(layout.ep), etp_(layout.expert_tp > 0 ? layout.expert_tp : layout.tp) {
  sizes_ = {layout.tp, layout.cp, layout.dp, layout.pp};
  for (int s : sizes_)
    SIM_ASSERT(s > 0, "placement of a layout with a non-positive size");
  SIM_ASSERT(layout.tp % etp_ == 0, "expert_tp divides tp (resolve_layout's expert-tp rule)");
  SIM_ASSERT(static_cast<long long>(layout.tp) * layout.dp * layout.cp % (static_cast<long long>(ep_) * etp_) == 0,
             "ep * expert_tp divides tp*dp*cp (resolve_layout's ep-dp-cp rule)");

  std::array<bool, 4> seen{};
  std::array<int, 4> position{};
  int stride = 1;
  int n = 0;
  std::size_t start = 0;
  while (start <= order.size()) {
    const auto dash = order.find('-', start);
    const auto name = order.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start);
    int axis = -1;
    if (name == "tp") axis = kTp;
    if (name == "cp") axis = kCp;
    if (name == "dp") axis = kDp;
    if (name == "pp") axis = kPp;
    SIM_ASSERT(axis >= 0 && !seen[static_cast<std::size_t>(axis)] && n < 4,
               "placement order names tp, cp, dp, pp once each (ParallelConfig::parse validates it)");
    const auto a = static_cast<std::size_t>(axis);
    seen[a] = true;
    position[a] = n++;
    strides_[a] = stride;
    stride *= sizes_[a];
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  SIM_ASSERT(n == 4, "placement order names all four dimensions");
  total_ = stride;
  cp_inside_dp_ = position[kCp] < position[kDp];
}

int Placement::gpu(int tp, int cp, int dp, int pp) const {
  SIM_ASSERT(tp >= 0 && tp < sizes_[kTp] && cp >= 0 && cp < sizes_[kCp] && dp >= 0 && dp < sizes_[kDp] && pp >= 0 &&
                 pp < sizes_[kPp],
             "rank coordinate out of range");
  return tp * strides_[kTp] + cp * strides_[kCp] + dp * strides_[kDp] + pp * strides_[kPp];
}

Coord Placement::coord(int gpu) const {
  SIM_ASSERT(gpu >= 0 && gpu < total_, "GPU id out of range");
  auto index = [&](Axis a) { return gpu / strides_[a] % sizes_[a]; };
  return Coord{index(kTp), index(kCp), index(kDp), index(kPp)};
}

int Placement::combined_dp(const Coord& c) const {
  return cp_inside_dp_ ? c.cp + sizes_[kCp] * c.dp : c.dp + sizes_[kDp] * c.cp;
}

Coord Placement::from_combined(Coord base, int j) const {
  if (cp_inside_dp_) {
    base.cp = j % sizes_[kCp];
    base.dp = j / sizes_[kCp];
  } else {
    base.dp = j % sizes_[kDp];
    base.cp = j / sizes_[kDp];
  }
  return base;
}

Coord Placement::from_slot(Coord base, int i) const {
  base.tp = i % sizes_[kTp];
  return from_combined(base, i / sizes_[kTp]);
}

int Placement::ep_rank(int gpu) const {
  return slot_index(coord(gpu)) / etp_ % ep_;
}

int Placement::size(Dim d) const {
  switch (d) {
    case Dim::Tp:
      return sizes_[kTp];
    case Dim::Cp:
      return sizes_[kCp];
    case Dim::Dp:
      return sizes_[kDp];
    case Dim::Pp:
      return sizes_[kPp];
    case Dim::Ep:
      return ep_;
    case Dim::Etp:
      return etp_;
    case Dim::DpCp:
      return sizes_[kDp] * sizes_[kCp];
    case Dim::Edp:
      return sizes_[kTp] * sizes_[kDp] * sizes_[kCp] / (ep_ * etp_);
  }
  return 1;
}

bool Placement::aligned_with(Dim d, int block) const {
  auto nests = [block](int n) { return n % block == 0 || block % n == 0; };
  auto axis = [&](Axis a) { return nests(strides_[a]) && nests(strides_[a] * sizes_[a]); };
  switch (d) {
    case Dim::Tp:
    case Dim::Etp:
      return axis(kTp);
    case Dim::Cp:
      return axis(kCp);
    case Dim::Dp:
      return axis(kDp);
    case Dim::Pp:
      return axis(kPp);
    case Dim::DpCp:
      return axis(kCp) && axis(kDp);
    case Dim::Ep:
    case Dim::Edp:
      return axis(kTp) && axis(kCp) && axis(kDp);
  }
  return false;
}

std::vector<int> Placement::group(Dim d, int gpu) const {
  const Coord c = coord(gpu);
  std::vector<int> members;
  members.reserve(static_cast<std::size_t>(size(d)));
  if (d == Dim::Ep || d == Dim::Etp || d == Dim::Edp) {
    // i = etp_index + expert_tp * (ep_index + ep * edp_index) (see the class comment).
    const int i = slot_index(c);
    const int etp_index = i % etp_;
    const int rest = i / etp_;
    for (int e = 0; e < size(d); ++e) {
      const int member = d == Dim::Ep    ? etp_index + etp_ * (e + ep_ * (rest / ep_))
                         : d == Dim::Etp ? rest * etp_ + e
                                         : etp_index + etp_ * (rest % ep_ + ep_ * e);
      members.push_back(this->gpu(from_slot(c, member)));
    }
    return members;
  }
  if (d == Dim::DpCp) {
    for (int j = 0; j < size(d); ++j)
      members.push_back(this->gpu(from_combined(c, j)));
    return members;
  }
  for (int i = 0; i < size(d); ++i) {
    Coord m = c;
    if (d == Dim::Tp) m.tp = i;
    if (d == Dim::Cp) m.cp = i;
    if (d == Dim::Dp) m.dp = i;
    if (d == Dim::Pp) m.pp = i;
    members.push_back(this->gpu(m));
  }
  return members;
}

}  // namespace sim::parallel
