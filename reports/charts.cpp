// reports/charts.cpp: the seven charts of report.html, drawn with reports::Svg.
#include "reports/charts.hpp"

#include "reports/format.hpp"
#include "reports/svg.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace reports::detail {

namespace {

using A = Svg::Anchor;

constexpr int kWidth = 1000;
constexpr double kLeft = 170;  // room for row labels
constexpr double kRight = 960;
constexpr const char* kMuted = "#666";

/// A chart with nothing to draw still says why, inside its frame.
void note(Svg& svg, double y, const std::string& text) {
  svg.rect(kLeft, y - 22, kRight - kLeft, 34, "#f4f4f4");
  svg.text((kLeft + kRight) / 2, y, text, A::Middle, 13, kMuted);
}

std::string ms(double s) {
  return fixed(s * 1e3, 1) + " ms";
}

}  // namespace

// ---- 1. step-time breakdown ------------------------------------------------------------------------------------

std::string chart_step_breakdown(const ReportInput& in) {
  Svg svg("step-breakdown", kWidth, 190, "Step-time breakdown: where one training step's time goes");
  const double step = in.step.step_time.seconds();
  const Scale x{0, step > 0 ? step : 1, kLeft, kRight};
  svg.text(kLeft - 10, 58, "step " + seconds(step), A::End, 13, "#222", true);
  double at = 0;
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& p : step_parts(in.step.breakdown)) {
    if (p.seconds <= 0) continue;
    const double x0 = x(at), x1 = x(at + p.seconds);
    const std::string share = percent(step > 0 ? p.seconds / step : 0);
    svg.rect(x0, 30, std::max(x1 - x0, 0.5), 44, p.colour, p.label + ": " + seconds(p.seconds) + " (" + share + ")");
    if (x1 - x0 > 70) svg.text((x0 + x1) / 2, 57, p.label + " " + share, A::Middle, 12, "#fff", true);
    legend.emplace_back(p.label + " " + seconds(p.seconds) + " (" + share + ")", p.colour);
    at += p.seconds;
  }
  svg.x_axis(x, 82, nice_ticks(0, step, 8), "seconds of one step, on the GPU that finishes last", " s");
  // Two legend rows of at most four entries each.
  for (std::size_t i = 0; i < legend.size(); i += 4) {
    const std::vector<std::pair<std::string, std::string>> row(
        legend.begin() + static_cast<std::ptrdiff_t>(i),
        legend.begin() + static_cast<std::ptrdiff_t>(std::min(legend.size(), i + 4)));
    svg.legend(kLeft, 148 + 20 * static_cast<double>(i / 4), row);
  }
  return svg.str();
}

// ---- 2. pipeline timeline of one step --------------------------------------------------------------------------

namespace {

const char* compute_colour(const std::string& name) {
  if (name.rfind("B_in", 0) == 0) return "#f28e2b";
  if (name.rfind('F', 0) == 0) return "#4e79a7";
  if (name.rfind('B', 0) == 0) return "#f28e2b";
  if (name.rfind('W', 0) == 0) return "#59a14f";
  return "#bab0ac";
}

const char* stream_colour(int stream) {
  switch (stream) {
    case 1:
      return "#b07aa1";
    case 2:
      return "#9c755f";
    case 3:
      return "#e15759";
    case 4:
      return "#76b7b2";
    case 5:
      return "#edc948";
  }
  return "#bab0ac";
}

const char* stream_label(int stream) {
  switch (stream) {
    case 1:
      return "TP comm";
    case 2:
      return "PP send";
    case 3:
      return "DP comm";
    case 4:
      return "CP comm";
    case 5:
      return "EP comm";
  }
  return "other";
}

}  // namespace

