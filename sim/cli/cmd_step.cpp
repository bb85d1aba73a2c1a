// sim/cli/cmd_step.cpp: `trainsim step`: one training iteration at a fidelity, optionally as a Perfetto trace.
#include "reports/trace.hpp"
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/table.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/parallel/megatron_flags.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace sim::cli {
namespace {

// ---- step -------------------------------------------------------------------------------------------------------

struct StepArgs {
  std::string scenario;
  std::string fidelity = "replica";
  std::string trace;
  bool json = false;
  bool explain = false;
  bool kernels = false;
  std::vector<std::string> slowdowns;  // "GPU=FACTOR"
};

std::vector<double> parse_slowdowns(const std::vector<std::string>& specs, int gpus) {
  std::vector<double> out;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    int gpu = -1;
    double factor = 0;
    try {
      if (eq != std::string::npos) {
        std::size_t used = 0;
        gpu = std::stoi(spec.substr(0, eq), &used);
        if (used != eq) gpu = -1;
        factor = std::stod(spec.substr(eq + 1), &used);
        if (used != spec.size() - eq - 1) factor = 0;
      }
    } catch (const std::exception&) {
      gpu = -1;
    }
    if (gpu < 0 || gpu >= gpus || !(factor >= 1.0 && factor <= 1000.0))
      throw base::ConfigError("--slowdown", "",
                              "\"" + spec + "\" is not GPU=FACTOR with a GPU id in [0, " + std::to_string(gpus) +
                                  ") and a factor between 1 and 1000, e.g. --slowdown 17=1.5");
    if (out.empty()) out.assign(static_cast<std::size_t>(gpus), 1.0);
    if (out[static_cast<std::size_t>(gpu)] != 1.0)
      throw base::ConfigError("--slowdown", "",
                              "GPU " + std::to_string(gpu) + " is slowed twice (\"" + spec +
                                  "\" after an earlier factor for it); give one factor per GPU");
    out[static_cast<std::size_t>(gpu)] = factor;
  }
  return out;
}

/// `--kernels`: the kernel table of one layer, the embedding and the output layer, then the time per part and pass.
int kernels_command(const StepArgs& a, const Options& o, const scenario::Scenario& s, std::ostream& out,
                    std::ostream& err) {
  if (!a.trace.empty() || a.explain || !a.slowdowns.empty())
    throw base::ConfigError("--kernels", "", "prints the kernel table alone; drop --trace, --explain and --slowdown");
  auto table = app::step_kernels(s);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&table)) return print_infeasible(*bad, s, err);
  const auto& kt = std::get<app::KernelTable>(table);
  const auto& rows = kt.rows;
  // The table of a layout that does not fit is printed (it shows where the time would go) but exits as `step` does:
  // a user trial saw a DeepSeek-V3 layout needing 22x the GPU's memory accepted with exit 0.
  auto verdict = [&] {
    if (kt.fits) return kExitOk;
    err << "does not fit: " << base::fmt(kt.memory.total, 1) << " of " << base::fmt(kt.memory.capacity, 1)
        << " GiB per GPU (trainsim step with the same arguments, without --kernels, gives the breakdown)\n";
    return kExitInfeasible;
  };
  if (a.json || o.format == "json") {
    out << app::kernels_json(kt, s).dump() << '\n';
    return verdict();
  }
  if (o.format != "table")
    throw base::ConfigError("--format", "", o.format + ": --kernels prints its table or JSON; accepted: table, json");
  out << "kernels of " << base::printable(s.name)
      << ": one micro-batch on one GPU (a transformer layer: an MoE layer where the model has experts, after a dense "
         "layer where it mixes them; input embedding, output layer), as the step plan times them\n\n";
  base::Table t({"part", "pass", "kernel", "kind", "m x n x k / group", "GFLOP", "MB", "us", "exposed us", "rate"});
  std::vector<std::pair<std::string, base::Time>> totals;  // by part and pass, in order
  for (const auto& r : rows) {
    const bool gemm = r.kind == "gemm" || r.kind == "gemm_fp8";
    const bool comm = r.group > 0 || (!gemm && r.kind != "attention" && r.kind != "memory");
    std::string shape;
    // Attention: queries x keys x head dimension x (batch x heads) of one call; its rate depends on the length.
    if (gemm || r.kind == "attention")
      shape = base::fmt(r.m, 0) + " x " + base::fmt(r.n, 0) + " x " + base::fmt(r.k, 0) +
              (r.batch != 1 ? " x" + base::fmt(r.batch, 0) : "");
    else if (comm)
      shape = std::to_string(r.group) + " ranks";
    const double s_time = r.time.seconds();
    std::string rate = "-";
    if (s_time > 0 && r.flops > 0)
      rate = base::fmt(r.flops / s_time / 1e12, 0) + " TFLOP/s";
    else if (s_time > 0 && r.bytes > 0)
      rate = base::fmt(r.bytes / s_time / 1e9, 0) + (comm ? " GB/s algbw" : " GB/s");
    const std::string none = "-";
    t.add({r.part, r.pass, r.name, r.kind, shape, r.flops > 0 ? base::fmt(r.flops / 1e9, 1) : none,
           r.bytes > 0 ? base::fmt(r.bytes / 1e6, 1) : none, base::fmt(s_time * 1e6, 1),
           base::fmt(r.exposed.seconds() * 1e6, 1), rate});
    const std::string key = r.part + " " + r.pass;
    if (totals.empty() || totals.back().first != key) totals.push_back({key, base::Time::zero()});
    totals.back().second += r.exposed;
  }
  t.print(out);
  out << '\n';
  base::Table sum({"part and pass", "exposed ms"});
  for (const auto& [key, time] : totals)
    sum.add({key, base::fmt(time.seconds() * 1e3, 3)});
  sum.print(out);
  return verdict();
}

