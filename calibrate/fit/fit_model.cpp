// calibrate/fit/fit_model.cpp: latencies and network efficiency fitted by running the simulator's collective model.
#include "calibrate/fit/fit_model.hpp"

#include "calibrate/fit/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace calibrate::fit {
namespace {

constexpr std::int64_t kLatencyBoundBytes = std::int64_t{1} << 20;  // the small-message range

std::string fmt(double v, int precision = 4) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

std::string describe(const LogGroup& g) {
  return std::string(to_string(g.op)) + " over " + std::to_string(g.ranks) + " ranks on " + std::to_string(g.nodes) +
         " hosts";
}

// The cluster at the efficiencies and latencies fitted so far (topology::profile_cluster applied the base ones).
sim::topology::TopologyConfig at_fitted(sim::topology::TopologyConfig cluster, const Calibration& c,
                                        const sim::hardware::HardwareProfile& base) {
  cluster.nvlink_bw = sim::base::Bandwidth{base.nvlink.bandwidth.bytes_per_s * c.efficiency.nvlink};
  cluster.nic_bw = sim::base::Bandwidth{cluster.nic_bw.bytes_per_s / base.efficiency.network * c.efficiency.network};
  if (c.latency.nvlink) cluster.nvlink_latency = *c.latency.nvlink;
  return cluster;
}

const AlphaBeta* nvlink_fit(const std::vector<AlphaBeta>& fits) {
  const AlphaBeta* first = nullptr;
  for (const auto& f : fits) {
    if (f.scope != Scope::Nvlink) continue;
    if (f.op == CollectiveOp::AllReduce) return &f;
    if (!first) first = &f;
  }
  return first;
}

// The run with the most ranks among `groups` passing `keep`, preferring all-reduce; null when none.
template <class Keep>
const LogGroup* widest(const std::vector<LogGroup>& groups, Keep keep) {
  const LogGroup* best = nullptr;
  for (const auto& g : groups) {
    if (!keep(g) || g.points.empty()) continue;
    const bool better = !best || (g.op == CollectiveOp::AllReduce && best->op != CollectiveOp::AllReduce) ||
                        (g.op == best->op && g.ranks > best->ranks);
    if (better) best = &g;
  }
  return best;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void fit_with_model(Calibration& c, std::span<const Measurement> measurements,
                    const sim::hardware::HardwareProfile& base, sim::topology::TopologyConfig cluster,
                    sim::collectives::Algorithm algorithm) {
  using sim::collectives::Algorithm;
  const std::vector<LogGroup> groups = log_groups(measurements, /*fastest=*/true);
  const sim::collectives::BaseLatency zero{};

  const AlphaBeta* nvl = nvlink_fit(c.collectives);
  if (nvl && nvl->min_bytes.n > kLatencyBoundBytes) {
    c.notes.push_back(std::string(to_string(nvl->op)) +
                      " over NVLink: no size <= 1 MiB measured, so its alpha is not a " +
                      "latency; latency.nvlink left to the base profile");
    nvl = nullptr;
  }
  if (nvl && nvl->min_ranks == nvl->max_ranks) {
    c.notes.push_back(std::string(to_string(nvl->op)) + " over NVLink: measured at " + std::to_string(nvl->min_ranks) +
                      " ranks only, where a latency per step and a fixed cost per " +
                      "call cannot be told apart; latency.nvlink left to the base profile, the small-message time " +
                      "goes to latency.base");
    nvl = nullptr;
  }
  if (const AlphaBeta* ab = nvl; ab && ab->alpha.s > 0) {
    c.latency.nvlink = sim::base::Time{static_cast<std::int64_t>(std::llround(ab->alpha.s * 1e9))};
    c.latency_fitted.push_back("nvlink");
    c.provenance["latency.nvlink"] =
        "trainsim-calibrate fit: alpha per step of " + std::string(to_string(ab->op)) +
        " over NVLink, t = steps(p) alpha + busbw_factor(p) n / busbw by weighted least squares over " +
        std::to_string(ab->points) + " measurements on " + c.context +
        " (the ring closed form's step is the "
        "simulator's NVLink step)";
  }

  // Network efficiency by inverting the simulator where busbw is not one NIC's rate.
  const LogGroup* net = widest(groups, [](const LogGroup& g) { return g.nodes >= 2 && g.ranks > g.nodes; });
  LogGroup largest;  // the run's largest size, where bandwidth decides
  if (net) {
    largest = *net;
    largest.points = {net->points.back()};
  }
  if (net && predict_group(largest, at_fitted(cluster, c, base), zero, algorithm, describe(*net)).front().algorithm ==
                 Algorithm::Nvls) {
    c.notes.push_back(describe(*net) + ": trainsim runs it as NVLS-tree, bound by the NVLink switches rather than " +
                      "the NICs, so it does not determine efficiency.network (kept at the base profile's " +
                      fmt(c.efficiency.network) + "); calibrate it from a run over more hosts, or one with " +
                      "NCCL_ALGO=Ring and --algorithm ring");
    net = nullptr;
  }
  if (net) {
    const double measured = largest.points.front().time.s * 1e9;
    auto predicted = [&](double efficiency) {
      Calibration trial = c;
      trial.efficiency.network = efficiency;
      const auto rows = predict_group(largest, at_fitted(cluster, trial, base), zero, algorithm, describe(*net));
      return static_cast<double>(rows.front().time.ns);
    };
    double lo = 0.01, hi = 1.0;
    double fraction = 1.0;
    if (predicted(hi) > measured) {
      c.notes.push_back(describe(*net) + ": the simulator is slower than measured even at the full NIC bandwidth " +
                        "(e.g. NVLink SHARP or in-network reduction); efficiency.network set to 1");
    } else if (predicted(lo) < measured) {
      fraction = lo;
      c.notes.push_back(describe(*net) + ": slower than the simulator at 1% of the NIC bandwidth; efficiency.network " +
                        "set to 0.01");
    } else {
      for (int i = 0; i < 50; ++i) {  // predicted time falls as the fraction grows
        const double mid = 0.5 * (lo + hi);
        (predicted(mid) > measured ? lo : hi) = mid;
      }
      fraction = hi;
    }
    c.efficiency.network = std::round(fraction * 1e4) / 1e4;
    if (std::find(c.fitted.begin(), c.fitted.end(), "network") == c.fitted.end()) c.fitted.push_back("network");
    c.provenance["efficiency.network"] =
        "trainsim-calibrate fit: fraction of the NIC bandwidth at which trainsim's collective model (sim/collectives, "
        "algorithm " +
        std::string(sim::collectives::to_string(algorithm)) + ") takes the measured " + fmt(measured / 1e3) +
        " us for " + describe(*net) + " at " + std::to_string(largest.points.front().bytes.n) +
        " B, by bisection; measured on " + c.context;
  }

  // Base latency per op: what the simulator's per-step latencies leave unexplained for small messages.
  for (std::size_t i = 0; i < sim::hardware::kCollectiveNames.size(); ++i) {
    const auto op = static_cast<CollectiveOp>(i);
    const LogGroup* g = widest(groups, [op](const LogGroup& x) { return x.op == op && x.ranks >= 2; });
    if (!g) continue;
    LogGroup small = *g;
    small.points.clear();
    for (const auto& m : g->points)
      if (m.bytes.n <= kLatencyBoundBytes) small.points.push_back(m);
    if (small.points.empty()) continue;
    const auto rows = predict_group(small, at_fitted(cluster, c, base), zero, algorithm, describe(*g));
    std::vector<double> gaps;
    for (std::size_t k = 0; k < rows.size(); ++k)
      gaps.push_back(small.points[k].time.s * 1e9 - static_cast<double>(rows[k].time.ns));
    double gap = median(gaps);
    if (gap < 0) {
      c.notes.push_back(describe(*g) + ": the simulator's latency exceeds the measured small-message time by " +
                        fmt(-gap / 1e3) + " us; latency.base." + sim::hardware::kCollectiveNames[i] + " set to 0");
      gap = 0;
    }
    c.latency.base[i] = sim::base::Time{static_cast<std::int64_t>(std::llround(gap))};
    const std::string key = std::string("base.") + sim::hardware::kCollectiveNames[i];
    c.latency_fitted.push_back(key);
    c.provenance["latency." + key] = "trainsim-calibrate fit: median over " + std::to_string(small.points.size()) +
                                     " sizes <= 1 MiB of measured (the faster of nccl-tests' two columns) minus "
                                     "simulated time (sim/collectives, algorithm " +
                                     std::string(sim::collectives::to_string(algorithm)) + ", fitted latencies) for " +
                                     describe(*g) + ", measured on " + c.context +
                                     "; NCCL's tuner models the same fixed cost as baseLat (src/graph/tuning.cc)";
  }
}

}  // namespace calibrate::fit
