// tests/unit/collectives_test_support.hpp: clusters, NCCL-protocol closed forms and a flow replay for collective tests.
// The replay is the engine's job in miniature: phases after one another, transfers as flows of the flow model.
#pragma once
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/network/flow_model.hpp"
#include "sim/topology/topology.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <vector>

// The namespace of the collectives tests (collectives_*test.cpp, each in an anonymous namespace inside it): they see
// these helpers and the names below unqualified.
namespace sim::collectives::tests {

using base::Bandwidth;
using base::Bytes;
using base::Time;
using topology::GpuId;
using topology::Topology;
using topology::TopologyConfig;
using namespace base::literals;  // NOLINT(google-build-using-namespace): unit literals only

inline TopologyConfig h100(int gpus) {
  TopologyConfig c;
  c.gpus = gpus;
  c.nvlink_bw = 450_GBps;
  c.nic_bw = 400_Gbps;
  return c;
}

inline const Time kNvl = topology::kDefaultNvlinkLatency;   // one NVLink step
inline const Time kNet = topology::kDefaultNicLatency * 2;  // one rail-local network step: NIC -> leaf -> NIC
inline const Bandwidth kNvlBw = 450_GBps;
inline const Bandwidth kNicBw = 400_Gbps;

// An H100 cluster whose NVSwitches reduce: NVLS at 0.69 of the NVLink rate (hardware efficiency.nvls's default).
inline TopologyConfig h100_sharp(int gpus) {
  TopologyConfig c = h100(gpus);
  c.nvls_bw = Bandwidth{0.69 * kNvlBw.bytes_per_s};
  return c;
}

// A closed form with NCCL's fastest protocol (sim/collectives/protocol.hpp): `form(a, b)` gets the protocol's step
// latency a(latency, network) and bandwidth b(bandwidth); the protocol's fixed cost is added. LL is the identity, so
// these are the closed forms of closed_form.hpp whenever LL wins.
template <typename Form>
Time fastest_protocol(bool tree, int domains, int ranks_per_domain, bool gather_or_scatter, Form form) {
  Time best = Time::max();
  for (Protocol p : kProtocols) {
    const ProtocolTerms t = protocol_terms(p, tree, domains, ranks_per_domain, gather_or_scatter);
    const auto a = [&t](Time x, bool network) { return t.latency(x, network); };
    const auto b = [&t](Bandwidth bw) { return Bandwidth{t.effective(bw.bytes_per_s)}; };
    best = std::min(best, t.base + form(a, b));
  }
  return best;
}

inline std::vector<GpuId> iota(int first, int count, int stride = 1) {
  std::vector<GpuId> g;
  for (int i = 0; i < count; ++i)
    g.push_back(first + i * stride);
  return g;
}

// The engine's job in miniature: runs collectives concurrently, each phase after the previous one of the same
// collective: wait its latency, start its transfers on their topology paths, end when the last completes.
// Returns each collective's completion time.
inline std::vector<Time> simulate(const std::vector<std::vector<Phase>>& collectives, const Topology& topo) {
  struct Run {
    std::size_t next = 0;  // next phase to start
    std::size_t outstanding = 0;
    Time ready = 0_ns;  // when the previous phase ended
  };
  std::vector<Run> runs(collectives.size());
  network::FlowModel model(topo);
  std::map<network::FlowId, std::size_t> owner;
  std::vector<Time> done(collectives.size(), Time::max());
  while (true) {
    // The earliest phase start among runs between phases.
    std::size_t starter = runs.size();
    Time start_at = Time::max();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const Run& r = runs[i];
      if (r.outstanding != 0) continue;
      if (r.next == collectives[i].size()) {
        done[i] = std::min(done[i], r.ready);
        continue;
      }
      const Time at = r.ready + collectives[i][r.next].latency;
      if (at < start_at) {
        start_at = at;
        starter = i;
      }
    }
    const auto completion = model.next_completion();
    if (completion && completion->first <= start_at) {
      model.finish(completion->first, completion->second);
      Run& r = runs[owner.at(completion->second)];
      owner.erase(completion->second);
      if (--r.outstanding == 0) {
        r.ready = completion->first;
        ++r.next;
      }
      continue;
    }
    if (starter == runs.size()) break;
    Run& r = runs[starter];
    const Phase& ph = collectives[starter][r.next];
    for (const Transfer& x : ph.transfers)
      owner[model.start(start_at, topo.path(x.src, x.dst), x.bytes)] = starter;
    r.outstanding = ph.transfers.size();
    if (r.outstanding == 0) {
      r.ready = start_at;
      ++r.next;
    }
  }
  return done;
}

inline Time simulate_one(const std::vector<Phase>& phases, const Topology& topo) {
  return simulate({phases}, topo).front();
}

inline void expect_rel_near(Time actual, Time expected, double rel, const char* why) {
  EXPECT_NEAR(static_cast<double>(actual.ns), static_cast<double>(expected.ns), rel * static_cast<double>(expected.ns))
      << why << ": simulated " << actual.ns << " ns, closed form " << expected.ns << " ns";
}

}  // namespace sim::collectives::tests
