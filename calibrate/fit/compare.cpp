// calibrate/fit/compare.cpp: grouping of nccl-tests rows and their comparison with trainsim's collective model.
#include "calibrate/fit/compare.hpp"

#include "sim/base/assert.hpp"
#include "sim/base/errors.hpp"

#include <algorithm>
#include <cmath>

namespace calibrate::fit {

const char* to_string(Column c) {
  switch (c) {
    case Column::OutOfPlace:
      return "out-of-place";
    case Column::InPlace:
      return "in-place";
    case Column::Fastest:
      return "fastest";
  }
  return "?";
}

std::optional<Column> column_from_string(std::string_view s) {
  for (const Column c : {Column::OutOfPlace, Column::InPlace, Column::Fastest})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

std::vector<LogGroup> log_groups(std::span<const Measurement> measurements, Column column) {
  std::vector<LogGroup> groups;
  for (const Measurement& m : measurements) {
    if (m.kind != Kind::Collective) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&m](const LogGroup& x) {
      return x.op == m.collective && x.ranks == m.ranks && x.nodes == m.nodes;
    });
    if (g == groups.end()) {
      groups.push_back({m.collective, m.ranks, m.nodes, {}});
      g = groups.end() - 1;
    }
    auto same =
        std::find_if(g->points.begin(), g->points.end(), [&m](const Measurement& x) { return x.bytes == m.bytes; });
    if (same == g->points.end()) {
      g->points.push_back(m);
    } else if (column == Column::Fastest) {
      if (m.time.s < same->time.s) *same = m;
    } else if (same->in_place.value_or(false) != (column == Column::InPlace) &&
               m.in_place.value_or(false) == (column == Column::InPlace)) {
      *same = m;  // the asked-for column wins over the other
    }
  }
  for (auto& g : groups)
    std::stable_sort(g.points.begin(), g.points.end(),
                     [](const Measurement& a, const Measurement& b) { return a.bytes < b.bytes; });
  return groups;
}

sim::collectives::Op sim_op(CollectiveOp op) {
  const auto o = sim::collectives::op_from_nccl_name(to_string(op));
  SIM_ASSERT(o.has_value(), "a measurement op without a sim/collectives op");
  return *o;
}

std::vector<sim::collectives::SweepRow> predict_group(const LogGroup& g, const sim::topology::TopologyConfig& cluster,
                                                      const sim::collectives::CallCosts& costs,
                                                      sim::collectives::Algorithm algorithm,
                                                      const std::string& origin) {
  int per_node = 0;
  if (g.nodes > 0) {
    if (g.ranks % g.nodes != 0)
      throw sim::base::ConfigError(origin, "",
                                   std::to_string(g.ranks) + " ranks over " + std::to_string(g.nodes) +
                                       " hosts are not the same number on each host; trainsim models even groups");
    per_node = g.ranks / g.nodes;
  }
  auto problems = sim::collectives::validate_sweep_cluster(cluster, g.ranks, per_node);
  if (!problems.empty()) {
    for (auto& d : problems) {
      d.message = std::string(to_string(g.op)) + " over " + std::to_string(g.ranks) + " ranks: " + d.path.substr(1) +
                  " " + d.message + " (--hardware: a profile whose node matches the log's hosts)";
      d.file = origin;
      d.path.clear();
    }
    throw sim::base::ConfigError(std::move(problems));
  }
  const auto c = sim::collectives::sweep_cluster(cluster, g.ranks, per_node);
  std::vector<sim::base::Bytes> sizes;
  sizes.reserve(g.points.size());
  for (const auto& m : g.points)
    sizes.push_back(m.bytes);
  return sim::collectives::sweep(sim_op(g.op), algorithm, c.group, sizes, costs, *c.topology);
}

Comparison compare(const LogGroup& g, std::span<const sim::collectives::SweepRow> predicted, double tolerance) {
  SIM_ASSERT(predicted.size() == g.points.size(), "a prediction per measured size");
  Comparison c;
  c.group = g;
  for (std::size_t i = 0; i < g.points.size(); ++i) {
    const Measurement& m = g.points[i];
    const auto& p = predicted[i];
    ComparedSize s;
    s.size = m.bytes;
    s.measured_us = m.time.s * 1e6;
    s.predicted_us = static_cast<double>(p.time.ns) / 1e3;
    s.measured_busbw = busbw(m).gbytes_per_s();
    s.predicted_busbw = p.busbw.gbytes_per_s();
    s.algorithm = sim::collectives::to_string(p.algorithm);
    s.launch_bound = p.launch_bound;
    s.time_ratio = s.measured_us > 0 ? s.predicted_us / s.measured_us : 0;
    s.busbw_ratio = s.measured_busbw > 0 ? s.predicted_busbw / s.measured_busbw : 0;
    s.off = std::abs(s.time_ratio - 1.0) > tolerance;
    if (m.bytes.n >= kLargeBytes) {
      ++c.large;
      const double e = std::abs(s.busbw_ratio - 1.0);
      c.large_max_error = std::max(c.large_max_error, e);
      if (e <= kLargeTolerance) ++c.large_within;
    }
    if (m.bytes.n <= kSmallBytes) {
      ++c.small;
      const double e = std::abs(s.time_ratio - 1.0);
      c.small_max_error = std::max(c.small_max_error, e);
      if (e <= kSmallTolerance) ++c.small_within;
    }
    c.sizes.push_back(s);
  }
  return c;
}

}  // namespace calibrate::fit
