// tests/validation/attention_fit.cpp: the attention kernel fit of attention_fit.hpp.
#include "tests/validation/attention_fit.hpp"

#include "sim/hardware/compute_model.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/scenario/scenario.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>

namespace validation {
namespace {

struct Point {
  double seq, tflops;
};

}  // namespace

AttentionPassFit fit_attention(const std::string& arch, const std::string& kernel, const std::string& pass) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/attention_microbenchmarks.json");
  const auto doc = nlohmann::json::parse(in);
  std::string profile;
  // series[pass or "forward_nc"][seq] -> TFLOP/s
  std::map<std::string, std::map<double, double>> series;
  for (const auto& r : doc.at("runs")) {
    if (r.at("arch") != arch || r.at("kernel") != kernel) continue;
    profile = r.at("profile");
    const std::string p = r.at("pass");
    const bool causal = r.at("causal");
    series[p + (causal ? "" : "_nc")][r.at("seq").get<double>()] = r.at("tflops");
  }
  std::vector<Point> points;
  const bool causal = pass == "forward" || pass == "backward";
  const bool backward = pass == "backward" || pass == "backward_noncausal";
  if (!causal) {
    // Measured without a mask, fitted as measured.
    for (const auto& [s, t] : series[backward ? "backward_nc" : "forward_nc"])
      points.push_back({s, t});
  } else if (pass == "forward") {
    for (const auto& [s, t] : series["forward"])
      points.push_back({s, t});
  } else {
    // Causal backward = non-causal backward x (causal / non-causal forward) at the same length.
    for (const auto& [s, t] : series["backward_nc"]) {
      const auto c = series["forward"].find(s);
      const auto n = series["forward_nc"].find(s);
      if (c == series["forward"].end() || n == series["forward_nc"].end()) continue;
      points.push_back({s, t * c->second / n->second});
    }
  }
  AttentionPassFit best;
  if (points.empty()) return best;
  const auto hw = sim::scenario::load_hardware(profile);
  const auto bf16 = *sim::hardware::dtype_from_string("bf16");
  // One call per point: 16k tokens of 16 heads of 128 (the benchmark's shapes), causal ones at half the scores.
  const double flops_per_s2 = 4.0 * 128 * 16 * (causal ? 0.5 : 1.0) * (backward ? 2.5 : 1.0);
  double best_err = 1e300;
  for (int half = 0; half <= 3000; half += 1) {
    // For a given half the best efficiency is close to the geometric mean of measured / shape; search around it.
    double log_sum = 0;
    for (const auto& p : points)
      log_sum += std::log(p.tflops * 1e12 / hw.gpu.peak_for(bf16)->flops_per_s * (p.seq + half) / p.seq);
    const double e0 = std::exp(log_sum / static_cast<double>(points.size()));
    for (int step = -20; step <= 20; ++step) {
      const double eff = std::round(e0 * 1000) / 1000 + step * 0.001;
      if (eff <= 0 || eff > 1) continue;
      sim::hardware::Efficiency e = hw.efficiency;
      e.gemm_isolated.reset();  // isolated kernels: no training-loop derate
      e.attention = eff;
      e.attention_seq_half = half;
      e.attention_backward = eff;
      e.attention_backward_seq_half = half;
      double err = 0;
      for (const auto& p : points) {
        const double batch = 16384 / p.seq;
        const double flops = flops_per_s2 * p.seq * p.seq * batch;
        const double t = sim::hardware::attention_time(hw.gpu, bf16, e, flops,
                                                       {sim::hardware::AttentionKernel::Fused, backward, p.seq})
                             .seconds();
        err += std::pow(std::log(flops / t / 1e12 / p.tflops), 2);
      }
      if (err < best_err) {
        best_err = err;
        best = {eff, static_cast<double>(half), std::sqrt(err / static_cast<double>(points.size())),
                static_cast<int>(points.size())};
      }
    }
  }
  return best;
}

}  // namespace validation
