// Calibration fits recover known parameters from synthetic measurements with 1% noise (fixed seed) within 2%, and
// refuse too few or inconsistent points with a message that names the group.
#include "calibrate/fit/calibration.hpp"
#include "calibrate/fit/fit_collectives.hpp"
#include "calibrate/fit/fit_gemm.hpp"
#include "calibrate/fit/fit_hbm.hpp"
#include "calibrate/fit/least_squares.hpp"
#include "sim/base/rng.hpp"
#include "sim/hardware/compute_model.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <numbers>
#include <string>

namespace calibrate::fit {
namespace {

using sim::hardware::Dtype;

/// Multiplies by (1 + 1% x a standard normal), drawn by Box-Muller from a named stream of seed 42.
class Noise {
 public:
  explicit Noise(std::string_view stream, double rel = 0.01)
      : rng_(sim::base::RngStreams(42).stream(stream)), rel_(rel) {}
  double operator()(double v) {
    const double g =
        std::sqrt(-2.0 * std::log(rng_.uniform_open0())) * std::cos(2.0 * std::numbers::pi * rng_.uniform());
    return v * (1.0 + rel_ * g);
  }

 private:
  sim::base::Rng rng_;
  double rel_;
};

double rel_error(double fitted, double truth) {
  return (fitted - truth) / truth;
}

/// Prints the recovery beside the truth, as the fit's own test oracle (STYLE E11).
void report(const std::string& what, double truth, double fitted, const char* unit) {
  const std::string u = *unit ? std::string(" ") + unit : "";
  std::cout << "[ recovery ] " << what << ": true " << truth << u << ", fitted " << fitted << u << " ("
            << (rel_error(fitted, truth) >= 0 ? "+" : "") << rel_error(fitted, truth) * 100 << "%)\n";
}

std::vector<Measurement> collective_points(CollectiveOp op, Scope scope, double alpha_s, double busbw_bytes_per_s,
                                           const std::vector<int>& ranks, Noise& noise) {
  std::vector<Measurement> out;
  for (int p : ranks)
    for (std::int64_t n = 1024; n <= (std::int64_t{4} << 30); n *= 2) {
      Measurement m;
      m.kind = Kind::Collective;
      m.collective = op;
      m.scope = scope;
      m.ranks = p;
      m.bytes = sim::base::Bytes{n};
      const double t =
          collective_steps(op, p) * alpha_s + busbw_factor(op, p) * static_cast<double>(n) / busbw_bytes_per_s;
      m.time = sim::base::Duration{noise(t)};
      out.push_back(m);
    }
  return out;
}

sim::hardware::HardwareProfile h100() {
  return sim::scenario::load_hardware("h100-sxm5-80gb");
}

/// GEMM times from the simulator's own gemm_time with `truth`, times 1% noise.
std::vector<Measurement> gemm_points(const sim::hardware::GpuSpec& gpu, const sim::hardware::Efficiency& truth,
                                     Noise& noise) {
  std::vector<Measurement> out;
  // Many shapes with k from 128 to 8192: below k ~ 300 a bf16 GEMM on H100 is memory-bound, so gemm_k_half is seen
  // mostly through k = 256..2048 (about 900 compute-bound points give it a standard error of ~0.5% at 1% noise).
  for (std::int64_t m : {512, 1024, 1536, 2048, 3072, 4096, 5120, 6144, 8192, 12288, 16384})
    for (std::int64_t n : {512, 1024, 1280, 1536, 2048, 2560, 3584, 4096, 5120, 7168, 8192})
      for (std::int64_t k : {128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192}) {
        Measurement g;
        g.kind = Kind::Gemm;
        g.dtype = "bf16";
        g.m = m;
        g.n = n;
        g.k = k;
        const double t = sim::hardware::gemm_time(gpu, Dtype::Bf16, truth, static_cast<double>(m),
                                                  static_cast<double>(n), static_cast<double>(k), 1.0)
                             .seconds();
        g.time = sim::base::Duration{noise(t)};
        out.push_back(g);
      }
  return out;
}

TEST(CollectiveFit, RecoversPerStepLatencyAndBusBandwidthWithinTwoPercent) {
  Noise noise("collectives");
  auto points = collective_points(CollectiveOp::AllReduce, Scope::Nvlink, 1.5e-6, 370e9, {2, 4, 8}, noise);
  auto network = collective_points(CollectiveOp::AllGather, Scope::Network, 4.0e-6, 45e9, {16, 32, 64}, noise);
  points.insert(points.end(), network.begin(), network.end());
  std::vector<std::string> notes;
  const auto fits = fit_collectives(points, notes);
  ASSERT_EQ(fits.size(), 2u);
  for (const auto& f : fits) {
    const bool nv = f.scope == Scope::Nvlink;
    const double alpha = nv ? 1.5e-6 : 4.0e-6;
    const double bw = nv ? 370e9 : 45e9;
    const std::string name = std::string(to_string(f.op)) + "/" + to_string(f.scope);
    report(name + " alpha per step", alpha * 1e6, f.alpha.s * 1e6, "us");
    report(name + " busbw", bw * 1e-9, f.busbw.gbytes_per_s(), "GB/s");
    EXPECT_NEAR(rel_error(f.alpha.s, alpha), 0.0, 0.02) << name;
    EXPECT_NEAR(rel_error(f.busbw.bytes_per_s, bw), 0.0, 0.02) << name;
    EXPECT_GT(f.r2, 0.99) << name;
    EXPECT_EQ(f.points, 3 * 23) << name;
  }
  EXPECT_TRUE(notes.empty());
}

TEST(GemmFit, RecoversEfficiencyHalfPointAndTilesWithinTwoPercent) {
  const auto hw = h100();
  sim::hardware::Efficiency truth = hw.efficiency;  // the defaults: 128x128 tiles, k_half 32, gemm 0.70
  truth.gemm = 0.78;
  truth.gemm_k_half = 56;
  truth.tile_m = 128;
  truth.tile_n = 256;
  Noise noise("gemm");
  const auto points = gemm_points(hw.gpu, truth, noise);
  std::vector<std::string> notes;
  const auto fits = fit_gemm(points, hw.gpu, hw.efficiency, hw.efficiency.hbm, notes);
  ASSERT_EQ(fits.size(), 1u);
  const auto& f = fits.front();
  report("bf16 gemm efficiency", truth.gemm, f.efficiency, "");
  report("bf16 gemm_k_half", truth.gemm_k_half, f.k_half, "");
  std::cout << "[ recovery ] bf16 tiles: true 128x256, fitted " << f.tile_m << "x" << f.tile_n << "; " << f.points
            << " compute-bound points (" << f.excluded << " memory-bound left out), gemm_time residuals rms "
            << f.rms_rel * 100 << "%, max " << f.max_rel * 100 << "%\n";
  EXPECT_NEAR(rel_error(f.efficiency, truth.gemm), 0.0, 0.02);
  EXPECT_NEAR(rel_error(f.k_half, truth.gemm_k_half), 0.0, 0.02);
  EXPECT_EQ(f.tile_m, 128);
  EXPECT_EQ(f.tile_n, 256);
  EXPECT_GT(f.excluded, 0) << "the sweep has memory-bound shapes (small k, large m and n)";
  EXPECT_LT(f.rms_rel, 0.015) << "gemm_time with the fitted parameters reproduces the points to the noise";
}

TEST(HbmFit, RecoversEffectiveBandwidthWithinTwoPercent) {
  const auto hw = h100();
  const double bw = 0.87 * hw.gpu.hbm_bandwidth.bytes_per_s;
  Noise noise("hbm");
  std::vector<Measurement> points;
  for (auto op : {MemoryOp::Copy, MemoryOp::Triad})
    for (std::int64_t bytes = std::int64_t{1} << 20; bytes <= (std::int64_t{8} << 30); bytes *= 2) {
      Measurement m;
      m.kind = Kind::Hbm;
      m.memory = op;
      m.bytes = sim::base::Bytes{bytes};
      m.time = sim::base::Duration{noise(3e-6 + static_cast<double>(bytes) / bw)};
      points.push_back(m);
    }
  std::vector<std::string> notes;
  const auto fits = fit_hbm(points, hw.gpu, notes);
  ASSERT_TRUE(fits.stream);
  report("HBM bandwidth (copy+triad)", bw * 1e-9, fits.stream->bandwidth.gbytes_per_s(), "GB/s");
  EXPECT_NEAR(rel_error(fits.stream->fraction, 0.87), 0.0, 0.02);
  EXPECT_EQ(fits.stream->points, 12) << "6 sizes of at least 256 MiB, two kernels";
  EXPECT_EQ(fits.stream->excluded, 16) << "sizes below 256 MiB may be served from L2";
  EXPECT_EQ(fits.per_op.size(), 2u);
}

TEST(Calibration, SetsTheProfileFractionsFromTheFits) {
  const auto hw = h100();
  Noise noise("calibration");
  auto ms = collective_points(CollectiveOp::AllReduce, Scope::Nvlink, 1.2e-6, 0.8 * 450e9, {8}, noise);
  const double nic = hw.network.nic_bandwidth.bytes_per_s * hw.network.nics_per_gpu;
  auto net = collective_points(CollectiveOp::AllReduce, Scope::Network, 5e-6, 0.7 * nic, {16}, noise);
  ms.insert(ms.end(), net.begin(), net.end());
  const auto c = calibrate(ms, hw, {"synthetic.jsonl"});
  EXPECT_NEAR(c.efficiency.nvlink, 0.8, 0.016);
  EXPECT_NEAR(c.efficiency.network, 0.7, 0.014);
  EXPECT_EQ(c.efficiency.gemm, hw.efficiency.gemm) << "no GEMM measurements: the base value stays";
  EXPECT_EQ(c.fitted, (std::vector<std::string>{"nvlink", "network"}));
  EXPECT_NE(c.provenance.at("efficiency.nvlink").find("synthetic.jsonl"), std::string::npos);
}

TEST(Calibration, ABusBandwidthAboveTheLinkIsRefusedWithItsFitNotClamped) {
  const auto hw = h100();
  Noise noise("calibration-above");
  const double nic = hw.network.nic_bandwidth.bytes_per_s * hw.network.nics_per_gpu;
  auto ms = collective_points(CollectiveOp::AllReduce, Scope::Network, 5e-6, 1.2 * nic, {16}, noise);
  try {
    (void)calibrate(ms, hw, {"synthetic.jsonl"});
    FAIL() << "a fraction of 1.2 must not be written (nor clamped to 1)";
  } catch (const FitError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("above the physical bound of 1"), std::string::npos) << what;
    EXPECT_NE(what.find("R^2 "), std::string::npos) << "the refusal reports the fit: " << what;
    EXPECT_NE(what.find("not written"), std::string::npos) << what;
  }
}

// One H100 node's all-reduce runs as NVLS on NVLink switches that reduce: ~475 GB/s of bus bandwidth, 1.06 of the
// per-direction link rate, is not a ring's fraction and not a misread log (a user trial: the usual 8-GPU log was
// refused). efficiency.nvlink keeps the base profile's value; the fit against the simulator sets efficiency.nvls.
TEST(Calibration, AnNvlsAllReduceAboveTheLinkRateIsNotARingFraction) {
  const auto hw = h100();
  ASSERT_TRUE(hw.nvlink.sharp);
  Noise noise("calibration-nvls");
  const auto ms = collective_points(CollectiveOp::AllReduce, Scope::Nvlink, 12e-6, 1.06 * 450e9, {8}, noise);
  const auto c = calibrate(ms, hw, {"synthetic.jsonl"});
  EXPECT_EQ(c.efficiency.nvlink, hw.efficiency.nvlink);
  EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
    return n.find("NVLink SHARP's in-switch reduction") != std::string::npos;
  }));
  // Beyond what NVLS can reach on 8 ranks (2 x 7 / 8 = 1.75 of the link), it is refused as before.
  Noise noise2("calibration-nvls-2");
  const auto too_fast = collective_points(CollectiveOp::AllReduce, Scope::Nvlink, 12e-6, 1.9 * 450e9, {8}, noise2);
  EXPECT_THROW((void)calibrate(too_fast, hw, {"synthetic.jsonl"}), FitError);
}

