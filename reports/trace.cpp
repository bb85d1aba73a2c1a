// reports/trace.cpp: Trace Event Format writer.
#include "reports/trace.hpp"

#include "sim/results/json.hpp"

#include <charconv>
#include <set>

namespace reports {
namespace {

using sim::results::json_quote;

const char* stream_name(int s) {
  switch (s) {
    case 0:
      return "compute";
    case 1:
      return "TP comm";
    case 2:
      return "PP comm";
    case 3:
      return "DP comm";
    case 4:
      return "CP comm";
    case 5:
      return "EP comm";
  }
  return "other";
}

/// Microseconds with nanosecond precision, without exponent notation.
std::string micros(std::int64_t ns) {
  std::string out = std::to_string(ns / 1000);
  const auto frac = ns % 1000;
  if (frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

}  // namespace

std::string chrome_trace(const sim::results::StepResult& step, const std::string& title) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"title\":" + json_quote(title) +
                    ",\"fidelity\":" + json_quote(step.fidelity) + "},\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& event) {
    if (!first) out += ",\n";
    first = false;
    out += event;
  };
  std::set<std::pair<int, int>> tracks;
  for (const auto& s : step.timeline)
    tracks.insert({s.gpu, s.stream});
  std::set<int> gpus;
  for (const auto& [gpu, stream] : tracks) {
    if (gpus.insert(gpu).second) {
      emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(gpu) + ",\"args\":{\"name\":\"GPU " +
           std::to_string(gpu) + "\"}}");
      emit("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(gpu) +
           ",\"args\":{\"sort_index\":" + std::to_string(gpu) + "}}");
    }
    emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(gpu) +
         ",\"tid\":" + std::to_string(stream) + ",\"args\":{\"name\":\"" + stream_name(stream) + "\"}}");
  }
  for (const auto& s : step.timeline) {
    emit("{\"ph\":\"X\",\"name\":" + json_quote(s.name) + ",\"cat\":\"" + stream_name(s.stream) +
         "\",\"pid\":" + std::to_string(s.gpu) + ",\"tid\":" + std::to_string(s.stream) +
         ",\"ts\":" + micros(s.start.ns) + ",\"dur\":" + micros((s.end - s.start).ns) + "}");
  }
  out += "\n]}\n";
  return out;
}

}  // namespace reports
