// sim/cli/app.cpp: subcommands, option parsing (CLI11), output formats and exit codes.
#include "sim/cli/app.hpp"

#include "reports/trace.hpp"
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/quantity.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/cost/cost.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/parallel/schedule.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/table.hpp"
#include "sim/results/json.hpp"
#include "sim/scenario/builtin.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/step_setup.hpp"
#include "sim/workload/params.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include <unistd.h>
#include <variant>

#ifndef TRAINSIM_VERSION
#define TRAINSIM_VERSION "0.0.0-dev"
#endif

namespace sim::cli {
namespace {

using results::Json;

struct Options {
  std::vector<std::string> sets;
  std::string format = "table";
  std::string progress = "auto";
  bool quiet = false;
  int verbose = 0;
};

std::vector<scenario::Override> overrides_of(const Options& o) {
  std::vector<scenario::Override> out;
  for (const auto& s : o.sets)
    out.push_back(scenario::Override::parse(s));
  return out;
}

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// ---- describe ---------------------------------------------------------------------------------------------------

int describe_models(const Options& o, std::ostream& out) {
  Table t({"model", "params", "active", "layers", "hidden", "ffn", "heads", "kv", "vocab", "mlp", "moe"});
  Json arr = Json::array();
  for (const auto& name : scenario::builtin_names("models")) {
    const auto m = scenario::load_model(name);
    const auto p = workload::count_params(m);
    const double total = p.total(m.layers);
    const double active = p.active(m.layers);
    std::string moe = m.moe ? std::to_string(m.moe->experts) + "x top-" + std::to_string(m.moe->top_k) : "-";
    t.add({m.name, base::format_count({total}), m.moe ? base::format_count({active}) : "-", std::to_string(m.layers),
           std::to_string(m.hidden), std::to_string(m.ffn_hidden), std::to_string(m.heads), std::to_string(m.kv_heads),
           std::to_string(m.vocab), workload::to_string(m.activation), moe});
    Json j = Json::object();
    j["name"] = m.name;
    j["description"] = m.description;
    j["params"] = total;
    j["active_params"] = active;
    j["layers"] = m.layers;
    j["hidden"] = m.hidden;
    j["ffn_hidden"] = m.ffn_hidden;
    j["heads"] = m.heads;
    j["kv_heads"] = m.kv_heads;
    j["vocab"] = m.vocab;
    j["activation"] = workload::to_string(m.activation);
    if (m.moe) {
      j["moe"]["experts"] = m.moe->experts;
      j["moe"]["top_k"] = m.moe->top_k;
      j["moe"]["ffn_hidden"] = m.moe->ffn_hidden;
      j["moe"]["shared_experts"] = m.moe->shared_experts;
    } else {
      j["moe"] = nullptr;
    }
    j["published_params"] = m.published_params ? Json(m.published_params->n) : Json();
    arr.push_back(std::move(j));
  }
  if (o.format == "json") {
    out << arr.dump() << '\n';
  } else {
    t.print(out);
    out << "params: counted per weight matrix from the architecture (sim/workload/params.cpp)\n";
  }
  return kExitOk;
}

int describe_hardware(const Options& o, std::ostream& out) {
  Table t({"hardware", "bf16 peak", "fp8 peak", "HBM", "HBM bw", "NVLink/GPU", "domain", "NIC/GPU", "price/GPU-h"});
  Json arr = Json::array();
  for (const auto& name : scenario::builtin_names("hardware_profiles")) {
    const auto h = scenario::load_hardware(name);
    const auto bf16 = h.gpu.peak_for(hardware::Dtype::Bf16);
    const auto fp8 = h.gpu.peak_for(hardware::Dtype::Fp8);
    const base::Bandwidth nic{h.network.nic_bandwidth.bytes_per_s * h.network.nics_per_gpu};
    t.add({h.name, bf16 ? fmt(bf16->tflops(), 0) + " TFLOP/s" : "-", fp8 ? fmt(fp8->tflops(), 0) + " TFLOP/s" : "-",
           fmt(h.gpu.hbm.gib(), 1) + " GiB", fmt(h.gpu.hbm_bandwidth.gbytes_per_s() / 1000, 2) + " TB/s",
           fmt(h.nvlink.bandwidth.gbytes_per_s(), 0) + " GB/s", std::to_string(h.nvlink.domain),
           fmt(nic.gbits_per_s(), 0) + " Gbit/s", h.price ? base::format_money(h.price->gpu_hour) : "-"});
    Json j = Json::object();
    j["name"] = h.name;
    j["description"] = h.description;
    Json peak = Json::object();
    for (const auto& [d, r] : h.gpu.peak)
      peak[hardware::to_string(d)] = r.flops_per_s;
    j["peak_flops_per_s"] = std::move(peak);
    j["hbm_bytes"] = h.gpu.hbm.n;
    j["hbm_bandwidth_bytes_per_s"] = h.gpu.hbm_bandwidth.bytes_per_s;
    j["nvlink_bandwidth_bytes_per_s"] = h.nvlink.bandwidth.bytes_per_s;
    j["nvlink_domain"] = h.nvlink.domain;
    j["nic_bandwidth_bytes_per_s"] = nic.bytes_per_s;
    j["gpus_per_node"] = h.node.gpus;
    j["gpu_hour_usd"] = h.price ? Json(h.price->gpu_hour.usd) : Json();
    j["failure_components"] = static_cast<int>(h.failures.size());
    arr.push_back(std::move(j));
  }
  if (o.format == "json") {
    out << arr.dump() << '\n';
  } else {
    t.print(out);
    out << "peaks are dense (no sparsity); NVLink is per GPU per direction; sources: provenance in each profile\n";
  }
  return kExitOk;
}

int describe_named(const std::vector<std::pair<std::string, std::string>>& rows, const char* what, const Options& o,
                   std::ostream& out) {
  if (o.format == "json") {
    Json arr = Json::array();
    for (const auto& [name, description] : rows) {
      Json j = Json::object();
      j["name"] = name;
      j["description"] = description;
      arr.push_back(std::move(j));
    }
    out << arr.dump() << '\n';
    return kExitOk;
  }
  Table t({what, "description"});
  for (const auto& [name, description] : rows)
    t.add({name, description});
  t.print(out);
  return kExitOk;
}

int describe_failures(const Options& o, std::ostream& out) {
  const auto h = scenario::load_hardware("h100-sxm5-80gb");
  Table t({"component", "scope", "MTBF per instance", "effect", "repair"});
  Json arr = Json::array();
  for (const auto& c : h.failures) {
    t.add({c.name, hardware::to_string(c.scope), fmt(c.mtbf.days(), 1) + " d", hardware::to_string(c.effect),
           fmt(c.repair.hours(), 1) + " h"});
    Json j = Json::object();
    j["name"] = c.name;
    j["scope"] = hardware::to_string(c.scope);
    j["mtbf_h"] = c.mtbf.hours();
    j["effect"] = hardware::to_string(c.effect);
    j["repair_h"] = c.repair.hours();
    arr.push_back(std::move(j));
  }
  if (o.format == "json") {
    out << arr.dump() << '\n';
    return kExitOk;
  }
  t.print(out);
  out << "the default failure model of every built-in profile: derived from Llama 3's 54-day interruption table "
         "(see hardware_profiles/README.md)\n";
  return kExitOk;
}

// ---- validate ---------------------------------------------------------------------------------------------------

int validate(const std::vector<std::string>& files, std::ostream& out, std::ostream& err) {
  int bad = 0;
  for (const auto& f : files) {
    try {
      const auto kind = scenario::validate_file(f);
      const char* what = kind == scenario::FileKind::Scenario ? "scenario"
                         : kind == scenario::FileKind::Model  ? "model"
                                                              : "hardware profile";
      out << "ok  " << f << " (" << what << ")\n";
    } catch (const base::ConfigError& e) {
      ++bad;
      for (const auto& d : e.items())
        err << "error: " << d.to_string() << '\n';
    }
  }
  if (bad) err << bad << " of " << files.size() << " file(s) invalid\n";
  return bad ? kExitBadInput : kExitOk;
}

// ---- step -------------------------------------------------------------------------------------------------------

struct StepArgs {
  std::string scenario;
  std::string fidelity = "replica";
  std::string trace;
  bool json = false;
  std::vector<std::string> slowdowns;  // "GPU=FACTOR"
};

std::string pct(double f) {
  return fmt(100.0 * f, 1) + "%";
}

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
    out[static_cast<std::size_t>(gpu)] = factor;
  }
  return out;
}