// ---- too few or inconsistent points -----------------------------------------------------------------------------

std::string fit_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const FitError& e) {
    return e.what();
  }
  return "(no error)";
}

Measurement collective(std::int64_t bytes, double seconds, int ranks = 8) {
  Measurement m;
  m.kind = Kind::Collective;
  m.bytes = sim::base::Bytes{bytes};
  m.time = sim::base::Duration{seconds};
  m.ranks = ranks;
  return m;
}

TEST(FitErrors, TooFewPointsNameTheGroupAndWhatIsNeeded) {
  const std::vector<Measurement> two{collective(1024, 2e-5), collective(1 << 20, 3e-5)};
  const auto msg = fit_error([&] { fit_alpha_beta(CollectiveOp::AllReduce, Scope::Nvlink, two); });
  EXPECT_NE(msg.find("all_reduce over nvlink: 2 measurements"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at least 3"), std::string::npos) << msg;
}

TEST(FitErrors, OneSizeCannotSeparateLatencyFromBandwidth) {
  const std::vector<Measurement> same{collective(1 << 20, 3e-5), collective(1 << 20, 3.1e-5),
                                      collective(1 << 20, 2.9e-5)};
  const auto msg = fit_error([&] { fit_alpha_beta(CollectiveOp::AllReduce, Scope::Nvlink, same); });
  EXPECT_NE(msg.find("same size"), std::string::npos) << msg;
}

TEST(FitErrors, TimeThatShrinksWithSizeIsInconsistent) {
  const std::vector<Measurement> bad{collective(1024, 9e-5), collective(1 << 20, 5e-5), collective(1 << 26, 1e-5)};
  const auto msg = fit_error([&] { fit_alpha_beta(CollectiveOp::AllReduce, Scope::Nvlink, bad); });
  EXPECT_NE(msg.find("inconsistent"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not grow"), std::string::npos) << msg;
}

TEST(FitErrors, GemmsFasterThanThePeakMeanTheWrongBaseProfile) {
  const auto hw = h100();
  sim::hardware::Efficiency truth = hw.efficiency;
  truth.gemm = 0.8;
  Noise noise("fast");
  auto points = gemm_points(hw.gpu, truth, noise);
  auto a100 = sim::scenario::load_hardware("a100-sxm4-80gb");  // measured on H100, fitted against A100's peak
  a100.gpu.sm_count = hw.gpu.sm_count;
  std::vector<std::string> notes;
  const auto msg = fit_error([&] { fit_gemm(points, a100.gpu, a100.efficiency, a100.efficiency.hbm, notes); });
  EXPECT_NE(msg.find("bf16 GEMMs: inconsistent with the base profile"), std::string::npos) << msg;
}

TEST(FitErrors, MeasurementsOfTwoGpuModelsOrAnotherSmCountAreRefused) {
  const auto hw = h100();
  Noise noise("devices");
  auto ms = collective_points(CollectiveOp::AllReduce, Scope::Nvlink, 1.2e-6, 360e9, {8}, noise);
  ms[0].device = "NVIDIA H100 80GB HBM3";
  ms[1].device = "NVIDIA A100-SXM4-80GB";
  auto msg = fit_error([&] { calibrate(ms, hw, {}); });
  EXPECT_NE(msg.find("several GPU models"), std::string::npos) << msg;
  ms[1].device = ms[0].device;
  ms[2].sm_count = 114;  // H100 PCIe
  msg = fit_error([&] { calibrate(ms, hw, {}); });
  EXPECT_NE(msg.find("114 SMs"), std::string::npos) << msg;
}

TEST(FitErrors, SingleRankCollectivesAloneGiveNothingToFit) {
  std::vector<Measurement> ms;
  for (std::int64_t n = 1024; n < (1 << 30); n *= 4)
    ms.push_back(collective(n, 1e-5, 1));
  const auto msg = fit_error([&] { calibrate(ms, h100(), {}); });
  EXPECT_NE(msg.find("nothing to fit"), std::string::npos) << msg;
}

TEST(FitErrors, HbmFasterThanTheProfileIsInconsistent) {
  const auto hw = h100();
  std::vector<Measurement> ms;
  for (std::int64_t b = std::int64_t{1} << 28; b <= (std::int64_t{1} << 32); b *= 2) {
    Measurement m;
    m.kind = Kind::Hbm;
    m.bytes = sim::base::Bytes{b};
    m.time = sim::base::Duration{static_cast<double>(b) / (1.5 * hw.gpu.hbm_bandwidth.bytes_per_s)};
    ms.push_back(m);
  }
  std::vector<std::string> notes;
  const auto msg = fit_error([&] { fit_hbm(ms, hw.gpu, notes); });
  EXPECT_NE(msg.find("exceeds its HBM bandwidth"), std::string::npos) << msg;
}

TEST(LeastSquares, DependentColumnsAreNotIdentifiable) {
  const std::vector<std::vector<double>> rows{{1, 2}, {2, 4}, {3, 6}};
  const std::vector<double> y{1, 2, 3};
  EXPECT_FALSE(weighted_least_squares(rows, y, relative_weights(y)));
}

}  // namespace
}  // namespace calibrate::fit
