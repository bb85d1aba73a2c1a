// tests/validation/fit_main.cpp: trainsim-validation-fit, the only place where trainsim's physical efficiency factors
// are fitted to published runs (issue 17).
//
// Per GPU generation (Ampere, Hopper, Blackwell) it fits physical factors of sim/hardware/compute_model.hpp: the
// fraction of the BF16 peak a large GEMM sustains in a training loop ("gemm"; Ampere) and the same for FP8 GEMMs
// ("gemm_fp8", where the generation has FP8 runs). params_for() says why the others keep their documented defaults.
// Nothing per run, per source or per model. The objective (loss(), below) is a capped mean absolute error with each
// source family weighted once, minimised by coordinate descent with golden-section line searches. Then, for every
// source family, it fits again without that family and reports the family's error under those factors
// (leave-one-family-out): the figure that says how the model does on sources it has not seen.
//
// Usage: trainsim-validation-fit [--out FILE] [--check COMMITTED]   (default FILE: tests/validation/fit_result.json in
// the source tree). --check fails when COMMITTED's factors or the profiles' differ from this fit (ctest
// validation_fit_is_current, so that a model change cannot leave them stale: 0.618 stood for gemm_fp8 while the fit
// gave 0.604).
// The fitted values are copied into hardware_profiles/*.json "efficiency" by hand, with this command in their
// provenance; `ctest -L validation` then reads FILE for the held-out column of docs/validation.md.
#include "tests/validation/attention_fit.hpp"
#include "tests/validation/evaluate.hpp"
#include "tests/validation/published_records.hpp"

#include "sim/hardware/compute_model.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/scenario/scenario.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using validation::EfficiencyPatch;
using validation::Prepared;
using validation::Record;

struct Param {
  std::string name;
  double lo, hi;
};

/// The factors fitted for a generation. Hopper's BF16 `gemm` is not among them: it keeps the documented default of
/// compute_model.hpp (0.70), which dense BF16 Megatron-style runs of sources outside this set (30+ runs, 8 to 12,288
/// H100s, issue 17) reproduce within 0.97-1.02; fitted here it drops to 0.57, dragged by families whose gap is a
/// mechanism the model lacks (see docs/validation.md), and those external runs would be predicted 20% slow.
std::vector<Param> params_for(const std::vector<const Prepared*>& rows) {
  /// Nor is the cost per kernel: left free it runs to the ends of any range (0.1 us on Ampere, 30 us on Hopper), a
  /// stand-in for missing mechanisms rather than a launch cost; it keeps its documented 4 us.
  const bool hopper = !rows.empty() && rows.front()->record().generation == "hopper";
  std::vector<Param> p;
  if (!hopper) p.push_back(Param{"gemm", 0.40, 0.95});
  bool fp8 = false;
  for (const auto* r : rows)
    fp8 = fp8 || r->record().scenario.find("\"fp8\"") != std::string::npos;
  if (fp8) p.push_back({"gemm_fp8", 0.30, 0.95});
  return p;
}

/// Mean |error| over the runs predicted (replica fidelity: the figures reported).
double mape(const std::vector<const Prepared*>& rows, const EfficiencyPatch& patch, int* predicted = nullptr) {
  double sum = 0;
  int n = 0;
  for (const auto* r : rows) {
    const auto o = r->predict(&patch);
    if (!o.predicted) continue;
    sum += std::fabs(o.error());
    ++n;
  }
  if (predicted) *predicted = n;
  return n ? sum / n : 0;
}

