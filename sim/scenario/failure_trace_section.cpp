// sim/scenario/failure_trace_section.cpp: a failures object's "trace" (see the header).
#include "sim/scenario/failure_trace_section.hpp"

#include "sim/scenario/scenario.hpp"

#include "sim/base/quantity.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sim::scenario::detail {

std::optional<reliability::FailureTrace> parse_failure_trace(
    base::JsonReader& failures, const std::vector<hardware::FailureComponentSpec>& components, std::string source) {
  if (!failures.has("trace")) return std::nullopt;
  auto t = failures.required_object("trace");
  if (!t) return std::nullopt;
  reliability::FailureTrace trace;
  trace.source = std::move(source);
  base::Duration span;
  const bool span_ok = t->required("span", span);
  trace.span_s = span.s;
  std::vector<std::string> names;
  std::string listed;
  for (const auto& c : components) {
    names.push_back(c.name);
    listed += (listed.empty() ? "" : ", ") + c.name;
  }
  auto events = t->object_array("events", true);
  if (events.size() > reliability::kMaxTraceEvents) {
    t->error("events", std::to_string(events.size()) + " events; a trace lists at most " +
                           std::to_string(reliability::kMaxTraceEvents));
    events.clear();
  }
  bool ok = span_ok;
  trace.events.reserve(events.size());
  for (auto& e : events) {
    reliability::TraceEvent ev;
    base::Duration at;
    if (!e.required("at", at, base::Sign::NonNegative)) ok = false;
    ev.at_s = at.s;
    if (span_ok && !(at.s < span.s)) {
      e.error("at", "lies at or beyond the trace's span (" + base::format_time(base::Time::from_seconds(span.s)) +
                        "); every event lies in [0, span), and the trace repeats after its span");
      ok = false;
    }
    if (e.required("component", ev.component) && std::find(names.begin(), names.end(), ev.component) == names.end()) {
      const std::string hint = base::did_you_mean(ev.component, names);
      e.error("component", "\"" + ev.component + "\" is not a failure component of this scenario" +
                               (hint.empty() ? std::string() : " (did you mean \"" + hint + "\"?)") +
                               "; its components: " + listed);
      ok = false;
    }
    e.finish();
    trace.events.push_back(std::move(ev));
  }
  t->finish();
  if (!ok) return std::nullopt;  // the errors are recorded; the scenario is refused
  std::stable_sort(trace.events.begin(), trace.events.end(),
                   [](const reliability::TraceEvent& a, const reliability::TraceEvent& b) { return a.at_s < b.at_s; });
  return trace;
}

}  // namespace sim::scenario::detail

namespace sim::scenario {

std::string failures_line(const ReliabilityConfig& r) {
  std::string out = std::to_string(r.components.size()) + " component classes (" + r.failures + ")";
  if (r.trace)
    out += "; failures replayed from " + r.trace->source + ": " + std::to_string(r.trace->events.size()) + " over " +
           base::format_time(base::Time::from_seconds(r.trace->span_s)) + ", repeated after it";
  return out;
}

}  // namespace sim::scenario
