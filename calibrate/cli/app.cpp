// calibrate/cli/app.cpp: subcommands of trainsim-calibrate (CLI11), their tables and exit codes.
#include "calibrate/cli/app.hpp"

#include "calibrate/bench/measure.hpp"
#include "calibrate/cli/compare.hpp"
#include "calibrate/fit/calibration.hpp"
#include "calibrate/fit/fit_model.hpp"
#include "calibrate/fit/least_squares.hpp"
#include "calibrate/fit/measurement_io.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/exit_code.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/base/table.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>

#ifndef TRAINSIM_VERSION
#define TRAINSIM_VERSION "0.0.0-dev"
#endif

namespace calibrate::cli {
namespace {

using sim::base::ConfigError;
using sim::base::Table;

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string pct(double fraction) {
  return fmt(fraction * 100.0, 1) + "%";
}

std::string human_bytes(sim::base::Bytes b) {
  const double v = static_cast<double>(b.n);
  if (v >= 1024.0 * 1024 * 1024)
    return fmt(v / (1024.0 * 1024 * 1024), v >= 10.0 * 1024 * 1024 * 1024 ? 0 : 1) + " GiB";
  if (v >= 1024.0 * 1024) return fmt(v / (1024.0 * 1024), 0) + " MiB";
  if (v >= 1024.0) return fmt(v / 1024.0, 0) + " KiB";
  return fmt(v, 0) + " B";
}

// ---- measure -------------------------------------------------------------------------------------------------------

int measure_command(const bench::MeasureOptions& options, std::ostream& out, std::ostream& err) {
  try {
    const auto s = bench::measure(options, err);
    for (const auto& n : s.notes)
      err << "note: " << n << '\n';
    out << "wrote " << (s.gemm + s.hbm + s.collectives) << " measurements to " << options.out << " (" << s.gemm
        << " GEMM, " << s.hbm << " memory-bound, " << s.collectives << " collective over " << s.ranks << " GPU"
        << (s.ranks == 1 ? "" : "s") << ") on " << s.device << " in " << fmt(s.seconds, 0) << " s\n";
    return sim::base::kExitOk;
  } catch (const bench::NoDevice& e) {
    err << "error: " << e.what() << '\n';
    return sim::base::kExitBadInput;
  } catch (const bench::BenchFailure& e) {
    err << "error: measure: " << e.what() << '\n';
    return sim::base::kExitCheckFailed;
  }
}

// ---- import ---------------------------------------------------------------------------------------------------------

struct ImportArgs {
  std::string format;
  std::vector<std::string> logs;
  std::string out;
  std::string op, scope, date;
  int ranks = 0;
  int nodes = 0;
};

/// What a log may not say (the collective, the ranks, the scope, the hosts), as import and compare both take it.
void add_log_options(CLI::App* cmd, std::string& op, int& ranks, std::string& scope, int& nodes) {
  cmd->add_option("--op", op, "The collective, when neither the log nor the file name says")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", "broadcast"}));
  cmd->add_option("--ranks", ranks, "Rank count, when the log lists no ranks")
      ->check(CLI::Range(1, calibrate::fit::kMaxMeasuredRanks));
  cmd->add_option("--scope", scope, "nvlink or network (default: network when the ranks span hosts)")
      ->check(CLI::IsMember({"nvlink", "network"}));
  cmd->add_option("--nodes", nodes, "Hosts the ranks ran on, when the log lists no ranks")
      ->check(CLI::Range(1, calibrate::fit::kMaxMeasuredRanks));
}

int import_command(const ImportArgs& a, std::ostream& out, std::ostream& err) {
  const fit::NcclTestsOptions o = log_options(a.op, a.scope, a.ranks, a.nodes, a.date);
  std::vector<fit::Measurement> all;
  for (const auto& log : a.logs) {
    auto r = fit::import_nccl_tests(log, o);
    for (const auto& n : r.notes)
      err << "note: " << n << '\n';
    err << log << ": " << r.records.size() << " measurements\n";
    all.insert(all.end(), r.records.begin(), r.records.end());
  }
  if (a.out.empty()) {
    out << fit::to_json_lines(all);
  } else {
    fit::write_measurements(a.out, all);
    err << "wrote " << all.size() << " measurements to " << a.out << '\n';
  }
  return sim::base::kExitOk;
}

// ---- fit ------------------------------------------------------------------------------------------------------------

struct FitArgs {
  std::vector<std::string> measurements;
  std::string base, out, name;
  std::string algorithm = "auto";  // what the measured runs used (their NCCL_ALGO), for the fits against the simulator
  bool json = false;
  bool allow_other_gpu = false;
};

void print_fit(const fit::Calibration& c, const FitArgs& a, const std::string& name, std::ostream& out) {
  out << c.measurements << " measurements on " << c.context << "\n";
  if (!c.collectives.empty()) {
    out << "\ncollectives: t = steps(p) * alpha + busbw_factor(p) * n / busbw (sim/collectives closed forms)\n";
    Table t({"op", "scope", "points", "ranks", "sizes", "alpha/step", "latency", "busbw", "R^2", "rms", "max"});
    for (const auto& ab : c.collectives)
      t.add({fit::to_string(ab.op), fit::to_string(ab.scope), std::to_string(ab.points),
             ab.min_ranks == ab.max_ranks ? std::to_string(ab.max_ranks)
                                          : std::to_string(ab.min_ranks) + "-" + std::to_string(ab.max_ranks),
             human_bytes(ab.min_bytes) + ".." + human_bytes(ab.max_bytes), fmt(ab.alpha.s * 1e6, 2) + " us",
             fmt(ab.latency().s * 1e6, 1) + " us", fmt(ab.busbw.gbytes_per_s(), 1) + " GB/s", fmt(ab.r2, 4),
             pct(ab.rms_rel), pct(ab.max_rel)});
    t.print(out);
  }
  if (!c.gemm.empty()) {
    out << "\nGEMM: gemm_time of sim/hardware/compute_model.hpp (efficiency, k half-point, tiles for wave "
           "quantisation)\n";
    Table t({"dtype", "points", "left out", "efficiency", "k_half", "tile", "best", "R^2", "rms", "max"});
    for (const auto& g : c.gemm)
      t.add({sim::hardware::to_string(g.dtype), std::to_string(g.points), std::to_string(g.excluded),
             fmt(g.efficiency, 4), fmt(g.k_half, 1) + (g.k_half_fitted ? "" : " (base)"),
             std::to_string(g.tile_m) + "x" + std::to_string(g.tile_n), fmt(g.best.tflops(), 0) + " TFLOP/s",
             fmt(g.r2, 4), pct(g.rms_rel), pct(g.max_rel)});
    t.print(out);
  }
  if (c.hbm.stream) {
    out << "\nHBM: t = alpha + bytes / bandwidth (bytes read plus written)\n";
    Table t({"kernels", "points", "bandwidth", "fraction", "alpha", "R^2", "rms", "max"});
    auto add = [&](const fit::HbmFit& h) {
      t.add({h.ops, std::to_string(h.points), fmt(h.bandwidth.gbytes_per_s(), 0) + " GB/s", fmt(h.fraction, 4),
             fmt(h.alpha.s * 1e6, 1) + " us", fmt(h.r2, 4), pct(h.rms_rel), pct(h.max_rel)});
    };
    add(*c.hbm.stream);
    for (const auto& h : c.hbm.per_op)
      add(h);
    t.print(out);
  }
  out << "\nprofile " << a.out << " (" << name << "), from " << a.base << ":\n";
  Table t({"field", "base", "fitted"});
  const auto& b = c.base_efficiency;
  const auto& e = c.efficiency;
  for (const auto& key : c.fitted) {
    if (key == "gemm") t.add({"efficiency.gemm", fmt(b.gemm, 4), fmt(e.gemm, 4)});
    if (key == "gemm_k_half") t.add({"efficiency.gemm_k_half", fmt(b.gemm_k_half, 1), fmt(e.gemm_k_half, 1)});
    if (key == "tile_m") t.add({"efficiency.tile_m", std::to_string(b.tile_m), std::to_string(e.tile_m)});
    if (key == "tile_n") t.add({"efficiency.tile_n", std::to_string(b.tile_n), std::to_string(e.tile_n)});
    if (key == "hbm") t.add({"efficiency.hbm", fmt(b.hbm, 4), fmt(e.hbm, 4)});
    if (key == "nvlink") t.add({"efficiency.nvlink", fmt(b.nvlink, 4), fmt(e.nvlink, 4)});
    if (key == "network") t.add({"efficiency.network", fmt(b.network, 4), fmt(e.network, 4)});
    if (key == "nvls") t.add({"efficiency.nvls", fmt(b.nvls, 4), fmt(e.nvls, 4)});
  }
  for (const auto& key : c.latency_fitted)
    t.add({"latency." + key, "-", fmt(static_cast<double>(c.latency.field(key).value().ns) / 1e3, 2) + " us"});
  t.print(out);
}

int fit_command(const FitArgs& a, std::ostream& out, std::ostream& err) {
  std::vector<fit::Measurement> all;
  for (const auto& path : a.measurements) {
    auto ms = fit::read_measurements(path);
    all.insert(all.end(), ms.begin(), ms.end());
  }
  auto doc = open_profile(a.base, "--base");
  sim::base::Diagnostics diag(doc.origin());
  auto reader = doc.root(diag);
  const auto base = sim::hardware::HardwareProfile::parse(reader);
  diag.throw_if_any();
  const std::string name = a.name.empty() ? std::filesystem::path(a.out).stem().string() : a.name;
  fit::Calibration c;
  try {
    c = fit::calibrate(all, base, a.measurements, {.allow_other_gpu = a.allow_other_gpu});
    // The simulator's cluster for this profile, as `compare` builds it.
    fit::fit_with_model(c, all, base, profile_cluster(base),
                        *sim::collectives::algorithm_from_string(a.algorithm));  // CLI11 checked the name
  } catch (const fit::FitError& e) {
    err << "error: fit: " << e.what() << '\n';
    return sim::base::kExitBadInput;
  }
  // Nothing fitted: no profile claiming a fit is written (a user trial got exit 0 and a copy of the base profile whose
  // description said "fitted from 10 measurements").
  if (c.fitted.empty() && c.latency_fitted.empty()) {
    for (const auto& n : c.notes)
      err << "note: " << n << '\n';
    err << "error: fit: nothing could be fitted from " << all.size()
        << " measurements (the notes above say why); no profile written\n";
    return sim::base::kExitBadInput;
  }
  sim::base::write_file_atomic(a.out, fit::fitted_profile_text(std::move(doc), c, name));
  for (const auto& n : c.notes)
    err << "note: " << n << '\n';
  if (a.json) {
    auto j = fit::calibration_json(c);
    j["profile"] = a.out;
    j["name"] = name;
    out << j.dump() << '\n';
  } else {
    print_fit(c, a, name, out);
  }
  return sim::base::kExitOk;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"trainsim-calibrate: measure GPUs and fabrics, import nccl-tests logs, fit hardware profiles",
               "trainsim-calibrate"};
  app.set_version_flag("--version", std::string("trainsim-calibrate ") + TRAINSIM_VERSION +
                                        (bench::built_with_cuda() ? " (with CUDA and NCCL)" : " (without CUDA)"));
  app.require_subcommand(1);

