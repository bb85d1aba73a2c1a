// trainsim-calibrate end to end: measurements -> fit -> profile file -> the profile loads with load_hardware and
// `trainsim step --set hardware=PATH` uses the fitted numbers; import of nccl-tests logs and `measure` on a machine
// without a GPU (exit code 2, "no CUDA device found") through the built executable.
#include "calibrate/fit/calibration.hpp"
#include "calibrate/fit/fit_collectives.hpp"
#include "calibrate/fit/measurement_io.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/base/rng.hpp"
#include "sim/cli/app.hpp"
#include "sim/hardware/compute_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numbers>
#include <sstream>

#include <sys/wait.h>

namespace calibrate::fit {
namespace {

const std::string kDefault = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json";
const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/calibrate/";

std::string calibrate_binary() {
  return (std::filesystem::path(TRAINSIM_BINARY).parent_path() / "trainsim-calibrate").string();
}

struct Run {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs trainsim-calibrate with `args` (each single-quoted), capturing stdout and stderr in `dir`; `env` is prefixed
/// to the command ("CUDA_VISIBLE_DEVICES=").
Run calibrate_cli(const support::TempDir& dir, const std::vector<std::string>& args, const std::string& env = "") {
  std::string cmd = env + (env.empty() ? "" : " ") + "'" + calibrate_binary() + "'";
  for (const auto& a : args)
    cmd += " '" + a + "'";
  const auto out = dir.path() / "stdout.txt";
  const auto err = dir.path() / "stderr.txt";
  cmd += " > '" + out.string() + "' 2> '" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// Synthetic measurements of an H100 that is slower than the built-in profile assumes: GEMMs at 55% of peak (the
/// profile's default is 70%), HBM at 70% (80%), NVLink all-reduce at 60% of the link (78%), network at 70% (92%).
std::vector<Measurement> slow_h100(const sim::hardware::HardwareProfile& hw) {
  std::vector<Measurement> out;
  sim::hardware::Efficiency truth = hw.efficiency;
  truth.gemm = 0.55;
  truth.gemm_k_half = 40;
  truth.hbm = 0.70;
  auto rng = sim::base::RngStreams(7).stream("end-to-end");
  auto jitter = [&](double t) {  // 0.5% Gaussian noise (Box-Muller)
    const double g = std::sqrt(-2.0 * std::log(rng.uniform_open0())) * std::cos(2.0 * std::numbers::pi * rng.uniform());
    return t * (1 + 0.005 * g);
  };
  for (std::int64_t m : {1024, 2048, 4096, 8192})
    for (std::int64_t n : {1024, 2048, 4096, 8192})
      for (std::int64_t k : {128, 256, 512, 1024, 2048, 8192}) {
        Measurement g;
        g.kind = Kind::Gemm;
        g.dtype = "bf16";
        g.m = m;
        g.n = n;
        g.k = k;
        g.time = sim::base::Duration{
            jitter(sim::hardware::gemm_time(hw.gpu, sim::hardware::Dtype::Bf16, truth, static_cast<double>(m),
                                            static_cast<double>(n), static_cast<double>(k), 1)
                       .seconds())};
        g.device = "NVIDIA H100 80GB HBM3";
        g.sm_count = 132;
        g.driver = "550.54.15";
        g.date = "2025-01-12T10:00:00Z";
        out.push_back(g);
      }
  for (auto op : {MemoryOp::Copy, MemoryOp::Triad})
    for (std::int64_t b = std::int64_t{256} << 20; b <= (std::int64_t{8} << 30); b *= 2) {
      Measurement h;
      h.kind = Kind::Hbm;
      h.memory = op;
      h.bytes = sim::base::Bytes{b};
      h.time = sim::base::Duration{jitter(4e-6 + static_cast<double>(b) / (hw.gpu.hbm_bandwidth.bytes_per_s * 0.70))};
      out.push_back(h);
    }
  struct Link {
    Scope scope;
    double alpha, busbw;
    std::vector<int> ranks;
  };
  for (const Link& l : {Link{Scope::Nvlink, 2e-6, 0.60 * hw.nvlink.bandwidth.bytes_per_s, {8}},
                        Link{Scope::Network, 5e-6, 0.70 * hw.network.nic_bandwidth.bytes_per_s, {16, 64}}})
    for (int p : l.ranks)
      for (std::int64_t n = 4096; n <= (std::int64_t{1} << 32); n *= 4) {
        Measurement c;
        c.kind = Kind::Collective;
        c.collective = CollectiveOp::AllReduce;
        c.scope = l.scope;
        c.ranks = p;
        c.bytes = sim::base::Bytes{n};
        c.time =
            sim::base::Duration{jitter(collective_steps(CollectiveOp::AllReduce, p) * l.alpha +
                                       busbw_factor(CollectiveOp::AllReduce, p) * static_cast<double>(n) / l.busbw)};
        out.push_back(c);
      }
  return out;
}

struct Step {
  double step_time = 0, compute = 0;
};

Step step_with(const std::string& hardware) {
  std::ostringstream out, err;
  const int code =
      sim::cli::run({"step", kDefault, "--set", "hardware=" + hardware, "--json", "--fidelity", "analytic"}, out, err);
  EXPECT_EQ(code, sim::cli::kExitOk) << err.str();
  auto doc = sim::base::JsonDocument::parse_text(out.str(), "step");
  sim::base::Diagnostics diag("step");
  auto r = doc.root(diag);
  Step s;
  r.required("step_time_s", s.step_time);
  if (auto b = r.optional_object("breakdown_s")) b->required("compute", s.compute);
  return s;
}

TEST(CalibrateEndToEnd, FittedProfileLoadsAndSlowsTheSimulatedStep) {
  support::TempDir dir;
  const auto base = sim::scenario::load_hardware("h100-sxm5-80gb");
  const auto measurements = (dir.path() / "h100.jsonl").string();
  write_measurements(measurements, slow_h100(base));
  const auto profile = (dir.path() / "h100-measured.json").string();

  const auto fit = calibrate_cli(dir, {"fit", measurements, "--base", "h100-sxm5-80gb", "--out", profile, "--json"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  auto doc = sim::base::JsonDocument::parse_text(fit.out, "fit --json");
  sim::base::Diagnostics diag("fit --json");
  auto j = doc.root(diag);
  std::string schema;
  j.required("schema", schema);
  EXPECT_EQ(schema, "trainsim.calibration/1");
  auto ar = j.required_object("collectives")->required_object("all_reduce")->required_object("nvlink");
  double busbw_gbps = 0, alpha_us = 0, r2 = 0;
  int points = 0;
  ar->required("busbw_gbps", busbw_gbps);
  ar->required("alpha_us", alpha_us);
  ar->required("r2", r2);
  ar->required("points", points);
  EXPECT_NEAR(busbw_gbps, 270.0, 270.0 * 0.02) << "60% of 450 GB/s";
  EXPECT_NEAR(alpha_us, 2.0, 0.04);
  EXPECT_GT(r2, 0.99);
  EXPECT_EQ(points, 11);
  EXPECT_TRUE(diag.empty()) << diag.items().front().to_string();

  // The profile loads as any profile does, with the fitted numbers and a source for every number.
  const auto hw = sim::scenario::load_hardware(profile);
  EXPECT_EQ(hw.name, "h100-measured");
  EXPECT_NEAR(hw.efficiency.gemm, 0.55, 0.011);
  EXPECT_NEAR(hw.efficiency.gemm_k_half, 40, 1.2);
  EXPECT_NEAR(hw.efficiency.hbm, 0.70, 0.014);
  EXPECT_NEAR(hw.efficiency.nvlink, 0.60, 0.012);
  EXPECT_NEAR(hw.efficiency.network, 0.70, 0.014);
  EXPECT_EQ(hw.gpu.sm_count, base.gpu.sm_count) << "everything else is the base profile's";
  EXPECT_EQ(hw.failures.size(), base.failures.size());
  {
    auto pdoc = sim::base::JsonDocument::parse_file(profile);
    sim::base::Diagnostics pdiag(profile);
    auto r = pdoc.root(pdiag);
    const auto parsed = sim::hardware::HardwareProfile::parse(r);
    EXPECT_TRUE(sim::hardware::provenance_gaps(r.leaf_paths(), parsed.provenance).empty());
    EXPECT_NE(parsed.provenance.at("efficiency.gemm").find("driver 550.54.15"), std::string::npos);
    EXPECT_NE(parsed.provenance.at("efficiency.gemm").find("R^2"), std::string::npos);
  }
  std::cout << "[ end to end ] fitted gemm " << hw.efficiency.gemm << " (true 0.55), hbm " << hw.efficiency.hbm
            << " (0.70), nvlink " << hw.efficiency.nvlink << " (0.60), network " << hw.efficiency.network
            << " (0.70)\n";

  // `trainsim step` with the fitted profile is slower than with the built-in one: every fitted factor is lower.
  const Step builtin = step_with("h100-sxm5-80gb");
  const Step fitted = step_with(profile);
  std::cout << "[ end to end ] default scenario step time: built-in profile " << builtin.step_time
            << " s, fitted profile " << fitted.step_time << " s; compute " << builtin.compute << " s -> "
            << fitted.compute << " s\n";
  EXPECT_GT(fitted.step_time, builtin.step_time * 1.1);
  EXPECT_GT(fitted.compute, builtin.compute * 1.15) << "GEMMs at 55% instead of 70% of peak";
}

TEST(CalibrateEndToEnd, ImportThenFitFromNcclTestsLogs) {
  support::TempDir dir;
  const auto measurements = (dir.path() / "nccl.jsonl").string();
  auto imported = calibrate_cli(dir, {"import", "nccl-tests", kData + "all_reduce_perf_8xh100.log",
                                      kData + "ag_rs_2nodes_nocheck.log", "--out", measurements});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_NE(imported.err.find("wrote 56 measurements"), std::string::npos) << imported.err;
  const auto profile = (dir.path() / "fabric.json").string();
  auto fit = calibrate_cli(dir, {"fit", measurements, "--base", "h100-sxm5-80gb", "--out", profile});
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("all_reduce      nvlink"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("efficiency.network"), std::string::npos) << fit.out;
  const auto hw = sim::scenario::load_hardware(profile);
  // The two-host log's 30 GB/s of bus bandwidth is a small share of 8 x 400 Gbit/s: the fit says what that means
  // (a user trial found 0.11 kept without comment).
  EXPECT_LT(hw.efficiency.network, 0.5);
  EXPECT_NE(fit.err.find("check that the hosts have the profile's NICs"), std::string::npos) << fit.err;
  EXPECT_NEAR(hw.efficiency.nvlink, 362.0 / 450.0, 0.02) << "the log was written with 362 GB/s bus bandwidth";
  // Its largest all-reduces are timed as NVLS, whose efficiency.nvls the fit sets: the profile reproduces its own log
  // (a user trial found 0 of 4 sizes >= 64 MiB within 15%, the worst 31.7% fast).
  EXPECT_LT(hw.efficiency.nvls, 0.6) << "366 GB/s against NVLS's 480 at the base profile's 0.69";
  auto compared = calibrate_cli(dir, {"compare", kData + "all_reduce_perf_8xh100.log", "--hardware", profile});
  ASSERT_EQ(compared.code, 0) << compared.err;
  EXPECT_NE(compared.out.find("busbw within 15% at >= 64 MiB: 4 of 4"), std::string::npos) << compared.out;
}

// A user trial: a device name with the bytes 0xFF 0xFE was written raw into the JSON-lines records, which fit then
// refused as "ill-formed UTF-8". The name is escaped (\xff) and the records read back.
TEST(CalibrateEndToEnd, ALogWithBytesThatAreNotUtf8ImportsRecordsFitReads) {
  support::TempDir dir;
  std::string log = slurp(kData + "all_reduce_perf_8xh100.log");
  for (std::size_t at = log.find("NVIDIA H100"); at != std::string::npos; at = log.find("NVIDIA H100", at + 1))
    log.replace(at, 6, "NV\xff\xfeIA");
  const std::string path = dir.write("bytes.log", log);
  const auto measurements = (dir.path() / "m.jsonl").string();
  auto imported = calibrate_cli(dir, {"import", "nccl-tests", path, "--out", measurements});
  ASSERT_EQ(imported.code, 0) << imported.err;
  const std::string records = slurp(measurements);
  EXPECT_EQ(records.find('\xff'), std::string::npos) << "no raw byte in the records";
  EXPECT_NE(records.find("xff"), std::string::npos) << "the byte escaped: " << records.substr(0, 400);
  auto fit =
      calibrate_cli(dir, {"fit", measurements, "--base", "h100-sxm5-80gb", "--out", (dir.path() / "p.json").string()});
  EXPECT_EQ(fit.code, 0) << fit.err;
}

TEST(CalibrateEndToEnd, WhatALogDoesNotSayIsGivenToImportAndCompareAlike) {
  // A user trial's real logs: one whose op only its command line named (compare's error said "pass --op", which
  // compare lacked), one pasted without its rank lines (no way to say it ran on 2 hosts, so its network bandwidth was
  // taken for NVLink's and refused as impossible).
  support::TempDir dir;
  const auto renamed = dir.write("log.txt", slurp(kData + "alltoall_a100_old.log"));
  auto no_op = calibrate_cli(dir, {"compare", renamed, "--hardware", "a100-sxm4-80gb"});
  EXPECT_EQ(no_op.code, 2);
  EXPECT_NE(no_op.err.find("--op"), std::string::npos) << no_op.err;
  auto with_op = calibrate_cli(dir, {"compare", renamed, "--op", "all_to_all", "--hardware", "a100-sxm4-80gb"});
  EXPECT_EQ(with_op.code, 0) << with_op.err;
  std::istringstream log(slurp(kData + "ag_rs_2nodes_nocheck.log"));
  std::string text, line;
  while (std::getline(log, line))
    if (line.find("Rank") == std::string::npos) text += line + "\n";
  const auto no_ranks = dir.write("all_gather_perf.log", text);
  const auto out = (dir.path() / "m.jsonl").string();
  auto imported = calibrate_cli(dir, {"import", "nccl-tests", no_ranks, "--ranks", "16", "--out", out});
  EXPECT_EQ(imported.code, 2);
  EXPECT_NE(imported.err.find("pass --nodes N"), std::string::npos) << imported.err;
  imported = calibrate_cli(dir, {"import", "nccl-tests", no_ranks, "--ranks", "16", "--nodes", "2", "--out", out});
  ASSERT_EQ(imported.code, 0) << imported.err;
  const std::string records = slurp(out);
  EXPECT_NE(records.find("\"nodes\":2,\"scope\":\"network\""), std::string::npos) << records.substr(0, 400);
  // dstack's README prints its log with every '#' gone, the column header included: it is still the header.
  auto nohash = calibrate_cli(dir, {"import", "nccl-tests", kData + "all_gather_a3high_nohash.log", "--op",
                                    "all_gather", "--ranks", "16", "--nodes", "2", "--out", out});
  ASSERT_EQ(nohash.code, 0) << nohash.err;
  EXPECT_NE(nohash.err.find("22 measurements"), std::string::npos) << nohash.err;
}

TEST(CalibrateEndToEnd, AFitThatFitsNothingWritesNoProfile) {
  // Two hosts of H200 run all-reduce as NVLS-tree, which leaves efficiency.network to the base profile, and sizes from
  // 1 GiB fit no call cost: nothing is fitted. It wrote the base profile back, "fitted from 10 measurements", exit 0.
  support::TempDir dir;
  std::string records;
  for (const double gib : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    const double bytes = gib * 1073741824.0, seconds = bytes / 245e9;
    for (const char* in_place : {"false", "true"})
      records +=
          "{\"schema\":\"trainsim.measurement/1\",\"kind\":\"collective\",\"op\":\"all_reduce\","
          "\"bytes\":" +
          std::to_string(static_cast<long long>(bytes)) +
          ",\"ranks\":16,\"nodes\":2,\"scope\":\"network\",\"in_place\":" + in_place +
          ",\"seconds\":" + std::to_string(seconds) + ",\"device\":\"NVIDIA H200\"}\n";
  }
  const auto m = dir.write("m.jsonl", records);
  const auto profile = dir.path() / "p.json";
  auto r = calibrate_cli(dir, {"fit", m, "--base", "h200-sxm-141gb", "--out", profile.string()});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("nothing could be fitted from 10 measurements"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(profile));
}

TEST(CalibrateEndToEnd, BadInputExitsTwoWithTheFileAndLine) {
  support::TempDir dir;
  const auto bad = dir.write("bad.jsonl", "{\"schema\":\"trainsim.measurement/1\",\"kind\":\"hbm\"}\n");
  auto r = calibrate_cli(dir, {"fit", bad, "--base", "h100-sxm5-80gb", "--out", (dir.path() / "p.json").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.jsonl:1: /seconds: missing required field"), std::string::npos) << r.err;
  r = calibrate_cli(dir, {"fit", bad, "--base", "h100-sxm-80gb", "--out", (dir.path() / "p.json").string()});
  EXPECT_EQ(r.code, 2);
  const auto few = dir.write("few.jsonl",
                             "{\"schema\":\"trainsim.measurement/1\",\"kind\":\"collective\",\"op\":\"all_reduce\","
                             "\"bytes\":1024,\"ranks\":8,\"scope\":\"nvlink\",\"seconds\":2e-5}\n");
  r = calibrate_cli(dir, {"fit", few, "--base", "h100-sxm5-80gb", "--out", (dir.path() / "p.json").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("error: fit: all_reduce over nvlink: 1 measurements"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "p.json")) << "no profile is written when the fit fails";
  r = calibrate_cli(dir, {"import", "nccl-tests", kData + "malformed_busbw.log"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("malformed_busbw.log:21: column 'busbw'"), std::string::npos) << r.err;
}

TEST(CalibrateMeasure, WithoutAGpuExitsTwoSayingNoCudaDeviceWasFound) {
  // CUDA_VISIBLE_DEVICES= hides every GPU, so the test means the same on CI (no GPU, or a build without CUDA) and on a
  // GPU machine, where it must not start a five-minute measurement.
  support::TempDir dir;
  const auto out = (dir.path() / "m.jsonl").string();
  const auto r = calibrate_cli(dir, {"measure", "--quick", "--out", out}, "CUDA_VISIBLE_DEVICES=");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("error: no CUDA device found"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto usage = calibrate_cli(dir, {"measure", "--quick"}, "CUDA_VISIBLE_DEVICES=");
  EXPECT_EQ(usage.code, 2) << "--out is required";
  EXPECT_NE(usage.err.find("--out is required"), std::string::npos) << usage.err;
}

}  // namespace
}  // namespace calibrate::fit
