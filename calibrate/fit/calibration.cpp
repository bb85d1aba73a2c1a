// calibrate/fit/calibration.cpp: runs the fits, chooses the profile's efficiency values and writes them with
// provenance into a copy of the base profile.
#include "calibrate/fit/calibration.hpp"

#include <cctype>

#include "calibrate/fit/least_squares.hpp"
#include "sim/base/assert.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

namespace calibrate::fit {
namespace {

using sim::hardware::Dtype;

std::string fmt(double v, int precision = 4) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

std::string pct(double fraction) {
  return fmt(fraction * 100.0, 3) + "%";
}

/// v rounded to 1/scale (round_to(0.78123, 1e4) = 0.7812), divided last so that the double prints as written.
double round_to(double v, double scale) {
  return std::round(v * scale) / scale;
}

std::string human_bytes(sim::base::Bytes b) {
  const double v = static_cast<double>(b.n);
  if (v >= 1024.0 * 1024 * 1024) return fmt(v / (1024.0 * 1024 * 1024), 3) + " GiB";
  if (v >= 1024.0 * 1024) return fmt(v / (1024.0 * 1024), 3) + " MiB";
  if (v >= 1024.0) return fmt(v / 1024.0, 3) + " KiB";
  return fmt(v, 4) + " B";
}

/// Distinct non-empty values, most frequent first, at most three and "..." after.
std::string distinct(const std::vector<std::string>& values) {
  std::map<std::string, int> counts;
  for (const auto& v : values)
    if (!v.empty()) ++counts[v];
  std::vector<std::pair<int, std::string>> order;
  for (const auto& [v, n] : counts)
    order.emplace_back(-n, v);
  std::sort(order.begin(), order.end());
  std::string out;
  for (std::size_t i = 0; i < order.size() && i < 3; ++i)
    out += (out.empty() ? "" : ", ") + order[i].second;
  if (order.size() > 3) out += ", ...";
  return out;
}

std::string context_of(std::span<const Measurement> ms, std::string& device) {
  std::vector<std::string> devices, drivers, cudas, nccls, dates;
  for (const auto& m : ms) {
    devices.push_back(m.device);
    drivers.push_back(m.driver);
    cudas.push_back(m.cuda);
    nccls.push_back(m.nccl);
    if (!m.date.empty()) dates.push_back(m.date.substr(0, 10));
  }
  device = distinct(devices);
  std::string out = device.empty() ? "an unnamed GPU" : device;
  if (const auto d = distinct(drivers); !d.empty()) out += ", driver " + d;
  if (const auto d = distinct(cudas); !d.empty()) out += ", CUDA " + d;
  if (const auto d = distinct(nccls); !d.empty()) out += ", NCCL " + d;
  if (!dates.empty()) {
    const auto [lo, hi] = std::minmax_element(dates.begin(), dates.end());
    out += ", measured " + *lo + (*lo == *hi ? "" : ".." + *hi);
  } else {
    out += ", date not recorded";
  }
  return out;
}

void check_consistency(std::span<const Measurement> ms, const sim::hardware::HardwareProfile& base,
                       const CalibrateOptions& options) {
  std::map<std::string, int> devices;
  for (const auto& m : ms) {
    if (!m.device.empty()) ++devices[m.device];
    if (m.sm_count > 0 && m.sm_count != base.gpu.sm_count)
      throw FitError(
          "inconsistent with the base profile: " + (m.label.empty() ? std::string("a measurement") : m.label) +
          " ran on a GPU with " + std::to_string(m.sm_count) + " SMs, but " + base.name + " has " +
          std::to_string(base.gpu.sm_count) + "; choose the base profile of the measured GPU");
  }
  if (devices.size() > 1) {
    std::string list;
    for (const auto& [d, n] : devices)
      list += (list.empty() ? "" : ", ") + d + " (" + std::to_string(n) + ")";
    throw FitError("inconsistent measurements: they come from several GPU models: " + list +
                   "; fit one GPU model at a time");
  }
  if (devices.empty() || options.allow_other_gpu) return;
  const std::string measured = gpu_family(devices.begin()->first), profile = gpu_family(base.name);
  if (!measured.empty() && !profile.empty() && measured != profile)
    throw FitError("the measurements ran on " + devices.begin()->first + " (" + measured + ") but the base profile " +
                   base.name + " is a " + profile +
                   "; choose the base profile of the measured GPU, or pass "
                   "--allow-other-gpu to fit these measurements onto it anyway");
}

const GemmFit* primary_gemm(const std::vector<GemmFit>& fits) {
  for (Dtype d : {Dtype::Bf16, Dtype::Fp16})
    for (const auto& f : fits)
      if (f.dtype == d) return &f;
  return fits.empty() ? nullptr : &fits.front();
}

const AlphaBeta* primary_collective(const std::vector<AlphaBeta>& fits, Scope scope) {
  for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                          CollectiveOp::AllToAll, CollectiveOp::SendRecv, CollectiveOp::Broadcast})
    for (const auto& f : fits)
      if (f.op == op && f.scope == scope) return &f;
  return nullptr;
}

