// calibrate/fit/measurement.cpp: names of the measurement enums, derived rates and the JSON-lines writer.
#include "calibrate/fit/measurement.hpp"

#include "sim/base/atomic_file.hpp"
#include "sim/collectives/closed_form.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace calibrate::fit {
namespace {

template <class E, std::size_t N>
std::optional<E> lookup(const std::array<E, N>& all, std::string_view s) {
  for (E e : all)
    if (s == to_string(e)) return e;
  return std::nullopt;
}

sim::collectives::Op sim_op(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return sim::collectives::Op::AllReduce;
    case CollectiveOp::AllGather:
      return sim::collectives::Op::AllGather;
    case CollectiveOp::ReduceScatter:
      return sim::collectives::Op::ReduceScatter;
    case CollectiveOp::AllToAll:
      return sim::collectives::Op::AllToAll;
    case CollectiveOp::SendRecv:
      return sim::collectives::Op::SendRecv;
    case CollectiveOp::Broadcast:
      return sim::collectives::Op::Broadcast;
  }
  return sim::collectives::Op::AllReduce;
}

/// Appends `"key":value` with a separating comma.
class LineWriter {
 public:
  void raw(std::string_view key, std::string_view value) {
    out_ += first_ ? "{" : ",";
    first_ = false;
    out_ += json_string(key);
    out_ += ':';
    out_ += value;
  }
  void str(std::string_view key, std::string_view value) { raw(key, json_string(value)); }
  void str_if(std::string_view key, std::string_view value) {
    if (!value.empty()) str(key, value);
  }
  void num(std::string_view key, double value) { raw(key, json_number(value)); }
  void integer(std::string_view key, std::int64_t value) { raw(key, std::to_string(value)); }
  std::string finish() && { return std::move(out_) + "}"; }

 private:
  std::string out_;
  bool first_ = true;
};

}  // namespace

bool is_iso8601_date(std::string_view t) {
  std::size_t at = 0;
  // `n` digits at `at` as a number in [lo, hi]; advances past them.
  auto number = [&](std::size_t n, int lo, int hi) {
    if (at + n > t.size()) return false;
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      v = v * 10 + (t[i] - '0');
    }
    at += n;
    return v >= lo && v <= hi;
  };
  auto sep = [&](char c) { return at < t.size() && t[at++] == c; };
  if (!number(4, 1900, 2999) || !sep('-') || !number(2, 1, 12) || !sep('-') || !number(2, 1, 31)) return false;
  if (at == t.size()) return true;
  if (!sep('T') || !number(2, 0, 23) || !sep(':') || !number(2, 0, 59)) return false;
  if (at < t.size() && t[at] == ':' && (!sep(':') || !number(2, 0, 60))) return false;  // 60: a leap second
  if (at < t.size() && t[at] == '.') {
    ++at;
    const std::size_t digits = at;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9')
      ++at;
    if (at == digits) return false;
  }
  if (at == t.size()) return true;
  if (t[at] == 'Z') return at + 1 == t.size();
  if (t[at] != '+' && t[at] != '-') return false;
  ++at;
  return number(2, 0, 23) && sep(':') && number(2, 0, 59) && at == t.size();
}

const char* to_string(Kind k) {
  switch (k) {
    case Kind::Gemm:
      return "gemm";
    case Kind::Hbm:
      return "hbm";
    case Kind::Collective:
      return "collective";
  }
  return "?";
}

const char* to_string(Scope s) {
  return s == Scope::Nvlink ? "nvlink" : "network";
}

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return "all_reduce";
    case CollectiveOp::AllGather:
      return "all_gather";
    case CollectiveOp::ReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::AllToAll:
      return "all_to_all";
    case CollectiveOp::SendRecv:
      return "send_recv";
    case CollectiveOp::Broadcast:
      return "broadcast";
  }
  return "?";
}

const char* to_string(MemoryOp op) {
  switch (op) {
    case MemoryOp::Copy:
      return "copy";
    case MemoryOp::Triad:
      return "triad";
    case MemoryOp::Softmax:
      return "softmax";
  }
  return "?";
}

