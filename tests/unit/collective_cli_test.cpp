// tests/unit/collective_cli_test.cpp: `trainsim collective` (issue 23): nccl-tests' layout and definitions, the
// profile's latency section, NVLink SHARP, sweeps, and bad input.
#include "sim/base/json_reader.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/sweep.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace {

using sim::base::Bytes;
using sim::base::Time;
using sim::collectives::Algorithm;
using sim::collectives::Op;
using support::trainsim;

struct Row {
  std::int64_t size = 0;
  double time_us = 0, algbw = 0, busbw = 0;
  std::string algorithm;
  std::string protocol;
};

std::vector<Row> json_rows(const std::string& text) {
  auto doc = sim::base::JsonDocument::parse_text(text, "collective --json");
  sim::base::Diagnostics diag("collective --json");
  auto r = doc.root(diag);
  std::string schema;
  r.required("schema", schema);
  EXPECT_EQ(schema, "trainsim.collective/1");
  std::vector<Row> rows;
  for (auto& o : r.object_array("rows", true)) {
    Row x;
    o.required("size_bytes", x.size);
    o.required("time_us", x.time_us, sim::base::Range::at_least(0.0));
    o.required("algbw_gbps", x.algbw, sim::base::Range::at_least(0.0));
    o.required("busbw_gbps", x.busbw, sim::base::Range::at_least(0.0));
    o.required("algorithm", x.algorithm);
    o.required("protocol", x.protocol);
    rows.push_back(x);
  }
  return rows;
}