  auto* measure = app.add_subcommand("measure", "GEMM, HBM and NCCL sweeps on this machine's GPUs -> JSON lines");
  bench::MeasureOptions mo;
  std::vector<std::string> only;
  measure->add_flag("--quick", mo.quick, "Fewer shapes and sizes (about 5 minutes on one GPU)");
  measure->add_option("--out", mo.out, "Measurements file (JSON lines)")->required()->type_name("FILE");
  measure->add_option("--scope", mo.scope, "What links this process's GPUs (label of the collective records)")
      ->check(CLI::IsMember({"nvlink", "network"}))
      ->capture_default_str();
  measure->add_option("--only", only, "Sweeps to run (default all)")
      ->check(CLI::IsMember({"gemm", "hbm", "collectives"}))
      ->delimiter(',');
  measure->add_option("--gpus", mo.gpus, "GPUs for the collectives (default: all visible)")->check(CLI::Range(1, 1024));

  auto* import_cmd = app.add_subcommand("import", "Convert benchmark output to measurements (JSON lines)");
  ImportArgs ia;
  import_cmd->add_option("format", ia.format, "Input format")->required()->check(CLI::IsMember({"nccl-tests"}));
  import_cmd->add_option("logs", ia.logs, "nccl-tests output files (text, or JSON from -J)")->required();
  import_cmd->add_option("--out", ia.out, "Write the measurements here (default: stdout)")->type_name("FILE");
  add_log_options(import_cmd, ia.op, ia.ranks, ia.scope, ia.nodes);
  import_cmd->add_option("--date", ia.date, "Date of the run, when the log has no timestamps (ISO 8601)");