int step_command(const StepArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const auto s = scenario::load_scenario(a.scenario, overrides_of(o));
  if (a.kernels) return kernels_command(a, o, s, out, err);
  execution::StepOptions opt;
  opt.fidelity = a.fidelity == "analytic" ? execution::Fidelity::Analytic
                 : a.fidelity == "full"   ? execution::Fidelity::Full
                                          : execution::Fidelity::Replica;
  opt.slowdown = parse_slowdowns(a.slowdowns, s.cluster.gpus);
  if (!opt.slowdown.empty() && opt.fidelity != execution::Fidelity::Full)
    throw base::ConfigError("--slowdown", "", "per-GPU slowdowns need --fidelity full (every GPU simulated)");
  // Full fidelity costs about 0.15 ms of CPU per GPU (1,048,576 GPUs: 164 s, measured for issue 10); above this it
  // would look like a hang, while replica agrees with it within 2% on symmetric clusters (tests/unit/step_test.cpp).
  constexpr int kMaxFullFidelityGpus = 131072;
  if (opt.fidelity == execution::Fidelity::Full && s.cluster.gpus > kMaxFullFidelityGpus)
    throw base::ConfigError("--fidelity", "",
                            "full fidelity simulates every GPU; " + std::to_string(s.cluster.gpus) +
                                " GPUs are more than its limit of " + std::to_string(kMaxFullFidelityGpus) +
                                "; use --fidelity replica (within 2% of full on symmetric clusters)");
  opt.record_timeline = !a.trace.empty();
  if (opt.record_timeline && base::is_standard_output(a.trace))  // two documents in one stream (a tester's trial)
    throw base::ConfigError("--trace", "",
                            a.trace + " is standard output, where step prints its result; name a file or /dev/stderr");
  if (opt.record_timeline && opt.fidelity == execution::Fidelity::Analytic)
    throw base::ConfigError("--trace", "", "the analytic fidelity has no timeline; use --fidelity replica or full");
  // A full-fidelity step replays every GPU (11 s at 131,072): a progress bar, and Ctrl-C between its slices (found by
  // a user trial: it showed nothing).
  std::optional<ProgressBar> bar;
  bool drawn = false;
  if (opt.fidelity == execution::Fidelity::Full) {
    bar.emplace(err, o.progress, o.quiet, "% of the step (estimated)");
    opt.progress = [&](double share) {
      drawn = true;
      bar->update(static_cast<int>(share * 100), 100);
    };
  }
  auto evaluated = evaluate_step(s, opt);
  if (drawn) bar->update(100, 100);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& step = std::get<StepOutcome>(evaluated);
  const auto& in = step.inputs;
  const auto& r = step.result;
  if (a.explain) {  // the effective configuration as Megatron-LM arguments, instead of the result
    if (o.format != "table" || a.json)
      throw base::ConfigError(
          a.json ? "--json" : "--format", "",
          (a.json ? std::string("json") : o.format) + ": --explain prints Megatron-LM arguments; accepted: table");
    out << "# " << base::printable(s.name) << " (" << base::printable(s.source) << ") as Megatron-LM arguments\n"
        << parallel::megatron_flags(in.parallel, in.layout, *in.model, in.seq_len, in.dtype, s.training.fp8_recipe,
                                    &s.memory);
    return kExitOk;
  }
  if (!a.trace.empty()) {
    base::write_file_atomic(a.trace, reports::chrome_trace(r, s.name));
    if (!o.quiet) err << "trace: " << a.trace << " (" << r.timeline.size() << " spans; open in ui.perfetto.dev)\n";
  }
  if (a.json || o.format == "json") {
    out << step_json(r, s).dump() << '\n';
  } else if (o.format == "md" || o.format == "csv") {
    print_leaves(step_json(r, s), out);
  } else {
    print_step(r, s, in, out);
  }
  // A layer collective group split over NVLink domains (ranks fill a domain's GPUs before the next: 72-GPU NVL72 racks
  // under power-of-two groups) runs over the network: say which, and how a job keeps it inside one.
  if (!o.quiet)
    for (const auto& g : execution::groups_across_nvlink_domains(in)) {
      const char* what = g.dim == parallel::Dim::Tp   ? "tensor-parallel"
                         : g.dim == parallel::Dim::Cp ? "context-parallel"
                                                      : "expert-parallel";
      err << "note: pipeline rank " << g.pipeline_rank << "'s " << what << " group (GPUs " << g.first_gpu << "-"
          << g.last_gpu << ") spans " << g.domains << " NVLink domains of " << in.topology->config().nvlink_domain
          << " GPUs, so its collectives cross the network: ranks fill each domain before the next. Set "
             "cluster.nvlink_domain to the GPUs the job takes of each domain (a multiple of the group; 64 on NVL72, "
             "16 of each rack's 18 trays) or choose a layout whose groups fit.\n";
    }
  // A data-parallel group spread unevenly over NVLink domains crosses them over the smallest share's rails: say so, and
  // which domain size (the job taking that many GPUs of each domain, filled one after another) would spread it evenly:
  // the largest below the current one, a multiple of the node, that puts as many of its ranks in each.
  if (!o.quiet)
    if (const auto u = execution::uneven_data_parallel_group(in)) {
      const auto& c = in.topology->config();
      std::string spread;
      for (const int n : u->per_domain)
        spread += (spread.empty() ? "" : "/") + std::to_string(n);
      const int fewest = *std::min_element(u->per_domain.begin(), u->per_domain.end());
      err << "note: pipeline rank " << u->pipeline_rank << "'s data-parallel group (" << u->members.size()
          << " GPUs) lies " << spread << " over " << u->per_domain.size() << " NVLink domains of " << c.nvlink_domain
          << " GPUs: NCCL's rings cross the domains over " << fewest << (fewest == 1 ? " NIC" : " rails")
          << ", the fewest ranks a domain holds, so its gradient and parameter "
          << "collectives run at that domain's network bandwidth.";
      auto even_at = [&u](int d) {
        std::map<int, int> per_domain;
        for (const int g : u->members)
          ++per_domain[g / d];
        return std::all_of(per_domain.begin(), per_domain.end(),
                           [&](const auto& e) { return e.second == per_domain.begin()->second; });
      };
      for (int d = c.nvlink_domain - c.gpus_per_node; d >= c.gpus_per_node; d -= c.gpus_per_node)
        if (even_at(d)) {
          err << " cluster.nvlink_domain " << d << " (the job taking " << d << " GPUs of each domain) spreads it "
              << "evenly.";
          break;
        }
      err << "\n";
    }
  if (!o.quiet)
    for (const auto& note : scenario_notes(s))
      err << "note: " << note << "\n";
  return r.fits ? kExitOk : kExitInfeasible;
}

}  // namespace

