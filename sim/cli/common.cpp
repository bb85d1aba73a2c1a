// sim/cli/common.cpp: what the subcommands share: the progress bar, and the text output of steps, runs and scenarios.
#include "sim/cli/common.hpp"

#include "sim/base/errors.hpp"
#include "sim/cli/app.hpp"
#include "sim/base/quantity.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/base/table.hpp"
#include "sim/scenario/step_setup.hpp"
#include "sim/workload/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include <unistd.h>

namespace sim::cli {

using results::Json;

std::vector<scenario::Override> overrides_of(const Options& o) {
  std::vector<scenario::Override> out;
  for (const auto& s : o.sets)
    out.push_back(scenario::Override::parse(s));
  return out;
}

namespace {

/// A model with experts and no training.moe_imbalance is timed with balanced routing, which benchmark recipes force
/// and real training does not: the note that says so (step and run print it, the report shows it), or nothing.
std::optional<std::string> moe_routing_note(const scenario::Scenario& s) {
  // Inputs padded to a capacity do not depend on the routing: no note then. The measured cost of dropless routing:
  // docs/validation.md, ModelZooDropless.OneImbalanceExplainsEverySequenceLength.
  if (!s.model.moe || s.training.moe_imbalance_given || s.memory.moe_pad_to_capacity) return std::nullopt;
  return "MoE routing is taken as balanced (training.moe_imbalance 1, what --moe-router-force-load-balancing "
         "enforces); dropless routing is slower: the Megatron-MoE-ModelZoo's Qwen3-235B dropless runs took 9-25% "
         "longer, an imbalance of about 1.5 (docs/validation.md). Set training.moe_imbalance to your router's "
         "busiest-rank load over the mean, or training.moe_capacity_factor if tokens are dropped.";
}

}  // namespace

std::vector<std::string> scenario_notes(const scenario::Scenario& s) {
  std::vector<std::string> notes;
  if (auto n = moe_routing_note(s)) notes.push_back(*n);
  // A rent beside owned pricing is not read (a user trial: gpu_hour "9 USD" changed nothing): said, not refused, so
  // that --set cost.pricing=owned still works on a scenario written for rent.
  if (s.cost.pricing == cost::Pricing::Owned && s.cost.rent_given)
    notes.push_back(
        "cost.gpu_hour, price_kind and price_date are the rent of \"pricing\": \"rented\"; with "
        "\"owned\" the cost comes from cost.owned (node_price, amortisation, utilisation), energy and "
        "storage, and they are not read");
  // Call costs fitted by trainsim-calibrate describe nccl-tests' back-to-back calls; the step does not add them (a user
  // trial fitted 100 ms and saw the same step): said, rather than let a fitted profile look applied.
  const auto& lat = s.hardware.latency;
  if (lat.launch > base::Time::zero() ||
      std::any_of(lat.base.begin(), lat.base.end(), [](base::Time t) { return t > base::Time::zero(); }))
    notes.push_back(
        "the profile's call costs (latency.base, latency.launch: trainsim-calibrate's fit of back-to-back nccl-tests "
        "calls) are used by trainsim collective and trainsim-calibrate compare; the step's collectives do not add "
        "them");
  return notes;
}

std::optional<std::string> missing_price_warning(const scenario::Scenario& s) {
  if (s.cost.pricing != cost::Pricing::Rented || s.cost.gpu_hour) return std::nullopt;
  return "the hardware profile " + base::printable(s.hardware.name) +
         " has no price and cost.gpu_hour is not given: compute is costed at 0 USD per GPU-hour; give "
         "cost.gpu_hour (or cost.pricing \"owned\" with cost.owned.node_price)";
}

void print_step(const results::StepResult& r, const scenario::Scenario& s, const execution::StepInputs& in,
                std::ostream& out) {
  const auto& L = in.layout;
  const double t = r.step_time.seconds();
  out << "step            " << base::printable(s.name) << "  (" << r.fidelity << " fidelity, "
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
  // MFU against the peak of the dtype the GEMMs run in; an FP8 run also against the 16-bit peak, the convention of
  // reports that quote one MFU for both.
  const auto peak = s.hardware.gpu.peak_for(s.training.dtype);
  const auto bf16 = s.hardware.gpu.peak_for(hardware::Dtype::Bf16);
  out << "MFU             " << pct(r.mfu) << "  (model FLOPs against the " << hardware::to_string(s.training.dtype)
      << " dense peak" << (peak ? " of " + fmt(peak->flops_per_s / 1e12, 0) + " TFLOP/s" : std::string())
      << ", Narayanan et al. SC21 convention, no recomputation"
      << (peak && bf16 && s.training.dtype != hardware::Dtype::Bf16
              ? "; against the bf16 dense peak of " + fmt(bf16->flops_per_s / 1e12, 0) + " TFLOP/s, " +
                    pct(r.mfu * peak->flops_per_s / bf16->flops_per_s) +
                    (r.mfu * peak->flops_per_s > bf16->flops_per_s ? ", above it: the lower precision's gain" : "")
              : std::string())
      << ")\n";
  out << "HFU             " << pct(r.hfu) << "  (hardware FLOPs, recomputation counted)\n";
  const auto conv = scenario::convergence(s);
  out << "batch           " << base::format_count({conv.batch.batch}) << " tokens per step; critical batch "
      << base::format_count({conv.batch.critical_batch})
      << (conv.source == "scenario" ? std::string(" (scenario)") : " (estimated: " + conv.source + ")")
      << "; token efficiency " << pct(conv.batch.token_efficiency()) << " (McCandlish et al. 2018)\n";
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
  if (b.data_stall > base::Time::zero()) row("data stall", b.data_stall);
  out << "\n";
  tb.print(out);
  const auto& m = r.memory;
  out << "\nmemory per GPU  " << fmt(m.total, 1) << " of " << fmt(m.capacity, 1) << " GiB"
      << (r.fits ? "" : "  DOES NOT FIT") << "  (params " << fmt(m.params, 1) << ", grads " << fmt(m.grads, 1)
      << ", optimizer " << fmt(m.optimizer, 1) << ", activations " << fmt(m.activations, 1) << ", buffers "
      << fmt(m.buffers, 1) << "; worst pipeline stage)\n";
}

int print_infeasible(const std::vector<parallel::Infeasible>& why, const scenario::Scenario& s, std::ostream& err) {
  err << "infeasible: " << base::printable(s.name) << " (" << base::printable(s.source) << "):\n";
  for (const auto& i : why)
    err << "  [" << i.rule << "] " << i.reason << "\n";
  return kExitInfeasible;
}

ProgressBar::ProgressBar(std::ostream& err, const std::string& mode, bool quiet, std::string unit)
    : err_(err),
      on_(!quiet && (mode == "always" || (mode == "auto" && ::isatty(2) != 0))),
      lines_(!quiet && mode == "auto" && ::isatty(2) == 0),
      unit_(std::move(unit)),
      start_(now_()),
      last_(start_) {}

void ProgressBar::update(int done, int total) {
  polling_.polled();  // from now on a signal waits for this check instead of ending the process
  if (interrupt_requested()) throw Interrupted{};  // stops the loop; nothing is written
  if (!on_) {
    if (lines_) progress_line(done, total);
    return;
  }
  std::lock_guard lock(mutex_);
  // A new phase: another total, or an unfinished count after a finished one (parallel_for reports from one thread, in
  // order).
  if (total_ < 0 || total != total_ || (!line_open_ && done < total)) {
    if (total_ >= 0) {
      if (line_open_) err_ << "\n";
      // The phase began when the last one ended, not at its first report: timed from that report, a user trial saw
      // "21/1834 configs, 525000000/s, ETA 0 s".
      start_ = last_;
      next_unit();
    }
    total_ = total;
  }
  line_open_ = done != total;
  last_ = now_();
  const double elapsed = std::chrono::duration<double>(last_ - start_).count();
  // A rate over less than a quarter of a second is noise: none is shown until then.
  const bool timed = done > 0 && (elapsed >= 0.25 || (done == total && elapsed > 0));
  const double rate = timed ? done / elapsed : 0;
  const double eta = rate > 0 ? (total - done) / rate : 0;
  const int width = 30, filled = total > 0 ? width * done / total : width;
  err_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
       << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << done << "/" << total << " " << unit_
       << ", " << (timed ? fmt(rate, 0) + "/s, ETA " + fmt(eta, 0) + " s" : std::string("timing")) << "   "
       << std::flush;
  if (done == total) err_ << "\n";
}

void ProgressBar::next_unit() {
  if (next_units_.empty()) return;
  unit_ = std::move(next_units_.front());
  next_units_.erase(next_units_.begin());
}

void ProgressBar::progress_line(int done, int total) {
  // Where stderr is no terminal (CI logs), a line a minute once a phase has run for a minute: a long run is seen
  // working, with its rate and ETA (a user trial's run printed nothing for weeks of work); short runs print nothing.
  std::lock_guard lock(mutex_);
  const auto t = now_();
  // A new phase: another total, or a count that went back (a phase of the same total as the last: a review).
  if (total != lines_total_ || done < lines_done_) {
    if (lines_total_ >= 0) next_unit();
    lines_total_ = total;
    lines_done_ = done;
    lines_start_ = lines_last_ = t;
    return;
  }
  lines_done_ = done;
  if (done >= total || t - lines_last_ < std::chrono::seconds(60)) return;
  lines_last_ = t;
  const double elapsed = std::chrono::duration<double>(t - lines_start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0;
  err_ << "progress: " << done << "/" << total << " " << unit_ << ", "
       << (rate > 0 ? fmt(rate, rate < 10 ? 2 : 0) + "/s, ETA " + fmt((total - done) / rate, 0) + " s"
                    : std::string("none done yet"))
       << "\n"
       << std::flush;
}

void ProgressBar::use_clock(std::function<std::chrono::steady_clock::time_point()> now) {
  std::lock_guard lock(mutex_);
  now_ = std::move(now);
  start_ = last_ = now_();
}

void ProgressBar::then(std::string unit) {
  std::lock_guard lock(mutex_);
  next_units_.push_back(std::move(unit));
}

void print_run(const results::RunSummary& r, const cost::CostSummary& c, const scenario::Scenario& s,
               std::ostream& out) {
  out << "run             " << base::printable(s.name) << "  (" << r.trials << " trials, seed " << r.seed << ")\n";
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
  out << "interruptions   " << fmt(r.interruptions_mean, 1) << " per run; job MTBF " << results::job_mtbf_text(r, 2)
      << "\n";
  if (const auto& t = s.reliability.trace)
    out << "                replayed from " << base::printable(t->source) << ": "
        << base::printable(scenario::trace_extent(*t)) << ", repeated after it, the same in every trial\n";
  out << "lost GPU-hours  " << fmt(r.lost_gpu_hours_mean, 0) << " per run\n";
  const auto& ck = r.checkpoint;
  out << "checkpoint      " << results::checkpoint_interval_text(r, 1);
  if (std::isfinite(r.job_mtbf_h) || ck.policy == "fixed") {
    out << " (" << ck.policy;
    // Daly's or Young's optimum is used in whole steps: said, since the optimum itself (printed beside a given
    // interval) is not rounded (a user trial read 3.4 and 3.5 min for the same job).
    out << ", " << fmt(ck.interval_steps, 0) << (ck.interval_steps == 1 ? " step" : " steps");
    if (ck.policy != "fixed") out << ": its optimum in whole steps";
    out << ")";
  }
  out << ", overhead " << pct(ck.overhead_fraction) << "\n";
  if (ck.policy == "fixed" && ck.past_the_run)
    out << "  no checkpoint the interval is longer than the run's " << fmt(r.failure_free_days, 1)
        << " d of compute: every failure restarts it from the beginning"
        << (std::isfinite(ck.optimum_interval_s)
                ? " (Daly's optimum for this job: " + fmt(ck.optimum_interval_s / 60.0, 1) + " min)"
                : std::string())
        << "\n";
  // A given interval beside Daly's optimum for the same job, and what the difference costs (closed form).
  if (ck.policy == "fixed" && std::isfinite(ck.optimum_interval_s) && std::isfinite(ck.wall_vs_optimum))
    out << "  optimum       " << fmt(ck.optimum_interval_s / 60.0, 1)
        << " min (Daly 2006, for this job's MTBF and blocking time); the interval above makes the expected wall time "
        << (ck.wall_vs_optimum >= 0 ? pct(ck.wall_vs_optimum) + " longer" : pct(-ck.wall_vs_optimum) + " shorter")
        << " (reliability.checkpoint.interval \"auto\" uses the optimum)\n";
  // Sub-0.05 s times keep their digits (a 0.04 s write printed as "0.0 s (given)", a user trial).
  const auto secs = [&](double x) { return fmt(x, x > 0 && x < 0.05 ? 3 : 1); };
  out << "  write         " << secs(ck.write_s) << " s"
      << (ck.write_basis.empty() ? std::string(" (given)") : " = " + ck.write_basis)
      << (ck.async ? "; blocks " + fmt(ck.snapshot_s, 2) + " s" +
                         (ck.snapshot_basis.empty() ? " (GPU-to-host snapshot, " : " = " + ck.snapshot_basis + " (") +
                         "asynchronous)"
                   : std::string())
      << "\n";
  // An asynchronous checkpoint waits for the previous write: a given interval shorter than one write is raised.
  if (ck.policy == "fixed" && ck.interval_steps > ck.asked_interval_steps)
    out << "  raised        from the given " << fmt(ck.asked_interval_steps, 0)
        << (ck.asked_interval_steps == 1 ? " step" : " steps")
        << " to one durable write: an asynchronous checkpoint starts only once the previous one is written\n";
  out << "  load          " << secs(ck.load_s) << " s"
      << (ck.load_basis.empty() ? std::string(" (given)") : " = " + ck.load_basis) << "\n";
  out << "spares          " << r.spares << (r.spares == 1 ? " node" : " nodes")
      << "; when none is left: " << r.on_spares_exhausted << "\n";
  const double waiting = r.accounting.wall_s > 0 ? r.accounting.waiting_for_repair_s / r.accounting.wall_s : 0.0;
  if (waiting > 0.5)
    out << "WAITING         " << pct(waiting) << " of the wall time waiting for repairs: " << results::waiting_remedy(r)
        << "\n";
  const std::string burn = std::string(c.pricing == "owned" ? "owned, amortised at " : "rented at ") +
                           base::format_money({c.burn_usd_per_hour}) + "/h for the cluster";
  if (r.work == "window") {
    out << "cost            " << money(c.mean_usd) << " for the " << fmt(r.window_days, 1) << " d window (" << burn
        << ")\n";
    if (c.p_budget_overrun)
      out << "budget          " << (*c.p_budget_overrun > 0 ? "exceeded" : "within")
          << (s.cost.budget ? " (" + base::format_money(*s.cost.budget) + ", cost.budget)" : "") << "\n";
    if (s.cost.deadline)
      out << "deadline        not applicable: the run has a fixed duration (training.duration), not a length\n";
  }
  if (r.work == "steps") {
    out << "cost            p50 " << money(c.p50_usd) << ", p90 " << money(c.p90_usd) << " (" << burn << ")\n";
    if (c.p_deadline_miss)
      out << "deadline risk   " << pct(*c.p_deadline_miss) << " chance of missing it"
          << (s.cost.deadline ? " (" + fmt(s.cost.deadline->seconds() / 86400.0, 1) + " d, cost.deadline)" : "")
          << "\n";
    if (c.p_budget_overrun)
      out << "budget risk     " << pct(*c.p_budget_overrun) << " chance of exceeding it"
          << (s.cost.budget ? " (" + base::format_money(*s.cost.budget) + ", cost.budget)" : "") << "\n";
  }
  if (r.never_finished > 0)
    out << "NEVER FINISHED  " << r.never_finished << " of " << r.trials << " trials: " << r.never_finished_reason
        << "\n";
  std::vector<results::CauseSummary> causes = r.causes;
  std::sort(causes.begin(), causes.end(),
            [](const auto& a, const auto& b) { return a.interruptions_mean > b.interruptions_mean; });
  Table t({"cause", "effect", "interruptions", "lost GPU-h", "USD per failure"});
  constexpr std::size_t kShown = 8;
  for (std::size_t i = 0; i < causes.size() && i < kShown; ++i) {
    double per = 0;
    for (const auto& [name, usd] : c.per_failure_usd)
      if (name == causes[i].name) per = usd;
    t.add({causes[i].name, causes[i].effect, fmt(causes[i].interruptions_mean, 1),
           fmt(causes[i].lost_gpu_hours_mean, 0), fmt(per, 0)});
  }
  if (causes.size() > kShown) {  // the rest in one row, so that the column sums are the run's (as in report.html)
    double interruptions = 0, lost = 0, usd = 0;
    for (std::size_t i = kShown; i < causes.size(); ++i) {
      interruptions += causes[i].interruptions_mean;
      lost += causes[i].lost_gpu_hours_mean;
      for (const auto& [name, per] : c.per_failure_usd)
        if (name == causes[i].name) usd += per * causes[i].interruptions_mean;
    }
    t.add({std::to_string(causes.size() - kShown) + " other causes", "", fmt(interruptions, 1), fmt(lost, 0),
           interruptions > 0 ? fmt(usd / interruptions, 0) : std::string("-")});
  }
  out << "\n";
  t.print(out);
}

app::Progress progress_of(ProgressBar& bar) {
  return [&bar](int done, int total) { bar.update(done, total); };
}

RunOutcome evaluate_run(const scenario::Scenario& s, const StepOutcome& step, int trials, std::uint64_t seed,
                        int threads, ProgressBar& bar, bool sensitivity) {
  return app::evaluate_run(s, step, trials, seed, threads, progress_of(bar), sensitivity);
}

RunOutcome finish_run(const scenario::Scenario& s, const StepOutcome& step, const reliability::RunInputs& in,
                      results::RunSummary run, int threads, ProgressBar& bar, bool sensitivity,
                      const base::TaskFarm& farm) {
  return app::finish_run(s, step, in, std::move(run), threads, progress_of(bar), sensitivity, farm);
}

scenario::Scenario load_scenario_or_default(const std::string& path, const Options& o) {
  return path.empty() ? scenario::load_default_scenario(overrides_of(o))
                      : scenario::load_scenario(path, overrides_of(o));
}

distributed::FarmOptions interruptible(InterruptPolling& polling, std::function<void(int done, int total)> progress) {
  distributed::FarmOptions fo;
  fo.poll = [&polling] {
    polling.polled();
    if (interrupt_requested()) throw Interrupted{};
  };
  fo.progress = std::move(progress);
  return fo;
}

base::TaskFarm group_farm(const distributed::Group& group, std::function<void(int done, int total)> progress) {
  return [&group, progress](int n, const std::function<std::string(int)>& task) {
    InterruptPolling polling;
    return group.map_all(n, task, interruptible(polling, progress));
  };
}

int thread_count(int requested, int local_processes) {
  if (requested > 0) return requested;
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, local_processes));
}

