// The import corpus's nccl-tests logs (tests/data/import/corpus/, sources in tests/data/import/README.md): real logs of
// public GitHub threads, read by trainsim-calibrate's importer row by row, or refused naming what is wrong.
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/errors.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sim::importers {
namespace {

const std::string kCorpus = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/import/corpus/";

std::string nccl_error(const std::string& file, const calibrate::fit::NcclTestsOptions& o = {}) {
  try {
    calibrate::fit::import_nccl_tests(kCorpus + file, o);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CorpusNcclTests, OldFormatWithErrorMagnitudesReadsEveryRow) {
  // NVIDIA/nccl#258: 2019 all_reduce_perf, "error" columns holding the largest error (1e-07), no root column.
  const auto r = calibrate::fit::import_nccl_tests(kCorpus + "nccl-issue258-all_reduce-4xv100.log", {});
  ASSERT_EQ(r.records.size(), 8u) << "4 sizes, out-of-place and in-place";
  EXPECT_EQ(r.records[0].bytes.n, 8);
  EXPECT_EQ(r.records[0].ranks, 4);
  EXPECT_EQ(r.records[0].nodes, 1);
  EXPECT_EQ(r.records[0].scope, calibrate::fit::Scope::Nvlink) << "one host";
  EXPECT_EQ(r.records[0].collective, calibrate::fit::CollectiveOp::AllReduce) << "from the file name";
  EXPECT_DOUBLE_EQ(r.records[0].time.s, 158.3e-6);
  EXPECT_DOUBLE_EQ(r.records[7].time.s, 278.1e-6);
  EXPECT_EQ(r.records[0].device, "Tesla V100-SXM3-32GB");
}

TEST(CorpusNcclTests, TwoHostsAreTheNetworkScope) {
  const auto r = calibrate::fit::import_nccl_tests(kCorpus + "nccl-spark103-all_reduce-2xgb10.log", {});
  ASSERT_EQ(r.records.size(), 8u);
  EXPECT_EQ(r.records[0].ranks, 2);
  EXPECT_EQ(r.records[0].nodes, 2);
  EXPECT_EQ(r.records[0].scope, calibrate::fit::Scope::Network);
  EXPECT_EQ(r.records[0].nccl, "2.31.2");
  EXPECT_EQ(r.records[0].bytes.n, 8192);
  EXPECT_DOUBLE_EQ(r.records[1].time.s, 30.33e-6);
}

TEST(CorpusNcclTests, RepeatedRankZeroIsRefusedNotCountedAsOneRank) {
  // NVIDIA/nccl-tests#254: sixteen single-rank jobs (lines without '#'), every one "Rank 0".
  const auto e = nccl_error("nccl-tests-issue254-all_reduce-16xh100.log");
  EXPECT_NE(e.find("nccl-tests-issue254-all_reduce-16xh100.log:3"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 0 is listed more than once"), std::string::npos) << e;
}

TEST(CorpusNcclTests, ALogWithoutRankLinesNeedsRanksAndScopeFromTheUser) {
  const std::string log = "nccl-hpcaienvs21-all_reduce.log";
  EXPECT_NE(nccl_error(log).find("pass --ranks N"), std::string::npos);
  calibrate::fit::NcclTestsOptions ranks16;
  ranks16.ranks = 16;
  EXPECT_NE(nccl_error(log, ranks16).find("or --scope nvlink (one host) or --scope network"), std::string::npos);
  ranks16.scope = calibrate::fit::Scope::Network;
  const auto r = calibrate::fit::import_nccl_tests(kCorpus + log, ranks16);
  EXPECT_EQ(r.records.size(), 18u);
  EXPECT_EQ(r.records[0].ranks, 16) << "busbw/algbw = 1.87 = 2(16-1)/16, checked row by row";
}

}  // namespace
}  // namespace sim::importers
