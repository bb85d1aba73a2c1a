// calibrate/fit/nccl_tests_json.cpp: the parser of nccl-tests' -J JSON output (src/util.cu writes it), with the same
// bandwidth checks as the text tables.
#include "calibrate/fit/nccl_tests.hpp"
#include "calibrate/fit/nccl_tests_detail.hpp"

#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"

#include <cmath>
#include <set>
#include <string>

namespace calibrate::fit {
namespace {

using namespace nccl_detail;
using sim::base::ConfigError;
using sim::base::JsonReader;

/// The first element of the top-level "args" array (the program path) from the raw text. nccl-tests writes it with
/// '/' escaped as "\/" (src/util.cu sanitizeJson); JsonReader reads no string arrays, and the document has already
/// been validated as JSON when this runs.
std::string first_arg(std::string_view text) {
  const auto key = text.find("\"args\"");
  if (key == std::string_view::npos) return {};
  const auto open = text.find('[', key);
  const auto quote = text.find('"', open);
  if (open == std::string_view::npos || quote == std::string_view::npos) return {};
  std::string out;
  for (std::size_t i = quote + 1; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    out += text[i];
  }
  return out;
}

/// A number, or nccl-tests' "nan" string / null, from a results entry.
std::optional<double> json_number_or_na(JsonReader& r, std::string_view key) {
  switch (r.kind(key)) {
    case JsonReader::Kind::Integer:
    case JsonReader::Kind::Number: {
      double v = 0;
      if (r.required(key, v)) return v;
      return std::nullopt;
    }
    case JsonReader::Kind::String: {
      std::string s;
      r.required(key, s);
      if (!not_available(s)) r.error(key, "\"" + s + "\" is not a number or \"nan\"");
      return std::nullopt;
    }
    case JsonReader::Kind::Null:
    case JsonReader::Kind::Missing:
      r.accept(key);
      return std::nullopt;
    default:
      r.error(key, "expected a number");
      return std::nullopt;
  }
}

}  // namespace

ImportResult parse_nccl_tests_json(std::string_view text, const std::string& origin, const NcclTestsOptions& options) {
  auto doc = sim::base::JsonDocument::parse_text(text, origin);
  sim::base::Diagnostics diag(origin);
  JsonReader r = doc.root(diag);
  ImportResult out;

  const std::string program = first_arg(text);
  std::optional<CollectiveOp> op = op_of_nccl_tests_program(program);
  if (!program.empty() && !op && program.find("_perf") != std::string::npos) {
    out.notes.push_back(origin + ": skipped " + basename_of(program) + " (not a collective trainsim models)");
    return out;
  }
  if (op && options.op && *op != *options.op)
    throw ConfigError(origin, "/args/0",
                      "the file is " + basename_of(program) + " but --op says " + to_string(*options.op));
  if (!op) op = options.op;
  if (!op) op = op_from_file_name(origin);
  if (!op)
    throw ConfigError(origin, "/args/0",
                      "cannot tell which collective this file measured (args[0] is \"" + program +
                          "\"); pass --op all_reduce|all_gather|reduce_scatter|all_to_all|send_recv|broadcast");

  long nccl_code = 0;
  if (r.has("nccl_version")) {
    int v = 0;
    if (r.required("nccl_version", v)) nccl_code = v;
  }
  std::string date = options.date;
  if (date.empty() && r.has("start_time")) {
    std::string start;
    if (r.required("start_time", start)) date = start.size() == 19 ? start.replace(10, 1, "T") : start;
    if (!date.empty() && !is_iso8601_date(date))
      r.error("start_time", "\"" + start.substr(0, 60) + "\" is not a date (2025-01-12 10:11:12)");
  }
  int ranks = 0;
  std::set<std::string> hosts;
  std::string device;
  if (auto config = r.required_object("config")) {
    int nthreads = 1, ngpus = 1;
    config->optional("nthreads", nthreads, sim::base::Range::at_least(1));
    config->optional("ngpus", ngpus, sim::base::Range::at_least(1));
    const auto devices = config->object_array("devices", true);
    for (auto d : devices) {
      std::string host, info;
      d.optional("hostname", host);
      d.optional("device_info", info);
      hosts.insert(host);
      if (device.empty()) device = info;
      if (!info.empty() && info != device)
        d.error("device_info", "\"" + info + "\" but the first device is \"" + device +
                                   "\": one measurement is of one GPU model; split the run by GPU");
    }
    // One entry per process (src/util.cu writeDeviceReport), each running nthreads x ngpus ranks. Multiplied in
    // 64 bits and bounded before it becomes an int (a fuzzed nthreads x ngpus overflowed int).
    const std::int64_t product = std::int64_t{nthreads} * ngpus * static_cast<std::int64_t>(devices.size());
    if (product > kMaxMeasuredRanks)
      config->error("nthreads", std::to_string(devices.size()) + " devices x nthreads " + std::to_string(nthreads) +
                                    " x ngpus " + std::to_string(ngpus) + " is more than " +
                                    std::to_string(kMaxMeasuredRanks) + " ranks");
    else
      ranks = static_cast<int>(product);
  }
  diag.throw_if_any();
  if (options.ranks && ranks > 0 && *options.ranks != ranks)
    throw ConfigError(
        origin, "/config",
        "the file describes " + std::to_string(ranks) + " ranks but --ranks says " + std::to_string(*options.ranks));
  if (options.ranks) ranks = *options.ranks;
  if (ranks <= 0)
    throw ConfigError(origin, "/config", "no devices listed, so the rank count is unknown; pass --ranks N");

  auto results = r.object_array("results", true);
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& row = results[i];
    std::int64_t size = 0;
    std::string type;
    row.required("size", size, sim::base::Range::at_least(0));
    row.optional("type", type);
    for (const bool in_place : {false, true}) {
      const char* key = in_place ? "in_place" : "out_of_place";
      if (row.kind(key) != JsonReader::Kind::Object) {
        row.accept(key);
        continue;
      }
      auto body = row.required_object(key);
      auto time_us = json_number_or_na(*body, body->has("time") ? "time" : "cpu_time");
      auto alg = json_number_or_na(*body, "alg_bw");
      auto bus = json_number_or_na(*body, "bus_bw");
      auto wrong = json_number_or_na(*body, "nwrong");
      const std::string where = row.path() + "/" + key;
      const char* time_key = body->has("time") ? "time" : "cpu_time";
      if (!time_us && !alg && !bus) {  // "nan" throughout: the group did not run (nccl-tests' -J output)
        out.notes.push_back(origin + ": " + where + ": skipped: no time, algbw or busbw (not run)");
        continue;
      }
      if (!time_us || *time_us <= 0) {
        body->error(time_key, (time_us ? fmt(*time_us) + " us" : std::string("no number")) +
                                  " is not a positive time; every result has one (in microseconds)");
        continue;
      }
      if (*time_us / 1e6 < kMinMeasuredSeconds) {
        body->error(time_key, fmt(*time_us) + " us is shorter than any collective takes (at least 0.001 us)");
        continue;
      }
      if (*time_us / 1e6 > kMaxMeasuredSeconds) {
        body->error(time_key, fmt(*time_us) + " us is longer than any collective takes (at most one hour)");
        continue;
      }
      if (size == 0) {
        out.notes.push_back(origin + ": " + where + ": skipped the result of size 0 (no bandwidth to fit)");
        continue;
      }
      if (wrong && *wrong > 0) {
        out.notes.push_back(origin + ": " + where + ": skipped: nccl-tests found " + fmt(*wrong) + " wrong elements");
        continue;
      }
      Measurement m;
      m.kind = Kind::Collective;
      m.collective = *op;
      m.dtype = dtype_of(type);
      m.bytes = sim::base::Bytes{size};
      m.ranks = ranks;
      m.nodes = static_cast<int>(hosts.size());
      m.scope = options.scope.value_or(hosts.size() > 1 ? Scope::Network : Scope::Nvlink);
      m.in_place = in_place;
      m.time = sim::base::Duration{*time_us / 1e6};
      m.label = "nccl-tests " + (program.empty() ? std::string(to_string(*op)) : basename_of(program));
      m.device = device;
      if (!hosts.empty()) m.host = *hosts.begin();
      m.nccl = nccl_version_string(nccl_code);
      m.date = date;
      m.source = origin + ":" + where;
      const double computed = algbw(m).gbytes_per_s();
      if (alg && std::fabs(*alg - computed) > 0.005 * computed + 0.011)
        body->error("alg_bw", fmt(*alg) + " GB/s disagrees with size/time = " + fmt(computed) + " GB/s");
      const double factor = busbw_factor(m.collective, ranks);
      if (alg && bus && *alg >= 0.1 && std::fabs(*bus - *alg * factor) > 0.01 * *alg * factor + 0.011)
        body->error("bus_bw", "busbw/algbw = " + fmt(*bus / *alg) + " but " + to_string(m.collective) + " over " +
                                  std::to_string(ranks) + " ranks has bus factor " + fmt(factor) +
                                  "; the rank count or op is wrong (see --ranks, --op)");
      out.records.push_back(std::move(m));
    }
  }
  diag.throw_if_any();
  if (out.records.empty()) throw ConfigError(origin, "/results", "no results with a time; nothing to import");
  return out;
}

}  // namespace calibrate::fit