/// The fit's loss: each run's |error| capped at 25%, averaged within its source family, then over families. The cap:
/// a run off by more than that shows a mechanism the model lacks (ZeRO-3's collectives at 1,536 ranks, a power-capped
/// part), not evidence about a GEMM's efficiency. The family average: each source counts once, so the 44 runs of one
/// benchmark suite do not outvote the other sources (left to a plain mean, the family with the most rows decides
/// every physical factor). An FP8 run whose BF16 twin is among the rows counts by the error of its speed-up over the
/// twin (trainsim's BF16/FP8 step ratio over the published one, less 1) instead of its own step's: what separates the
/// two is the FP8 GEMMs, and a gap the twin shares (the stack's other kernels, a mechanism trainsim lacks) cancels in
/// the ratio rather than being absorbed into gemm_fp8 (with absolute errors only, TorchTitan's BF16 gap pulled
/// Hopper's gemm_fp8 from 0.60 to 0.55 once its async-TP rows were modelled, and the FP8 pairs within 10% from 24 to
/// 12 of 28). Simulated at analytic fidelity (the closed forms agree with replica on these symmetric inputs, at a
/// fraction of the cost).
constexpr double kLossCap = 0.25;
double loss(const std::vector<const Prepared*>& rows, const EfficiencyPatch& patch) {
  std::map<std::string, validation::Outcome> by_id;  // each run simulated once, twins looked up here
  for (const auto* r : rows)
    by_id.emplace(r->record().id, r->predict(&patch, sim::execution::Fidelity::Analytic));
  std::map<std::string, const Prepared*> prepared;
  for (const auto* r : rows)
    prepared[r->record().id] = r;
  std::map<std::string, std::pair<double, int>> by_family;
  for (const auto* r : rows) {
    const auto& o = by_id.at(r->record().id);
    if (!o.predicted) continue;
    double err = o.error();
    const std::string twin = validation::bf16_twin_id(r->record().id);
    if (const auto b = by_id.find(twin); b != by_id.end() && b->second.predicted) {
      const double published = prepared.at(twin)->record().reference_step_s / r->record().reference_step_s;
      err = b->second.predicted_step_s / o.predicted_step_s / published - 1;
    }
    auto& f = by_family[r->record().family];
    f.first += std::min(std::fabs(err), kLossCap);
    ++f.second;
  }
  double sum = 0;
  for (const auto& [name, f] : by_family)
    sum += f.first / f.second;
  return by_family.empty() ? 0 : sum / static_cast<double>(by_family.size());
}

/// Coordinate descent, two sweeps of golden-section searches (each to 1% of its parameter's range).
EfficiencyPatch fit(const std::vector<const Prepared*>& rows, const std::vector<Param>& params) {
  EfficiencyPatch x;
  for (const auto& p : params)  // start from compute_model.hpp's defaults
    x[p.name] = 0.7;
  const double phi = (std::sqrt(5.0) - 1) / 2;
  for (int sweep = 0; sweep < 2; ++sweep) {
    for (const auto& p : params) {
      double a = p.lo, b = p.hi;
      auto f = [&](double v) {
        EfficiencyPatch y = x;
        y[p.name] = v;
        return loss(rows, y);
      };
      double c = b - phi * (b - a), d = a + phi * (b - a);
      double fc = f(c), fd = f(d);
      while (b - a > 0.01 * (p.hi - p.lo)) {
        if (fc < fd) {
          b = d;
          d = c;
          fd = fc;
          c = b - phi * (b - a);
          fc = f(c);
        } else {
          a = c;
          c = d;
          fc = fd;
          d = a + phi * (b - a);
          fd = f(d);
        }
      }
      x[p.name] = (a + b) / 2;
    }
  }
  return x;
}

// ---- isolated GEMM microbenchmarks -> the shape model per architecture
// ------------------------------------------------

/// One measured isolated GEMM of tests/validation/gemm_microbenchmarks.json.
struct Bench {
  std::string arch, profile, dtype;
  double b, m, n, k, tflops;
};

struct ShapeFit {
  double efficiency = 0;  // asymptotic fraction of the dtype's peak of an isolated GEMM
  double k_half = 0;      // gemm_k_half
  double rms = 0;         // rms of log(predicted / measured)
  int points = 0;
};

