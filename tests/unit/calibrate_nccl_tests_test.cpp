// The nccl-tests importer: logs written for these tests (tests/data/calibrate, generated from an alpha-beta model in
// nccl-tests' own print formats) parse to the expected records; malformed logs give one clear error naming the file,
// the line and what was found.
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/errors.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace calibrate::fit {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/calibrate/";

std::string import_error(const std::string& text, const std::string& origin, const NcclTestsOptions& o = {}) {
  try {
    parse_nccl_tests_text(text, origin, o);
  } catch (const sim::base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NcclTestsText, AllReduceOnEightGpusGivesOneRecordPerColumnGroup) {
  const auto r = import_nccl_tests(kData + "all_reduce_perf_8xh100.log", {});
  ASSERT_EQ(r.records.size(), 24u) << "12 sizes, out-of-place and in-place";
  const auto& first = r.records[0];
  EXPECT_EQ(first.kind, Kind::Collective);
  EXPECT_EQ(first.collective, CollectiveOp::AllReduce);
  EXPECT_EQ(first.bytes.n, 1024);
  EXPECT_EQ(first.ranks, 8);
  EXPECT_EQ(first.nodes, 1);
  EXPECT_EQ(first.scope, Scope::Nvlink) << "one host";
  EXPECT_EQ(first.in_place, false);
  EXPECT_DOUBLE_EQ(first.time.s, 19.40e-6);
  EXPECT_EQ(first.dtype, "bf16");
  EXPECT_EQ(first.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(first.nccl, "2.21.5") << "from nccl-library=22105";
  EXPECT_EQ(first.host, "dgx-h100-07");
  EXPECT_EQ(r.records[1].in_place, true);
  EXPECT_DOUBLE_EQ(r.records[1].time.s, 19.19e-6);
  EXPECT_EQ(r.records.back().bytes.n, std::int64_t{4} << 30);
  // busbw = algbw * 2(p-1)/p, as the log printed it (354.04 GB/s for 4 GiB out-of-place).
  EXPECT_NEAR(busbw(r.records[22]).gbytes_per_s(), 354.04, 0.01);
  EXPECT_NE(r.records[22].source.find("all_reduce_perf_8xh100.log:29"), std::string::npos) << r.records[22].source;
}

// A run that stopped with "Test NCCL failure" keeps its rows, with a note that the table is incomplete (it was imported
// without a word: a user trial).
TEST(NcclTestsText, ARunThatStoppedWithAFailureIsNoted) {
  std::ifstream f(kData + "all_reduce_perf_8xh100.log");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str() + "dgx-h100-07: Test NCCL failure common.cu:1005 'unhandled cuda error'\n";
  const auto r = parse_nccl_tests_text(text, "failed.log", {});
  EXPECT_EQ(r.records.size(), 24u);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("the run stopped with a failure"), std::string::npos) << r.notes.back();
  EXPECT_NE(r.notes.back().find("Test NCCL failure common.cu:1005"), std::string::npos) << r.notes.back();
}

TEST(NcclTestsText, SeveralOpsInOneLogAcrossTwoNodesWithoutDataCheck) {
  const auto r = import_nccl_tests(kData + "ag_rs_2nodes_nocheck.log", {});
  ASSERT_EQ(r.records.size(), 32u);
  int gathers = 0, scatters = 0;
  for (const auto& m : r.records) {
    gathers += m.collective == CollectiveOp::AllGather;
    scatters += m.collective == CollectiveOp::ReduceScatter;
    EXPECT_EQ(m.ranks, 16);
    EXPECT_EQ(m.nodes, 2);
    EXPECT_EQ(m.scope, Scope::Network) << "ranks on two hosts";
    EXPECT_EQ(m.dtype, "fp32");
    EXPECT_EQ(m.nccl, "2.18.3");
  }
  EXPECT_EQ(gathers, 16);
  EXPECT_EQ(scatters, 16);
  EXPECT_EQ(r.records[0].date, "2025-03-04T10:11:10") << "the -S timestamp column";
  EXPECT_EQ(r.records[0].bytes.n, 65536);
  EXPECT_DOUBLE_EQ(r.records[0].time.s, 89.45e-6);
}

TEST(NcclTestsText, PerIterationColumnsAreSkippedByName) {
  const auto r = import_nccl_tests(kData + "sendrecv_per_iteration.log", {});
  ASSERT_EQ(r.records.size(), 14u);
  EXPECT_EQ(r.records[0].collective, CollectiveOp::SendRecv);
  EXPECT_EQ(r.records[0].ranks, 2);
  EXPECT_EQ(r.records[0].dtype, "fp16");
  EXPECT_DOUBLE_EQ(r.records[0].time.s, 5.35e-6);
  EXPECT_DOUBLE_EQ(r.records[1].time.s, 5.56e-6) << "the in-place time, not i_cv% or i_p99";
}

TEST(NcclTestsText, OldFormatTakesTheOpFromTheFileName) {
  const auto r = import_nccl_tests(kData + "alltoall_a100_old.log", {});
  ASSERT_EQ(r.records.size(), 18u);
  EXPECT_EQ(r.records[0].collective, CollectiveOp::AllToAll);
  EXPECT_EQ(r.records[0].ranks, 4);
  EXPECT_EQ(r.records[0].device, "NVIDIA A100-SXM4-80GB");
  EXPECT_TRUE(r.records[0].nccl.empty());
}

TEST(NcclTestsJson, JsonOutputGivesTheSameRecords) {
  const auto r = import_nccl_tests(kData + "all_reduce_2nodes.json", {});
  ASSERT_EQ(r.records.size(), 11u) << "6 sizes x 2, less one in-place result printed as \"nan\"";
  const auto& m = r.records[0];
  EXPECT_EQ(m.collective, CollectiveOp::AllReduce) << "from args[0] \".\\/build\\/all_reduce_perf\"";
  EXPECT_EQ(m.ranks, 16) << "2 processes x 1 thread x 8 GPUs";
  EXPECT_EQ(m.nodes, 2);
  EXPECT_EQ(m.scope, Scope::Network);
  EXPECT_EQ(m.nccl, "2.27.3");
  EXPECT_EQ(m.date, "2025-02-11T09:30:05");
  EXPECT_EQ(m.dtype, "bf16");
}

TEST(NcclTestsOptions, OverridesApplyAndConflictsAreErrors) {
  NcclTestsOptions o;
  o.scope = Scope::Network;
  auto r = import_nccl_tests(kData + "all_reduce_perf_8xh100.log", o);
  EXPECT_EQ(r.records[0].scope, Scope::Network);
  o = {};
  o.op = CollectiveOp::AllGather;
  try {
    import_nccl_tests(kData + "all_reduce_perf_8xh100.log", o);
    FAIL() << "the log says all_reduce_perf";
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("but --op says all_gather"), std::string::npos) << e.what();
  }
  o = {};
  o.ranks = 4;
  try {
    import_nccl_tests(kData + "all_reduce_perf_8xh100.log", o);
    FAIL() << "the log lists 8 ranks";
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("lists 8 ranks but --ranks says 4"), std::string::npos) << e.what();
  }
}

