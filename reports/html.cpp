// reports/html.cpp: report.html, one self-contained page (inline CSS and SVG, no scripts, no external loads).
#include "reports/charts.hpp"
#include "reports/format.hpp"
#include "reports/report.hpp"
#include "reports/svg.hpp"

#include <cmath>

namespace reports {

namespace {

using detail::causes_by_cost;
using detail::days;
using detail::fixed;
using detail::per_failure_usd;
using detail::percent;
using detail::seconds;
using detail::share_of_cost;
using detail::usd;

// Inline styles only: the page's Content-Security-Policy forbids everything else.
constexpr const char* kCss = R"css(
:root{--ink:#1f2933;--muted:#5f6b76;--line:#dde2e7;--bg:#f6f7f9;--card:#fff;--good:#2e7d32;--warn:#b26a00;--bad:#c0392b;--accent:#2f5d8a}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1080px;margin:0 auto;padding:28px 28px 48px}
header{border-bottom:3px solid var(--accent);padding-bottom:14px;margin-bottom:22px}
.kicker{margin:0;color:var(--accent);font-size:12px;font-weight:600;letter-spacing:.08em;text-transform:uppercase}
h1{margin:4px 0 6px;font-size:28px;line-height:1.2;word-break:break-word}
h2{font-size:19px;margin:34px 0 12px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:0 0 4px}
.desc{margin:0 0 10px;color:var(--muted)}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:2px 24px;margin:0;font-size:13px}
.facts div{display:flex;gap:8px}.facts dt{color:var(--muted);min-width:78px}.facts dd{margin:0}
.cards{display:grid;grid-template-columns:repeat(3,1fr);gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-left:5px solid var(--accent);border-radius:6px;padding:12px 14px}
.card .label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em}
.card .value{font-size:24px;font-weight:650;margin:2px 0}
.card .sub{font-size:13px;color:var(--muted)}
.card.good{border-left-color:var(--good)}.card.warn{border-left-color:var(--warn)}.card.bad{border-left-color:var(--bad)}
.card.good .value{color:var(--good)}.card.warn .value{color:var(--warn)}.card.bad .value{color:var(--bad)}
.action{margin:14px 0 0;background:#eaf1f8;border:1px solid #c9d9ea;border-radius:6px;padding:12px 16px;font-size:16px}
.action .rule{color:var(--muted);font-size:12px;margin-left:6px}
.note{margin:8px 0 0;background:#fff8e6;border:1px solid #ecd9a6;border-radius:6px;padding:8px 16px;font-size:14px}
figure{margin:0 0 18px;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:14px 16px 10px}
figure svg{display:block;width:100%;height:auto;font-family:inherit}
figure svg .op{stroke:#fff;stroke-width:.6}
figcaption{font-size:13px;color:var(--muted);margin-top:6px}
table{border-collapse:collapse;width:100%;background:var(--card);font-size:13px;margin:0 0 14px}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:12px;overflow:auto;max-height:480px;white-space:pre-wrap;word-break:break-all}
ul.sources{font-size:13px;padding-left:20px}
footer{margin-top:30px;color:var(--muted);font-size:12px}
@media (max-width:760px){.cards{grid-template-columns:1fr 1fr}}
@media print{
  @page{margin:14mm}
  body{background:#fff;font-size:11pt}
  main{max-width:none;padding:0}
  .card,figure,pre,table,.action{box-shadow:none;break-inside:avoid;page-break-inside:avoid}
  figure{border-color:#bbb}
  pre{max-height:none;overflow:visible}
  h2{break-after:avoid;page-break-after:avoid}
  .card .value{font-size:18pt}
}
)css";

/// A risk probability's card class: green below 5%, amber below 20%, red from 20%.
const char* risk_class(std::optional<double> p) {
  if (!p || std::isnan(*p)) return "";
  return *p < 0.05 ? "good" : *p < 0.20 ? "warn" : "bad";
}

std::string card(const std::string& cls, const std::string& label, const std::string& value, const std::string& sub) {
  return "<div class=\"card " + cls + "\"><div class=\"label\">" + html_escape(label) + "</div><div class=\"value\">" +
         html_escape(value) + "</div><div class=\"sub\">" + html_escape(sub) + "</div></div>\n";
}

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>" + svg + "<figcaption>" + html_escape(caption) + "</figcaption></figure>\n";
}

std::string td(const std::string& s, bool num = false) {
  return std::string(num ? "<td class=\"num\">" : "<td>") + html_escape(s) + "</td>";
}

std::string bottom_line(const ReportInput& in) {
  const auto& r = in.run;
  const auto& c = in.cost;
  std::string out = "<section id=\"bottom-line\"><h2>Bottom line</h2>\n<div class=\"cards\">\n";
  if (r.work == "steps") {
    out += card("", "Time to train", "p50 " + days(r.time_to_train_days.p50),
                "p10 " + days(r.time_to_train_days.p10) + " · p90 " + days(r.time_to_train_days.p90) +
                    " · failure-free " + days(r.failure_free_days));
  } else {
    out += card("", "Simulated window", days(r.window_days), "fixed duration, no time to train");
  }
  out += card("", "Cost", "p50 " + usd(c.p50_usd),
              "p10 " + usd(c.p10_usd) + " · p90 " + usd(c.p90_usd) +
                  (c.cvar95_usd > 0 ? " · CVaR95 " + usd(c.cvar95_usd) : "") +
                  (c.pricing.empty() ? "" : " · " + c.pricing));
  out += card(risk_class(c.p_deadline_miss), "P(miss deadline)",
              c.p_deadline_miss ? percent(*c.p_deadline_miss) : std::string(in.deadline_days ? "n/a" : "no deadline"),
              in.deadline_days ? "deadline " + days(*in.deadline_days) : std::string("set cost.deadline to judge"));
  out += card(risk_class(c.p_budget_overrun), "P(exceed budget)",
              c.p_budget_overrun ? percent(*c.p_budget_overrun) : std::string(in.budget_usd ? "n/a" : "no budget"),
              in.budget_usd ? "budget " + usd(*in.budget_usd) : std::string("set cost.budget to judge"));
  out += card("", "Cost of failures", usd(c.failures_usd_mean),
              fixed(r.interruptions_mean, 1) + " interruptions · " + usd(c.per_failure_mean_usd) + " each · " +
                  share_of_cost(c.failures_usd_mean, c.mean_usd));
  out += card(r.goodput.p50 >= 0.9   ? "good"
              : r.goodput.p50 >= 0.8 ? "warn"
                                     : "bad",
              "Goodput", "p50 " + percent(r.goodput.p50),
              "job MTBF " + sim::results::job_mtbf_text(r, 1) + " · checkpoint " +
                  sim::results::checkpoint_interval_text(r, 1));
  out += "</div>\n";
  const auto rec = recommend(in);
  out += "<p class=\"action\" id=\"recommendation\"><strong>Recommended action:</strong> " + html_escape(rec.action) +
         "<span class=\"rule\">(rule: " + html_escape(rec.rule) + ")</span></p>\n";
  for (const auto& note : in.notes)
    out += "<p class=\"note\"><strong>Note:</strong> " + html_escape(note) + "</p>\n";
  if (r.never_finished > 0)
    out += "<p class=\"action\"><strong>Warning:</strong> " + std::to_string(r.never_finished) + " of " +
           std::to_string(r.trials) + " trials never finished: " + html_escape(r.never_finished_reason) + "</p>\n";
  return out + "</section>\n";
}

std::string causes_table(const ReportInput& in) {
  const auto causes = causes_by_cost(in.run);
  if (causes.empty()) return "";
  std::string out =
      "<table id=\"failure-causes\"><thead><tr><th>cause</th><th>effect</th><th class=\"num\">interruptions per "
      "run</th><th class=\"num\">lost GPU-hours</th><th class=\"num\">cost per failure</th></tr></thead><tbody>\n";
  // The ten costliest causes, then the rest summed in one row.
  constexpr std::size_t kShown = 10;
  int others = 0;
  double other_interruptions = 0, other_hours = 0;
  for (std::size_t i = 0; i < causes.size(); ++i) {
    const auto& c = causes[i];
    if (c.interruptions_mean <= 0 && c.lost_gpu_hours_mean <= 0) continue;
    if (i >= kShown) {
      ++others;
      other_interruptions += c.interruptions_mean;
      other_hours += c.lost_gpu_hours_mean;
      continue;
    }
    out += "<tr>" + td(c.name) + td(c.effect) + td(fixed(c.interruptions_mean, 1), true) +
           td(fixed(c.lost_gpu_hours_mean, 0), true) + td(usd(per_failure_usd(in.cost, c.name)), true) + "</tr>\n";
  }
  if (others > 0)
    out += "<tr>" + td(std::to_string(others) + " other causes") + td("") + td(fixed(other_interruptions, 1), true) +
           td(fixed(other_hours, 0), true) + td("") + "</tr>\n";
  return out + "</tbody></table>\n";
}

std::string provenance(const ReportInput& in) {
  std::string out = "<section id=\"provenance\"><h2>Assumptions and provenance</h2>\n<table><tbody>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out += "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(v) + "</td></tr>\n";
  };
  row("trainsim version", in.trainsim_version);
  row("scenario", in.scenario_source);
  row("Monte Carlo", std::to_string(in.run.trials) + " trials, seed " + std::to_string(in.seed));
  for (const auto& h : in.hashes)
    out += "<tr><th>" + html_escape(h.what) + "</th><td><code>" + html_escape(h.algorithm) + " " + html_escape(h.hex) +
           "</code></td></tr>\n";
  row("step fidelity", in.step.fidelity + " (" + std::to_string(in.step.simulated_gpus) + " GPUs simulated, " +
                           std::to_string(in.step.events) + " events)");
  row("MFU / HFU", percent(in.step.mfu) + " / " + percent(in.step.hfu) +
                       " (model FLOPs, Narayanan et al. SC21 convention / hardware FLOPs with recomputation)");
  const auto& ck = in.run.checkpoint;
  row("checkpoints",
      ck.policy + ", " +
          (std::isfinite(ck.interval_s) ? "every " + detail::minutes(ck.interval_s)
                                        : std::string("none needed (no failures modelled)")) +
          ", write " + seconds(ck.write_s) + (ck.async ? " (asynchronous)" : " (blocking)") +
          (ck.policy == "fixed" && std::isfinite(ck.optimum_interval_s) && std::isfinite(ck.wall_vs_optimum)
               ? "; Daly's optimum " + detail::minutes(ck.optimum_interval_s) +
                     " (the given interval's expected wall time is " + percent(ck.wall_vs_optimum) + " longer)"
               : std::string()));
  if (!in.cost.pricing.empty()) row("pricing", in.cost.pricing);
  if (!in.cost.price_source.empty()) row("price source", in.cost.price_source);
  out += "</tbody></table>\n";
  if (!in.sources.empty()) {
    out += "<h3>Modelling sources</h3><ul class=\"sources\">\n";
    for (const auto& s : in.sources)
      out += "<li>" + html_escape(s) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<h3>Effective configuration</h3>\n<pre id=\"effective-config\">" + html_escape(in.effective_config_json) +
         "</pre>\n</section>\n";
  return out;
}

}  // namespace

std::string render_html(const ReportInput& in) {
  std::string out;
  out.reserve(256 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"trainsim " + html_escape(in.trainsim_version) + "\">\n";
  out += "<title>" + html_escape(in.scenario_name) + " · trainsim report</title>\n<style>" + kCss + "</style>\n";
  out += "</head>\n<body>\n<main>\n<header>\n<p class=\"kicker\">trainsim · training cost and risk report</p>\n";
  out += "<h1>" + html_escape(in.scenario_name) + "</h1>\n";
  if (!in.description.empty()) out += "<p class=\"desc\">" + html_escape(in.description) + "</p>\n";
  out += "<dl class=\"facts\">\n";
  for (const auto& [k, v] : in.facts)
    out += "<div><dt>" + html_escape(k) + "</dt><dd>" + html_escape(v) + "</dd></div>\n";
  out += "</dl>\n</header>\n";
  out += bottom_line(in);

  const auto& b = in.step.breakdown;
  const double step = in.step.step_time.seconds();
  out += "<section id=\"step\"><h2>One training step</h2>\n";
  out += figure(detail::chart_step_breakdown(in),
                "Step time " + seconds(step) + ", " + fixed(in.step.tokens_per_s, 0) + " tokens/s, MFU " +
                    percent(in.step.mfu) + ". Exposed communication is the part not hidden behind compute; the " +
                    "pipeline bubble (" + seconds(b.pp_bubble.seconds()) + ") is the schedule's fill and drain.");
  out += figure(detail::chart_pipeline_timeline(in),
                "Gantt chart of one step at " + in.step.fidelity +
                    " fidelity: one row per pipeline rank, which runs several virtual stages when the schedule "
                    "interleaves them or folds them in a V (tensor-parallel rank 0 of data-parallel replica 0; its "
                    "peers run in lockstep). Upper bar: forward and backward passes of each micro-batch; lower "
                    "strip: communication on the GPU's communication streams. Hover for details.");
  out += figure(detail::chart_memory(in),
                "Memory per GPU on the worst pipeline stage: " + fixed(in.step.memory.total, 1) + " of " +
                    fixed(in.step.memory.capacity, 1) + " GiB usable HBM" + (in.step.fits ? "." : " (does not fit)."));
  out += "</section>\n";

  out += "<section id=\"run\"><h2>The whole run: failures and time to train</h2>\n";
  out += figure(detail::chart_failure_timeline(in),
                "One sample trial (trial " + std::to_string(in.run.sample_trial) +
                    "): failure arrivals by effect and the job's stops (red) from a failure to the resume after "
                    "detection, restart and checkpoint load. Stops are drawn at least one pixel wide.");
  out += causes_table(in);
  out += figure(detail::chart_time_to_train_cdf(in),
                in.run.work == "steps"
                    ? "Share of " + std::to_string(in.run.trials) + " Monte Carlo trials finished within x days" +
                          (in.deadline_days ? "; the shaded area is past the deadline" : "") + ". Failure-free time " +
                          days(in.run.failure_free_days) + "."
                    : "A fixed window of " + days(in.run.window_days) +
                          " was simulated: progress, not time to train, is the result (goodput above).");
  out += "</section>\n";

  out += "<section id=\"cost\"><h2>Cost and sensitivity</h2>\n";
  out += figure(detail::chart_cost_waterfall(in),
                "Mean cost " + usd(in.cost.mean_usd) +
                    " built up from compute, checkpoint overhead, failures by cause (red) and, where the cost model "
                    "bills them, energy and storage. Burn rate " +
                    usd(in.cost.burn_usd_per_hour) + " per hour for the cluster.");
  out += figure(detail::chart_sensitivity_tornado(in),
                "p50 cost with one input moved " + percent(in.sensitivity_delta, 0) + " down and " +
                    percent(in.sensitivity_delta, 0) +
                    " up at a time (failure rates, checkpoint write time, restart time, price, achieved MFU), widest "
                    "swing first; the vertical line is the baseline p50 cost.");
  out += "</section>\n";

  out += provenance(in);
  out += "<footer>Generated by trainsim " + html_escape(in.trainsim_version) +
         ". Same scenario and seed, same report. Every figure is simulated, not measured.</footer>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace reports