std::string chart_pipeline_timeline(const ReportInput& in) {
  const auto& spans = in.step.timeline;
  std::set<int> gpu_set;
  for (const auto& s : spans)
    gpu_set.insert(s.gpu);
  const std::vector<int> gpus(gpu_set.begin(), gpu_set.end());
  constexpr double kTop = 24, kRow = 40, kCompute = 22, kComm = 8;
  const double rows_h = std::max<double>(1, static_cast<double>(gpus.size())) * kRow;
  Svg svg("pipeline-timeline", kWidth, static_cast<int>(kTop + rows_h + 80),
          "Pipeline timeline of one step: forward and backward passes and communication per pipeline rank");
  if (spans.empty()) {
    note(svg, kTop + 24, "no timeline recorded for this step");
    return svg.str();
  }
  double end_s = in.step.step_time.seconds();
  for (const auto& s : spans)
    end_s = std::max(end_s, s.end.seconds());
  const Scale x{0, end_s, kLeft, kRight};
  const double px_per_s = (kRight - kLeft) / end_s;
  std::map<int, std::size_t> row_of;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    row_of[gpus[i]] = i;
    const double y = kTop + static_cast<double>(i) * kRow;
    svg.rect(kLeft, y, kRight - kLeft, kCompute + kComm + 2, i % 2 == 0 ? "#fafafa" : "#f3f3f3");
    // A row is a pipeline rank: with virtual stages (interleaved, DualPipe's V) it runs several of them.
    svg.text(kLeft - 10, y + 15, "PP rank " + std::to_string(i), A::End, 12, "#222", true);
    svg.text(kLeft - 10, y + 28, "GPU " + std::to_string(gpus[i]), A::End, 10, kMuted);
  }
  // Compute spans one by one (each a forward or backward pass, with a tooltip) unless there are very many;
  // communication spans merged where the gap is under a pixel, so that the page stays small.
  struct Run {
    double start, end;
    int count;
    std::string name;
  };
  std::map<std::pair<int, int>, std::vector<Run>> lanes;  // (gpu, stream) -> merged runs
  const bool merge_compute = spans.size() > 4000;
  for (const auto& s : spans) {
    auto& lane = lanes[{s.gpu, s.stream}];
    const double a = s.start.seconds(), b = s.end.seconds();
    const bool may_merge = s.stream != 0 || merge_compute;
    if (may_merge && !lane.empty() && (a - lane.back().end) * px_per_s < 0.8 &&
        (s.stream != 0 || compute_colour(lane.back().name) == compute_colour(s.name))) {
      lane.back().end = std::max(lane.back().end, b);
      ++lane.back().count;
      continue;
    }
    lane.push_back({a, b, 1, s.name});
  }
  std::set<int> streams_seen;
  for (const auto& [key, runs] : lanes) {
    const auto [gpu, stream] = key;
    const double y = kTop + static_cast<double>(row_of[gpu]) * kRow;
    if (stream != 0) streams_seen.insert(stream);
    for (const auto& r : runs) {
      const double w = std::max((r.end - r.start) * px_per_s, 0.6);
      const std::string tip = r.count > 1 ? std::string(stream_label(stream)) + ": " + std::to_string(r.count) +
                                                " transfers, " + ms(r.start) + " to " + ms(r.end)
                                          : (stream == 0 ? r.name : std::string(stream_label(stream)) + " " + r.name) +
                                                ": " + ms(r.start) + " to " + ms(r.end);
      if (stream == 0) {
        svg.rect(x(r.start), y + 1, w, kCompute, compute_colour(r.name), tip, "op");
      } else {
        svg.rect(x(r.start), y + kCompute + 2, w, kComm, stream_colour(stream), tip);
      }
    }
  }
  const double axis_y = kTop + static_cast<double>(gpus.size()) * kRow + 2;
  svg.x_axis(x, axis_y, nice_ticks(0, end_s, 10), "seconds into the step", " s");
  std::vector<std::pair<std::string, std::string>> legend = {{"forward", "#4e79a7"}, {"backward", "#f28e2b"}};
  bool has_w = false;
  for (const auto& s : spans)
    has_w = has_w || (s.stream == 0 && s.name.rfind('W', 0) == 0);
  if (has_w) legend.emplace_back("weight gradient", "#59a14f");
  for (int st : streams_seen)
    legend.emplace_back(stream_label(st), stream_colour(st));
  svg.legend(kLeft, axis_y + 54, legend);
  return svg.str();
}