TEST(NcclTestsVersion, DecodesBothVersionCodeLayouts) {
  EXPECT_EQ(nccl_version_string(22703), "2.27.3");
  EXPECT_EQ(nccl_version_string(2804), "2.8.4");
  EXPECT_EQ(op_of_nccl_tests_program("/opt/nccl-tests/build/alltoall_perf"), CollectiveOp::AllToAll);
  EXPECT_EQ(op_of_nccl_tests_program("reduce_perf"), std::nullopt);
}

// ---- malformed logs -----------------------------------------------------------------------------------------------

const char* kHeader = R"(# Collective test starting: all_reduce_perf
# Using devices
#  Rank  0 Group  0 Pid   1 on h device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   1 on h device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
)";

TEST(NcclTestsMalformed, AGarbledFieldNamesFileLineColumnAndValue) {
  try {
    import_nccl_tests(kData + "malformed_busbw.log", {});
    FAIL() << "expected an error";
  } catch (const sim::base::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("malformed_busbw.log:21"), std::string::npos) << msg;
    EXPECT_NE(msg.find("column 'busbw' (out-of-place): \"5.9x\" is not a number or N/A"), std::string::npos) << msg;
  }
}

TEST(NcclTestsMalformed, AShortRowSaysHowManyFieldsWereExpected) {
  const auto msg =
      import_error(std::string(kHeader) + "  1048576  262144  float  sum  -1  10.0  104.86\n", "short.log");
  EXPECT_NE(msg.find("short.log:7: expected 13 fields"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found 7"), std::string::npos) << msg;
}

TEST(NcclTestsMalformed, BusBandwidthThatDisagreesWithTheRankCount) {
  // 1 MiB in 10 us: algbw 104.86 GB/s; over 2 ranks all-reduce busbw is the same, not 183.50 (that is 8 ranks).
  const auto msg = import_error(
      std::string(kHeader) + "  1048576  262144  float  sum  -1  10.00  104.86  183.50  0  10.00  104.86  104.86  0\n",
      "ranks.log");
  EXPECT_NE(msg.find("ranks.log:7: out-of-place busbw/algbw = 1.7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("over 2 ranks has bus factor 1"), std::string::npos) << msg;
}

TEST(NcclTestsMalformed, AlgorithmBandwidthThatDisagreesWithSizeOverTime) {
  const auto msg = import_error(
      std::string(kHeader) + "  1048576  262144  float  sum  -1  10.00  52.43  52.43  0  10.00  104.86  104.86  0\n",
      "alg.log");
  EXPECT_NE(msg.find("alg.log:7: out-of-place algbw 52.43 GB/s disagrees with size/time = 104.858"), std::string::npos)
      << msg;
}

TEST(NcclTestsMalformed, ARowBeforeTheHeaderAndUnknownOpOrRanks) {
  auto msg = import_error("  1024  256  float  sum  -1  10.0  0.10  0.10  0\n", "x.log");
  EXPECT_NE(msg.find("x.log:1: a result row before any column header"), std::string::npos) << msg;
  std::string no_op = kHeader;
  no_op.erase(0, no_op.find('\n') + 1);  // without "# Collective test starting"
  msg = import_error(no_op + "  1024  256  float  sum  -1  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n", "run3.log");
  EXPECT_NE(msg.find("pass --op"), std::string::npos) << msg;
  std::string no_ranks = kHeader;
  for (int i = 0; i < 2; ++i) {
    const auto at = no_ranks.find("#  Rank");
    no_ranks.erase(at, no_ranks.find('\n', at) - at + 1);
  }
  msg = import_error(no_ranks + "  1024  256  float  sum  -1  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n", "r.log");
  EXPECT_NE(msg.find("pass --ranks N"), std::string::npos) << msg;
  msg = import_error("just some text\nand more\n", "empty.log");
  EXPECT_NE(msg.find("empty.log: no nccl-tests result rows found"), std::string::npos) << msg;
}

TEST(NcclTestsMalformed, UnsupportedOpsAreSkippedWithANote) {
  const std::string header = kHeader;
  const std::string text = "# Collective test starting: reduce_perf\n" + header.substr(header.find('\n') + 1) +
                           "  1024  256  float  sum  0  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n" + kHeader +
                           "  1048576  262144  float  sum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n";
  const auto r = parse_nccl_tests_text(text, "mixed.log", {});
  ASSERT_EQ(r.records.size(), 2u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("skipped 1 rows of reduce_perf"), std::string::npos) << r.notes[0];
}

TEST(NcclTestsMalformed, JsonWithoutDevicesNeedsRanks) {
  const std::string text =
      R"({"version":2,"args":["./all_reduce_perf"],"config":{"nthreads":1,"ngpus":8,"devices":[]},"results":[]})";
  try {
    parse_nccl_tests_json(text, "ar.json", {});
    FAIL();
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ar.json: /config: no devices listed"), std::string::npos) << e.what();
  }
}

// Found by fuzz_nccl_tests in CI: a time of 1e-300 us passed as "positive" and made algbw infinite, and a JSON
// config of nthreads x ngpus past 2^31 overflowed the rank count (undefined behaviour).
TEST(NcclTestsMalformed, ATimeShorterThanANanosecondIsAMisreadColumn) {
  auto msg = import_error(
      std::string(kHeader) + "  1024  256  float  sum  -1  1e-300  N/A  N/A  0  10.00  0.10  0.10  0\n", "tiny.log");
  EXPECT_NE(msg.find("tiny.log:7: column 'time' (out-of-place): 1e-300 us is shorter than any collective takes"),
            std::string::npos)
      << msg;
  // 0.01 us, the smallest time nccl-tests prints with two decimals, is still a measurement.
  const auto r = parse_nccl_tests_text(
      std::string(kHeader) + "  1024  256  float  sum  -1  0.01  N/A  N/A  0  0.01  N/A  N/A  0\n", "fast.log", {});
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_DOUBLE_EQ(r.records[0].time.s, 1e-8);
  try {
    parse_nccl_tests_json(
        R"({"args":["all_reduce_perf"],"config":{"devices":[{}]},"results":[{"size":1024,"out_of_place":{"time":1e-300}}]})",
        "tiny.json", {});
    FAIL() << "expected an error";
  } catch (const sim::base::ConfigError& e) {
    msg = e.what();
    EXPECT_NE(msg.find("tiny.json: /results/0/out_of_place/time: 1e-300 us is shorter than any collective takes"),
              std::string::npos)
        << msg;
  }
}

// Found by fuzz_nccl_tests: a short (trace-replay) row under a header whose size column came after the groups was
// read past its end.
TEST(NcclTestsMalformed, AShortRowIsReadOnlyWhereItHasFields) {
  const std::string head =
      "# Collective test starting: all_reduce_perf\n#  Rank  0 Group  0 Pid 1 on h device  0 [0] GPU\n";
  // The out-of-place group (4 columns) is blank; "size" is also the last column, so it is read from the row's end.
  auto r = parse_nccl_tests_text(head +
                                     "# size time algbw busbw #wrong time algbw busbw #wrong size\n"
                                     "1024  10.00  0.10  N/A  0  1024\n",
                                 "replay.log", {});
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].bytes.n, 1024);
  EXPECT_EQ(r.records[0].in_place, true);
  // A header that puts "size" inside the blank group: the row has no size, and the error says so.
  const auto msg = import_error(head +
                                    "# size time algbw size busbw #wrong time algbw busbw #wrong\n"
                                    "1024  10.00  0.10  0.10  0\n",
                                "odd.log");
  EXPECT_NE(msg.find("odd.log:4: column 'size' has no value in this row of 5 fields"), std::string::npos) << msg;
}

TEST(NcclTestsMalformed, JsonRankCountsBeyondTheLimitAreErrorsNotOverflow) {
  try {
    parse_nccl_tests_json(
        R"({"args":["all_reduce_perf"],"config":{"nthreads":100000,"ngpus":100000,"devices":[{}]},"results":[]})",
        "big.json", {});
    FAIL() << "expected an error";
  } catch (const sim::base::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("big.json: /config/nthreads: 1 devices x nthreads 100000 x ngpus 100000 is more than 1048576"),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace calibrate::fit

namespace calibrate::fit {
namespace {

std::string json_error(const std::string& text, const std::string& origin) {
  try {
    parse_nccl_tests_json(text, origin, {});
  } catch (const sim::base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// Issue 22: rows no run produces are refused with their line, not dropped or accepted.
TEST(NcclTestsImpossible, RowsAreRefusedWithTheirLine) {
  const std::string tail = "  0  10.00  0.10  0.10  0\n";
  auto refused = [&](const std::string& row, const std::string& fragment) {
    const auto msg = import_error(std::string(kHeader) + row, "x.log");
    EXPECT_NE(msg.find("x.log:7: " + fragment), std::string::npos) << row << "\n" << msg;
  };
  refused("  -1024  256  float  sum  -1  10.00  0.10  0.10" + tail, "column 'size': \"-1024\" is not a byte count");
  refused("  1024  256  float  sum  -1  nan  0.10  0.10" + tail, "column 'time' (out-of-place): \"nan\" is not a time");
  refused("  1024  256  float  sum  -1  N/A  0.10  0.10" + tail, "column 'time' (out-of-place): \"N/A\" is not a time");
  refused("  1024  256  float  sum  -1  0.00  0.10  0.10" + tail,
          "column 'time' (out-of-place): 0 us is not a positive");
  refused("  1024  256  float  sum  -1  1e308  0.00  0.00" + tail,
          "column 'time' (out-of-place): 1e+308 us is longer than any collective takes (at most one hour)");
  // A size-0 row has no bandwidth: skipped, with a note.
  const auto r = parse_nccl_tests_text(
      std::string(kHeader) + "  0  0  float  sum  -1  5.00  0.00  0.00  0  5.00  0.00  0.00  0\n" +
          "  1048576  262144  float  sum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n",
      "zero.log", {});
  EXPECT_EQ(r.records.size(), 2u);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("zero.log:7: skipped the out-of-place result of size 0"), std::string::npos);
}

TEST(NcclTestsImpossible, RanksBeyondTheLimitAndMixedGpusAreRefused) {
  const std::string row = "  1048576  262144  float  sum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n";
  std::string huge = kHeader;
  huge.insert(huge.find("#  Rank  1"), "#  Rank  4611686018427387904 Group  0 Pid   1 on h device  2 [0] GPU\n");
  auto msg = import_error(huge + row, "huge.log");
  EXPECT_NE(msg.find("huge.log:4: rank 4611686018427387904 is beyond the 1048576 ranks"), std::string::npos) << msg;
  std::string mixed = kHeader;
  mixed.replace(mixed.rfind("NVIDIA H100 80GB HBM3"), 21, "NVIDIA A100-SXM4-80GB");
  msg = import_error(mixed + row, "mixed.log");
  EXPECT_NE(msg.find("mixed.log:7: rank 1 ran on \"NVIDIA A100-SXM4-80GB\" but rank 0 on \"NVIDIA H100 80GB HBM3\""),
            std::string::npos)
      << msg;
  msg = json_error(R"({"args":["all_reduce_perf"],"config":{"devices":[{"device_info":"H100"},
      {"device_info":"A100"}]},"results":[{"size":1024,"out_of_place":{"time":10}}]})",
                   "mixed.json");
  EXPECT_NE(msg.find("mixed.json: /config/devices/1/device_info: \"A100\" but the first device is \"H100\""),
            std::string::npos)
      << msg;
  msg = json_error(
      R"({"args":["all_reduce_perf"],"config":{"devices":[{}]},"results":[{"size":1024,"out_of_place":{"time":1e308}}]})",
      "long.json");
  EXPECT_NE(msg.find("long.json: /results/0/out_of_place/time: 1e+308 us is longer than any collective takes"),
            std::string::npos)
      << msg;
}

TEST(NcclTestsImpossible, DatesAreIso8601) {
  for (const char* ok : {"2025-01-12", "2025-01-12T10:11:12", "2025-01-12T10:11:12Z", "2025-01-12T10:11:12.250+01:00",
                         "2025-01-12T10:11"})
    EXPECT_TRUE(is_iso8601_date(ok)) << ok;
  for (const char* bad : {"", "yesterday", "2025-13-01", "2025-01-32", "2025-1-12", "2025-01-12T25:00:00",
                          "2025-01-12 10:11:12", "2025-01-12T10:11:12Zjunk", "12/01/2025", "2025-01-12T10:11:12."})
    EXPECT_FALSE(is_iso8601_date(bad)) << bad;
  NcclTestsOptions o;
  o.date = "yesterday";
  try {
    import_nccl_tests(kData + "all_reduce_perf_8xh100.log", o);
    FAIL() << "expected an error";
  } catch (const sim::base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--date: \"yesterday\" is not an ISO 8601 date"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace calibrate::fit
