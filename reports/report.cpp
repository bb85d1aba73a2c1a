// reports/report.cpp: the recommended action, input hashes, escaping and the figures the renderers share.
#include "reports/report.hpp"

#include "reports/format.hpp"
#include "reports/svg.hpp"
#include "sim/base/rng.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

namespace reports {

namespace detail {

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string usd(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "unbounded" : "n/a";
  const double a = std::fabs(v);
  const std::string sign = v < 0 ? "-" : "";
  if (a >= 1e9) return sign + "$" + fixed(a / 1e9, 2) + "B";
  if (a >= 1e6) return sign + "$" + fixed(a / 1e6, 2) + "M";
  if (a >= 1e4) return sign + "$" + fixed(a / 1e3, 1) + "k";
  return sign + "$" + fixed(a, 0);
}

std::string days(double d) {
  if (std::isnan(d)) return "n/a";
  if (std::isinf(d)) return "never";
  return fixed(d, 1) + " d";
}

std::string percent(double f, int digits) {
  if (std::isnan(f)) return "n/a";
  return fixed(100.0 * f, digits) + "%";
}

std::string share_of_cost(double part_usd, double mean_usd) {
  if (!std::isfinite(mean_usd)) return "the cost is unbounded";
  return percent(mean_usd > 0 ? part_usd / mean_usd : NAN) + " of cost";
}

std::string minutes(double s) {
  if (std::isnan(s)) return "n/a";
  return s < 5940 ? fixed(s / 60.0, 1) + " min" : fixed(s / 3600.0, 1) + " h";
}

std::string seconds(double s) {
  if (std::isnan(s)) return "n/a";
  if (std::fabs(s) < 1.0) return fixed(s * 1e3, 1) + " ms";
  if (std::fabs(s) < 10.0) return fixed(s, 3) + " s";
  return fixed(s, 1) + " s";
}

std::vector<Part> step_parts(const sim::results::StepBreakdown& b) {
  return {
      {"compute", b.compute.seconds(), "#4e79a7"},       {"TP exposed", b.tp_exposed.seconds(), "#b07aa1"},
      {"PP bubble", b.pp_bubble.seconds(), "#bab0ac"},   {"PP exposed", b.pp_exposed.seconds(), "#9c755f"},
      {"DP exposed", b.dp_exposed.seconds(), "#e15759"}, {"CP exposed", b.cp_exposed.seconds(), "#76b7b2"},
      {"EP exposed", b.ep_exposed.seconds(), "#edc948"}, {"optimizer", b.optimizer.seconds(), "#59a14f"},
      {"data stall", b.data_stall.seconds(), "#ff9da7"},
  };
}

std::vector<sim::results::CauseSummary> causes_by_cost(const sim::results::RunSummary& r) {
  auto causes = r.causes;
  std::stable_sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) {
    if (a.lost_gpu_hours_mean != b.lost_gpu_hours_mean) return a.lost_gpu_hours_mean > b.lost_gpu_hours_mean;
    return a.name < b.name;
  });
  return causes;
}

double per_failure_usd(const sim::cost::CostSummary& c, const std::string& cause) {
  for (const auto& [name, v] : c.per_failure_usd)
    if (name == cause) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<std::pair<std::string, double>> waterfall(const ReportInput& in) {
  if (!in.cost.waterfall_usd.empty()) return in.cost.waterfall_usd;
  // Derived: the cluster burns its price for the whole wall time; lost GPU-hours by cause at the per-GPU price are
  // the failures; blocking checkpoint time is the checkpoints; the rest is compute.
  std::vector<std::pair<std::string, double>> out;
  const auto& a = in.run.accounting;
  const double burn = in.cost.burn_usd_per_hour;
  const double per_gpu_hour = in.gpus > 0 ? burn / in.gpus : 0.0;
  const double total = in.cost.mean_usd;
  const double checkpoints = (a.checkpoint_s + a.drain_s) / 3600.0 * burn;
  double failures = 0;
  std::vector<std::pair<std::string, double>> by_cause;
  for (const auto& c : causes_by_cost(in.run)) {
    const double v = c.lost_gpu_hours_mean * per_gpu_hour;
    if (v <= 0) continue;
    by_cause.emplace_back("failure: " + c.name, v);
    failures += v;
  }
  out.emplace_back("compute", total - checkpoints - failures);
  out.emplace_back("checkpoints", checkpoints);
  out.insert(out.end(), by_cause.begin(), by_cause.end());
  return out;
}

}  // namespace detail

