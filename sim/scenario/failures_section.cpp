// sim/scenario/failures_section.cpp: a failures object: its components, "replace" and "trace" (see the header).
#include "sim/scenario/failures_section.hpp"

#include "sim/scenario/scenario.hpp"

#include "sim/base/quantity.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sim::scenario::detail {

std::vector<hardware::FailureComponentSpec> effective_components(const hardware::HardwareProfile& hw,
                                                                 const std::vector<hardware::FailureComponentSpec>& own,
                                                                 bool replace) {
  std::vector<hardware::FailureComponentSpec> out;
  if (!replace) out = hw.failures;
  out.insert(out.end(), own.begin(), own.end());
  return out;
}

std::optional<reliability::FailureTrace> read_failures_object(base::JsonReader& f, const hardware::HardwareProfile& hw,
                                                              const std::string& source,
                                                              std::vector<hardware::FailureComponentSpec>& own,
                                                              bool& replace) {
  const bool has_own = f.has("components");
  if (!has_own && !f.has("trace"))
    f.error("expected \"components\" (failure components), a \"trace\" (a failure log to replay) or both");
  for (auto& c : f.object_array("components", false))
    own.push_back(hardware::FailureComponentSpec::parse(c));
  hardware::check_failure_components(f, "components", own);
  replace = has_own;  // a trace alone replays against the hardware profile's components: nothing replaces them
  f.optional("replace", replace);
  if (!replace) {
    // Added to the profile's: a name both use would make two components of one name (a user trial: the error came
    // from the merged list, at a path neither the scenario nor --set has).
    for (std::size_t i = 0; i < own.size(); ++i)
      if (std::any_of(hw.failures.begin(), hw.failures.end(), [&](const auto& c) { return c.name == own[i].name; }))
        f.error("components", "[" + std::to_string(i) + "] \"" + own[i].name +
                                  "\" is already a component of the hardware profile " + hw.name +
                                  "; with \"replace\": false components add to the profile's: give another name");
  }
  return parse_failure_trace(f, effective_components(hw, own, replace), source);
}

std::optional<reliability::FailureTrace> parse_failure_trace(
    base::JsonReader& failures, const std::vector<hardware::FailureComponentSpec>& components, std::string source) {
  auto t = failures.optional_object("trace");  // asked for even when absent: an unknown key's message lists it
  if (!t) return std::nullopt;
  reliability::FailureTrace trace;
  trace.source = std::move(source);
  base::Duration span;
  bool span_ok = t->required("span", span);
  // The integer-nanosecond clock holds 292 years and a run at most 200 (a user trial: a 107,000-day span ended in an
  // internal error when the summary printed it).
  if (span_ok && span.s > reliability::kMaxHorizonS) {
    t->error("span", "is longer than a run can be: at most 200 years (73,050 d)");
    span_ok = false;
  }
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
      e.error("component",
              "\"" + ev.component + "\" is not a failure component of this scenario" +
                  (hint.empty() ? std::string() : " (did you mean \"" + hint + "\"?)") +
                  (listed.empty() ? "; the failure model has no components: give \"components\", or leave out "
                                    "\"replace\" to keep the hardware profile's"
                                  : "; its components: " + listed));
      ok = false;
    }
    e.finish();
    trace.events.push_back(std::move(ev));
  }
  t->finish();
  if (!ok) return std::nullopt;  // the errors are recorded; the scenario is refused
  // In time order; events at the same instant by component name, so that a trace's result depends on its events, not
  // on how the log listed simultaneous ones (a user trial: four failures at one instant counted 3 or 1 interruptions
  // by their order).
  std::stable_sort(trace.events.begin(), trace.events.end(),
                   [](const reliability::TraceEvent& a, const reliability::TraceEvent& b) {
                     return a.at_s != b.at_s ? a.at_s < b.at_s : a.component < b.component;
                   });
  return trace;
}

}  // namespace sim::scenario::detail

namespace sim::scenario {

std::string trace_extent(const reliability::FailureTrace& t) {
  return std::to_string(t.events.size()) + (t.events.size() == 1 ? " failure over " : " failures over ") +
         base::format_time(base::Time::from_seconds(t.span_s));
}

std::string failures_line(const ReliabilityConfig& r) {
  std::string out = std::to_string(r.components.size()) + " component classes (" + r.failures + ")";
  if (r.trace)
    out += "; failures replayed from " + r.trace->source + ": " + std::to_string(r.trace->events.size()) + " over " +
           base::format_time(base::Time::from_seconds(r.trace->span_s)) + ", repeated after it";
  return out;
}

}  // namespace sim::scenario