// ---- 3. memory per GPU against capacity ------------------------------------------------------------------------

std::string chart_memory(const ReportInput& in) {
  Svg svg("memory", kWidth, 170, "Memory per GPU against HBM capacity (worst pipeline stage)");
  const auto& m = in.step.memory;
  const std::vector<std::tuple<std::string, double, std::string>> parts = {{"parameters", m.params, "#4e79a7"},
                                                                           {"gradients", m.grads, "#76b7b2"},
                                                                           {"optimizer", m.optimizer, "#59a14f"},
                                                                           {"activations", m.activations, "#f28e2b"},
                                                                           {"buffers", m.buffers, "#bab0ac"}};
  const double top = std::max({m.total, m.capacity, 1.0}) * 1.04;
  const Scale x{0, top, kLeft, kRight};
  svg.text(kLeft - 10, 52, fixed(m.total, 1) + " GiB", A::End, 13, "#222", true);
  svg.text(kLeft - 10, 68, percent(m.capacity > 0 ? m.total / m.capacity : NAN) + " of HBM", A::End, 11, kMuted);
  double at = 0;
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& [label, gib, colour] : parts) {
    if (gib <= 0) continue;
    const double x0 = x(at), x1 = x(at + gib);
    svg.rect(x0, 32, std::max(x1 - x0, 0.5), 40, colour, label + ": " + fixed(gib, 2) + " GiB");
    if (x1 - x0 > 60) svg.text((x0 + x1) / 2, 57, label, A::Middle, 12, "#fff", true);
    legend.emplace_back(label + " " + fixed(gib, 1) + " GiB", colour);
    at += gib;
  }
  if (m.capacity > 0) {
    const double cx = x(m.capacity);
    svg.line(cx, 20, cx, 82, "#c0392b", 2, "5 3");
    svg.text(cx, 15, "capacity " + fixed(m.capacity, 1) + " GiB", A::End, 11, "#c0392b", true);
  }
  svg.x_axis(x, 84, nice_ticks(0, top, 8), "GiB per GPU", "");
  svg.legend(kLeft, 150, legend);
  return svg.str();
}

// ---- 4. a sample trial's failure timeline ----------------------------------------------------------------------

namespace {

/// Events of a trial's life cycle; every other kind is a failure arriving (its effect: crash, hang, sdc, ...).
bool lifecycle(const std::string& kind) {
  for (const char* k :
       {"detected", "restart", "restart_shrunk", "resume", "repaired", "waiting_for_repair", "finished", "window_end",
        "never_finished", "sdc_rollback", "spike_rollback", "drain", "timeline_truncated"})
    if (kind == k) return true;
  return false;
}

/// A failure arrival that stops the job until a restart (stragglers slow it down; silent corruption is found later).
bool stops_job(const std::string& kind) {
  return kind != "straggler" && kind != "sdc";
}

/// "loss_spike" -> "loss spike".
std::string readable(std::string s) {
  for (char& c : s)
    if (c == '_') c = ' ';
  return s;
}

const char* effect_colour(const std::string& kind) {
  if (kind == "crash") return "#e15759";
  if (kind == "hang") return "#f28e2b";
  if (kind == "sdc" || kind == "sdc_rollback") return "#b07aa1";
  if (kind == "straggler" || kind == "drain") return "#edc948";
  if (kind == "maintenance") return "#4e79a7";
  if (kind == "waiting_for_repair") return "#9c755f";
  return "#76b7b2";
}

}  // namespace