/// Grid search of (efficiency, gemm_k_half) minimising the squared log error of hardware::gemm_time (wave quantisation,
/// k/(k + k_half), the 4 us per kernel of compute_model.hpp) against the measured throughputs; `fixed_k_half` holds
/// k_half (the profile has one for both dtypes).
ShapeFit fit_shapes(const std::vector<Bench>& rows, const std::string& arch, const std::string& dtype,
                    std::optional<double> fixed_k_half = std::nullopt) {
  std::vector<const Bench*> sel;
  for (const auto& r : rows)
    if (r.arch == arch && r.dtype == dtype) sel.push_back(&r);
  ShapeFit best;
  if (sel.empty()) return best;
  const auto hw = sim::scenario::load_hardware(sel.front()->profile);
  const auto d = *sim::hardware::dtype_from_string(dtype);
  double best_err = 1e300;
  for (int kh = 0; kh <= 1024; kh += 8) {
    if (fixed_k_half && kh != static_cast<int>(*fixed_k_half)) continue;
    for (int ei = 300; ei <= 1000; ei += 5) {
      sim::hardware::Efficiency e = hw.efficiency;
      e.gemm = ei / 1000.0;
      e.gemm_fp8 = ei / 1000.0;
      e.gemm_k_half = kh;
      e.kernel_overhead = sim::base::Time{4000};
      double err = 0;
      for (const auto* r : sel) {
        const double t = sim::hardware::gemm_time(hw.gpu, d, e, r->m, r->n, r->k, r->b).seconds();
        const double predicted = 2 * r->m * r->n * r->k * r->b / t / 1e12;
        err += std::pow(std::log(predicted / r->tflops), 2);
      }
      if (err < best_err) {
        best_err = err;
        best = ShapeFit{ei / 1000.0, static_cast<double>(kh), std::sqrt(err / static_cast<double>(sel.size())),
                        static_cast<int>(sel.size())};
      }
    }
  }
  return best;
}