std::string residuals(double r2, double rms, double max) {
  return "R^2 " + fmt(r2, 4) + ", relative residuals rms " + pct(rms) + ", max " + pct(max);
}

}  // namespace

Calibration calibrate(std::span<const Measurement> ms, const sim::hardware::HardwareProfile& base,
                      const std::vector<std::string>& sources, const CalibrateOptions& options) {
  if (ms.empty()) throw FitError("no measurements to fit");
  check_consistency(ms, base, options);
  Calibration c;
  c.base_efficiency = base.efficiency;
  c.efficiency = base.efficiency;
  c.measurements = static_cast<int>(ms.size());
  c.context = context_of(ms, c.device);
  std::string files;
  for (const auto& s : sources)
    files += (files.empty() ? "" : ", ") + s;
  const std::string origin = " on " + c.context + (files.empty() ? "" : " (" + files + ")") + "; ";

  c.hbm = fit_hbm(ms, base.gpu, c.notes);
  const double hbm_fraction = c.hbm.stream ? round_to(c.hbm.stream->fraction, 1e4) : base.efficiency.hbm;
  c.gemm = fit_gemm(ms, base.gpu, base.efficiency, hbm_fraction, c.notes);
  c.collectives = fit_collectives(ms, c.notes);
  if (!c.hbm.stream && c.gemm.empty() && c.collectives.empty())
    throw FitError("nothing to fit: the measurements hold no GEMM, memory-bound or multi-rank collective timings");

  auto set = [&](const std::string& key, std::string text) {
    c.fitted.push_back(key);
    c.provenance["efficiency." + key] = "trainsim-calibrate fit: " + std::move(text);
  };
  if (const GemmFit* g = primary_gemm(c.gemm)) {
    const std::string dt = sim::hardware::to_string(g->dtype);
    const std::string how =
        "weighted least squares of gemm_time (sim/hardware/compute_model.hpp, wave quantisation "
        "over " +
        std::to_string(base.gpu.sm_count) + " SMs) over " + std::to_string(g->points) + " " + dt +
        " cuBLAS GEMM times (" + std::to_string(g->excluded) + " memory- or launch-bound left out)" + origin +
        residuals(g->r2, g->rms_rel, g->max_rel) + "; peak " + fmt(base.gpu.peak_for(g->dtype)->tflops()) +
        " TFLOP/s from the base profile";
    c.efficiency.gemm = round_to(g->efficiency, 1e4);
    set("gemm", "fraction of the " + dt + " peak, " + fmt(c.efficiency.gemm) + "; " + how);
    // The same isolated measurement: a base profile's attention derate (gemm / gemm_isolated, compute_model.hpp)
    // compares a training-loop gemm with an isolated one, and this gemm is isolated, so the two are set equal.
    c.efficiency.gemm_isolated = c.efficiency.gemm;
    set("gemm_isolated",
        "equal to gemm, measured the same way (isolated cuBLAS GEMMs): attention keeps the base "
        "profile's rates; " +
            how);
    if (g->k_half_fitted) {
      c.efficiency.gemm_k_half = round_to(g->k_half, 10);
      set("gemm_k_half", "inner dimension of half efficiency, " + fmt(c.efficiency.gemm_k_half) + "; " + how);
    }
    c.efficiency.tile_m = g->tile_m;
    c.efficiency.tile_n = g->tile_n;
    const std::string tiles = "output tile " + std::to_string(g->tile_m) + "x" + std::to_string(g->tile_n) +
                              " chosen among 64/128/256 x 64/128/256 by the smallest residual of the same fit; ";
    set("tile_m", tiles + how);
    set("tile_n", tiles + how);
  }
  if (c.hbm.stream) {
    const auto& h = *c.hbm.stream;
    c.efficiency.hbm = hbm_fraction;
    set("hbm", "achieved fraction of the base profile's HBM bandwidth (" + fmt(base.gpu.hbm_bandwidth.gbytes_per_s()) +
                   " GB/s): " + fmt(h.bandwidth.gbytes_per_s()) + " GB/s effective from t = alpha + bytes/B (alpha " +
                   fmt(h.alpha.s * 1e6) + " us) by weighted least squares over " + std::to_string(h.points) + " " +
                   h.ops + " kernel times (STREAM byte counts, read plus written)" + origin +
                   residuals(h.r2, h.rms_rel, h.max_rel));
  }
  struct Link {
    Scope scope;
    const char* key;
    double bandwidth;
    std::string what;
  };
  const Link links[] = {
      {Scope::Nvlink, "nvlink", base.nvlink.bandwidth.bytes_per_s, "the base profile's per-direction NVLink bandwidth"},
      {Scope::Network, "network", base.network.nic_bandwidth.bytes_per_s * base.network.nics_per_gpu,
       "the base profile's NIC bandwidth per GPU"}};
  for (const auto& link : links) {
    const AlphaBeta* ab = primary_collective(c.collectives, link.scope);
    if (!ab || link.bandwidth <= 0) continue;
    // Over hosts with several ranks each, bus bandwidth is not one NIC's rate (NCCL's rings cross the network on every
    // rail at once): fit_with_model() fits efficiency.network against the simulator instead (issue 23).
    if (link.scope == Scope::Network && std::any_of(ms.begin(), ms.end(), [ab](const Measurement& m) {
          return m.kind == Kind::Collective && m.collective == ab->op && m.scope == Scope::Network && m.nodes >= 2 &&
                 m.ranks > m.nodes;
        }))
      continue;
    const double fraction = ab->busbw.bytes_per_s / link.bandwidth;
    // On NVLink switches that reduce (the base profile's nvlink.sharp), an all-reduce runs as NVLS and its bus
    // bandwidth passes the per-direction link rate (up to 2(n-1)/n of it): not a ring's fraction. efficiency.nvlink
    // stays the base profile's, and the NVLS fit against the simulator below sets efficiency.nvls (a user trial: the
    // usual 8-GPU H100 log, ~475 GB/s, was refused, though compare matched it within 1% on the base profile).
    const int n = std::max(2, ab->max_ranks);
    if (link.scope == Scope::Nvlink && ab->op == CollectiveOp::AllReduce && base.nvlink.sharp && fraction > 1.0 &&
        fraction <= 2.0 * (n - 1) / n) {
      c.notes.push_back(
          "all_reduce over nvlink: bus bandwidth " + fmt(ab->busbw.gbytes_per_s()) + " GB/s is " + fmt(fraction) +
          " of " + link.what +
          ", above what a ring reaches: NVLink SHARP's in-switch reduction; efficiency.nvlink kept at the "
          "base profile's; efficiency.nvls is the NVLS fit's against the simulator where the fit runs NVLS "
          "(--algorithm "
          "auto or nvls), else the base profile's");
      continue;
    }
    // A fraction above 1 is outside the physical bound of the base profile: it is refused, never clamped, so that
    // the profile holds only what was fitted.
    if (fraction > 1.0)
      throw FitError(std::string(to_string(ab->op)) + " over " + link.key + ": the fitted bus bandwidth " +
                     fmt(ab->busbw.gbytes_per_s()) + " GB/s (" + residuals(ab->r2, ab->rms_rel, ab->max_rel) + ", " +
                     std::to_string(ab->points) + " measurements" + origin.substr(0, origin.size() - 2) + ") is " +
                     fmt(fraction) + " of " + link.what + " (" + fmt(link.bandwidth * 1e-9) +
                     " GB/s), above the physical bound of 1: in-network reduction (NVLink SHARP), a base profile "
                     "with too few NICs per GPU or too slow links, or a misread log; not written. Fix the base "
                     "profile's bandwidth, or fit without these collective measurements");
    double* target = link.scope == Scope::Nvlink ? &c.efficiency.nvlink : &c.efficiency.network;
    *target = round_to(fraction, 1e4);
    set(link.key, std::string(to_string(ab->op)) + " bus bandwidth " + fmt(ab->busbw.gbytes_per_s()) + " GB/s over " +
                      link.what + " (" + fmt(link.bandwidth * 1e-9) + " GB/s) = " + fmt(*target) +
                      "; t = steps(p) alpha + busbw_factor(p) n / busbw (closed forms of sim/collectives, nccl-tests "
                      "bus bandwidth) by weighted least squares over " +
                      std::to_string(ab->points) + " measurements of " + std::to_string(ab->min_ranks) + ".." +
                      std::to_string(ab->max_ranks) + " ranks and " + human_bytes(ab->min_bytes) + ".." +
                      human_bytes(ab->max_bytes) + origin + residuals(ab->r2, ab->rms_rel, ab->max_rel) +
                      "; fitted latency " + fmt(ab->alpha.s * 1e6) +
                      " us per step (latency.nvlink when fitted against the simulator)");
  }
  return c;
}