TEST(CollectiveCommand, PrintsNcclTestsColumnsWithTheirDefinitions) {
  const auto o = trainsim({"collective", "all_reduce", "--gpus", "8", "--sizes", "1M:1G"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("#       size         count      type   redop    root     time   algbw   busbw"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("  1073741824     268435456     float     sum      -1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("# Avg bus bandwidth    :"), std::string::npos);

  const auto j = trainsim({"collective", "all_reduce", "--gpus", "8", "--sizes", "1M:1G", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const auto rows = json_rows(j.out);
  ASSERT_EQ(rows.size(), 11U) << "1 MiB, 2 MiB, ... 1 GiB";
  for (const auto& r : rows) {
    EXPECT_NEAR(r.algbw, static_cast<double>(r.size) / (r.time_us * 1e-6) / 1e9, 1e-9 * r.algbw) << r.size;
    EXPECT_NEAR(r.busbw, r.algbw * 2.0 * 7 / 8, 1e-9 * r.busbw) << "nccl-tests: all-reduce busbw = algbw 2(p-1)/p";
  }
}

TEST(CollectiveCommand, RingTimeIsTheClosedFormOverNvlink) {
  const auto hw = sim::scenario::load_hardware("h100-sxm5-80gb");
  const sim::base::Bandwidth b{hw.nvlink.bandwidth.bytes_per_s * hw.efficiency.nvlink};
  // 1 GiB runs NCCL's Simple protocol (sim/collectives/protocol.hpp): 8.4 us once, 3.4 us per NVLink step.
  const auto simple = sim::collectives::protocol_terms(sim::collectives::Protocol::Simple, false, 1, 8, false);
  const Time expected =
      simple.base + sim::collectives::ring_allreduce_time(8, Bytes{1LL << 30}, simple.latency(Time{600}, false), b);
  const auto j = trainsim({"collective", "all_reduce", "--gpus", "8", "--size", "1 GiB", "--algorithm", "ring",
                           "--hardware", "h100-sxm5-80gb", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const auto rows = json_rows(j.out);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_DOUBLE_EQ(rows[0].time_us, static_cast<double>(expected.ns) / 1e3)
      << "no base latency in a built-in profile: T = 8.4 us + 2(p-1) 3.4 us + 2(p-1)/p n/B";
  EXPECT_EQ(rows[0].algorithm, "ring");
  EXPECT_EQ(rows[0].protocol, "Simple");
}

TEST(CollectiveCommand, NvlsReducesInTheSwitchesWhereTheProfileSaysTheyCan) {
  const auto hw = sim::scenario::load_hardware("h100-sxm5-80gb");
  ASSERT_TRUE(hw.nvlink.sharp);
  const double b = hw.nvlink.bandwidth.bytes_per_s * hw.efficiency.nvls;
  const auto j = trainsim({"collective", "all_reduce", "--gpus", "8", "--size", "1G", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const auto rows = json_rows(j.out);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].algorithm, "nvls") << "auto, one H100 node, 1 GiB: NVLink SHARP, as NCCL runs it";
  EXPECT_EQ(rows[0].protocol, "Simple");
  EXPECT_NEAR(rows[0].time_us, 23.0 + static_cast<double>(1LL << 30) * 9 / 8 / b * 1e6, 1e-2)
      << "T = 23 us + n (k+1)/k / B_nvls";
  const auto across =
      trainsim({"collective", "all_reduce", "--gpus", "16", "--size", "1G", "--algorithm", "nvls", "--json"});
  ASSERT_EQ(across.code, 0) << across.err;
  EXPECT_EQ(json_rows(across.out)[0].algorithm, "nvls") << "two nodes: NVLS-tree";
  const auto a100 = trainsim({"collective", "all_reduce", "--gpus", "8", "--size", "1G", "--algorithm", "nvls",
                              "--hardware", "a100-sxm4-80gb", "--json"});
  EXPECT_EQ(a100.code, 2) << "A100's NVSwitches do not reduce: refused, not run as a ring (a user trial)";
  EXPECT_NE(a100.err.find("does not apply"), std::string::npos) << a100.err;
  const auto a100_auto =
      trainsim({"collective", "all_reduce", "--gpus", "8", "--size", "1G", "--hardware", "a100-sxm4-80gb", "--json"});
  ASSERT_EQ(a100_auto.code, 0) << a100_auto.err;
  EXPECT_EQ(json_rows(a100_auto.out)[0].algorithm, "ring") << "A100's NVSwitches do not reduce";
}

TEST(CollectiveCommand, AHardwareProfileAloneBringsItsOwnNodesAndNics) {
  // --hardware without --scenario: the profile's nodes and NICs, not the default scenario's eight H100s per node with
  // 400 Gb/s NICs. A100 (200 Gb/s HDR per GPU) over two nodes: the same as through an A100 scenario stating them.
  // GB200 (four GPUs per compute tray, one 72-GPU NVLink domain): 64 ranks are 16 trays in one domain, whether
  // --per-node says 4 or not (it had put 4 ranks on 8-GPU nodes, across two domains, 8.8x slower).
  const auto alone =
      trainsim({"collective", "all_reduce", "--gpus", "16", "--size", "1G", "--hardware", "a100-sxm4-80gb", "--json"});
  const auto with_scenario =
      trainsim({"collective", "all_reduce", "--gpus", "16", "--size", "1G", "--scenario",
                std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/gpt3-175b-1024-a100.json", "--json"});
  ASSERT_EQ(alone.code, 0) << alone.err;
  ASSERT_EQ(with_scenario.code, 0) << with_scenario.err;
  EXPECT_DOUBLE_EQ(json_rows(alone.out)[0].time_us, json_rows(with_scenario.out)[0].time_us);
  const auto ring = trainsim({"collective", "all_reduce", "--gpus", "16", "--size", "1G", "--hardware",
                              "a100-sxm4-80gb", "--algorithm", "ring", "--json"});
  ASSERT_EQ(ring.code, 0) << ring.err;
  EXPECT_LT(json_rows(ring.out)[0].busbw, 200.0) << "the rings over two nodes of 8 x 25 GB/s";
  const auto trays = trainsim(
      {"collective", "alltoall", "--gpus", "64", "--size", "64M", "--hardware", "gb200-nvl72", "--per-node", "4"});
  const auto plain = trainsim({"collective", "alltoall", "--gpus", "64", "--size", "64M", "--hardware", "gb200-nvl72"});
  ASSERT_EQ(trays.code, 0) << trays.err;
  EXPECT_NE(trays.out.find("(16 nodes x 4)"), std::string::npos) << trays.out;
  EXPECT_EQ(trays.out, plain.out);
  // All-to-all is timed as direct transfers: no ring, no protocol.
  const auto j =
      trainsim({"collective", "alltoall", "--gpus", "64", "--size", "64M", "--hardware", "gb200-nvl72", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(json_rows(j.out)[0].algorithm, "direct");
  EXPECT_EQ(json_rows(j.out)[0].protocol, "-");
}

TEST(CollectiveCommand, EveryOpAnswersOverNodesAndRails) {
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"}) {
    const auto j = trainsim({"collective", op, "--gpus", "32", "--per-node", "4", "--sizes", "8:64M", "--json"});
    ASSERT_EQ(j.code, 0) << op << ": " << j.err;
    const auto rows = json_rows(j.out);
    ASSERT_EQ(rows.size(), 24U) << op;
    for (std::size_t i = 1; i < rows.size(); ++i)
      EXPECT_GE(rows[i].time_us, rows[i - 1].time_us) << op << ": time grows with size";
  }
}

/// The built-in H100 profile's document, to edit.
sim::base::JsonDocument h100_document() {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/hardware_profiles/h100-sxm5-80gb.json");
  std::stringstream text;
  text << in.rdbuf();
  return sim::base::JsonDocument::parse_text(text.str(), "h100");
}

TEST(CollectiveCommand, ProfileLatencySectionSetsLinkAndBaseLatencies) {
  support::TempDir dir;
  auto doc = h100_document();
  doc.set("latency", R"({"nvlink": "0.6 us", "network_hop": "1.35 us", "base": {"all_reduce": "5 us"}})");
  doc.set("provenance.latency", "\"test\"");
  doc.set("name", "\"h100-latency\"");
  const auto path = dir.write("h100-latency.json", doc.dump());
  const auto hw = sim::scenario::load_hardware(path);
  EXPECT_EQ(hw.latency.nvlink, Time{600});
  EXPECT_EQ(hw.latency.network_hop, Time{1350});
  EXPECT_EQ(hw.latency.base[0], Time{5000});
  EXPECT_EQ(hw.latency.base[1], Time{0}) << "ops left out keep no base latency";

  auto time_with = [](const std::string& hardware) {
    const auto j =
        trainsim({"collective", "all_reduce", "--gpus", "64", "--size", "8", "--hardware", hardware, "--json"});
    EXPECT_EQ(j.code, 0) << j.err;
    return json_rows(j.out).at(0).time_us;
  };
  EXPECT_NEAR(time_with(path) - time_with("h100-sxm5-80gb"), 5.0, 1e-9)
      << "the link latencies equal the compiled-in defaults, so only the base latency differs";

  // latency.launch: a floor on each call of the sweep, marked in the JSON rows; 1 GiB is far above it.
  doc.set("latency.launch", "\"100 us\"");
  const auto launched = dir.write("h100-launch.json", doc.dump());
  EXPECT_EQ(sim::scenario::load_hardware(launched).latency.launch, Time{100'000});
  const auto j =
      trainsim({"collective", "all_reduce", "--gpus", "64", "--sizes", "8:1G", "--hardware", launched, "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.out.find("\"launch_us\": 100"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"launch_bound\": true"), std::string::npos) << j.out;
  const auto rows = json_rows(j.out);
  EXPECT_DOUBLE_EQ(rows.front().time_us, 100.0) << "8 B on 64 GPUs takes less than the host's 100 us issue time";
  const auto text = trainsim({"collective", "all_reduce", "--gpus", "64", "--size", "8", "--hardware", launched});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("# call costs: latency.base.all_reduce 5.00 us added to each call, latency.launch 100.00 us"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("(launch-bound)"), std::string::npos) << text.out;
  const auto plain = trainsim({"collective", "all_reduce", "--gpus", "64", "--size", "8"});
  EXPECT_EQ(plain.out.find("# call costs"), std::string::npos) << "a profile without call costs prints none";
  EXPECT_GT(rows.back().time_us, 100.0);
}

TEST(CollectiveCommand, BadLatencyIsOneClearError) {
  support::TempDir dir;
  auto doc = h100_document();
  doc.set("latency", R"({"nvlink": "-1 us", "launch": "-3 us", "base": {"all_redcue": "5 us"}})");
  const auto path = dir.write("bad.json", doc.dump());
  const auto o = trainsim({"collective", "all_reduce", "--gpus", "8", "--hardware", path});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("/latency/nvlink"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("/latency/launch"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("all_redcue"), std::string::npos) << o.err;
}

TEST(CollectiveCommand, BadNvlinkSharpKeysAreClearErrors) {
  support::TempDir dir;
  auto doc = h100_document();
  doc.set("nvlink.sharp", "\"yes\"");
  doc.set("efficiency.nvls", "0.05");
  const auto o = trainsim({"collective", "all_reduce", "--gpus", "8", "--hardware", dir.write("bad.json", doc.dump())});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("/nvlink/sharp: expected true or false"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("/efficiency/nvls: 0.05 is out of range; expected between 0.1 and 1"), std::string::npos)
      << o.err;
}

TEST(CollectiveCommand, BadArgumentsAreClearErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"collective", "all_reduse", "--gpus", "8"}, "is not a collective"},
      {{"collective", "all_reduce", "--gpus", "0"}, "--gpus"},
      {{"collective", "all_reduce", "--gpus", "8", "--sizes", "8G:8"}, "ends below where it starts"},
      {{"collective", "all_reduce", "--gpus", "8", "--sizes", "8G"}, "is not a range"},
      {{"collective", "all_reduce", "--gpus", "8", "--size", "12abc"}, "is not a size"},
      {{"collective", "all_reduce", "--gpus", "10", "--per-node", "4"}, "do not fill whole nodes"},
      {{"collective", "all_reduce", "--gpus", "8", "--per-node", "9"}, "--per-node"},
      {{"collective", "all_reduce", "--gpus", "8", "--algorithm", "trees"}, "--algorithm"},
      {{"collective", "all_reduce", "--gpus", "8", "--hardware", "h101"}, "h101"},
      // An algorithm that cannot run the operation is refused, as NCCL refuses such an NCCL_ALGO; it was replaced by a
      // ring without a word (a user trial).
      {{"collective", "all_reduce", "--gpus", "8", "--algorithm", "nvls", "--hardware", "a100-sxm4-80gb", "--size",
        "1G"},
       "\"nvls\" does not apply to all_reduce over 8 ranks (NVLink SHARP"},
      {{"collective", "all_gather", "--gpus", "16", "--algorithm", "tree", "--size", "1G"},
       "the tree runs all-reduce only"},
      {{"collective", "alltoall", "--gpus", "8", "--algorithm", "ring", "--size", "1G"}, "timed as direct transfers"},
  };
  for (const auto& c : cases) {
    const auto o = trainsim(c.args);
    EXPECT_EQ(o.code, 2) << c.args.back() << ": " << o.out;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << o.err;
  }
}

// Ranks fill nodes in order, as mpirun fills its slots: 12 ranks on 8-GPU nodes are 8 + 4, and the header says so
// (it said "2 nodes x 6", a layout it had not simulated: a user trial).
TEST(CollectiveCommand, AnUnevenRankCountFillsNodesInOrderAndSaysSo) {
  const auto o = trainsim({"collective", "all_reduce", "--gpus", "12", "--size", "1G"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("(2 nodes: 1 x 8 and the last with 4)"), std::string::npos) << o.out;
  const auto j = trainsim({"collective", "all_reduce", "--gpus", "12", "--size", "1G", "--json"});
  EXPECT_NE(j.out.find("\"ranks_per_node\": 8"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"ranks_on_last_node\": 4"), std::string::npos) << j.out;
}

// One rank: nccl-tests times NCCL's out-of-place copy of the buffer; trainsim printed 0 us (a user trial). H100's
// 3.35 TB/s HBM read and written once: 1 GiB in 641 us, algbw half the HBM rate, busbw 0.
TEST(CollectiveCommand, OneRankIsTheLocalCopyOfTheBuffer) {
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "broadcast"}) {
    const auto j = trainsim({"collective", op, "--gpus", "1", "--size", "1G", "--json"});
    ASSERT_EQ(j.code, 0) << op << j.err;
    const auto rows = json_rows(j.out);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_NEAR(rows[0].time_us, 2.0 * (1 << 30) / 3.35e12 * 1e6, 1.0) << op;
    EXPECT_NEAR(rows[0].algbw, 3350.0 / 2, 1.0) << op;
    EXPECT_EQ(rows[0].busbw, 0.0) << op;
    EXPECT_EQ(rows[0].algorithm, "copy") << op;
  }
  const auto t = trainsim({"collective", "all_reduce", "--gpus", "1", "--size", "1G"});
  EXPECT_NE(t.out.find("# one rank: no link is used"), std::string::npos) << t.out;
}

// A broadcast over two HGX H100 nodes pipelines down the chains of NCCL's ring channels, which cross the nodes on all
// eight rails: its bus bandwidth is the all-gather's on the same links, not one NIC's (46 GB/s before: a user trial).
TEST(CollectiveCommand, ABroadcastAcrossNodesUsesEveryRail) {
  const auto b = trainsim({"collective", "broadcast", "--gpus", "16", "--size", "8G", "--json"});
  const auto g = trainsim({"collective", "all_gather", "--gpus", "16", "--size", "8G", "--json"});
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_EQ(g.code, 0) << g.err;
  const double broadcast = json_rows(b.out)[0].busbw, gather = json_rows(g.out)[0].busbw;
  EXPECT_NEAR(broadcast / gather, 1.0, 0.05) << broadcast << " against " << gather << " GB/s";
}

sim::topology::TopologyConfig h100_cluster() {
  sim::topology::TopologyConfig c;
  c.gpus = 8;
  c.nvlink_bw = sim::base::Bandwidth{450e9};
  c.nic_bw = sim::base::Bandwidth{50e9};
  return c;
}

TEST(CollectiveSweep, BaseLatencyIsAddedOncePerCall) {
  const auto c = h100_cluster();
  const auto cluster = sim::collectives::sweep_cluster(c, 16, 0);
  EXPECT_EQ(cluster.nodes, 2);
  const std::vector<Bytes> sizes = sim::collectives::doubling_sizes(Bytes{8}, Bytes{1 << 20});
  EXPECT_EQ(sizes.size(), 18U);
  sim::collectives::CallCosts base{};
  const auto plain =
      sim::collectives::sweep(Op::AllReduce, Algorithm::Auto, cluster.group, sizes, base, *cluster.topology);
  base.base[static_cast<std::size_t>(Op::AllReduce)] = Time{7000};
  const auto with =
      sim::collectives::sweep(Op::AllReduce, Algorithm::Auto, cluster.group, sizes, base, *cluster.topology);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(with[i].time - plain[i].time, Time{7000});
    EXPECT_EQ(with[i].algorithm, plain[i].algorithm);
  }
  const auto one = sim::collectives::sweep_cluster(c, 1, 0);
  EXPECT_EQ(sim::collectives::sweep(Op::AllReduce, Algorithm::Auto, one.group, sizes, base, *one.topology)[0].time,
            Time::zero())
      << "one rank costs nothing, base latency included";
}

// The host's issue time per call is a floor, not an addition: sizes the collective runs faster than it take the
// launch time, marked; slower sizes are unchanged. Nothing else (algorithm, protocol) moves.
TEST(CollectiveSweep, LaunchTimeBoundsBackToBackCallsFromBelow) {
  const auto c = h100_cluster();
  const auto cluster = sim::collectives::sweep_cluster(c, 8, 0);
  const std::vector<Bytes> sizes = sim::collectives::doubling_sizes(Bytes{8}, Bytes{std::int64_t{1} << 30});
  sim::collectives::CallCosts costs{};
  costs.base[static_cast<std::size_t>(Op::AllReduce)] = Time{2000};
  const auto additive =
      sim::collectives::sweep(Op::AllReduce, Algorithm::Auto, cluster.group, sizes, costs, *cluster.topology);
  costs.launch = Time{30'000};
  const auto launched =
      sim::collectives::sweep(Op::AllReduce, Algorithm::Auto, cluster.group, sizes, costs, *cluster.topology);
  int bound = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(launched[i].time, std::max(additive[i].time, Time{30'000})) << sizes[i].n;
    EXPECT_EQ(launched[i].launch_bound, additive[i].time < Time{30'000}) << sizes[i].n;
    EXPECT_FALSE(additive[i].launch_bound);
    EXPECT_EQ(launched[i].algorithm, additive[i].algorithm);
    EXPECT_EQ(launched[i].protocol, additive[i].protocol);
    bound += launched[i].launch_bound ? 1 : 0;
  }
  EXPECT_GT(bound, 5) << "small sizes are launch-bound";
  EXPECT_FALSE(launched.back().launch_bound) << "1 GiB is not";
}

TEST(CollectiveSweep, PerNodePlacesRanksOnConsecutiveNodes) {
  const auto cluster = sim::collectives::sweep_cluster(h100_cluster(), 4, 1);
  EXPECT_EQ(cluster.nodes, 4);
  EXPECT_EQ(cluster.group, (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(cluster.topology->gpus(), 32);
}

}  // namespace
