// nccl-tests logs as launchers and old versions print them: mpirun --tag-output and [N] prefixes, rank lines that lost
// their '#', old "error" columns without redop (11 fields), missing ranks; and the fit's refusal of a log from another
// GPU model. The inputs are real logs of the import corpus, transformed here the way the launchers transform them.
#include "calibrate/fit/calibration.hpp"
#include "calibrate/fit/least_squares.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/errors.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace calibrate::fit {
namespace {

const std::string kCorpus = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/import/corpus/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Every line of `text` with `prefix` in front, as mpirun --tag-output writes it.
std::string prefixed(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out += prefix + line + "\n";
  return out;
}

std::string error_of(const std::string& text, const std::string& origin, const NcclTestsOptions& o = {}) {
  try {
    parse_nccl_tests_text(text, origin, o);
  } catch (const sim::base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kSpark = read(kCorpus + "nccl-spark103-all_reduce-2xgb10.log");

TEST(NcclTestsLaunchers, MpirunTagOutputAndRankPrefixesAreStripped) {
  for (const std::string prefix : {"[1,0]<stdout>:", "[0] "}) {
    const auto r = parse_nccl_tests_text(prefixed(kSpark, prefix), "tagged.log", {});
    ASSERT_EQ(r.records.size(), 8u) << prefix;
    EXPECT_EQ(r.records[0].ranks, 2) << prefix;
    EXPECT_EQ(r.records[0].scope, Scope::Network) << prefix << ": two hosts, read from the prefixed rank lines";
  }
}

TEST(NcclTestsLaunchers, ARankLineThatLostItsHashIsStillCounted) {
  std::string text = kSpark;
  const auto at = text.find("#  Rank  0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 1, " ");  // interleaved output: the first rank line without its '#'
  const auto r = parse_nccl_tests_text(text, "lost.log", {});
  ASSERT_FALSE(r.records.empty());
  EXPECT_EQ(r.records[0].ranks, 2) << "not 1";
}

TEST(NcclTestsLaunchers, AMissingRankLineIsRefusedUnlessRanksAreGiven) {
  std::string text = kSpark;
  const auto at = text.find("#  Rank  0");
  text.erase(at, text.find('\n', at) - at + 1);
  const auto e = error_of(text, "gap.log");
  EXPECT_NE(e.find("none for rank 0"), std::string::npos) << e;
  NcclTestsOptions o;
  o.ranks = 2;
  EXPECT_EQ(parse_nccl_tests_text(text, "gap.log", o).records[0].ranks, 2);
}

TEST(NcclTestsOldFormats, ElevenFieldRowsWithErrorColumnsAreRead) {
  // all_gather_perf before nccl-tests 2.x: no redop and no root, "error" magnitudes (NVIDIA/nccl#644's rows).
  const std::string text =
      "# Collective test starting: all_gather_perf\n"
      "#   Rank  0 Pid  1 on node-a device  0 [0x00] Tesla V100-SXM2-32GB\n"
      "#   Rank  1 Pid  2 on node-b device  0 [0x00] Tesla V100-SXM2-32GB\n"
      "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "       65536          8192   float    52.01    1.26    0.63  0e+00    50.09    1.31    0.65  0e+00\n"
      "      131072         16384   float    70.74    1.85    0.93  0e+00    69.55    1.88    0.94  0e+00\n";
  const auto r = parse_nccl_tests_text(text, "old.log", {});
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_EQ(r.records[0].collective, CollectiveOp::AllGather);
  EXPECT_EQ(r.records[0].dtype, "fp32");
  EXPECT_DOUBLE_EQ(r.records[3].time.s, 69.55e-6);
}

TEST(CalibrationDevice, ALogOfAnotherGpuIsNotFittedOntoAProfileWithoutBeingAsked) {
  auto ms = parse_nccl_tests_text(kSpark, "spark.log", {}).records;
  for (auto& m : ms)
    m.device = "NVIDIA A100-SXM4-80GB";
  const auto h100 = sim::scenario::load_hardware("h100-sxm5-80gb");
  try {
    (void)calibrate(ms, h100, {"spark.log"});
    FAIL() << "an A100 log must not be fitted onto the H100 profile silently";
  } catch (const FitError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ran on NVIDIA A100-SXM4-80GB (a100) but the base profile h100-sxm5-80gb is a h100"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("--allow-other-gpu"), std::string::npos) << what;
  }
  EXPECT_EQ(gpu_family("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(gpu_family("NVIDIA GB200"), "gb200");
  EXPECT_EQ(gpu_family("NVIDIA GB10"), "") << "a GPU trainsim has no family for is not compared";
}

}  // namespace
}  // namespace calibrate::fit