Json step_json(const results::StepResult& r, const scenario::Scenario& s) {
  Json j = results::to_json(r);
  j["scenario"] = s.name;
  return j;
}

void print_step(const results::StepResult& r, const scenario::Scenario& s, const execution::StepInputs& in,
                std::ostream& out) {
  const auto& L = in.layout;
  const double t = r.step_time.seconds();
  out << "step            " << s.name << "  (" << r.fidelity << " fidelity, "
      << (r.simulated_gpus > 0 ? std::to_string(r.simulated_gpus) + " GPUs simulated" : std::string("closed forms"))
      << ")\n";
  out << "parallel        tp " << L.tp << " pp " << L.pp << " dp " << L.dp << " cp " << L.cp << " ep " << L.ep
      << " vpp " << L.vpp << ", " << parallel::to_string(in.parallel.schedule) << ", " << L.micro_batches
      << " micro-batches of " << L.micro_batch << ", recompute " << parallel::to_string(in.parallel.recompute)
      << (in.parallel.sequence_parallel ? ", sequence parallel" : "") << "\n";
  out << "step time       " << fmt(t, 3) << " s\n";
  out << "tokens/s        " << fmt(r.tokens_per_s, 0) << " (" << fmt(r.tokens_per_s / s.cluster.gpus, 1)
      << " per GPU)\n";
  out << "TFLOP/s per GPU " << fmt(r.tflops_per_gpu, 1) << " (model FLOPs)\n";
  out << "MFU             " << pct(r.mfu) << "  (model FLOPs, Narayanan et al. SC21 convention, no recomputation)\n";
  out << "HFU             " << pct(r.hfu) << "  (hardware FLOPs, recomputation counted)\n";
  const auto& b = r.breakdown;
  Table tb({"breakdown", "seconds", "share"});
  auto row = [&](const char* name, base::Time x) { tb.add({name, fmt(x.seconds(), 3), pct(x.seconds() / t)}); };
  row("compute", b.compute);
  row("TP exposed", b.tp_exposed);
  row("PP bubble", b.pp_bubble);
  row("PP exposed", b.pp_exposed);
  row("DP exposed", b.dp_exposed);
  row("CP exposed", b.cp_exposed);
  row("EP exposed", b.ep_exposed);
  row("optimizer", b.optimizer);
  out << "\n";
  tb.print(out);
  const auto& m = r.memory;
  out << "\nmemory per GPU  " << fmt(m.total, 1) << " of " << fmt(m.capacity, 1) << " GiB"
      << (r.fits ? "" : "  DOES NOT FIT") << "  (params " << fmt(m.params, 1) << ", grads " << fmt(m.grads, 1)
      << ", optimizer " << fmt(m.optimizer, 1) << ", activations " << fmt(m.activations, 1) << ", buffers "
      << fmt(m.buffers, 1) << "; worst pipeline stage)\n";
}

