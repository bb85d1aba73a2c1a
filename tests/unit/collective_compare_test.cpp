// tests/unit/collective_compare_test.cpp: `trainsim-calibrate compare` and the fit against the simulator (issue 23):
// grouping of nccl-tests rows, ratios, the acceptance counts, and the latencies and network efficiency recovered from
// measurements that the simulator itself produced.
#include "calibrate/fit/calibration.hpp"
#include "calibrate/fit/compare.hpp"
#include "calibrate/fit/fit_model.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <optional>
#include <vector>

namespace {

using namespace calibrate::fit;  // NOLINT(google-build-using-namespace): the module under test
using sim::base::Bytes;
using sim::base::Time;

const std::string kNccl = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/nccl/";

sim::topology::TopologyConfig cluster_of(const std::string& hardware) {
  return sim::scenario::topology_config(sim::scenario::load_default_scenario({{"hardware", hardware}}));
}

TEST(CollectiveCompare, GroupsOneRunPerOpRanksAndHostsOutOfPlaceFirst) {
  const auto r = import_nccl_tests(kNccl + "h100-ib-8x400g-b/all_reduce_16ranks.txt", {});
  const auto groups = log_groups(r.records);
  ASSERT_EQ(groups.size(), 1U);
  EXPECT_EQ(groups[0].ranks, 16);
  EXPECT_EQ(groups[0].nodes, 2);
  ASSERT_EQ(groups[0].points.size(), 32U) << "8 B .. 16 GiB, one per size";
  EXPECT_FALSE(groups[0].points[0].in_place.value_or(true)) << "the out-of-place column";
  EXPECT_NEAR(groups[0].points[0].time.s, 68.52e-6, 1e-12);
}

// b's 16-rank log stalled once at 8 B out of place (68.52 us against 24.70 in place, and 24.96 at 16 B): the column
// asked for decides which time a size keeps.
TEST(CollectiveCompare, TheColumnAskedForDecidesWhichMeasurementASizeKeeps) {
  const auto r = import_nccl_tests(kNccl + "h100-ib-8x400g-b/all_reduce_16ranks.txt", {});
  const auto in_place = log_groups(r.records, Column::InPlace);
  const auto fastest = log_groups(r.records, Column::Fastest);
  ASSERT_EQ(in_place.size(), 1U);
  ASSERT_EQ(fastest.size(), 1U);
  EXPECT_TRUE(in_place[0].points[0].in_place.value_or(false));
  EXPECT_NEAR(in_place[0].points[0].time.s, 24.70e-6, 1e-12);
  EXPECT_NEAR(fastest[0].points[0].time.s, 24.70e-6, 1e-12) << "the stall is not the collective's time";
  EXPECT_NEAR(fastest[0].points[1].time.s, 24.93e-6, 1e-12) << "16 B: in place 24.93 beats 24.96";
  for (std::size_t k = 0; k < fastest[0].points.size(); ++k)
    EXPECT_LE(fastest[0].points[k].time.s, log_groups(r.records)[0].points[k].time.s);
  for (const Column c : {Column::OutOfPlace, Column::InPlace, Column::Fastest})
    EXPECT_EQ(column_from_string(to_string(c)), c);
  EXPECT_FALSE(column_from_string("best").has_value());
}

// A floor (the host's issue time) and an additive fixed cost leave different shapes: the floor disappears once the
// collective's own time passes it, the fixed cost stays. fit_call_costs tells them apart and recovers both.
TEST(CollectiveFitCallCosts, RecoversALaunchFloorAndAFixedCostFromTheirShapes) {
  std::vector<double> simulated, measured;
  for (double s = 2000; s <= 60'000; s *= 1.25) {
    simulated.push_back(s);
    measured.push_back(std::max(20'000.0, 3000.0 + s));
  }
  const CallCostFit both = fit_call_costs(measured, simulated, std::nullopt);
  EXPECT_NEAR(both.launch_ns, 20'000, 20);
  EXPECT_NEAR(both.base_ns, 3000, 20);
  EXPECT_LT(both.error, 1e-6);

  std::vector<double> additive;
  for (const double s : simulated)
    additive.push_back(5000 + s);
  const CallCostFit plain = fit_call_costs(additive, simulated, std::nullopt);
  EXPECT_EQ(plain.launch_ns, 0) << "no floor where a fixed cost explains every size";
  EXPECT_NEAR(plain.base_ns, 5000, 10);

  const CallCostFit held = fit_call_costs(measured, simulated, 20'000.0);
  EXPECT_EQ(held.launch_ns, 20'000) << "a given launch is kept";
  EXPECT_NEAR(held.base_ns, 3000, 20);
}

TEST(CollectiveCompare, RatiosAndAcceptanceCounts) {
  LogGroup g;
  g.op = CollectiveOp::AllReduce;
  g.ranks = 8;
  g.nodes = 1;
  std::vector<sim::collectives::SweepRow> predicted;
  for (std::int64_t n : {std::int64_t{1024}, std::int64_t{1} << 20, std::int64_t{64} << 20, std::int64_t{1} << 30}) {
    Measurement m;
    m.kind = Kind::Collective;
    m.ranks = 8;
    m.nodes = 1;
    m.bytes = Bytes{n};
    m.time = sim::base::Duration{1e-5 + static_cast<double>(n) / 200e9};
    g.points.push_back(m);
    sim::collectives::SweepRow row;
    row.size = m.bytes;
    row.time = Time{static_cast<std::int64_t>(std::llround(m.time.s * 1e9 * (n >= (64 << 20) ? 1.2 : 0.9)))};
    row.algbw = sim::collectives::algbw(row.size, row.time);
    row.busbw = sim::collectives::busbw(sim::collectives::Op::AllReduce, 8, row.size, row.time);
    predicted.push_back(row);
  }
  const auto c = compare(g, predicted, 0.15);
  ASSERT_EQ(c.sizes.size(), 4U);
  EXPECT_NEAR(c.sizes[0].time_ratio, 0.9, 1e-3);
  EXPECT_FALSE(c.sizes[0].off);
  EXPECT_TRUE(c.sizes[3].off) << "20% slow";
  EXPECT_NEAR(c.sizes[3].busbw_ratio, 1 / 1.2, 1e-3);
  EXPECT_EQ(c.small, 2);
  EXPECT_EQ(c.small_within, 2);
  EXPECT_EQ(c.large, 2);
  EXPECT_EQ(c.large_within, 0) << "busbw 16.7% low";
  EXPECT_NEAR(c.large_max_error, 1 - 1 / 1.2, 1e-3);
}

TEST(CollectiveCompare, PredictionNeedsEvenHostsThatFitTheProfile) {
  LogGroup g;
  g.ranks = 12;
  g.nodes = 8;
  g.points.resize(1);
  g.points[0].bytes = Bytes{1024};
  try {
    predict_group(g, cluster_of("h100-sxm5-80gb"), {}, sim::collectives::Algorithm::Auto, "log.txt");
    FAIL() << "12 ranks on 8 hosts";
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not the same number on each host"), std::string::npos) << e.what();
  }
  g.ranks = 128;
  g.nodes = 8;
  try {
    predict_group(g, cluster_of("h100-sxm5-80gb"), {}, sim::collectives::Algorithm::Auto, "log.txt");
    FAIL() << "16 ranks per host on 8-GPU nodes";
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--hardware"), std::string::npos) << e.what();
  }
}

// Measurements that the simulator produces itself, at a network efficiency and base latency the profile does not
// have: fit_with_model must find both again.
TEST(CollectiveFitWithModel, RecoversNetworkEfficiencyAndBaseLatencyFromTheSimulatorsOwnTimes) {
  const auto base = sim::scenario::load_hardware("h100-sxm5-80gb");
  auto truth = cluster_of("h100-sxm5-80gb");
  const double true_efficiency = 0.55;
  truth.nic_bw = sim::base::Bandwidth{truth.nic_bw.bytes_per_s / base.efficiency.network * true_efficiency};
  sim::collectives::CallCosts base_latency{};
  base_latency.base[0] = Time{9000};
  std::vector<Measurement> ms;
  for (int nodes : {2, 4}) {
    LogGroup g;
    g.ranks = 8 * nodes;
    g.nodes = nodes;
    for (std::int64_t n = 8; n <= (std::int64_t{1} << 32); n *= 4) {
      Measurement m;
      m.kind = Kind::Collective;
      m.collective = CollectiveOp::AllReduce;
      m.scope = Scope::Network;
      m.ranks = g.ranks;
      m.nodes = nodes;
      m.bytes = Bytes{n};
      g.points.push_back(m);
    }
    const auto rows = predict_group(g, truth, base_latency, sim::collectives::Algorithm::Auto, "truth");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      g.points[i].time = sim::base::Duration{static_cast<double>(rows[i].time.ns) * 1e-9};
      ms.push_back(g.points[i]);
    }
  }
  Calibration c = calibrate::fit::calibrate(ms, base, {"synthetic"});
  fit_with_model(c, ms, base, cluster_of("h100-sxm5-80gb"));
  EXPECT_NEAR(c.efficiency.network, true_efficiency, 1e-3);
  EXPECT_NEAR(static_cast<double>(c.latency.base[0].ns), 9000, 5);
  EXPECT_TRUE(c.provenance.contains("latency.base.all_reduce"));
  EXPECT_EQ(c.latency.launch, Time::zero()) << "an additive fixed cost explains these times: no launch floor";
  EXPECT_FALSE(c.provenance.contains("latency.launch"));
  EXPECT_TRUE(c.provenance.contains("efficiency.network"));
  EXPECT_FALSE(c.latency.nvlink.has_value()) << "no NVLink measurements, no NVLink latency";
}

// The validation claim of docs/validation.md, on real logs: one process driving 4 H100s (-g 4) issues each call in
// about 24 us, a floor the collective's own time passes at 1 MiB. Fitted from one run of that box, the other run's
// 18 sizes up to 1 MiB come within 25% (with an additive fixed cost, 1 MiB was predicted 52% slow), and the busbw of
// its 8 sizes from 64 MiB within 15%.
TEST(CollectiveFitWithModel, OneProcessDrivingFourGpusLeavesALaunchFloorThatPredictsItsOtherRun) {
  const auto base = sim::scenario::load_hardware("h100-sxm5-80gb");
  const auto calibration = import_nccl_tests(kNccl + "h100-nvswitch-4gpu-d/all_reduce_4ranks_quiet.txt", {});
  Calibration c = calibrate::fit::calibrate(calibration.records, base, {"d quiet"});
  fit_with_model(c, calibration.records, base, cluster_of("h100-sxm5-80gb"));
  EXPECT_NEAR(static_cast<double>(c.latency.launch.ns), 24'000, 1'500);
  EXPECT_LT(c.latency.base[0], Time{2'000}) << "the floor, not an addition, explains the small sizes";
  ASSERT_TRUE(c.provenance.contains("latency.launch"));

  auto cluster = cluster_of("h100-sxm5-80gb");
  cluster.nvlink_bw = sim::base::Bandwidth{base.nvlink.bandwidth.bytes_per_s * c.efficiency.nvlink};
  const auto compared = import_nccl_tests(kNccl + "h100-nvswitch-4gpu-d/all_reduce_4ranks.txt", {});
  const auto groups = log_groups(compared.records, Column::Fastest);
  ASSERT_EQ(groups.size(), 1U);
  const auto rows =
      predict_group(groups[0], cluster, {c.latency.base, c.latency.launch}, sim::collectives::Algorithm::Auto, "d");
  const Comparison cmp = compare(groups[0], rows, 0.15);
  EXPECT_EQ(cmp.small, 18);
  EXPECT_EQ(cmp.small_within, cmp.small) << "worst " << cmp.small_max_error;
  EXPECT_EQ(cmp.large_within, cmp.large) << "worst " << cmp.large_max_error;
  EXPECT_TRUE(cmp.sizes.front().launch_bound) << "8 B: the host's issue time";
}

// An all-gather on one node (10 us at small sizes: the host's issue time) beside an all-reduce over four nodes (about
// 40 us: network latency, a fixed cost of that op). The widest run's floor was taken as the launch, 40 us, which
// predicted the one-node log 4x slow (a user trial): the launch is capped at the fastest call measured on one host,
// and the all-reduce's rest is its base cost.
TEST(CollectiveFitWithModel, ALaunchFloorDoesNotExceedTheFastestCallOnOneHost) {
  const auto base = sim::scenario::load_hardware("h100-sxm5-80gb");
  // The trial's logs, alpha-beta: t = 10 us + n / 300 GB/s on one node, t = 40 us + n / 100 GB/s over four.
  std::vector<Measurement> ms;
  for (const auto& [op, nodes, alpha_us, gbps] :
       {std::tuple{CollectiveOp::AllGather, 1, 10.0, 300.0}, std::tuple{CollectiveOp::AllReduce, 4, 40.0, 100.0}}) {
    for (std::int64_t n = 8; n <= (std::int64_t{1} << 30); n *= 4) {
      Measurement m;
      m.kind = Kind::Collective;
      m.collective = op;
      m.scope = nodes > 1 ? Scope::Network : Scope::Nvlink;
      m.ranks = 8 * nodes;
      m.nodes = nodes;
      m.bytes = Bytes{n};
      m.time = sim::base::Duration{alpha_us * 1e-6 + static_cast<double>(n) / (gbps * 1e9)};
      ms.push_back(m);
    }
  }
  Calibration c = calibrate::fit::calibrate(ms, base, {"synthetic"});
  fit_with_model(c, ms, base, cluster_of("h100-sxm5-80gb"));
  EXPECT_LE(static_cast<double>(c.latency.launch.ns), 10'000 + 8 / 300.0 + 1)
      << "a floor under every call one host measured";
  EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(),
                          [](const std::string& n) { return n.find("capped there") != std::string::npos; }));
}

// Two hosts of 8 H100s, measured with NCCL_ALGO=Ring at a NIC efficiency of 0.55: run as trainsim's auto, the same
// all-reduce is NVLS-tree, bound by the switches, and says nothing of the NICs (efficiency kept, with a note); fitted
// with the algorithm the run used, the efficiency is found again.
TEST(CollectiveFitWithModel, TwoHostsRunAsNvlsTreeDoNotDetermineTheNicsUnlessTheRingIsNamed) {
  const auto base = sim::scenario::load_hardware("h100-sxm5-80gb");
  ASSERT_TRUE(base.nvlink.sharp);
  auto truth = cluster_of("h100-sxm5-80gb");
  truth.nic_bw = sim::base::Bandwidth{truth.nic_bw.bytes_per_s / base.efficiency.network * 0.55};
  LogGroup g;
  g.ranks = 16;
  g.nodes = 2;
  for (std::int64_t n = 8; n <= (std::int64_t{1} << 32); n *= 4) {
    Measurement m;
    m.kind = Kind::Collective;
    m.collective = CollectiveOp::AllReduce;
    m.scope = Scope::Network;
    m.ranks = 16;
    m.nodes = 2;
    m.bytes = Bytes{n};
    g.points.push_back(m);
  }
  const auto rows = predict_group(g, truth, {}, sim::collectives::Algorithm::Ring, "truth");
  std::vector<Measurement> ms;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    g.points[i].time = sim::base::Duration{static_cast<double>(rows[i].time.ns) * 1e-9};
    ms.push_back(g.points[i]);
  }
  Calibration as_auto = calibrate::fit::calibrate(ms, base, {"synthetic"});
  fit_with_model(as_auto, ms, base, cluster_of("h100-sxm5-80gb"));
  EXPECT_EQ(as_auto.efficiency.network, base.efficiency.network);
  EXPECT_FALSE(as_auto.provenance.contains("efficiency.network"));
  EXPECT_TRUE(std::any_of(as_auto.notes.begin(), as_auto.notes.end(),
                          [](const std::string& n) { return n.find("NVLS-tree") != std::string::npos; }));
  Calibration as_ring = calibrate::fit::calibrate(ms, base, {"synthetic"});
  fit_with_model(as_ring, ms, base, cluster_of("h100-sxm5-80gb"), sim::collectives::Algorithm::Ring);
  EXPECT_NEAR(as_ring.efficiency.network, 0.55, 1e-3);
}

}  // namespace