namespace {

/// The step's larger loss that crosses its threshold (a pipeline bubble over 15%, exposed communication over 25%),
/// and for communication its largest part, as a recommendation; none when neither does (a user trial: an MoE step
/// losing 33% to expert-parallel all-to-alls was told to shrink its 18% bubble, and one losing 60% to them to use a
/// smaller tensor-parallel degree).
std::optional<Recommendation> step_loss(const ReportInput& in) {
  using detail::percent;
  const double step = in.step.step_time.seconds();
  const auto& b = in.step.breakdown;
  const double bubble = step > 0 ? (b.pp_bubble + b.pp_exposed).seconds() / step : 0.0;
  const double comm = step > 0 ? (b.tp_exposed + b.dp_exposed + b.cp_exposed + b.ep_exposed).seconds() / step : 0.0;
  if (bubble > 0.15 && (comm <= 0.25 || bubble >= comm))
    return Recommendation{"pipeline-bubble", "Shrink the pipeline bubble (" + percent(bubble) +
                                                 " of the step): more micro-batches per step, interleaved stages, or "
                                                 "fewer stages."};
  if (comm > 0.25) {
    const std::pair<double, const char*> parts[] = {
        {b.ep_exposed.seconds(),
         "expert-parallel all-to-alls: experts within an NVLink domain, DeepEP, or overlapping them with another "
         "micro-batch (parallel.ep_comm_overlap)"},
        {b.tp_exposed.seconds(),
         "tensor-parallel collectives: a smaller tensor-parallel degree or parallel.tp_comm_overlap"},
        {b.dp_exposed.seconds(), "data-parallel reduction: more overlap (smaller buckets, overlap_param_gather)"},
        {b.cp_exposed.seconds(),
         "context-parallel exchanges: a smaller context-parallel degree or its all-gather form"}};
    const auto* top = &parts[0];
    for (const auto& p : parts)
      if (p.first > top->first) top = &p;
    return Recommendation{"exposed-comm", "Reduce exposed communication (" + percent(comm) +
                                              " of the step; the largest part, " + percent(top->first / step) +
                                              ", is " + top->second + ")."};
  }
  return std::nullopt;
}

}  // namespace

constexpr double kRiskThreshold = 0.10;  // a deadline or budget missed in more trials than this is a risk