int print_infeasible(const std::vector<parallel::Infeasible>& why, const scenario::Scenario& s, std::ostream& err) {
  err << "infeasible: " << s.name << " (" << s.source << "):\n";
  for (const auto& i : why)
    err << "  [" << i.rule << "] " << i.reason << "\n";
  return kExitInfeasible;
}

/// The step of a scenario at a fidelity, with memory and fit filled in; infeasible layouts come back as reasons.
struct StepOutcome {
  execution::StepInputs inputs;
  results::StepResult result;
};
std::variant<StepOutcome, std::vector<parallel::Infeasible>> evaluate_step(const scenario::Scenario& s,
                                                                           const execution::StepOptions& opt) {
  auto setup = scenario::step_setup(s);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&setup)) return *bad;
  StepOutcome o{std::get<execution::StepInputs>(setup), {}};
  const auto plan = execution::build_step_plan(o.inputs);
  o.result = execution::simulate_step(plan, opt);
  o.result.memory = scenario::memory_gib(s, o.inputs.layout);
  o.result.fits = o.result.memory.total <= o.result.memory.capacity;
  return o;
}

int step_command(const StepArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const auto s = scenario::load_scenario(a.scenario, overrides_of(o));
  execution::StepOptions opt;
  opt.fidelity = a.fidelity == "analytic" ? execution::Fidelity::Analytic
                 : a.fidelity == "full"   ? execution::Fidelity::Full
                                          : execution::Fidelity::Replica;
  opt.slowdown = parse_slowdowns(a.slowdowns, s.cluster.gpus);
  if (!opt.slowdown.empty() && opt.fidelity != execution::Fidelity::Full)
    throw base::ConfigError("--slowdown", "", "per-GPU slowdowns need --fidelity full (every GPU simulated)");
  opt.record_timeline = !a.trace.empty();
  if (opt.record_timeline && opt.fidelity == execution::Fidelity::Analytic)
    throw base::ConfigError("--trace", "", "the analytic fidelity has no timeline; use --fidelity replica or full");
  auto evaluated = evaluate_step(s, opt);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& [in, r] = std::get<StepOutcome>(evaluated);
  if (!a.trace.empty()) {
    base::write_file_atomic(a.trace, reports::chrome_trace(r, s.name));
    if (!o.quiet) err << "trace: " << a.trace << " (" << r.timeline.size() << " spans; open in ui.perfetto.dev)\n";
  }
  if (a.json || o.format == "json") {
    out << step_json(r, s).dump() << '\n';
  } else {
    print_step(r, s, in, out);
  }
  return r.fits ? kExitOk : kExitInfeasible;
}

