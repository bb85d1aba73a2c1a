// Measurement records (schema trainsim.measurement/1): JSON lines round-trip exactly, and a malformed file gives one
// error listing every bad line as FILE:LINE: /field: what was found.
#include "calibrate/fit/measurement.hpp"
#include "calibrate/fit/measurement_io.hpp"
#include "sim/base/errors.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <string>

namespace calibrate::fit {
namespace {

std::vector<Measurement> samples() {
  Measurement g;
  g.kind = Kind::Gemm;
  g.dtype = "bf16";
  g.m = 8192;
  g.n = 28672;
  g.k = 8192;
  g.time = sim::base::Duration{6.123456789e-3};
  g.samples = 9;
  g.label = "llama3-70b tp1 mb1 mlp_up fwd";
  g.device = "NVIDIA H100 80GB HBM3";
  g.sm_count = 132;
  g.sm_clock_mhz = 1980;
  g.driver = "550.54.15";
  g.cuda = "13.0";
  g.date = "2025-01-12T10:11:12Z";
  Measurement h;
  h.kind = Kind::Hbm;
  h.memory = MemoryOp::Triad;
  h.bytes = sim::base::Bytes{std::int64_t{3} << 30};
  h.time = sim::base::Duration{1.1e-3};
  Measurement c;
  c.kind = Kind::Collective;
  c.collective = CollectiveOp::ReduceScatter;
  c.dtype = "bf16";
  c.bytes = sim::base::Bytes{std::int64_t{1} << 30};
  c.ranks = 8;
  c.nodes = 1;
  c.scope = Scope::Nvlink;
  c.in_place = true;
  c.time = sim::base::Duration{3.3e-3};
  c.nccl = "2.21.5";
  c.label = "a \"quoted\" label\twith a tab";
  return {g, h, c};
}

TEST(MeasurementRecords, RoundTripThroughJsonLines) {
  const auto in = samples();
  const std::string text = to_json_lines(in);
  const auto out = parse_measurements(text, "mem");
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(to_json_line(out[i]), to_json_line(in[i])) << "record " << i;
    EXPECT_EQ(out[i].time.s, in[i].time.s) << "shortest round-trip numbers";
  }
  EXPECT_EQ(out[2].label, in[2].label);
  EXPECT_EQ(out[2].in_place, true);
  // Derived fields are written for people: 2*8192*28672*8192 / 6.12 ms = 628 TFLOP/s; 1 GiB reduce-scatter busbw.
  EXPECT_NE(text.find("\"tflops\":628."), std::string::npos) << text;
  EXPECT_NEAR(busbw(out[2]).gbytes_per_s(), (1 << 30) / 3.3e-3 * 7 / 8 * 1e-9, 1e-9);
}

TEST(MeasurementRecords, WrittenAtomicallyAndReadBack) {
  support::TempDir dir;
  const auto path = (dir.path() / "m.jsonl").string();
  const auto in = samples();
  write_measurements(path, in);
  EXPECT_EQ(read_measurements(path).size(), 3u);
}

TEST(MeasurementErrors, EveryBadLineIsReportedWithFileLineAndField) {
  const std::string good = to_json_line(samples()[1]);
  const std::string text =
      good + "\n" +  // 1 ok
      R"({"schema":"trainsim.measurement/1","kind":"gemm","op":"gemm","dtype":"bf16","m":1,"n":2,"kk":3,"seconds":1})" +
      "\n" +  // 2
      "\n" +  // 3 blank
      R"({"schema":"trainsim.measurement/1","kind":"collective","op":"all_reduce","bytes":"1 GiB","ranks":8,)"
      R"("scope":"nvlink","seconds":0.01})" +
      "\n" +  // 4
      R"({"schema":"trainsim.measurement/1","kind":"collective","op":"all_reduce","bytes":1048576,"ranks":8,)"
      R"("scope":"nvlink","seconds":0.001,"busbw_gbps":1.05})" +
      "\n" +                                                                        // 5
      R"({"schema":"trainsim.measurement/2","kind":"disk","seconds":-1})" + "\n" +  // 6
      "{not json\n";                                                                // 7
  try {
    parse_measurements(text, "runs/h100.jsonl");
    FAIL() << "expected errors";
  } catch (const sim::base::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("runs/h100.jsonl:2: /k: missing required field"), std::string::npos) << msg;
    EXPECT_NE(msg.find("runs/h100.jsonl:2: /: unknown key \"kk\" (did you mean \"k\"?)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("runs/h100.jsonl:4: /bytes:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("runs/h100.jsonl:5: /busbw_gbps: 1.05 disagrees with algbw times the nccl-tests bus factor"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("runs/h100.jsonl:6: /schema: \"trainsim.measurement/2\" is not a measurement schema"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("runs/h100.jsonl:6: /kind:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("runs/h100.jsonl:6: /seconds:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("runs/h100.jsonl:7: invalid JSON"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("h100.jsonl:1:"), std::string::npos) << "line 1 is valid\n" << msg;
    EXPECT_EQ(msg.find("h100.jsonl:3:"), std::string::npos) << "blank lines are skipped\n" << msg;
  }
}

// Found by fuzzing: a positive but sub-nanosecond time made a bandwidth or GEMM rate infinite.
TEST(MeasurementErrors, TimesUnderANanosecondAndRankCountsPastTheLimitAreRefused) {
  // With their derived fields, which must not draw a second, false "unknown key" error (a user trial).
  const std::string text =
      R"({"schema":"trainsim.measurement/1","kind":"hbm","op":"copy","bytes":1000,"seconds":1e-310,"gbps":1})"
      "\n"
      R"({"schema":"trainsim.measurement/1","kind":"collective","op":"all_reduce","bytes":1024,"ranks":2097152,)"
      R"("scope":"network","seconds":0.001,"algbw_gbps":1,"busbw_gbps":2})"
      "\n";
  try {
    parse_measurements(text, "x.jsonl");
    FAIL() << "expected errors";
  } catch (const sim::base::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("x.jsonl:1: /seconds:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x.jsonl:2: /ranks:"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("unknown key"), std::string::npos) << msg;
  }
  const auto fast =
      parse_measurements(R"({"schema":"trainsim.measurement/1","kind":"hbm","op":"copy","bytes":1000,"seconds":1e-9})"
                         "\n",
                         "ok.jsonl");
  ASSERT_EQ(fast.size(), 1u);
  EXPECT_DOUBLE_EQ(algbw(fast[0]).gbytes_per_s(), 1000.0) << "the floor itself is accepted";
}

TEST(MeasurementErrors, EmptyOrMissingFiles) {
  try {
    parse_measurements("\n\n", "empty.jsonl");
    FAIL();
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.jsonl: no measurements"), std::string::npos) << e.what();
  }
  try {
    read_measurements("/nonexistent/m.jsonl");
    FAIL();
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/m.jsonl: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace calibrate::fit