std::string gpu_family(std::string_view name) {
  // Longest names first: "gb200" before "b200", "h200" before "h20".
  static const std::vector<std::string> kFamilies = {"gb200", "gh200", "gb300", "b200", "b300", "b100", "h800",
                                                     "h200",  "h100",  "a800",  "a100", "v100", "l40s", "h20",
                                                     "a40",   "a30",   "a10",   "l40",  "l4",   "t4"};
  std::string lower(name);
  for (auto& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::size_t i = 0;
  while (i < lower.size()) {  // alphanumeric tokens: "nvidia", "a100", "sxm4", "80gb"
    while (i < lower.size() && !std::isalnum(static_cast<unsigned char>(lower[i])))
      ++i;
    const std::size_t start = i;
    while (i < lower.size() && std::isalnum(static_cast<unsigned char>(lower[i])))
      ++i;
    const std::string token = lower.substr(start, i - start);
    for (const auto& f : kFamilies)
      if (token == f) return f;
  }
  return {};
}

std::string fitted_profile_text(sim::base::JsonDocument doc, const Calibration& c, const std::string& name) {
  std::vector<std::string> base_keys;  // fields the base profile's efficiency section sets
  sim::hardware::HardwareProfile base;
  {
    sim::base::Diagnostics diag(doc.origin());
    auto r = doc.root(diag);
    base = sim::hardware::HardwareProfile::parse(r);
    diag.throw_if_any();
    sim::base::Diagnostics ignored(doc.origin());
    auto r2 = doc.root(ignored);
    if (auto e = r2.optional_object("efficiency")) base_keys = e->keys();
  }
  auto prov = base.provenance;
  if (auto it = prov.find("efficiency"); it != prov.end()) {
    const std::string old = it->second;
    prov.erase(it);
    for (const auto& k : base_keys)
      prov["efficiency." + k] = "from the base profile " + base.name + ": " + old;
  }
  for (const auto& [k, v] : c.provenance)
    prov[k] = v;

  const auto& e = c.efficiency;
  for (const auto& key : c.fitted) {
    std::string value;
    if (key == "gemm") value = json_number(e.gemm);
    if (key == "gemm_isolated") value = json_number(e.gemm_isolated.value_or(e.gemm));
    if (key == "gemm_k_half") value = json_number(e.gemm_k_half);
    if (key == "tile_m") value = std::to_string(e.tile_m);
    if (key == "tile_n") value = std::to_string(e.tile_n);
    if (key == "hbm") value = json_number(e.hbm);
    if (key == "nvlink") value = json_number(e.nvlink);
    if (key == "network") value = json_number(e.network);
    if (key == "nvls") value = json_number(e.nvls);
    SIM_ASSERT(!value.empty(), "a fitted efficiency field without a writer");
    doc.set("efficiency." + key, value);
  }
  for (const auto& key : c.latency_fitted)
    doc.set("latency." + key, json_string(std::to_string(c.latency.field(key).value().ns) + " ns"));
  sim::results::Json p = sim::results::Json::object();
  for (const auto& [k, v] : prov)
    p[k] = v;
  doc.set("provenance", p.dump(-1));
  doc.set("name", json_string(name));
  std::string description = base.description;
  if (!description.empty() && description.back() != '.') description += '.';
  doc.set("description",
          json_string(description + (description.empty() ? "" : " ") + "Efficiency fitted by trainsim-calibrate from " +
                      std::to_string(c.measurements) + " measurements on " + c.context + "."));
  std::string text = doc.dump() + "\n";

  // The result must load as a profile and keep a source for every number.
  auto check = sim::base::JsonDocument::parse_text(text, "fitted profile");
  sim::base::Diagnostics diag("fitted profile");
  auto r = check.root(diag);
  const auto parsed = sim::hardware::HardwareProfile::parse(r);
  SIM_ASSERT(diag.empty(), "the fitted profile does not parse as a hardware profile");
  SIM_ASSERT(sim::hardware::provenance_gaps(r.leaf_paths(), parsed.provenance).empty(),
             "the fitted profile has a number without provenance");
  return text;
}

sim::results::Json calibration_json(const Calibration& c) {
  using sim::results::Json;
  Json j = Json::object();
  j["schema"] = "trainsim.calibration/1";
  j["device"] = c.device;
  j["context"] = c.context;
  j["measurements"] = c.measurements;
  Json coll = Json::object();
  for (const auto& ab : c.collectives) {
    Json g = Json::object();
    g["alpha_us"] = ab.alpha.s * 1e6;
    g["busbw_gbps"] = ab.busbw.gbytes_per_s();
    g["r2"] = ab.r2;
    g["points"] = ab.points;
    g["latency_us"] = ab.latency().s * 1e6;
    g["ranks"] = Json::array();
    g["ranks"].push_back(ab.min_ranks);
    g["ranks"].push_back(ab.max_ranks);
    g["bytes"] = Json::array();
    g["bytes"].push_back(ab.min_bytes.n);
    g["bytes"].push_back(ab.max_bytes.n);
    g["rms_residual"] = ab.rms_rel;
    g["max_residual"] = ab.max_rel;
    coll[to_string(ab.op)][to_string(ab.scope)] = std::move(g);
  }
  j["collectives"] = std::move(coll);
  Json gemm = Json::object();
  for (const auto& g : c.gemm) {
    Json o = Json::object();
    o["efficiency"] = g.efficiency;
    o["gemm_k_half"] = g.k_half;
    o["k_half_fitted"] = g.k_half_fitted;
    o["tile_m"] = g.tile_m;
    o["tile_n"] = g.tile_n;
    o["r2"] = g.r2;
    o["points"] = g.points;
    o["excluded"] = g.excluded;
    o["rms_residual"] = g.rms_rel;
    o["max_residual"] = g.max_rel;
    o["worst"] = g.worst;
    o["best_tflops"] = g.best.tflops();
    gemm[sim::hardware::to_string(g.dtype)] = std::move(o);
  }
  j["gemm"] = std::move(gemm);
  auto hbm_json = [](const HbmFit& h) {
    Json o = Json::object();
    o["ops"] = h.ops;
    o["bandwidth_gbps"] = h.bandwidth.gbytes_per_s();
    o["fraction"] = h.fraction;
    o["alpha_us"] = h.alpha.s * 1e6;
    o["r2"] = h.r2;
    o["points"] = h.points;
    o["excluded"] = h.excluded;
    o["rms_residual"] = h.rms_rel;
    o["max_residual"] = h.max_rel;
    return o;
  };
  if (c.hbm.stream) {
    Json h = hbm_json(*c.hbm.stream);
    Json per = Json::object();
    for (const auto& f : c.hbm.per_op)
      per[f.ops] = hbm_json(f);
    h["per_op"] = std::move(per);
    j["hbm"] = std::move(h);
  } else {
    j["hbm"] = nullptr;
  }
  Json eff = Json::object();
  for (const auto& key : c.fitted) {
    const auto& e = c.efficiency;
    if (key == "gemm") eff[key] = e.gemm;
    if (key == "gemm_isolated") eff[key] = e.gemm_isolated.value_or(e.gemm);
    if (key == "gemm_k_half") eff[key] = e.gemm_k_half;
    if (key == "tile_m") eff[key] = e.tile_m;
    if (key == "tile_n") eff[key] = e.tile_n;
    if (key == "hbm") eff[key] = e.hbm;
    if (key == "nvlink") eff[key] = e.nvlink;
    if (key == "network") eff[key] = e.network;
    if (key == "nvls") eff[key] = e.nvls;
  }
  j["efficiency"] = std::move(eff);
  Json lat = Json::object();
  for (const auto& key : c.latency_fitted)
    lat[key + "_us"] = static_cast<double>(c.latency.field(key).value().ns) / 1e3;
  j["latency"] = std::move(lat);
  Json notes = Json::array();
  for (const auto& n : c.notes)
    notes.push_back(n);
  j["notes"] = std::move(notes);
  return j;
}

}  // namespace calibrate::fit
