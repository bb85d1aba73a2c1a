// reports/report.hpp: the cost/risk report of a run: what it is made from, the recommended action, and its three
// renderings (self-contained HTML with inline SVG charts, GitHub-flavoured Markdown, CSV).
#pragma once
#include "sim/cost/cost.hpp"
#include "sim/results/run_result.hpp"
#include "sim/results/step_result.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reports {

/// A hash of one input, for provenance: what was hashed, the algorithm and the digest in lowercase hex.
struct InputHash {
  std::string what;  // "scenario file <path>", "effective configuration"
  std::string algorithm;
  std::string hex;
};

/// One bar of the sensitivity tornado: p50 cost and p50 time to train with one parameter at its low and high value
/// (the fields of cost::SensitivityRow; the caller copies them).
struct SensitivityBar {
  std::string parameter;  // "failure rates -20% / +20%"
  double low_cost_usd = 0, high_cost_usd = 0;
  double low_days = 0, high_days = 0;
  /// The unmoved run the bars start from (the cost model reruns it at its own trial count); NaN: the report's p50s.
  double base_cost_usd = std::numeric_limits<double>::quiet_NaN();
  double base_days = std::numeric_limits<double>::quiet_NaN();
};

/// Everything a report shows. Built by the command line (sim/cli/report_input.cpp) from a scenario and its results;
/// every string in it is treated as untrusted and escaped by the renderers.
struct ReportInput {
  std::string scenario_name;
  std::string scenario_source;  // the file, or "<built-in>/scenarios/default.json"
  std::string description;
  std::string trainsim_version;
  std::vector<InputHash> hashes;
  std::uint64_t seed = 0;
  std::string effective_config_json;  // the resolved scenario (trainsim.resolved-scenario/1), pretty-printed
  /// Short labelled facts for the header, in order: ("model", "llama3-70b, 70.6B params"), ("cluster", ...), ...
  std::vector<std::pair<std::string, std::string>> facts;
  int gpus = 0;

  /// The step at replica fidelity with its timeline recorded (StepOptions::record_timeline): one row per pipeline
  /// rank's GPU (several virtual stages each when the schedule has them). Memory is the worst pipeline stage's, with
  /// the GPU's capacity.
  sim::results::StepResult step;
  sim::results::RunSummary run;
  sim::cost::CostSummary cost;
  std::vector<SensitivityBar> sensitivity;  // empty: the tornado says it was not computed
  double sensitivity_delta = 0.2;           // each tornado input moved down and up by this fraction
  std::optional<double> deadline_days;
  std::optional<double> budget_usd;
  /// The hardware has no price and the scenario gives none: every compute cost is 0 (unpriced_reason says why).
  bool unpriced = false;
  std::string unpriced_reason;
  /// Assumptions that move the answer and that the reader may not share, one sentence each (e.g. MoE routing taken
  /// as balanced); shown under the recommended action.
  std::vector<std::string> notes;
  /// Modelling sources cited in the provenance section.
  std::vector<std::string> sources;
};

/// The recommended action and the rule that chose it.
struct Recommendation {
  std::string rule;    // short id of the rule that fired ("deadline-risk", ...)
  std::string action;  // one sentence
};

/// The recommended action, by the first rule that holds, in this order (thresholds are judgement, stated here so
/// that a reader can disagree with them):
///   never-finishes   some trials never finish                        -> spares or shrinking when the run waits for
///                    repairs over half its wall time; else shorten restarts, checkpoint, add spares
///   waiting          waiting for repairs > 50% of wall time          -> add spares or allow elastic shrinking
///   deadline-risk    P(miss deadline) > 10%                          -> fix the layout, add GPUs or relax the deadline
///   budget-risk      P(exceed budget) > 10%                          -> lower the price or raise the budget
///   checkpoint-cost  checkpoint time or lost work > 5% of wall time  -> at an optimum interval (Young's, Daly's, or
///                    a given one within 1% of Daly's wall time): cheaper checkpoints (async, bandwidth);
///                    otherwise checkpoint time > 5%: checkpoint less often / asynchronously
///   lost-work        lost work > 5% of wall time, interval not optimal -> checkpoint more often
///   failures         goodput p50 < 90%                               -> the lever with the largest share of the wall
///                    time: cheaper checkpoints, faster detection and restart, or more spares; and the costliest
///                    cause
///   pipeline-bubble  pipeline bubble + exposed PP > 15% of the step  -> more micro-batches or interleaving
///   exposed-comm     exposed TP/DP/CP/EP communication > 25%         -> change the parallel layout
///   memory-headroom  memory > 95% of capacity                        -> more recomputation or sharding
///   unpriced         no price for the hardware and none given        -> give a price before deciding on cost
///   proceed          otherwise                                       -> the plan holds; proceed
Recommendation recommend(const ReportInput& in);

/// FNV-1a, 64-bit: offset basis 14695981039346656037, prime 1099511628211 (Fowler, Noll, Vo; IETF
/// draft-eastlake-fnv-21, "The FNV Non-Cryptographic Hash Algorithm"). Identifies inputs; not a security hash.
std::uint64_t fnv1a64(std::string_view bytes);
std::string hex64(std::uint64_t v);  // 16 lowercase hex digits

/// One self-contained HTML page: inline CSS, seven inline SVG charts (ids: step-breakdown, pipeline-timeline,
/// memory, failure-timeline, time-to-train-cdf, cost-waterfall, sensitivity-tornado; each also its data-chart),
/// a Content-Security-Policy of default-src 'none' (no scripts, no external loads), a print stylesheet.
std::string render_html(const ReportInput& in);
/// GitHub-flavoured Markdown for a pull-request comment: bottom line, step breakdown, top failure causes, risk,
/// recommendation.
std::string render_markdown(const ReportInput& in);
/// One header row and one value row (RFC 4180: CRLF line ends, fields with , " CR or LF quoted, quotes doubled).
/// Columns are fixed (csv_columns()); units are in the column names; an unknown or undefined value is empty,
/// an unbounded one "inf". Text fields starting with = + - @ get a leading ' (OWASP CSV injection advice).
std::string render_csv(const ReportInput& in);
std::vector<std::string> csv_columns();

/// The ids of the seven charts, in page order.
const std::vector<std::string>& chart_ids();

/// Escapes for the other formats (HTML escaping is reports::html_escape in svg.hpp).
std::string markdown_escape(std::string_view s);  // \ ` * _ [ ] | # < > & @ and newlines, for cells and text
std::string csv_field(std::string_view s);        // RFC 4180 quoting when needed

}  // namespace reports