Recommendation recommend(const ReportInput& in) {
  using detail::days;
  using detail::percent;
  const auto& r = in.run;
  const auto& c = in.cost;
  const double waiting = r.accounting.wall_s > 0 ? r.accounting.waiting_for_repair_s / r.accounting.wall_s : 0.0;
  if (r.never_finished > 0) {
    const bool too_long = r.never_finished_reason.find("simulator's range") != std::string::npos;
    // A run stalled waiting for repaired nodes needs spares or shrinking, which faster restarts or more checkpoints
    // do not give (a user trial: both still never finished; on_spares_exhausted "shrink" finished in 2.9 d).
    const std::string stall =
        waiting > 0.5 ? ": the run waits " + percent(waiting) + " of its wall time for repaired nodes; " +
                            sim::results::waiting_remedy(r) + " before committing to this plan."
                      : ": at these failure rates the run stalls; shorten restarts, checkpoint more often or add "
                        "spares before committing to this plan.";
    return {"never-finishes", std::to_string(r.never_finished) + " of " + std::to_string(r.trials) +
                                  " trials never finish (" + r.never_finished_reason + ")" +
                                  (too_long ? ": the run is longer than trainsim can simulate; plan fewer tokens, "
                                              "more GPUs, or a window (training.duration)."
                                            : stall)};
  }
  if (waiting > 0.5) {
    std::string remedy = sim::results::waiting_remedy(r);
    remedy[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(remedy[0])));
    return {"waiting", "The run spends " + percent(waiting) + " of its wall time waiting for repaired nodes (" +
                           std::to_string(r.spares) + " spares, on exhaustion: " + r.on_spares_exhausted + "). " +
                           remedy + "."};
  }
  // A plan is judged at its p90: a deadline or budget missed in more than 10% of the trials is a risk (it was 20%, and
  // a user trial got "proceed" with the p90 past the deadline and an 18.5% chance of missing it).
  const bool owned = c.pricing == "owned";
  const std::string budget_also = c.p_budget_overrun && *c.p_budget_overrun > kRiskThreshold
                                      ? " The budget is at risk too: a " + percent(*c.p_budget_overrun, 0) +
                                            " chance of exceeding " + detail::usd(in.budget_usd.value_or(NAN)) +
                                            " (p90 cost " + detail::usd(c.p90_usd) + ")."
                                      : std::string();
  if (c.p_deadline_miss && *c.p_deadline_miss > kRiskThreshold) {
    // A step that loses much of its time to its layout is fixed on the GPUs it has before more are bought, and more
    // GPUs do not lower a cost that is over budget too (a user trial: "Add GPUs" for a 405B run losing 29% of its step
    // to the pipeline bubble and over budget, where plan found a 34% faster layout on the same GPUs).
    std::string lead = "Add GPUs or relax the deadline: ";
    if (const auto loss = step_loss(in)) {
      std::string fix = loss->action;
      fix[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(fix[0])));
      lead = "Fix the layout before adding GPUs (trainsim plan searches the layouts of these GPUs): " + fix +
             " Then add GPUs or relax the deadline: ";
    }
    const std::string more_gpus = budget_also.empty() ? std::string()
                                                      : " More GPUs shorten the run but do not lower its cost; a "
                                                        "faster step or a lower price does.";
    return {"deadline-risk", lead + "there is a " + percent(*c.p_deadline_miss, 0) + " chance of missing " +
                                 days(in.deadline_days.value_or(NAN)) + " (p90 time to train " +
                                 days(r.time_to_train_days.p90) + "; the rule fires above " +
                                 percent(kRiskThreshold, 0) + ")." + budget_also + more_gpus};
  }
  if (c.p_budget_overrun && *c.p_budget_overrun > kRiskThreshold)
    return {"budget-risk",
            std::string(owned ? "Lower the cost of the owned cluster (node price, a longer amortisation, higher "
                                "utilisation, energy)"
                              : "Lower the price per GPU-hour") +
                " or raise the budget: there is a " + percent(*c.p_budget_overrun, 0) + " chance of exceeding " +
                detail::usd(in.budget_usd.value_or(NAN)) + " (p90 cost " + detail::usd(c.p90_usd) +
                "; the rule fires above " + percent(kRiskThreshold, 0) + ")."};
  const auto& a = r.accounting;
  const double wall = a.wall_s > 0 ? a.wall_s : NAN;
  // Where the interval was given, Daly's optimum for the same job says how far to move it.
  const auto& ck = r.checkpoint;
  const std::string optimum =
      ck.policy == "fixed" && std::isfinite(ck.optimum_interval_s) && std::isfinite(ck.wall_vs_optimum)
          ? " Daly's optimum for this job is every " + detail::minutes(ck.optimum_interval_s) + " (the given " +
                detail::minutes(ck.interval_s) + " makes the expected wall time " + percent(ck.wall_vs_optimum) +
                " longer; reliability.checkpoint.interval \"auto\" uses it)."
          : std::string();
  // At an optimum interval (Young's or Daly's, or a given one within 1% of Daly's wall time) checkpoint writes and
  // redone work are balanced: moving the interval makes the run longer, and only cheaper checkpoints help (a user
  // trial: "Checkpoint less often" at Daly's optimum, where following it took 3.4% longer).
  const double ck_share = a.checkpoint_s / wall, lost_share = a.lost_work_s / wall;
  const bool at_optimum = ck.policy != "fixed" || (std::isfinite(ck.wall_vs_optimum) && ck.wall_vs_optimum < 0.01);
  const std::string cheaper =
      ck.async ? "a faster snapshot or more storage bandwidth (reliability.checkpoint.snapshot_bandwidth, "
                 "write_bandwidth)"
               : "asynchronous checkpoints (reliability.checkpoint.async) or more storage bandwidth "
                 "(reliability.checkpoint.write_bandwidth)";
  if (at_optimum && (ck_share > 0.05 || lost_share > 0.05))
    return {"checkpoint-cost", "Make checkpoints cheaper: blocking checkpoint writes take " + percent(ck_share) +
                                   " of the wall time and redone work " + percent(lost_share) + ", at an interval (" +
                                   detail::minutes(ck.interval_s) + ") that already balances them for this job; " +
                                   cheaper + " lower both."};
  if (ck_share > 0.05)
    return {"checkpoint-cost", "Checkpoint less often or asynchronously: blocking checkpoint writes take " +
                                   percent(ck_share) + " of the wall time." + optimum};
  if (lost_share > 0.05)
    return {"lost-work", "Checkpoint more often: work redone after failures takes " + percent(lost_share) +
                             " of the wall time." + optimum};
  if (r.goodput.p50 < 0.90) {
    // The lever is where failures' time goes: checkpoints (writes and redone work), recovery (detection and
    // restart), or running short of nodes (waiting and running shrunk). Spares do nothing for a software crash, and
    // faster restarts nothing for checkpoint writes (a user trial: "faster detection and restart or more spares" where
    // those took 0.8% of the wall time and checkpointing 9.4%).
    const double recovery = (a.detection_s + a.restart_s) / wall;
    const double nodes = (a.waiting_for_repair_s + a.degraded_s + a.drain_s) / wall;
    // Degraded running is fail-slow GPUs' as well as a shrunk job's; where the stragglers lose most of the GPU-hours,
    // spares are not the lever (a review: "more spares" for a straggler-only failure model).
    double straggler_h = 0, all_h = 0;
    for (const auto& cause : r.causes) {
      all_h += cause.lost_gpu_hours_mean;
      if (cause.effect == "straggler") straggler_h += cause.lost_gpu_hours_mean;
    }
    const bool slow_gpus = all_h > 0 && straggler_h > 0.5 * all_h;
    const double checkpoints = ck_share + lost_share;
    std::string lever;
    if (checkpoints >= recovery && checkpoints >= nodes)
      lever = "checkpoint writes and redone work take " + percent(checkpoints) + " of the wall time: " + cheaper +
              " pay off first";
    else if (recovery >= nodes)
      lever = "detection and restarts take " + percent(recovery) +
              " of the wall time: faster detection and restart pay off first";
    else if (slow_gpus)
      lever = "running slowed by fail-slow GPUs and draining them take " + percent(nodes) +
              " of the wall time: finding and draining stragglers sooner (reliability.detection.straggler) pays off "
              "first";
    else
      lever = "waiting for repaired nodes and running shrunk take " + percent(nodes) +
              " of the wall time: more spares pay off first";
    const auto causes = detail::causes_by_cost(r);
    const std::string top = causes.empty() ? std::string() : "; the costliest cause is " + causes.front().name;
    return {"failures",
            "Reduce what failures cost (goodput p50 is " + percent(r.goodput.p50) + "): " + lever + top + "."};
  }
  if (auto loss = step_loss(in)) return *loss;
  const auto& m = in.step.memory;
  if (m.capacity > 0 && m.total / m.capacity > 0.95)
    return {"memory-headroom", "Add headroom before committing: memory per GPU is " + percent(m.total / m.capacity) +
                                   " of capacity; use more recomputation or a higher ZeRO stage."};
  // Without a price the plan cannot be judged on cost: in place of "proceed" (the time rules above still fire first).
  if (in.unpriced)
    return {"unpriced", "Give a price before deciding on cost: " + in.unpriced_reason +
                            ". The time and risk figures stand; every cost here leaves out compute."};
  std::string why = "p90 time to train " + days(r.time_to_train_days.p90) + ", p90 cost " + detail::usd(c.p90_usd);
  if (r.work != "steps") why = "goodput p50 " + percent(r.goodput.p50) + " over the window";
  if (c.p_deadline_miss) why += ", " + percent(*c.p_deadline_miss) + " chance of missing the deadline";
  if (c.p_budget_overrun) why += ", " + percent(*c.p_budget_overrun) + " of exceeding the budget";
  return {"proceed", "Proceed with this plan: " + why +
                         "; no risk or inefficiency crosses its threshold (deadline or budget missed in over 10% of "
                         "trials, checkpoint writes or lost work over 5% of the wall time, goodput under 90%, a "
                         "pipeline bubble over 15% or exposed communication over 25% of the step, memory over 95%)."};
}

std::uint64_t fnv1a64(std::string_view bytes) {
  return sim::base::fnv1a64(bytes);
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

const std::vector<std::string>& chart_ids() {
  static const std::vector<std::string> ids = {"step-breakdown",     "pipeline-timeline", "memory",
                                               "failure-timeline",   "time-to-train-cdf", "cost-waterfall",
                                               "sensitivity-tornado"};
  return ids;
}

std::string markdown_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '#':
        out += '\\';
        out += c;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '@':  // summary.md is posted as a PR comment: "@name" in a scenario would notify that user (a user trial)
        out += "&#64;";
        break;
      case '\n':
      case '\r':
      case '\t':
        out += ' ';
        break;
      default:
        out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
  }
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace reports
