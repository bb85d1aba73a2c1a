// calibrate/fit/fit_model.cpp: latencies and network efficiency fitted by running the simulator's collective model.
#include "calibrate/fit/fit_model.hpp"

#include "calibrate/fit/compare.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
  if (base.nvlink.sharp) cluster.nvls_bw = sim::base::Bandwidth{base.nvlink.bandwidth.bytes_per_s * c.efficiency.nvls};
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

// NVLink SHARP: where trainsim runs the largest size of an all-reduce inside one NVLink domain as NVLS, that run's
// rate is efficiency.nvls's, which efficiency.nvlink (fitted from the same run's busbw) does not touch. Found by a user
// trial: a profile fitted to an 8 x H100 log at 366 GB/s still predicted NVLS's 482 GB/s for it, 32% fast.
void fit_nvls(Calibration& c, const std::vector<LogGroup>& groups, const sim::hardware::HardwareProfile& base,
              const sim::topology::TopologyConfig& cluster, sim::collectives::Algorithm algorithm) {
  const LogGroup* dom =
      widest(groups, [](const LogGroup& g) { return g.nodes == 1 && g.ranks >= 2 && g.op == CollectiveOp::AllReduce; });
  if (!dom || !base.nvlink.sharp) return;
  LogGroup top = *dom;
  top.points = {dom->points.back()};
  const auto at = [&](double efficiency) {
    Calibration trial = c;
    trial.efficiency.nvls = efficiency;
    return predict_group(top, at_fitted(cluster, trial, base), {}, algorithm, describe(*dom)).front();
  };
  if (at(c.efficiency.nvls).algorithm != sim::collectives::Algorithm::Nvls) {
    if (algorithm == sim::collectives::Algorithm::Ring)
      c.notes.push_back(describe(*dom) + ": fitted as rings (--algorithm ring); efficiency.nvls kept at the base " +
                        "profile's " + fmt(c.efficiency.nvls) + ", and trainsim runs NVLS where it is faster: set " +
                        "nvlink.sharp false in the profile if this system has no NVLink SHARP");
    return;
  }
  const double measured = top.points.front().time.s * 1e9;
  double lo = 0.1, hi = 1.0;  // Efficiency::parse's range
  if (static_cast<double>(at(hi).time.ns) > measured) {
    lo = hi;
    c.notes.push_back(describe(*dom) + ": faster than NVLS at the full NVLink rate; efficiency.nvls set to 1");
  } else if (static_cast<double>(at(lo).time.ns) < measured) {
    hi = lo;
    c.notes.push_back(describe(*dom) + ": slower than NVLS at 0.1 of the NVLink rate; efficiency.nvls set to 0.1");
  }
  for (int i = 0; i < 50 && hi - lo > 1e-6; ++i) {  // the predicted time falls as the fraction grows
    const double mid = 0.5 * (lo + hi);
    (static_cast<double>(at(mid).time.ns) > measured ? lo : hi) = mid;
  }
  c.efficiency.nvls = std::round(hi * 1e4) / 1e4;
  c.fitted.push_back("nvls");
  c.provenance["efficiency.nvls"] =
      "trainsim-calibrate fit: fraction of the NVLink bandwidth at which trainsim's NVLS all-reduce (sim/collectives) "
      "takes the measured " +
      fmt(measured / 1e3) + " us for " + describe(*dom) + " at " + std::to_string(top.points.front().bytes.n) +
      " B, by bisection; measured on " + c.context;
  c.notes.push_back(describe(*dom) + ": its largest size is timed as NVLS, so it sets efficiency.nvls (" +
                    fmt(c.base_efficiency.nvls) + " -> " + fmt(c.efficiency.nvls) +
                    "); if it was measured without NVLink SHARP (NCCL_NVLS_ENABLE=0, or a system without it), set "
                    "nvlink.sharp false in the profile instead");
}

}  // namespace

