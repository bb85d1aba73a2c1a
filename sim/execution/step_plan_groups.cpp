// sim/execution/step_plan_groups.cpp: where a layout's collective groups meet the NVLink domains: the GPU each
// pipeline rank's layer timings are taken on, and the notes `trainsim step` prints about groups across domains.
#include "sim/execution/step_planner.hpp"

#include "sim/parallel/placement.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace sim::execution {

namespace detail {

/// NVLink domains holding at least one member of `group`.
int domains_spanned(const topology::Topology& topo, const std::vector<int>& group) {
  std::vector<int> domains;
  domains.reserve(group.size());
  for (const int g : group)
    domains.push_back(topo.nvlink_domain_of(g));
  std::sort(domains.begin(), domains.end());
  return static_cast<int>(std::unique(domains.begin(), domains.end()) - domains.begin());
}

/// For each pipeline rank, the GPU whose layer collective groups (tensor, context, expert) span the most NVLink
/// domains: the rank's slowest groups, which its data-parallel peers wait for. The rank's first GPU unless a group
/// elsewhere in it crosses a domain's boundary. Only GPUs beside a boundary are looked at, and only for dimensions
/// whose groups meet the domains unevenly (Placement::aligned_with): on 8-GPU domains under power-of-two layouts none.
std::vector<int> layer_group_gpus(const parallel::Placement& placement, const topology::Topology& topo, int pp) {
  std::vector<int> out(static_cast<std::size_t>(pp));
  for (int r = 0; r < pp; ++r)
    out[static_cast<std::size_t>(r)] = placement.gpu(0, 0, 0, r);
  const int domain = topo.config().nvlink_domain;
  std::vector<parallel::Dim> dims;
  for (const auto d : kLayerDims)
    if (placement.size(d) > 1 && placement.size(d) <= domain && !placement.aligned_with(d, domain)) dims.push_back(d);
  if (dims.empty()) return out;
  auto score = [&](int gpu) {
    int s = 0;
    for (const auto d : dims)
      s += domains_spanned(topo, placement.group(d, gpu)) - 1;
    return s;
  };
  std::vector<int> best(static_cast<std::size_t>(pp));
  for (int r = 0; r < pp; ++r)
    best[static_cast<std::size_t>(r)] = score(out[static_cast<std::size_t>(r)]);
  for (int b = domain; b < placement.gpus(); b += domain)
    for (const int gpu : {b - 1, b}) {
      const auto r = static_cast<std::size_t>(placement.coord(gpu).pp);
      if (const int s = score(gpu); s > best[r]) best[r] = s, out[r] = gpu;
    }
  return out;
}

}  // namespace detail

std::vector<GroupAcrossDomains> groups_across_nvlink_domains(const StepInputs& in) {
  std::vector<GroupAcrossDomains> out;
  const auto& topo = *in.topology;
  const parallel::Placement placement(in.layout, in.parallel.order);
  const auto gpus = detail::layer_group_gpus(placement, topo, in.layout.pp);
  const int domain = topo.config().nvlink_domain;
  for (const auto dim : {parallel::Dim::Tp, parallel::Dim::Cp, parallel::Dim::Ep}) {
    for (int r = 0; r < in.layout.pp; ++r) {
      const auto g = placement.group(dim, gpus[static_cast<std::size_t>(r)]);
      if (g.size() < 2) continue;
      const int first = *std::min_element(g.begin(), g.end());
      const int last = *std::max_element(g.begin(), g.end());
      // A group whose members lie further apart than a domain holds (EP 8 beside TP 2 on 8-GPU nodes: GPUs 0-14)
      // crosses the network by its layout, wherever it is placed: not a boundary's doing, no note.
      if (last - first + 1 > domain) continue;
      const int n = detail::domains_spanned(topo, g);
      if (n < 2) continue;
      out.push_back({dim, r, first, last, n});
      break;
    }
  }
  return out;
}

std::optional<UnevenGroup> uneven_data_parallel_group(const StepInputs& in) {
  const auto& topo = *in.topology;
  const parallel::Placement placement(in.layout, in.parallel.order);
  for (int r = 0; r < in.layout.pp; ++r) {
    const auto g = placement.group(parallel::Dim::DpCp, placement.gpu(0, 0, 0, r));
    std::map<int, int> per_domain;  // NVLink domain -> the group's ranks in it
    for (const int gpu : g)
      ++per_domain[topo.nvlink_domain_of(gpu)];
    if (per_domain.size() < 2) continue;
    UnevenGroup u{r, g, {}};
    for (const auto& [domain, ranks] : per_domain)
      u.per_domain.push_back(ranks);
    if (*std::min_element(u.per_domain.begin(), u.per_domain.end()) !=
        *std::max_element(u.per_domain.begin(), u.per_domain.end()))
      return u;
  }
  return std::nullopt;
}

}  // namespace sim::execution