std::string chart_failure_timeline(const ReportInput& in) {
  const auto& ev = in.run.sample_timeline;
  // Lanes: the job's state, then one lane per failure effect in order of first arrival, then repair waits.
  std::vector<std::string> lanes;
  for (const auto& e : ev)
    if (!lifecycle(e.kind) && std::find(lanes.begin(), lanes.end(), e.kind) == lanes.end()) lanes.push_back(e.kind);
  if (std::any_of(ev.begin(), ev.end(), [](const auto& e) { return e.kind == "waiting_for_repair"; }))
    lanes.emplace_back("waiting_for_repair");
  constexpr double kTop = 24, kRow = 30;
  const double h = kTop + (1 + static_cast<double>(lanes.size())) * kRow + 44;
  Svg svg("failure-timeline", kWidth, static_cast<int>(h),
          "Failure timeline of one sample trial: failures, stops and restarts over the run");
  if (ev.empty()) {
    note(svg, kTop + 20, "no events recorded in the sample trial");
    return svg.str();
  }
  double end_d = 0;
  for (const auto& e : ev)
    end_d = std::max(end_d, e.at.days());
  if (end_d <= 0) end_d = 1;
  const Scale x{0, end_d, kLeft, kRight};
  auto lane_y = [&](std::size_t i) { return kTop + static_cast<double>(i) * kRow; };
  for (std::size_t i = 0; i <= lanes.size(); ++i)
    svg.rect(kLeft, lane_y(i), kRight - kLeft, kRow - 6, i % 2 == 0 ? "#fafafa" : "#f3f3f3");
  svg.text(kLeft - 10, lane_y(0) + 16, "job", A::End, 12, "#222", true);
  for (std::size_t i = 0; i < lanes.size(); ++i)
    svg.text(kLeft - 10, lane_y(i + 1) + 16, lanes[i] == "waiting_for_repair" ? "repair wait" : readable(lanes[i]),
             A::End, 12, "#222", true);
  // The job lane: running (green) and stopped (red) from the failure that stopped it (the last arrival before the
  // detection or restart) to the next resume. Stops are short against months: each is at least a pixel wide.
  svg.rect(kLeft, lane_y(0) + 4, kRight - kLeft, kRow - 14, "#8cc084", "running");
  double down_since = NAN, arrival = NAN;  // NaN: none
  std::string down_cause, arrival_cause;
  int stops = 0;
  for (const auto& e : ev) {
    if (e.kind == "timeline_truncated") break;  // nothing after it is known: an open stop is not drawn as lasting
    const double d = e.at.days();
    const std::string what = e.cause.empty() ? e.kind : e.kind + " (" + e.cause + ")";
    if (!lifecycle(e.kind) && stops_job(e.kind)) {
      arrival = d;
      arrival_cause = what;
    }
    const bool stopped = e.kind == "detected" || e.kind == "restart" || e.kind == "restart_shrunk" ||
                         e.kind == "sdc_rollback" || e.kind == "spike_rollback" || e.kind == "drain" ||
                         e.kind == "waiting_for_repair";
    if (stopped && std::isnan(down_since)) {
      down_since = std::isnan(arrival) ? d : arrival;
      down_cause = std::isnan(arrival) ? what : arrival_cause;
    }
    const bool ends = e.kind == "resume" || e.kind == "never_finished" || e.kind == "finished";
    if (ends && !std::isnan(down_since)) {
      const double w = std::max(x(d) - x(down_since), 1.0);
      svg.rect(x(down_since), lane_y(0) + 4, w, kRow - 14, "#c0392b",
               "stopped day " + fixed(down_since, 2) + " for " + fixed((d - down_since) * 24 * 60, 0) +
                   " min: " + down_cause);
      ++stops;
    }
    if (ends) down_since = arrival = NAN;
  }
  for (const auto& e : ev) {
    const auto it = std::find(lanes.begin(), lanes.end(), e.kind);
    if (it == lanes.end()) continue;
    const auto i = static_cast<std::size_t>(it - lanes.begin()) + 1;
    const double d = e.at.days();
    svg.marker(x(d), lane_y(i) + 12, 9, effect_colour(e.kind),
               "day " + fixed(d, 2) + ": " + e.kind + (e.cause.empty() ? "" : " (" + e.cause + ")"));
  }
  // Events past the sample trial's recording limit are not drawn: the job lane says so instead of showing it running.
  std::string cut;
  for (const auto& e : ev)
    if (e.kind == "timeline_truncated") {
      const double d = e.at.days();
      svg.rect(x(d), lane_y(0) + 4, std::max(kRight - x(d), 1.0), kRow - 14, "#bbbbbb",
               "events after day " + fixed(d, 1) + " not recorded (the sample trial's timeline keeps " +
                   std::to_string(ev.size()) + " events)");
      cut = "; events after day " + fixed(d, 1) + " not recorded";
    }
  const auto& last = ev.back();
  if (last.kind == "finished" || last.kind == "never_finished" || last.kind == "window_end") {
    const double fx = x(last.at.days());
    svg.line(fx, kTop - 6, fx, lane_y(lanes.size()) + kRow - 6, "#222", 1.5, "4 3");
    svg.text(fx - 4, kTop - 10, last.kind + " day " + fixed(last.at.days(), 1), A::End, 11, "#222", true);
  }
  const double axis_y = lane_y(lanes.size()) + kRow - 4;
  svg.x_axis(x, axis_y, nice_ticks(0, end_d, 10),
             "days since the start of the run (trial " + std::to_string(in.run.sample_trial) + ", " +
                 std::to_string(stops) + " stops" + cut + ")",
             "");
  return svg.str();
}