std::optional<Kind> kind_from_string(std::string_view s) {
  return lookup(std::array{Kind::Gemm, Kind::Hbm, Kind::Collective}, s);
}

std::optional<Scope> scope_from_string(std::string_view s) {
  return lookup(std::array{Scope::Nvlink, Scope::Network}, s);
}

std::optional<CollectiveOp> collective_from_string(std::string_view s) {
  return lookup(std::array{CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                           CollectiveOp::AllToAll, CollectiveOp::SendRecv, CollectiveOp::Broadcast},
                s);
}

std::optional<MemoryOp> memory_op_from_string(std::string_view s) {
  return lookup(std::array{MemoryOp::Copy, MemoryOp::Triad, MemoryOp::Softmax}, s);
}

double gemm_flops(const Measurement& m) {
  return 2.0 * static_cast<double>(m.m) * static_cast<double>(m.n) * static_cast<double>(m.k) *
         static_cast<double>(m.batch);
}

sim::base::FlopRate gemm_rate(const Measurement& m) {
  return sim::base::FlopRate{m.time.s > 0 ? gemm_flops(m) / m.time.s : 0.0};
}

sim::base::Bandwidth algbw(const Measurement& m) {
  return sim::base::Bandwidth{m.time.s > 0 ? static_cast<double>(m.bytes.n) / m.time.s : 0.0};
}

double busbw_factor(CollectiveOp op, int p) {
  return sim::collectives::busbw_factor(sim_op(op), p);
}

sim::base::Bandwidth busbw(const Measurement& m) {
  return sim::base::Bandwidth{algbw(m).bytes_per_s * busbw_factor(m.collective, m.ranks)};
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string to_json_line(const Measurement& m) {
  LineWriter w;
  w.str("schema", kMeasurementSchema);
  w.str("kind", to_string(m.kind));
  switch (m.kind) {
    case Kind::Gemm:
      w.str("op", "gemm");
      w.str("dtype", m.dtype);
      w.integer("m", m.m);
      w.integer("n", m.n);
      w.integer("k", m.k);
      w.integer("batch", m.batch);
      w.num("seconds", m.time.s);
      w.num("tflops", gemm_rate(m).tflops());
      break;
    case Kind::Hbm:
      w.str("op", to_string(m.memory));
      w.str_if("dtype", m.dtype);
      w.integer("bytes", m.bytes.n);
      w.num("seconds", m.time.s);
      w.num("gbps", algbw(m).gbytes_per_s());
      break;
    case Kind::Collective:
      w.str("op", to_string(m.collective));
      w.str_if("dtype", m.dtype);
      w.integer("bytes", m.bytes.n);
      w.integer("ranks", m.ranks);
      if (m.nodes > 0) w.integer("nodes", m.nodes);
      w.str("scope", to_string(m.scope));
      if (m.in_place) w.raw("in_place", *m.in_place ? "true" : "false");
      w.num("seconds", m.time.s);
      w.num("algbw_gbps", algbw(m).gbytes_per_s());
      w.num("busbw_gbps", busbw(m).gbytes_per_s());
      break;
  }
  if (m.samples > 0) w.integer("samples", m.samples);
  w.str_if("label", m.label);
  w.str_if("device", m.device);
  if (m.sm_count > 0) w.integer("sm_count", m.sm_count);
  if (m.sm_clock_mhz > 0) w.num("sm_clock_mhz", m.sm_clock_mhz);
  if (m.mem_clock_mhz > 0) w.num("mem_clock_mhz", m.mem_clock_mhz);
  w.str_if("driver", m.driver);
  w.str_if("cuda", m.cuda);
  w.str_if("nccl", m.nccl);
  w.str_if("date", m.date);
  w.str_if("host", m.host);
  w.str_if("source", m.source);
  return std::move(w).finish();
}

std::string to_json_lines(std::span<const Measurement> records) {
  std::string out;
  for (const auto& m : records) {
    out += to_json_line(m);
    out += '\n';
  }
  return out;
}

void write_measurements(const std::string& path, std::span<const Measurement> records) {
  sim::base::write_file_atomic(path, to_json_lines(records));
}

}  // namespace calibrate::fit
