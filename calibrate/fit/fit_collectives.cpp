// calibrate/fit/fit_collectives.cpp: weighted alpha-beta fits per collective and scope.
#include "calibrate/fit/fit_collectives.hpp"

#include "calibrate/fit/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace calibrate::fit {
namespace {

std::string group_name(CollectiveOp op, Scope scope) {
  return std::string(to_string(op)) + " over " + to_string(scope);
}

std::string fmt(double v, int precision = 4) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

}  // namespace

int collective_steps(CollectiveOp op, int p) {
  if (p <= 1) return op == CollectiveOp::SendRecv ? 1 : 0;
  switch (op) {
    case CollectiveOp::AllReduce:
      return 2 * (p - 1);
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
    case CollectiveOp::Broadcast:
      return p - 1;
    case CollectiveOp::SendRecv:
      return 1;
  }
  return 1;
}

sim::base::Duration AlphaBeta::latency() const {
  return sim::base::Duration{collective_steps(op, max_ranks) * alpha.s};
}

sim::base::Duration AlphaBeta::predict(sim::base::Bytes n, int p) const {
  return sim::base::Duration{collective_steps(op, p) * alpha.s +
                             busbw_factor(op, p) * static_cast<double>(n.n) / busbw.bytes_per_s};
}

AlphaBeta fit_alpha_beta(CollectiveOp op, Scope scope, std::span<const Measurement> points) {
  const std::string group = group_name(op, scope);
  if (points.size() < 3)
    throw FitError(group + ": " + std::to_string(points.size()) +
                   " measurements; an alpha-beta fit needs at least 3 (sizes from a few KiB, where latency dominates, "
                   "to hundreds of MiB, where bandwidth does)");
  std::set<std::int64_t> sizes;
  std::vector<std::vector<double>> rows;
  std::vector<double> t;
  AlphaBeta ab;
  ab.op = op;
  ab.scope = scope;
  ab.min_ranks = points.front().ranks;
  ab.max_ranks = points.front().ranks;
  ab.min_bytes = points.front().bytes;
  ab.max_bytes = points.front().bytes;
  for (const auto& m : points) {
    rows.push_back({static_cast<double>(collective_steps(op, m.ranks)),
                    busbw_factor(op, m.ranks) * static_cast<double>(m.bytes.n)});
    t.push_back(m.time.s);
    sizes.insert(m.bytes.n);
    ab.min_ranks = std::min(ab.min_ranks, m.ranks);
    ab.max_ranks = std::max(ab.max_ranks, m.ranks);
    ab.min_bytes = std::min(ab.min_bytes, m.bytes);
    ab.max_bytes = std::max(ab.max_bytes, m.bytes);
  }
  if (sizes.size() < 2)
    throw FitError(group + ": every measurement has the same size (" + std::to_string(*sizes.begin()) +
                   " bytes), which cannot separate latency from bandwidth; measure a range of sizes");
  const auto w = relative_weights(t);
  const auto fit = weighted_least_squares(rows, t, w);
  if (!fit)
    throw FitError(group + ": the " + std::to_string(points.size()) +
                   " measurements cannot separate latency from bandwidth; measure a range of sizes");
  const double alpha = fit->coef[0];
  const double beta = fit->coef[1];
  if (beta <= 0)
    throw FitError(group + ": inconsistent measurements: the time does not grow with the size (fitted " +
                   fmt(beta * 1e9) + " s/GB); check that the sizes are nccl-tests' per-rank bytes");
  if (alpha < 0)
    throw FitError(group + ": inconsistent measurements: the fitted latency is negative (" + fmt(alpha * 1e6) +
                   " us per step): the small sizes run faster than the line through the large ones allows; check the "
                   "smallest sizes or the rank counts");
  ab.alpha = sim::base::Duration{alpha};
  ab.busbw = sim::base::Bandwidth{1.0 / beta};
  ab.r2 = fit->r2;
  ab.rms_rel = fit->rms_rel;
  ab.max_rel = fit->max_rel;
  ab.points = static_cast<int>(points.size());
  return ab;
}

std::vector<AlphaBeta> fit_collectives(std::span<const Measurement> measurements, std::vector<std::string>& notes) {
  std::map<std::pair<CollectiveOp, Scope>, std::vector<Measurement>> groups;
  std::map<CollectiveOp, int> single_rank;
  for (const auto& m : measurements) {
    if (m.kind != Kind::Collective) continue;
    if (m.ranks < 2) {
      ++single_rank[m.collective];
      continue;
    }
    groups[{m.collective, m.scope}].push_back(m);
  }
  for (const auto& [op, count] : single_rank)
    notes.push_back("left out " + std::to_string(count) + " " + to_string(op) +
                    " measurements over 1 rank: they move no bytes between GPUs (a single-GPU machine exercises "
                    "NCCL with one rank only)");
  std::vector<AlphaBeta> out;
  for (const auto& [key, points] : groups)
    out.push_back(fit_alpha_beta(key.first, key.second, points));
  return out;
}

}  // namespace calibrate::fit