void fit_with_model(Calibration& c, std::span<const Measurement> measurements,
                    const sim::hardware::HardwareProfile& base, sim::topology::TopologyConfig cluster,
                    sim::collectives::Algorithm algorithm) {
  using sim::collectives::Algorithm;
  const std::vector<LogGroup> groups = log_groups(measurements, Column::Fastest);

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
                      "goes to the call costs (latency.launch and latency.base, below)");
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
  if (net && predict_group(largest, at_fitted(cluster, c, base), {}, algorithm, describe(*net)).front().algorithm ==
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
      const auto rows = predict_group(largest, at_fitted(cluster, trial, base), {}, algorithm, describe(*net));
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
    // NCCL's rings reach 80-90% of an InfiniBand NIC's line rate (nccl-tests' busbw on healthy RDMA fabrics), so a
    // fraction below one half says more about the hosts than about NCCL: say so rather than keep it without comment.
    if (c.efficiency.network < 0.5 && fraction > 0.01) {  // 0.01 has its own note above
      const double per_gpu = base.network.nic_bandwidth.bytes_per_s * base.network.nics_per_gpu;
      c.notes.push_back(
          describe(*net) + ": efficiency.network " + fmt(c.efficiency.network) + " means these hosts moved data at " +
          fmt(c.efficiency.network * per_gpu / 1e9, 3) + " GB/s per GPU against the base profile's " +
          fmt(per_gpu / 1e9, 3) + " GB/s (" + std::to_string(base.network.nics_per_gpu) + " NIC(s) per GPU at " +
          fmt(base.network.nic_bandwidth.bytes_per_s * 8 / 1e9, 4) +
          " Gbit/s). Healthy RDMA fabrics reach 0.8-0.9 of it, so check that the hosts have the profile's NICs (set "
          "network.nics_per_gpu and network.nic_bandwidth to theirs if not) and that NCCL used them (NCCL_DEBUG=INFO "
          "prints NET/IB, not NET/Socket) before planning with this value");
    }
    if (std::find(c.fitted.begin(), c.fitted.end(), "network") == c.fitted.end()) c.fitted.push_back("network");
    c.provenance["efficiency.network"] =
        "trainsim-calibrate fit: fraction of the NIC bandwidth at which trainsim's collective model (sim/collectives, "
        "algorithm " +
        std::string(sim::collectives::to_string(algorithm)) + ") takes the measured " + fmt(measured / 1e3) +
        " us for " + describe(*net) + " at " + std::to_string(largest.points.front().bytes.n) +
        " B, by bisection; measured on " + c.context;
  }

  fit_nvls(c, groups, base, cluster, algorithm);

  // The call costs: what the simulator's per-step latencies leave unexplained for small messages, as the host's
  // issue time per call (launch, one for every op) and a fixed cost per op (base). The launch is fitted with the base
  // of the widest run (all-reduce first); the other ops' bases at that launch.
  const auto small_of = [](const LogGroup& g) {
    LogGroup small = g;
    small.points.clear();
    for (const auto& m : g.points)  // a 0-byte call is a no-op in NCCL (nothing launched): no latency to learn
      if (m.bytes.n > 0 && m.bytes.n <= kLatencyBoundBytes) small.points.push_back(m);
    return small;
  };
  const auto simulated = [&](const LogGroup& small, const LogGroup& of) {
    const auto rows = predict_group(small, at_fitted(cluster, c, base), {}, algorithm, describe(of));
    std::vector<double> ns;
    for (const auto& r : rows)
      ns.push_back(static_cast<double>(r.time.ns));
    return ns;
  };
  const auto measured_ns = [](const LogGroup& small) {
    std::vector<double> ns;
    for (const auto& m : small.points)
      ns.push_back(m.time.s * 1e9);
    return ns;
  };
  const LogGroup* first = widest(groups, [](const LogGroup& x) {
    return x.ranks >= 2 && !x.points.empty() && x.points.front().bytes.n <= kLatencyBoundBytes;
  });
  double launch = 0;
  std::vector<double> first_sim_ns;  // the first group's simulated small sizes, reused by its op's base below
  if (first) {
    const LogGroup small = small_of(*first);
    first_sim_ns = simulated(small, *first);
    const CallCostFit f = fit_call_costs(measured_ns(small), first_sim_ns, std::nullopt);
    launch = f.launch_ns;
    // The host's issue time is seen directly where the ranks share one host: a multi-host run's flat small-message
    // time is network latency as well, and a floor fitted to it cannot exceed the fastest call a one-host log of the
    // same machines measured (a user trial: a four-node all-reduce's 40 us became the launch over a one-node log of
    // 10 us, predicted 4x slow). The rest goes to the op's base cost below. Capped by every log instead, the 15-log
    // nccl-tests acceptance fell from 6 to 3 (their multi-host logs are fitted best by the widest run's floor).
    if (first->nodes >= 2) {
      double one_host_ns = std::numeric_limits<double>::infinity();
      for (const auto& g : groups)
        if (g.ranks >= 2 && g.nodes == 1)
          for (const auto& m : g.points)
            if (m.bytes.n > 0) one_host_ns = std::min(one_host_ns, m.time.s * 1e9);
      if (launch > one_host_ns) {
        c.notes.push_back(describe(*first) + ": a launch floor of " + fmt(launch / 1e3) +
                          " us would exceed the fastest call measured on one host (" + fmt(one_host_ns / 1e3) +
                          " us); capped there, and the rest of its small-message time fitted as its base cost");
        launch = one_host_ns;
      }
    }
    if (launch > 0) {
      c.latency.launch = sim::base::Time{static_cast<std::int64_t>(std::llround(launch))};
      c.latency_fitted.push_back("launch");
      c.provenance["latency.launch"] =
          "trainsim-calibrate fit: with latency.base." + std::string(to_string(first->op)) +
          ", the pair minimising the squared log error of max(launch, base + simulated time) against the measured "
          "time (the faster of nccl-tests' two columns) over " +
          std::to_string(small.points.size()) + " sizes <= 1 MiB of " + describe(*first) + ", measured on " +
          c.context +
          ": nccl-tests issues its iterations back to back, so a call cannot complete faster than the "
          "host issues it";
    }
  }
  for (std::size_t i = 0; i < sim::hardware::kCollectiveNames.size(); ++i) {
    const auto op = static_cast<CollectiveOp>(i);
    const LogGroup* g = widest(groups, [op](const LogGroup& x) { return x.op == op && x.ranks >= 2; });
    if (!g) continue;
    const LogGroup small = small_of(*g);
    if (small.points.empty()) continue;
    const std::vector<double> sim_ns = g == first ? first_sim_ns : simulated(small, *g);
    const std::vector<double> meas_ns = measured_ns(small);
    const CallCostFit f = fit_call_costs(meas_ns, sim_ns, launch);
    if (f.base_ns == 0 && launch == 0) {
      std::vector<double> gaps;
      for (std::size_t k = 0; k < sim_ns.size(); ++k)
        gaps.push_back(meas_ns[k] - sim_ns[k]);
      if (const double gap = median(gaps); gap < 0)
        c.notes.push_back(describe(*g) + ": the simulator's latency exceeds the measured small-message time by " +
                          fmt(-gap / 1e3) + " us; latency.base." + sim::hardware::kCollectiveNames[i] + " set to 0");
    }
    c.latency.base[i] = sim::base::Time{static_cast<std::int64_t>(std::llround(f.base_ns))};
    const std::string key = std::string("base.") + sim::hardware::kCollectiveNames[i];
    c.latency_fitted.push_back(key);
    c.provenance["latency." + key] =
        "trainsim-calibrate fit: the fixed cost b minimising the squared log error of max(launch, b + simulated "
        "time) against the measured time (the faster of nccl-tests' two columns) over " +
        std::to_string(small.points.size()) + " sizes <= 1 MiB of " + describe(*g) + " (sim/collectives, algorithm " +
        std::string(sim::collectives::to_string(algorithm)) + ", fitted latencies, launch " + fmt(launch / 1e3) +
        " us), measured on " + c.context + "; NCCL's tuner models the same fixed cost as baseLat (src/graph/tuning.cc)";
  }
}

