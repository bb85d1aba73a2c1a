// calibrate/fit/measurement_io.cpp: strict JSON-lines reader (through sim/base's JsonReader).
#include "calibrate/fit/measurement_io.hpp"

#include "sim/base/errors.hpp"
#include "sim/base/input_file.hpp"
#include "sim/base/json_reader.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace calibrate::fit {
namespace {

using sim::base::ConfigError;
using sim::base::Diagnostic;
using sim::base::Diagnostics;
using sim::base::JsonReader;
using sim::base::Range;

constexpr std::size_t kMaxReported = 20;  // problems listed before "... and N more"

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

/// A derived rate written beside the raw numbers must agree with them (to 1%, or 0.01 for two-decimal rounding).
void check_derived(JsonReader& r, std::string_view key, double computed, const char* what) {
  if (!r.has(key)) return;
  double given = 0;
  if (!r.required(key, given, Range::at_least(0))) return;
  if (std::fabs(given - computed) <= 0.01 * computed + 0.01) return;
  r.error(key, fmt(given) + " disagrees with " + what + " = " + fmt(computed) +
                   "; remove the field or fix bytes/seconds (derived fields are checked, not trusted)");
}

Measurement parse_record(JsonReader& r) {
  Measurement m;
  std::string schema;
  if (r.required("schema", schema) && schema != kMeasurementSchema)
    r.error("schema",
            "\"" + schema + "\" is not a measurement schema; expected \"" + std::string(kMeasurementSchema) + "\"");
  std::string kind;
  const bool kind_ok = r.required_enum("kind", kind, {"gemm", "hbm", "collective"});
  if (kind_ok) m.kind = *kind_from_string(kind);
  r.required("seconds", m.time.s, Range::at_least(kMinMeasuredSeconds));
  std::string op;
  if (kind_ok && m.kind == Kind::Gemm) {
    r.required_enum("op", op, {"gemm"});
    r.required_enum("dtype", m.dtype, {"fp32", "tf32", "bf16", "fp16", "fp8", "fp4"});
    r.required("m", m.m, Range::at_least(1));
    r.required("n", m.n, Range::at_least(1));
    r.required("k", m.k, Range::at_least(1));
    r.optional("batch", m.batch, Range::at_least(1));
    if (m.time.s > 0 && m.m > 0 && m.n > 0 && m.k > 0 && m.batch > 0)
      check_derived(r, "tflops", gemm_rate(m).tflops(), "2*m*n*k*batch/seconds in TFLOP/s");
    else
      r.accept("tflops");  // not checkable against fields already refused: no second, misleading error
  } else if (kind_ok && m.kind == Kind::Hbm) {
    if (r.required_enum("op", op, {"copy", "triad", "softmax"})) m.memory = *memory_op_from_string(op);
    r.optional("dtype", m.dtype);
    r.required("bytes", m.bytes.n, Range::at_least(1));
    if (m.time.s > 0 && m.bytes.n > 0)
      check_derived(r, "gbps", algbw(m).gbytes_per_s(), "bytes/seconds in GB/s");
    else
      r.accept("gbps");
  } else if (kind_ok) {
    if (r.required_enum("op", op,
                        {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", "broadcast"}))
      m.collective = *collective_from_string(op);
    r.optional("dtype", m.dtype);
    r.required("bytes", m.bytes.n, Range::at_least(1));
    r.required("ranks", m.ranks, Range::between(1, kMaxMeasuredRanks));
    r.optional("nodes", m.nodes, Range::at_least(1));
    std::string scope;
    if (r.required_enum("scope", scope, {"nvlink", "network"})) m.scope = *scope_from_string(scope);
    bool in_place = false;
    if (r.optional("in_place", in_place)) m.in_place = in_place;
    if (m.time.s > 0 && m.bytes.n > 0 && m.ranks > 0) {
      check_derived(r, "algbw_gbps", algbw(m).gbytes_per_s(), "bytes/seconds in GB/s");
      check_derived(r, "busbw_gbps", busbw(m).gbytes_per_s(),
                    "algbw times the nccl-tests bus factor of this op and rank count");
    } else {
      // A user trial: an out-of-range time was followed by "unknown key algbw_gbps" for a key that is accepted.
      r.accept("algbw_gbps");
      r.accept("busbw_gbps");
    }
  }
  r.optional("samples", m.samples, Range::at_least(1));
  r.optional("label", m.label);
  r.optional("device", m.device);
  r.optional("sm_count", m.sm_count, Range::at_least(1));
  r.optional("sm_clock_mhz", m.sm_clock_mhz, Range::positive());
  r.optional("mem_clock_mhz", m.mem_clock_mhz, Range::positive());
  r.optional("driver", m.driver);
  r.optional("cuda", m.cuda);
  r.optional("nccl", m.nccl);
  r.optional("date", m.date);
  r.optional("host", m.host);
  r.optional("source", m.source);
  r.finish();
  return m;
}

}  // namespace

std::vector<Measurement> parse_measurements(std::string_view text, const std::string& origin) {
  std::vector<Measurement> out;
  std::vector<Diagnostic> problems;
  std::size_t extra = 0;
  auto report = [&](const Diagnostic& d) {
    if (problems.size() < kMaxReported)
      problems.push_back(d);
    else
      ++extra;
  };
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++line_no;
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      if (end == text.size()) break;
      continue;
    }
    const std::string where = origin + ":" + std::to_string(line_no);
    try {
      auto doc = sim::base::JsonDocument::parse_text(line, where);
      Diagnostics diag(where);
      JsonReader r = doc.root(diag);
      Measurement m = parse_record(r);
      if (diag.empty()) out.push_back(std::move(m));
      for (const auto& d : diag.items())
        report(d);
    } catch (const ConfigError& e) {
      for (const auto& d : e.items())
        report(d);
    }
    if (end == text.size()) break;
  }
  if (extra > 0) problems.push_back({origin, "", "... and " + std::to_string(extra) + " more problems"});
  if (!problems.empty()) throw ConfigError(std::move(problems));
  if (out.empty())
    throw ConfigError(origin, "", "no measurements: expected one trainsim.measurement/1 JSON object per line");
  return out;
}

std::vector<Measurement> read_measurements(const std::string& path) {
  return parse_measurements(sim::base::read_input_file(path, "a measurements file (JSON lines)"), path);
}

}  // namespace calibrate::fit