// ---- 5. time-to-train CDF with the deadline --------------------------------------------------------------------

std::string chart_time_to_train_cdf(const ReportInput& in) {
  Svg svg("time-to-train-cdf", kWidth, 330, "Time to train: cumulative probability over Monte Carlo trials");
  constexpr double kTop = 20, kBottom = 260;
  const Scale y{0, 1, kBottom, kTop};
  const auto cdf = in.run.time_to_train_hist.cdf();
  if (cdf.empty()) {
    svg.y_axis(y, kLeft, kRight, nice_ticks(0, 1, 4), "P(done by)", "");
    note(svg, (kTop + kBottom) / 2,
         in.run.work == "steps" ? "no trial recorded a time to train"
                                : "a fixed window was simulated: no time to train");
    return svg.str();
  }
  // The x range covers the distribution (from just below its first value to where it stops rising), padded; the
  // deadline is drawn where it falls inside, else named at the edge it lies beyond.
  std::size_t first = 0, last = cdf.size() - 1;
  while (first + 1 < cdf.size() && cdf[first + 1].second <= 0)
    ++first;
  const double top_frac = cdf.back().second;
  while (last > first && cdf[last - 1].second >= top_frac)
    --last;
  double lo = cdf[first].first, hi = cdf[last].first;
  const double pad = std::max((hi - lo) * 0.15, hi * 1e-4);
  lo = std::max(0.0, lo - pad);
  hi = hi + pad;
  const auto deadline = in.deadline_days;
  // Pull the deadline into view when that does not squash the distribution below a third of the width.
  if (deadline && *deadline > hi && (*deadline - lo) < 3 * (hi - lo)) hi = *deadline + pad;
  if (deadline && *deadline < lo && (hi - *deadline) < 3 * (hi - lo)) lo = std::max(0.0, *deadline - pad);
  const Scale x{lo, hi, kLeft, kRight};
  svg.y_axis(y, kLeft, kRight, nice_ticks(0, 1, 4), "P(done within x)", "");
  if (deadline && *deadline >= lo && *deadline <= hi)
    svg.rect(x(*deadline), kTop, kRight - x(*deadline), kBottom - kTop, "#fbe9e7", "after the deadline");
  std::vector<std::pair<double, double>> pts;
  pts.emplace_back(kLeft, y(0));
  for (std::size_t i = first; i <= last; ++i) {
    const bool flat_inside =
        i > first && i < last && cdf[i].second == cdf[i - 1].second && cdf[i].second == cdf[i + 1].second;
    if (!flat_inside && cdf[i].first >= lo && cdf[i].first <= hi) pts.emplace_back(x(cdf[i].first), y(cdf[i].second));
  }
  pts.emplace_back(kRight, y(top_frac));
  svg.polyline(pts, "#4e79a7", 2.5);
  const auto& t = in.run.time_to_train_days;
  for (const auto& [q, label] : {std::pair{t.p50, std::string("p50")}, std::pair{t.p90, std::string("p90")}}) {
    if (!std::isfinite(q) || q < lo || q > hi) continue;
    const double qx = x(q);
    svg.line(qx, kTop, qx, kBottom, "#4e79a7", 1, "2 3");
    // p50 to the left of its line and p90 to the right, so that close quantiles do not overprint.
    const bool left = label == "p50";
    svg.text(qx + (left ? -4 : 4), kTop + 26, label + " " + days(q), left ? A::End : A::Start, 11, "#4e79a7", true);
  }
  if (deadline) {
    if (*deadline >= lo && *deadline <= hi) {
      const double dx = x(*deadline);
      svg.line(dx, kTop - 4, dx, kBottom, "#c0392b", 2, "6 3");
      svg.text(dx - 4, kTop + 10, "deadline " + days(*deadline), A::End, 12, "#c0392b", true);
    } else {
      const bool right = *deadline > hi;
      svg.text(right ? kRight - 4 : kLeft + 4, kTop + 10,
               std::string(right ? "deadline " + days(*deadline) + " \u2192 (off the chart)"
                                 : "\u2190 deadline " + days(*deadline) + " (off the chart)"),
               right ? A::End : A::Start, 12, "#c0392b", true);
    }
  }
  if (top_frac < 1)
    svg.text(kRight - 4, y(top_frac) + 16, percent(1 - top_frac) + " of trials not done by the horizon", A::End, 11,
             "#c0392b");
  svg.x_axis(x, kBottom, nice_ticks(lo, hi, 8), "days to train (wall clock, failures included)", "");
  return svg.str();
}