/// --check: the committed fit and the profiles against this fit. Fitted and derived factors must agree to 0.0015 (their
/// rounding); held-out errors are not compared. Returns the number of disagreements, each printed.
int check_current(const nlohmann::ordered_json& now, const std::string& committed_path) {
  std::ifstream in(committed_path);
  const auto committed = nlohmann::json::parse(in);
  int bad = 0;
  auto same = [&](const std::string& what, double fitted, double kept) {
    if (std::fabs(fitted - kept) <= 0.0015) return;
    std::printf("STALE: %s is %.3f, but the fit gives %.3f\n", what.c_str(), kept, fitted);
    ++bad;
  };
  for (const auto& [generation, g] : now.at("generations").items())
    if (g.contains("params"))
      for (const auto& [k, v] : g.at("params").items())
        same(committed_path + " generations." + generation + "." + k, v.get<double>(),
             committed.at("generations").at(generation).at("params").value(k, -1.0));
  for (const auto& [generation, g] : now.at("derived").items())
    for (const auto& [k, v] : g.items())
      same(committed_path + " derived." + generation + "." + k, v.get<double>(),
           committed.at("derived").at(generation).value(k, -1.0));
  // The profiles carry the fitted and derived factors (their provenance names this program).
  const auto& gens = now.at("generations");
  const auto& derived = now.at("derived");
  auto profile = [&](const char* name, const char* key, double fitted) {
    const auto e = sim::scenario::load_hardware(name).efficiency;
    same(std::string("hardware_profiles/") + name + ".json efficiency." + key, fitted,
         std::string(key) == "gemm" ? e.gemm : e.gemm_fp8.value_or(-1.0));
  };
  if (gens.contains("hopper") && gens.at("hopper").contains("params"))
    for (const char* name : {"h100-sxm5-80gb", "h100-sxm5-96gb-500w", "h200-sxm-141gb", "h800-sxm5-80gb"})
      profile(name, "gemm_fp8", gens.at("hopper").at("params").at("gemm_fp8").get<double>());
  if (gens.contains("ampere") && gens.at("ampere").contains("params"))
    for (const char* name : {"a100-sxm4-40gb", "a100-sxm4-80gb"})
      profile(name, "gemm", gens.at("ampere").at("params").at("gemm").get<double>());
  if (derived.contains("blackwell"))
    for (const char* name : {"b200-sxm-180gb", "gb200-nvl72", "gb300-nvl72"}) {
      profile(name, "gemm", derived.at("blackwell").at("gemm").get<double>());
      profile(name, "gemm_fp8", derived.at("blackwell").at("gemm_fp8").get<double>());
    }
  if (bad)
    std::printf(
        "the committed fit or profiles are stale: run build/release/bin/trainsim-validation-fit, copy its "
        "factors into hardware_profiles/ and rerun ctest -L validation\n");
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/fit_result.json";
  std::string check;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--out") out = argv[i + 1];
    if (std::string(argv[i]) == "--check") check = argv[i + 1];
  }
  const auto records = validation::load_published_records(validation::shared_validation_dir());
  std::vector<std::unique_ptr<Prepared>> prepared;
  std::map<std::string, std::vector<const Prepared*>> by_generation;
  for (const auto& r : records) {
    prepared.push_back(std::make_unique<Prepared>(r));
    if (prepared.back()->ready()) by_generation[r.generation].push_back(prepared.back().get());
  }

  nlohmann::ordered_json result;
  result["generated_by"] = "trainsim-validation-fit (tests/validation/fit_main.cpp)";

  // The shape model per architecture from isolated GEMM measurements (tests/validation/gemm_microbenchmarks.json):
  // Hopper's gemm_k_half; Blackwell's factors relative to Hopper's (below, after the runs fit).
  std::vector<Bench> benches;
  {
    std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/gemm_microbenchmarks.json");
    const auto doc = nlohmann::json::parse(in);
    for (const auto& r : doc.at("runs"))
      benches.push_back(
          {r.at("arch"), r.at("profile"), r.at("dtype"), r.at("b"), r.at("m"), r.at("n"), r.at("k"), r.at("tflops")});
  }
  const ShapeFit hopper = fit_shapes(benches, "sm_90", "bf16");
  const ShapeFit blackwell = fit_shapes(benches, "sm_100", "bf16");
  const ShapeFit blackwell_fp8 = fit_shapes(benches, "sm_100", "fp8", blackwell.k_half);
  for (const auto& [name, f] :
       {std::pair{"sm_90 bf16", hopper}, std::pair{"sm_100 bf16", blackwell}, std::pair{"sm_100 fp8", blackwell_fp8}})
    std::printf("isolated GEMMs %s: %d points, efficiency %.3f, gemm_k_half %.0f, rms log error %.3f\n", name, f.points,
                f.efficiency, f.k_half, f.rms);
  auto& mb = result["microbenchmarks"];
  mb["source"] = "tests/validation/gemm_microbenchmarks.json (OpenXLA's measured matmul tables)";
  for (const auto& [name, f] :
       {std::pair{"sm_90_bf16", hopper}, std::pair{"sm_100_bf16", blackwell}, std::pair{"sm_100_fp8", blackwell_fp8}}) {
    mb[name]["isolated_efficiency"] = f.efficiency;
    mb[name]["gemm_k_half"] = f.k_half;
    mb[name]["rms_log_error"] = std::round(f.rms * 1000) / 1000;
    mb[name]["points"] = f.points;
  }
  // The attention kernels per class and pass (tests/validation/attention_microbenchmarks.json): the Hopper profiles'
  // attention* efficiencies, held to these by AttentionKernels.HopperProfilesCarryTheFit.
  auto& att = mb["sm_90_attention"];
  att["source"] =
      "tests/validation/attention_microbenchmarks.json (FlashAttention-3 paper, H100, head dim 128, causal and not)";
  for (const char* kernel : {"flash2", "cudnn", "fa3"})
    for (const char* pass : {"forward", "backward", "forward_noncausal", "backward_noncausal"}) {
      const auto f = validation::fit_attention("sm_90", kernel, pass);
      std::printf("isolated attention sm_90 %s %s: %d points, efficiency %.3f, seq_half %.0f, rms log error %.3f\n",
                  kernel, pass, f.points, f.efficiency, f.seq_half, f.rms);
      att[kernel][pass]["efficiency"] = std::round(f.efficiency * 1000) / 1000;
      att[kernel][pass]["seq_half"] = f.seq_half;
      att[kernel][pass]["rms_log_error"] = std::round(f.rms * 1000) / 1000;
      att[kernel][pass]["points"] = f.points;
    }
  result["objective"] =
      "mean over source families of the mean min(|error|, 25%) of their runs, an FP8 run with a BF16 twin by the "
      "error of its speed-up over the twin; analytic fidelity";
  std::map<std::string, std::pair<double, int>> held_out;  // family -> (sum |error|, runs)
  for (const auto& [generation, rows] : by_generation) {
    std::set<std::string> sources;
    for (const auto* r : rows)
      sources.insert(r->record().family);
    // A generation whose runs come from one source family is not fitted: nothing could check the fit on another
    // source, and its factors keep their documented defaults (Blackwell today: one Megatron-MoE-ModelZoo table).
    const auto params = sources.size() >= 2 ? params_for(rows) : std::vector<Param>{};
    const auto x = fit(rows, params);
    int n = 0;
    const double in_sample = mape(rows, x, &n);
    std::printf("%s: %d runs predicted, in-sample MAPE %.1f%%:", generation.c_str(), n, 100 * in_sample);
    for (const auto& [k, v] : x)
      std::printf(" %s=%.3f", k.c_str(), v);
    std::printf("\n");
    auto& g = result["generations"][generation];
    for (const auto& [k, v] : x)
      g["params"][k] = std::round(v * 1000) / 1000;
    g["runs"] = n;
    g["in_sample_mape"] = std::round(in_sample * 10000) / 10000;

    std::set<std::string> families;
    for (const auto* r : rows)
      families.insert(r->record().family);
    for (const auto& fam : families) {
      if (params.empty()) break;  // not fitted: nothing to hold out
      std::vector<const Prepared*> train, test;
      for (const auto* r : rows)
        (r->record().family == fam ? test : train).push_back(r);
      if (train.empty()) continue;  // the generation's only family: nothing to fit it from
      auto xf = fit(train, params_for(train));
      // A factor the other families cannot inform (FP8 when no other family trains in FP8) takes its documented
      // default, never the in-sample value (which the held-out family helped fit): gemm_fp8 defaults to gemm.
      if (x.count("gemm_fp8") && !xf.count("gemm_fp8")) xf["gemm_fp8"] = xf.count("gemm") ? xf["gemm"] : 0.70;
      for (const auto* r : test) {
        const auto o = r->predict(&xf);
        if (!o.predicted) continue;
        held_out[fam].first += std::fabs(o.error());
        ++held_out[fam].second;
      }
      std::printf("  %s held out: %d runs\n", fam.c_str(), static_cast<int>(test.size()));
    }
  }
  // Blackwell's training-loop factors: its isolated efficiencies times Hopper's training-loop-to-isolated ratios (the
  // documented BF16 gemm 0.70 over Hopper's isolated fit; the fitted FP8 gemm_fp8 over the isolated FP8 figure of
  // compute_model.hpp, cuBLASLt FP8 8192^3 at 0.81 of the H100's FP8 peak): the same power cap and interference in a
  // training loop, on the measured Blackwell kernels. Its runs come from one source family, so nothing is fitted to
  // them.
  if (result["generations"].contains("hopper") && result["generations"]["hopper"].contains("params")) {
    const double hopper_fp8 = result["generations"]["hopper"]["params"].value("gemm_fp8", 0.0);
    const double gemm = sim::hardware::Efficiency{}.gemm * blackwell.efficiency / hopper.efficiency;
    const double gemm_fp8 = hopper_fp8 / 0.81 * blackwell_fp8.efficiency;
    auto& dv = result["derived"];
    dv["hopper"]["gemm_k_half"] = hopper.k_half;
    dv["blackwell"]["gemm"] = std::round(gemm * 1000) / 1000;
    dv["blackwell"]["gemm_fp8"] = std::round(gemm_fp8 * 1000) / 1000;
    dv["blackwell"]["gemm_k_half"] = blackwell.k_half;
    std::printf("derived: hopper gemm_k_half %.0f; blackwell gemm %.3f, gemm_fp8 %.3f, gemm_k_half %.0f\n",
                hopper.k_half, gemm, gemm_fp8, blackwell.k_half);
  }
  for (const auto& [fam, acc] : held_out) {
    const double m = acc.second ? acc.first / acc.second : 0;
    result["held_out_mape"][fam] = std::round(m * 10000) / 10000;
    std::printf("held-out MAPE %-24s %.1f%% (%d runs)\n", fam.c_str(), 100 * m, acc.second);
  }
  std::ofstream f(out, std::ios::trunc);
  f << result.dump(2) << "\n";
  std::printf("wrote %s\n", out.c_str());
  return check.empty() ? 0 : (check_current(result, check) == 0 ? 0 : 1);
}