// ---- run --------------------------------------------------------------------------------------------------------

struct RunArgs {
  std::string scenario;
  int trials = 0;  // 0: the scenario's
  std::int64_t seed = -1;
  int threads = 0;  // 0: all cores
  std::string out_dir;
  bool json = false;
};

/// A progress bar on stderr with rate and ETA, drawn only on a terminal unless --progress says otherwise.
class ProgressBar {
 public:
  ProgressBar(std::ostream& err, const std::string& mode, bool quiet)
      : err_(err),
        on_(!quiet && (mode == "always" || (mode == "auto" && ::isatty(2) != 0))),
        start_(std::chrono::steady_clock::now()) {}
  void update(int done, int total) {
    if (interrupt_requested()) throw Interrupted{};  // stops the Monte Carlo; nothing is written
    if (!on_) return;
    std::lock_guard lock(mutex_);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = elapsed > 0 ? done / elapsed : 0;
    const double eta = rate > 0 ? (total - done) / rate : 0;
    const int width = 30, filled = total > 0 ? width * done / total : width;
    err_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
         << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << done << "/" << total << " trials, "
         << fmt(rate, 0) << "/s, ETA " << fmt(eta, 0) << " s   " << std::flush;
    if (done == total) err_ << "\n";
  }

 private:
  std::ostream& err_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

void print_run(const results::RunSummary& r, const cost::CostSummary& c, const scenario::Scenario& s,
               std::ostream& out) {
  out << "run             " << s.name << "  (" << r.trials << " trials, seed " << r.seed << ")\n";
  // A trial that never finishes has an infinite time to train: say so instead of printing "inf".
  auto days = [](double d) { return std::isfinite(d) ? fmt(d, 1) + " d" : std::string("never"); };
  auto money = [](double v) { return std::isfinite(v) ? base::format_money({v}) : std::string("unbounded"); };
  if (r.work == "steps") {
    const auto& t = r.time_to_train_days;
    out << "time to train   p50 " << days(t.p50) << ", p90 " << days(t.p90) << ", p99 " << days(t.p99) << " (mean "
        << days(t.mean) << "; failure-free " << days(r.failure_free_days) << ")\n";
  } else {
    out << "window          " << fmt(r.window_days, 1) << " d\n";
  }
  out << "goodput         p50 " << pct(r.goodput.p50) << ", p10 " << pct(r.goodput.p10) << " (effective training "
      << "time / wall time)\n";
  out << "interruptions   " << fmt(r.interruptions_mean, 1) << " per run; job MTBF " << fmt(r.job_mtbf_h, 2) << " h\n";
  out << "lost GPU-hours  " << fmt(r.lost_gpu_hours_mean, 0) << " per run\n";
  out << "checkpoint      every " << fmt(r.checkpoint.interval_s / 60.0, 1) << " min (" << r.checkpoint.policy
      << "), overhead " << pct(r.checkpoint.overhead_fraction) << "\n";
  if (r.work == "steps") {
    out << "cost            p50 " << money(c.p50_usd) << ", p90 " << money(c.p90_usd) << " (rented at "
        << base::format_money({c.burn_usd_per_hour}) << "/h for the cluster)\n";
    if (c.p_deadline_miss) out << "deadline risk   " << pct(*c.p_deadline_miss) << " chance of missing it\n";
    if (c.p_budget_overrun) out << "budget risk     " << pct(*c.p_budget_overrun) << " chance of exceeding it\n";
  }
  if (r.never_finished > 0)
    out << "NEVER FINISHED  " << r.never_finished << " of " << r.trials << " trials: " << r.never_finished_reason
        << "\n";
  std::vector<results::CauseSummary> causes = r.causes;
  std::sort(causes.begin(), causes.end(),
            [](const auto& a, const auto& b) { return a.interruptions_mean > b.interruptions_mean; });
  Table t({"cause", "effect", "interruptions", "lost GPU-h", "USD per failure"});
  for (std::size_t i = 0; i < causes.size() && i < 8; ++i) {
    double per = 0;
    for (const auto& [name, usd] : c.per_failure_usd)
      if (name == causes[i].name) per = usd;
    t.add({causes[i].name, causes[i].effect, fmt(causes[i].interruptions_mean, 1),
           fmt(causes[i].lost_gpu_hours_mean, 0), fmt(per, 0)});
  }
  out << "\n";
  t.print(out);
}

struct RunOutcome {
  results::RunSummary run;
  cost::CostSummary cost;
  results::Json json;
};

RunOutcome evaluate_run(const scenario::Scenario& s, const StepOutcome& step, int trials, std::uint64_t seed,
                        int threads, ProgressBar& bar) {
  const auto plan = execution::build_step_plan(step.inputs);
  const auto in = scenario::run_inputs(s, plan, step.result.step_time);
  if (auto problems = reliability::check_inputs(in); !problems.empty()) {
    for (auto& p : problems)
      p.file = s.source;
    throw base::ConfigError(std::move(problems));
  }
  RunOutcome o;
  o.run =
      reliability::run_monte_carlo(in, trials, seed, threads, [&bar](int done, int total) { bar.update(done, total); });
  cost::CostInputs ci;
  ci.gpus = s.cluster.gpus;
  ci.gpu_hour = s.cost.gpu_hour.value_or(base::Money{});
  ci.deadline = s.cost.deadline;
  ci.budget = s.cost.budget;
  o.cost = cost::rented_cost(o.run, ci);
  o.json = results::to_json(o.run, step_json(step.result, s));
  o.json["scenario"] = s.name;
  cost::add_cost_json(o.json, o.cost);
  return o;
}

int run_command(const RunArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const auto s = a.scenario.empty() ? scenario::load_default_scenario(overrides_of(o))
                                    : scenario::load_scenario(a.scenario, overrides_of(o));
  auto evaluated = evaluate_step(s, execution::StepOptions{});
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& step = std::get<StepOutcome>(evaluated);
  if (!step.result.fits) {
    err << "infeasible: " << s.name << " does not fit in memory (" << fmt(step.result.memory.total, 1) << " of "
        << fmt(step.result.memory.capacity, 1) << " GiB per GPU)\n";
    return kExitInfeasible;
  }
  const int trials = a.trials > 0 ? a.trials : s.reliability.trials;
  const std::uint64_t seed = a.seed >= 0 ? static_cast<std::uint64_t>(a.seed) : s.reliability.seed;
  const int threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  ProgressBar bar(err, o.progress, o.quiet);
  const auto r = evaluate_run(s, step, trials, seed, threads, bar);
  const std::string text = r.json.dump() + "\n";
  if (!a.out_dir.empty()) {
    std::filesystem::create_directories(a.out_dir);
    base::write_file_atomic((std::filesystem::path(a.out_dir) / "result.json").string(), text);
    if (!o.quiet) err << "wrote " << (std::filesystem::path(a.out_dir) / "result.json").string() << "\n";
  }
  if (a.json || o.format == "json") {
    out << text;
  } else {
    print_run(r.run, r.cost, s, out);
  }
  return kExitOk;
}

// ---- the main job -----------------------------------------------------------------------------------------------

Json scenario_json(const scenario::Scenario& s) {
  const auto p = workload::count_params(s.model);
  Json j = Json::object();
  j["schema"] = "trainsim.resolved-scenario/1";
  j["name"] = s.name;
  j["source"] = s.source;
  j["model"]["name"] = s.model.name;
  j["model"]["params"] = p.total(s.model.layers);
  j["model"]["active_params"] = p.active(s.model.layers);
  j["hardware"]["name"] = s.hardware.name;
  const auto peak = s.hardware.gpu.peak_for(s.training.dtype);
  j["hardware"]["peak_flops_per_s"] = peak ? Json(peak->flops_per_s) : Json();
  j["hardware"]["hbm_bytes"] = s.hardware.gpu.hbm.n;
  j["cluster"]["gpus"] = s.cluster.gpus;
  j["cluster"]["gpus_per_node"] = s.cluster.gpus_per_node;
  j["cluster"]["nic_bandwidth_bytes_per_s"] = s.cluster.network.nic_bandwidth.bytes_per_s;
  j["cluster"]["topology"] = s.cluster.network.topology;
  j["cluster"]["oversubscription"] = s.cluster.network.oversubscription;
  const auto& pc = s.parallel;
  j["parallel"]["tp"] = pc.tp;
  j["parallel"]["pp"] = pc.pp;
  j["parallel"]["dp"] = pc.dp ? Json(*pc.dp) : Json();
  j["parallel"]["cp"] = pc.cp;
  j["parallel"]["ep"] = pc.ep;
  j["parallel"]["vpp"] = pc.vpp;
  j["parallel"]["sequence_parallel"] = pc.sequence_parallel;
  j["parallel"]["zero_stage"] = pc.zero_stage;
  j["parallel"]["recompute"] = parallel::to_string(pc.recompute);
  j["parallel"]["micro_batch"] = pc.micro_batch;
  j["parallel"]["global_batch"] = pc.global_batch;
  j["parallel"]["schedule"] = parallel::to_string(pc.schedule);
  j["training"]["seq_len"] = s.training.seq_len;
  j["training"]["tokens"] = s.training.tokens ? Json(s.training.tokens->n) : Json();
  j["training"]["duration_s"] = s.training.duration ? Json(s.training.duration->seconds()) : Json();
  j["training"]["dtype"] = hardware::to_string(s.training.dtype);
  j["reliability"]["failure_components"] = static_cast<int>(s.reliability.components.size());
  j["reliability"]["trials"] = s.reliability.trials;
  j["reliability"]["seed"] = static_cast<std::int64_t>(s.reliability.seed);
  j["cost"]["gpu_hour_usd"] = s.cost.gpu_hour ? Json(s.cost.gpu_hour->usd) : Json();
  return j;
}

void print_scenario(const scenario::Scenario& s, std::ostream& out) {
  const auto p = workload::count_params(s.model);
  const auto& pc = s.parallel;
  out << "scenario   " << s.name << "  (" << s.source << ")\n";
  out << "model      " << s.model.name << ": " << base::format_count({p.total(s.model.layers)}) << " params, "
      << s.model.layers << " layers, hidden " << s.model.hidden << ", " << s.model.heads << " heads ("
      << s.model.kv_heads << " kv), " << workload::to_string(s.model.activation) << "\n";
  const auto peak = s.hardware.gpu.peak_for(s.training.dtype);
  out << "hardware   " << s.hardware.name << ": " << (peak ? base::format_flop_rate(*peak) : "?") << " "
      << hardware::to_string(s.training.dtype) << ", " << base::format_bytes(s.hardware.gpu.hbm) << " HBM\n";
  out << "cluster    " << s.cluster.gpus << " GPUs (" << s.cluster.gpus_per_node << " per node), "
      << fmt(s.cluster.network.nic_bandwidth.gbits_per_s(), 0) << " Gbit/s per NIC, " << s.cluster.network.topology
      << "\n";
  out << "parallel   tp " << pc.tp << ", pp " << pc.pp << ", dp " << (pc.dp ? std::to_string(*pc.dp) : "derived")
      << ", cp " << pc.cp << ", ep " << pc.ep << ", vpp " << pc.vpp << ", " << parallel::to_string(pc.schedule)
      << ", recompute " << parallel::to_string(pc.recompute) << ", micro-batch " << pc.micro_batch << ", global batch "
      << pc.global_batch << "\n";
  out << "training   seq " << s.training.seq_len << ", "
      << (s.training.tokens ? base::format_count(*s.training.tokens) + " tokens"
                            : "window " + base::format_time(*s.training.duration))
      << "\n";
  out << "failures   " << s.reliability.components.size() << " component classes (" << s.reliability.failures << "), "
      << s.reliability.trials << " trials, seed " << s.reliability.seed << "\n";
}

/// The folder the main job writes into when no --out is given: trainsim-out/<scenario name> (name made file-safe).
std::string default_out_dir(const scenario::Scenario& s) {
  std::string safe;
  for (char c : s.name)
    safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return "trainsim-out/" + (safe.empty() ? std::string("scenario") : safe);
}

int main_job(const std::string& path, const Options& o, std::ostream& out, std::ostream& err) {
  const auto overrides = overrides_of(o);
  const auto s = path.empty() ? scenario::load_default_scenario(overrides) : scenario::load_scenario(path, overrides);
  if (path.empty() && !o.quiet) err << "trainsim: no scenario given; using the built-in default (" << s.name << ")\n";
  auto evaluated = evaluate_step(s, execution::StepOptions{});
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&evaluated)) return print_infeasible(*bad, s, err);
  const auto& step = std::get<StepOutcome>(evaluated);
  if (!step.result.fits) {
    print_step(step.result, s, step.inputs, out);
    err << "infeasible: " << s.name << " does not fit in memory\n";
    return kExitInfeasible;
  }
  // The whole run: failures, checkpoints and restarts over the scenario's Monte Carlo trials.
  ProgressBar bar(err, o.progress, o.quiet);
  const int threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const auto r = evaluate_run(s, step, s.reliability.trials, s.reliability.seed, threads, bar);
  Json result = r.json;
  result["resolved_scenario"] = scenario_json(s);  // provenance: what exactly was simulated
  const std::string dir = default_out_dir(s);
  std::filesystem::create_directories(dir);
  const std::string result_path = (std::filesystem::path(dir) / "result.json").string();
  base::write_file_atomic(result_path, result.dump() + "\n");
  if (!o.quiet) err << "trainsim: wrote " << result_path << "\n";
  if (o.format == "json") {
    out << result.dump() << '\n';
    return kExitOk;
  }
  print_scenario(s, out);
  out << "\n";
  print_step(step.result, s, step.inputs, out);
  out << "\n";
  print_run(r.run, r.cost, s, out);
  return kExitOk;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"trainsim: discrete-event simulator and cost/risk estimator for large-scale model training", "trainsim"};
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  Options o;
  app.add_option("--set", o.sets, "Override a scenario field: --set parallel.tp=4 (dotted path; repeatable)")
      ->type_name("KEY=VALUE");
  app.add_option("--format", o.format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "Only results and errors");
  app.add_flag("-v,--verbose", o.verbose, "More detail on stderr");
  app.add_option("--progress", o.progress, "Progress indicator on stderr for long runs")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.fallthrough();
  app.require_subcommand(0, 1);

  std::string scenario_path;
  app.add_option("scenario", scenario_path, "Scenario file (default: the built-in default scenario)");

  auto* describe = app.add_subcommand("describe", "List built-in models or hardware profiles");
  std::string what;
  describe->add_option("what", what, "models | hardware | collectives | schedules | failures")
      ->required()
      ->check(CLI::IsMember({"models", "hardware", "collectives", "schedules", "failures"}));

  auto* validate_cmd = app.add_subcommand("validate", "Strict lint of scenario, model and hardware files");
  std::vector<std::string> files;
  validate_cmd->add_option("files", files, "Files to check (kind detected from their \"schema\")")->required();

  auto* step = app.add_subcommand("step", "Simulate one training iteration: step time, breakdown, MFU, memory");
  StepArgs step_args;
  step->add_option("scenario", step_args.scenario, "Scenario file")->required();
  step->add_option("--fidelity", step_args.fidelity,
                   "analytic (closed forms), replica (one data-parallel replica on "
                   "the engine) or full (every GPU)")
      ->check(CLI::IsMember({"analytic", "replica", "full"}))
      ->capture_default_str();
  step->add_option("--trace", step_args.trace, "Write the step as Chrome/Perfetto trace-event JSON")->type_name("FILE");
  step->add_flag("--json", step_args.json, "JSON result (schema trainsim.step/1), same as --format json");
  step->add_option("--slowdown", step_args.slowdowns, "A slow GPU for --fidelity full: GPU=FACTOR (repeatable)")
      ->type_name("GPU=FACTOR");

  auto* run_cmd = app.add_subcommand("run", "Simulate the whole training run with failures: Monte Carlo over trials");
  RunArgs run_args;
  run_cmd->add_option("scenario", run_args.scenario, "Scenario file (default: the built-in default scenario)");
  run_cmd->add_option("--trials", run_args.trials, "Monte Carlo trials (default: the scenario's)")
      ->check(CLI::Range(1, 10'000'000));
  run_cmd->add_option("--seed", run_args.seed, "Seed (default: the scenario's)")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--threads", run_args.threads, "Worker threads (default: all cores); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  run_cmd->add_option("--out", run_args.out_dir, "Write result.json into this directory")->type_name("DIR");
  run_cmd->add_flag("--json", run_args.json, "JSON result (schema trainsim.run/1), same as --format json");

  std::vector<std::string> argv_rev(args.rbegin(), args.rend());
  try {
    app.parse(argv_rev);
  } catch (const CLI::Success& e) {  // --help, --version
    app.exit(e, out, err);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "error: " << e.what() << "\nrun 'trainsim --help' for usage\n";
    return kExitBadInput;
  }

  try {
    if (describe->parsed()) {
      if (what == "models") return describe_models(o, out);
      if (what == "hardware") return describe_hardware(o, out);
      if (what == "collectives") return describe_named(collectives::describe_algorithms(), "algorithm", o, out);
      if (what == "failures") return describe_failures(o, out);
      std::vector<std::pair<std::string, std::string>> rows;
      for (const auto& sch : parallel::describe_schedules())
        rows.emplace_back(sch.name, sch.description);
      return describe_named(rows, "schedule", o, out);
    }
    if (validate_cmd->parsed()) return validate(files, out, err);
    if (step->parsed()) return step_command(step_args, o, out, err);
    if (run_cmd->parsed()) return run_command(run_args, o, out, err);
    return main_job(scenario_path, o, out, err);
  } catch (const base::ConfigError& e) {
    for (const auto& d : e.items())
      err << "error: " << d.to_string() << '\n';
    return kExitBadInput;
  } catch (const Interrupted&) {
    err << "\ninterrupted: stopped before writing any result\n";
    return kExitInterrupted;
  } catch (const base::InternalError& e) {
    err << e.what() << "\nplease report this with the scenario that triggered it\n";
    return kExitInternal;
  }
}

}  // namespace sim::cli