// ---- 6. cost waterfall -----------------------------------------------------------------------------------------

std::string chart_cost_waterfall(const ReportInput& in) {
  auto items = waterfall(in);
  // At most eight bars: the largest failure causes, then the rest of the failures together.
  constexpr std::size_t kMaxFailureBars = 6;
  std::vector<std::pair<std::string, double>> bars;
  double other_failures = 0;
  std::size_t failure_bars = 0;
  for (const auto& it : items) {
    const bool failure = it.first.rfind("failure", 0) == 0;
    if (failure && failure_bars >= kMaxFailureBars) {
      other_failures += it.second;
      continue;
    }
    if (failure) ++failure_bars;
    bars.push_back(it);
  }
  if (other_failures != 0) bars.emplace_back("failure: other causes", other_failures);
  constexpr double kTop = 16, kRow = 26;
  const double h = kTop + static_cast<double>(bars.size() + 1) * kRow + 50;
  Svg svg("cost-waterfall", kWidth, static_cast<int>(h), "Cost waterfall: what the mean cost of the run is made of");
  double total = 0;
  for (const auto& b : bars)
    total += b.second;
  if (bars.empty() || !std::isfinite(total) || total <= 0) {
    note(svg, kTop + 24, "no cost computed (no price given)");
    return svg.str();
  }
  const double right = kRight - 90;  // room for value labels
  const Scale x{0, total * 1.02, kLeft + 40, right};
  double at = 0;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& [label, v] = bars[i];
    const double y = kTop + static_cast<double>(i) * kRow;
    const bool failure = label.rfind("failure", 0) == 0;
    const char* colour = label == "compute"       ? "#4e79a7"
                         : label == "checkpoints" ? "#76b7b2"
                         : label == "energy"      ? "#edc948"
                         : label == "storage"     ? "#9c755f"
                         : failure                ? "#e15759"
                                                  : "#bab0ac";
    const double x0 = x(at), x1 = x(at + v);
    svg.rect(std::min(x0, x1), y + 3, std::max(std::fabs(x1 - x0), 1.0), kRow - 8, colour,
             label + ": " + usd(v) + " (" + percent(v / total) + " of the mean cost)");
    if (i > 0) svg.line(x0, y - 5, x0, y + 3, "#999", 1);
    svg.text(kLeft + 30, y + 17,
             failure ? label.substr(label.find(':') == std::string::npos ? 0 : label.find(':') + 2) : label, A::End, 12,
             "#222", !failure);
    svg.text(std::max(x0, x1) + 6, y + 17, usd(v) + "  " + percent(v / total), A::Start, 11, kMuted);
    at += v;
  }
  const double ty = kTop + static_cast<double>(bars.size()) * kRow;
  svg.rect(x(0), ty + 3, x(total) - x(0), kRow - 8, "#2f3e4e", "mean cost " + usd(total));
  svg.text(kLeft + 30, ty + 17, "mean cost", A::End, 12, "#222", true);
  svg.text(x(total) + 6, ty + 17, usd(total), A::Start, 12, "#222", true);
  svg.x_axis(x, ty + kRow, nice_ticks(0, total * 1.02, 8), "US dollars (mean over trials)", "");
  return svg.str();
}