std::string sharding(const parallel::ParallelConfig& c) {
  const int s = std::max(c.zero_stage, c.distributed_optimizer ? 1 : 0);
  return s == 0 ? "none" : s == 1 ? "distopt" : "zero-" + std::to_string(s);
}

std::string megatron_flags_line(const std::string& flags, parallel::Schedule schedule) {
  if (schedule == parallel::Schedule::GPipe || schedule == parallel::Schedule::ZeroBubbleH1 ||
      schedule == parallel::Schedule::DualPipeV)
    return flags + "  (schedule " + parallel::to_string(schedule) + ": not a Megatron-LM flag)";
  return flags;
}

void print_scenario(const scenario::Scenario& s, std::ostream& out) {
  const auto p = workload::count_params(s.model);
  const auto& pc = s.parallel;
  out << "scenario   " << base::printable(s.name) << "  (" << base::printable(s.source) << ")\n";
  out << "model      " << base::printable(s.model.name) << ": " << base::format_count({p.total(s.model.layers)})
      << " params, " << s.model.layers << " layers, hidden " << s.model.hidden << ", " << s.model.heads << " heads ("
      << s.model.kv_heads << " kv), " << workload::to_string(s.model.activation) << "\n";
  const auto peak = s.hardware.gpu.peak_for(s.training.dtype);
  out << "hardware   " << base::printable(s.hardware.name) << ": " << (peak ? base::format_flop_rate(*peak) : "?")
      << " " << hardware::to_string(s.training.dtype) << ", " << base::format_bytes(s.hardware.gpu.hbm) << " HBM\n";
  out << "cluster    " << s.cluster.gpus << " GPUs (" << s.cluster.gpus_per_node << " per node), "
      << fmt(s.cluster.network.nic_bandwidth.gbits_per_s(), 0) << " Gbit/s per NIC, " << s.cluster.network.topology
      << "\n";
  const int model_ranks = pc.tp * pc.pp * pc.cp;  // dp left out: the GPUs over the other dimensions
  const std::string dp = pc.dp ? std::to_string(*pc.dp)
                         : model_ranks > 0 && s.cluster.gpus % model_ranks == 0
                             ? std::to_string(s.cluster.gpus / model_ranks) + " (derived)"
                             : "derived";
  out << "parallel   tp " << pc.tp << ", pp " << pc.pp << ", dp " << dp << ", cp " << pc.cp << ", ep " << pc.ep
      << ", vpp " << pc.vpp << ", " << parallel::to_string(pc.schedule) << ", recompute "
      << parallel::to_string(pc.recompute) << ", micro-batch " << pc.micro_batch << ", global batch " << pc.global_batch
      << "\n";
  out << "training   seq " << s.training.seq_len << ", "
      << (s.training.tokens ? base::format_count(*s.training.tokens) + " tokens"
                            : "window " + base::format_time(*s.training.duration))
      << "\n";
  out << "failures   " << base::printable(scenario::failures_line(s.reliability)) << ", " << s.reliability.trials
      << " trials, seed " << s.reliability.seed << "\n";
}

void print_leaves(const results::Json& j, std::ostream& out) {
  Table t({"metric", "value"});
  for (auto& [path, value] : j.leaves())
    t.add({path, value});
  t.print(out);
}

}  // namespace sim::cli
