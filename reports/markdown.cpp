// reports/markdown.cpp: summary.md, GitHub-flavoured Markdown for a pull-request comment.
#include "reports/format.hpp"
#include "reports/report.hpp"

#include <cmath>

namespace reports {

namespace {

using detail::days;
using detail::fixed;
using detail::percent;
using detail::seconds;
using detail::share_of_cost;
using detail::usd;

std::string row(std::initializer_list<std::string> cells) {
  std::string out = "|";
  for (const auto& c : cells)
    out += " " + c + " |";
  return out + "\n";
}

/// A risk probability; without one, "n/a" when the limit was set (a window run has no time to train) or `none`.
std::string opt_percent(std::optional<double> p, bool limit_set, const char* none) {
  return p ? percent(*p) : std::string(limit_set ? "n/a" : none);
}

}  // namespace

std::string render_markdown(const ReportInput& in) {
  const auto& r = in.run;
  const auto& c = in.cost;
  const std::string name = markdown_escape(in.scenario_name);
  std::string out = "## trainsim: " + name + "\n\n";
  if (!in.description.empty()) out += markdown_escape(in.description) + "\n\n";
  const auto rec = recommend(in);
  out += "**Recommended action:** " + markdown_escape(rec.action) + " _(rule: " + markdown_escape(rec.rule) + ")_\n\n";
  for (const auto& note : in.notes)
    out += "**Note:** " + markdown_escape(note) + "\n\n";

  out += "### Bottom line\n\n";
  out += row({"metric", "p50", "p90", "note"});
  out += row({"---", "---:", "---:", "---"});
  if (r.work == "steps")
    out += row({"time to train", days(r.time_to_train_days.p50), days(r.time_to_train_days.p90),
                "p10 " + days(r.time_to_train_days.p10) + ", failure-free " + days(r.failure_free_days)});
  else
    out += row({"simulated window", days(r.window_days), days(r.window_days), "fixed duration"});
  out += row({"cost", usd(c.p50_usd), usd(c.p90_usd),
              "p10 " + usd(c.p10_usd) + ", mean " + usd(c.mean_usd) +
                  (c.cvar95_usd > 0 ? ", CVaR95 " + usd(c.cvar95_usd) : "")});
  out += row({"goodput", percent(r.goodput.p50), percent(r.goodput.p10) + " (p10)", "productive time / wall time"});
  out += "\n";
  out += row({"risk", "value"});
  out += row({"---", "---:"});
  out += row({"P(miss deadline" + (in.deadline_days ? " " + days(*in.deadline_days) : std::string()) + ")",
              opt_percent(c.p_deadline_miss, in.deadline_days.has_value(), "no deadline")});
  out += row({"P(exceed budget" + (in.budget_usd ? " " + usd(*in.budget_usd) : std::string()) + ")",
              opt_percent(c.p_budget_overrun, in.budget_usd.has_value(), "no budget")});
  out += row({"cost of failures (mean)",
              usd(c.failures_usd_mean) + " (" + share_of_cost(c.failures_usd_mean, c.mean_usd) + ")"});
  out += row({"interruptions per run",
              fixed(r.interruptions_mean, 1) + " (job MTBF " + sim::results::job_mtbf_text(r, 1) + ")"});
  if (r.never_finished > 0)
    out += row({"trials that never finish", std::to_string(r.never_finished) + " of " + std::to_string(r.trials)});
  out += "\n";

  const double step = in.step.step_time.seconds();
  out += "### Step (" + markdown_escape(in.step.fidelity) + " fidelity): " + seconds(step) + ", MFU " +
         percent(in.step.mfu) + ", " + fixed(in.step.tokens_per_s, 0) + " tokens/s\n\n";
  out += row({"part", "seconds", "share"});
  out += row({"---", "---:", "---:"});
  for (const auto& p : detail::step_parts(in.step.breakdown)) {
    if (p.seconds <= 0) continue;
    out += row({p.label, fixed(p.seconds, 3), percent(step > 0 ? p.seconds / step : NAN)});
  }
  const auto& m = in.step.memory;
  out += "\nMemory per GPU: " + fixed(m.total, 1) + " of " + fixed(m.capacity, 1) + " GiB (" +
         percent(m.capacity > 0 ? m.total / m.capacity : NAN) + ", worst pipeline stage).\n\n";

  out += "### Top failure causes\n\n";
  out += row({"cause", "effect", "interruptions", "lost GPU-h", "cost per failure"});
  out += row({"---", "---", "---:", "---:", "---:"});
  int shown = 0;
  for (const auto& cause : detail::causes_by_cost(r)) {
    if (shown == 5) break;
    if (cause.interruptions_mean <= 0) continue;
    out += row({markdown_escape(cause.name), markdown_escape(cause.effect), fixed(cause.interruptions_mean, 1),
                fixed(cause.lost_gpu_hours_mean, 0), usd(detail::per_failure_usd(c, cause.name))});
    ++shown;
  }
  out += "\n<sub>trainsim " + markdown_escape(in.trainsim_version) + " · " + std::to_string(r.trials) +
         " trials, seed " + std::to_string(in.seed);
  for (const auto& h : in.hashes)
    out += " · " + markdown_escape(h.what) + " " + markdown_escape(h.algorithm) + " " + markdown_escape(h.hex);
  out += " · full report in report.html</sub>\n";
  return out;
}

}  // namespace reports