// ---- 7. sensitivity tornado ------------------------------------------------------------------------------------

std::string chart_sensitivity_tornado(const ReportInput& in) {
  const auto& rows = in.sensitivity;
  constexpr double kTop = 30, kRow = 34;
  const double h = kTop + std::max<double>(1, static_cast<double>(rows.size())) * kRow + 80;
  Svg svg("sensitivity-tornado", kWidth, static_cast<int>(h),
          "Sensitivity tornado: p50 cost with one input at a time moved down and up");
  const double base =
      !rows.empty() && std::isfinite(rows.front().base_cost_usd) ? rows.front().base_cost_usd : in.cost.p50_usd;
  if (rows.empty() || !std::isfinite(base)) {
    note(svg, kTop + 20, "sensitivity was not computed for this run");
    return svg.str();
  }
  // Widest swing first.
  std::vector<SensitivityBar> sorted = rows;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return std::fabs(a.high_cost_usd - a.low_cost_usd) > std::fabs(b.high_cost_usd - b.low_cost_usd);
  });
  double lo = base, hi = base;
  for (const auto& r : sorted) {
    for (double v : {r.low_cost_usd, r.high_cost_usd})
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  }
  const double span = std::max(hi - lo, std::fabs(base) * 0.01);
  const Scale x{lo - span * 0.08, hi + span * 0.08, kLeft + 40, kRight - 20};
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const auto& r = sorted[i];
    const double y = kTop + static_cast<double>(i) * kRow;
    svg.text(kLeft + 30, y + 20, r.parameter, A::End, 12, "#222", true);
    const std::string days_text = "p50 time " + days(r.low_days) + " / " + days(r.high_days);
    // Both ends within a pixel of the baseline: one label instead of two on top of each other.
    const bool flat = std::fabs(x(r.low_cost_usd) - x(base)) < 2 && std::fabs(x(r.high_cost_usd) - x(base)) < 2;
    if (flat) svg.text(x(base) + 6, y + 21, "no visible change (" + days_text + ")", A::Start, 10, kMuted);
    for (const auto& [v, colour, side] :
         {std::tuple{r.low_cost_usd, "#4e79a7", "low"}, std::tuple{r.high_cost_usd, "#f28e2b", "high"}}) {
      if (!std::isfinite(v)) continue;
      const double x0 = x(base), x1 = x(v);
      svg.rect(std::min(x0, x1), y + 6, std::max(std::fabs(x1 - x0), 1.0), kRow - 12, colour,
               r.parameter + ", " + side + ": p50 cost " + usd(v) + " (" + (v >= base ? "+" : "") +
                   percent((v - base) / base) + "), " + days_text);
      if (!flat) svg.text(x1 + (v >= base ? 5 : -5), y + 21, usd(v), v >= base ? A::Start : A::End, 10, kMuted);
    }
  }
  const double bottom = kTop + static_cast<double>(sorted.size()) * kRow;
  svg.line(x(base), kTop - 8, x(base), bottom, "#222", 1.5);
  svg.text(x(base), kTop - 12, "p50 cost " + usd(base), A::Middle, 11, "#222", true);
  svg.x_axis(x, bottom + 2, nice_ticks(x.d0, x.d1, 8), "p50 cost of the run, US dollars", "");
  svg.legend(kLeft + 40, bottom + 58, {{"input at its low value", "#4e79a7"}, {"input at its high value", "#f28e2b"}});
  return svg.str();
}

}  // namespace reports::detail
