// reports/trace.hpp: a step's timeline as Chrome/Perfetto trace-event JSON (one process per GPU, one track per stream).
#pragma once
#include "sim/results/step_result.hpp"

#include <string>

namespace reports {

/// Trace Event Format ("X" complete events in microseconds, process and thread name metadata), as specified in
/// Google's "Trace Event Format" document and accepted by ui.perfetto.dev and chrome://tracing.
std::string chrome_trace(const sim::results::StepResult& step, const std::string& title);

}  // namespace reports