void add_step_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* step = app.add_subcommand("step", "Simulate one training iteration: step time, breakdown, MFU, memory");
  auto a = std::make_shared<StepArgs>();
  step->add_option("scenario", a->scenario, "Scenario file")->required();
  step->add_option("--fidelity", a->fidelity,
                   "analytic (closed forms), replica (one data-parallel replica on "
                   "the engine) or full (every GPU)")
      ->check(CLI::IsMember({"analytic", "replica", "full"}))
      ->capture_default_str();
  step->add_option("--trace", a->trace, "Write the step as Chrome/Perfetto trace-event JSON")->type_name("FILE");
  step->add_flag("--json", a->json, "JSON result (schema trainsim.step/1), same as --format json");
  step->add_flag("--explain", a->explain, "Print the effective configuration as Megatron-LM arguments instead");
  step->add_flag("--kernels", a->kernels,
                 "Print every kernel and collective of one layer, the embedding and the output layer (shape, FLOPs, "
                 "bytes, time) instead");
  step->add_option("--slowdown", a->slowdowns, "A slow GPU for --fidelity full: GPU=FACTOR (repeatable)")
      ->type_name("GPU=FACTOR");
  commands.push_back({step, [a, &o](std::ostream& out, std::ostream& err) { return step_command(*a, o, out, err); }});
}

}  // namespace sim::cli