CallCostFit fit_call_costs(std::span<const double> measured_ns, std::span<const double> simulated_ns,
                           std::optional<double> launch_ns) {
  SIM_ASSERT(measured_ns.size() == simulated_ns.size(), "a simulated time per measured size");
  CallCostFit best;
  if (measured_ns.empty()) return best;
  double max_gap = 0, max_measured = 0;
  for (std::size_t k = 0; k < measured_ns.size(); ++k) {
    max_gap = std::max(max_gap, measured_ns[k] - simulated_ns[k]);
    max_measured = std::max(max_measured, measured_ns[k]);
  }
  const auto error = [&](double launch, double b) {
    double e = 0;
    for (std::size_t k = 0; k < measured_ns.size(); ++k) {
      const double predicted = std::max(launch, b + simulated_ns[k]);
      const double r = predicted > 0 && measured_ns[k] > 0 ? std::log(predicted / measured_ns[k]) : 0.0;
      e += r * r;
    }
    return e;
  };
  // A grid over [0, max gap] x [0, max measured] (the launch fixed when given), refined twice around the best point.
  // Ties go to the smallest launch, then the smallest base: the launch is only what the additive cost cannot explain.
  constexpr int kSteps = 200;
  double b_lo = 0, b_hi = std::max(max_gap, 0.0);
  double l_lo = launch_ns.value_or(0), l_hi = launch_ns.value_or(max_measured);
  best.error = error(l_lo, b_lo);
  best.launch_ns = l_lo;
  for (int pass = 0; pass < 3; ++pass) {
    const double b_step = (b_hi - b_lo) / kSteps, l_step = (l_hi - l_lo) / kSteps;
    for (int li = 0; li <= (launch_ns ? 0 : kSteps); ++li) {
      for (int bi = 0; bi <= kSteps; ++bi) {
        const double l = l_lo + li * l_step, b = b_lo + bi * b_step;
        const double e = error(l, b);
        if (e < best.error * (1 - 1e-9)) best = {l, b, e};
      }
    }
    b_lo = std::max(0.0, best.base_ns - b_step);
    b_hi = best.base_ns + b_step;
    if (!launch_ns) {
      l_lo = std::max(0.0, best.launch_ns - l_step);
      l_hi = best.launch_ns + l_step;
    }
  }
  // A launch below every predicted time changes nothing: report it as none.
  double lowest = std::numeric_limits<double>::infinity();
  for (const double s : simulated_ns)
    lowest = std::min(lowest, best.base_ns + s);
  if (!launch_ns && best.launch_ns <= lowest) best.launch_ns = 0;
  return best;
}

}  // namespace calibrate::fit