  auto* fit_cmd = app.add_subcommand("fit", "Fit a hardware profile to measurements");
  FitArgs fa;
  fit_cmd->add_option("measurements", fa.measurements, "Measurement files (JSON lines)")->required();
  fit_cmd->add_option("--base", fa.base, "Base hardware profile: a built-in name or a file")->required();
  fit_cmd->add_option("--out", fa.out, "The fitted profile to write")->required()->type_name("FILE");
  fit_cmd->add_option("--name", fa.name, "Name of the fitted profile (default: the --out file name)");
  fit_cmd
      ->add_option("--algorithm", fa.algorithm,
                   "Algorithm the measured runs used (their NCCL_ALGO), for the fits against trainsim's collectives")
      ->check(CLI::IsMember({"auto", "ring", "tree", "hierarchical", "nvls"}))
      ->capture_default_str();
  fit_cmd->add_flag("--json", fa.json, "The fitted parameters as JSON (schema trainsim.calibration/1)");
  fit_cmd->add_flag("--allow-other-gpu", fa.allow_other_gpu,
                    "Fit measurements of one GPU model onto the base profile of another (refused otherwise)");

  auto* compare_cmd = app.add_subcommand("compare", "A measured nccl-tests log beside trainsim's prediction, per size");
  CompareArgs ca;
  compare_cmd->add_option("log", ca.log, "nccl-tests output file (text, or JSON from -J)")->required();
  compare_cmd
      ->add_option("--hardware", ca.hardware,
                   "Hardware profile: a built-in name or a file; its nodes and NICs "
                   "make the simulated cluster")
      ->capture_default_str();
  compare_cmd->add_option("--algorithm", ca.algorithm, "Algorithm trainsim runs")
      ->check(CLI::IsMember({"auto", "ring", "tree", "hierarchical", "nvls"}))
      ->capture_default_str();
  compare_cmd->add_option("--tolerance", ca.tolerance, "Mark sizes whose time is off by more than this fraction")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  compare_cmd
      ->add_option("--measured", ca.measured,
                   "Which of nccl-tests' two measurements of each size to compare: fastest (as fit reads them: a "
                   "stall in one column is not the collective's time), out-of-place or in-place")
      ->check(CLI::IsMember({"fastest", "out-of-place", "in-place"}))
      ->capture_default_str();
  compare_cmd->add_flag("--json", ca.json, "JSON output (schema trainsim.collective-compare/1)");
  // What the log may not say, as import takes them (a user trial: compare's error said "pass --op", which it lacked).
  add_log_options(compare_cmd, ca.op, ca.ranks, ca.scope, ca.nodes);

  std::vector<std::string> argv_rev(args.rbegin(), args.rend());
  try {
    app.parse(argv_rev);
  } catch (const CLI::Success& e) {
    app.exit(e, out, err);
    return sim::base::kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "error: " << e.what() << "\nrun 'trainsim-calibrate --help' for usage\n";
    return sim::base::kExitBadInput;
  }

  try {
    if (measure->parsed()) {
      if (!only.empty()) {
        auto has = [&](const char* s) { return std::find(only.begin(), only.end(), s) != only.end(); };
        mo.gemm = has("gemm");
        mo.hbm = has("hbm");
        mo.collectives = has("collectives");
      }
      return measure_command(mo, out, err);
    }
    if (import_cmd->parsed()) return import_command(ia, out, err);
    if (compare_cmd->parsed()) return compare_command(ca, out, err);
    return fit_command(fa, out, err);
  } catch (const ConfigError& e) {
    for (const auto& d : e.items())
      err << "error: " << d.to_string() << '\n';
    return sim::base::kExitBadInput;
  } catch (const sim::base::InternalError& e) {
    err << e.what() << "\nplease report this with the files that triggered it\n";
    return sim::base::kExitInternal;
  }
}

}  // namespace calibrate::cli
