// sim/base/quantity.cpp: unit tables and the one number-plus-unit scanner every quantity parser shares.
#include "sim/base/quantity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>

namespace sim::base {
namespace {

struct UnitFactor {
  std::string_view unit;
  double factor;  // multiply the written number by this to get the base unit
};

// Base units: ns, bytes, bytes/s, FLOP/s, FLOP, W, USD.
constexpr std::array kTimeUnits{
    UnitFactor{"ns", 1.0},
    UnitFactor{"us", 1e3},
    UnitFactor{"\xC2\xB5s", 1e3},
    UnitFactor{"ms", 1e6},
    UnitFactor{"s", 1e9},
    UnitFactor{"sec", 1e9},
    UnitFactor{"min", 60e9},
    UnitFactor{"h", 3600e9},
    UnitFactor{"hr", 3600e9},
    UnitFactor{"d", 86400e9},
    UnitFactor{"day", 86400e9},
    UnitFactor{"days", 86400e9},
    UnitFactor{"w", 7 * 86400e9},
    UnitFactor{"week", 7 * 86400e9},
    UnitFactor{"weeks", 7 * 86400e9},
};
constexpr double kKi = 1024.0;
constexpr std::array kByteUnits{
    UnitFactor{"B", 1.0},
    UnitFactor{"KB", 1e3},
    UnitFactor{"MB", 1e6},
    UnitFactor{"GB", 1e9},
    UnitFactor{"TB", 1e12},
    UnitFactor{"PB", 1e15},
    UnitFactor{"KiB", kKi},
    UnitFactor{"MiB", kKi* kKi},
    UnitFactor{"GiB", kKi* kKi* kKi},
    UnitFactor{"TiB", kKi* kKi* kKi* kKi},
    UnitFactor{"PiB", kKi* kKi* kKi* kKi* kKi},
};
constexpr std::array kBandwidthUnits{
    UnitFactor{"B/s", 1.0},
    UnitFactor{"KB/s", 1e3},
    UnitFactor{"MB/s", 1e6},
    UnitFactor{"GB/s", 1e9},
    UnitFactor{"TB/s", 1e12},
    UnitFactor{"KiB/s", kKi},
    UnitFactor{"MiB/s", kKi* kKi},
    UnitFactor{"GiB/s", kKi* kKi* kKi},
    UnitFactor{"TiB/s", kKi* kKi* kKi* kKi},
    UnitFactor{"bit/s", 0.125},
    UnitFactor{"Kbit/s", 125.0},
    UnitFactor{"Mbit/s", 125e3},
    UnitFactor{"Gbit/s", 125e6},
    UnitFactor{"Tbit/s", 125e9},
    UnitFactor{"Gb/s", 125e6},
    UnitFactor{"Tb/s", 125e9},
    UnitFactor{"Mb/s", 125e3},
    UnitFactor{"Gbps", 125e6},
    UnitFactor{"Mbps", 125e3},
    UnitFactor{"Tbps", 125e9},
};
constexpr std::array kFlopRateUnits{
    UnitFactor{"FLOP/s", 1.0},   UnitFactor{"GFLOP/s", 1e9},  UnitFactor{"TFLOP/s", 1e12},
    UnitFactor{"PFLOP/s", 1e15}, UnitFactor{"EFLOP/s", 1e18},
};
constexpr std::array kFlopUnits{
    UnitFactor{"FLOP", 1.0},   UnitFactor{"GFLOP", 1e9},  UnitFactor{"TFLOP", 1e12},
    UnitFactor{"PFLOP", 1e15}, UnitFactor{"EFLOP", 1e18}, UnitFactor{"ZFLOP", 1e21},
};
constexpr std::array kPowerUnits{UnitFactor{"W", 1.0}, UnitFactor{"kW", 1e3}, UnitFactor{"MW", 1e6}};
constexpr std::array kMoneyUnits{UnitFactor{"USD", 1.0}};
// SI multipliers written straight after the number of a count or an amount of money: "15T", "25M USD".
constexpr std::array kCountSuffixes{
    UnitFactor{"K", 1e3}, UnitFactor{"k", 1e3},  UnitFactor{"M", 1e6},  UnitFactor{"B", 1e9},
    UnitFactor{"G", 1e9}, UnitFactor{"T", 1e12}, UnitFactor{"P", 1e15},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string list_units(std::span<const UnitFactor> units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.unit;
  }
  return out;
}

const UnitFactor* find_unit(std::span<const UnitFactor> units, std::string_view name) {
  for (const auto& u : units)
    if (u.unit == name) return &u;
  return nullptr;
}

/// The number at the start of `text` and the rest after it; errors name the text and the expected form.
struct Scanned {
  double number = 0;
  std::string_view rest;
  std::string error;
};

Scanned scan_number(std::string_view text, std::string_view example) {
  Scanned out;
  std::string_view s = trim(text);
  if (s.empty()) {
    out.error = "empty value; write a number with a unit, e.g. \"" + std::string(example) + "\"";
    return out;
  }
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, out.number, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    out.error = quoted(text) + " is out of range";
    return out;
  }
  if (ec != std::errc() || ptr == first) {
    out.error = quoted(text) + " does not start with a number; write e.g. \"" + std::string(example) + "\"";
    return out;
  }
  if (!std::isfinite(out.number)) {
    out.error = quoted(text) + " is not a finite number";
    return out;
  }
  if (out.number < 0) {
    out.error = quoted(text) + " is negative; a quantity here must be zero or more";
    return out;
  }
  out.rest = trim(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
  return out;
}

/// Number then a mandatory unit from `units`; the result is in the base unit.
Parsed<double> parse_with_units(std::string_view text, std::span<const UnitFactor> units, std::string_view what,
                                std::string_view example) {
  Parsed<double> out;
  Scanned sc = scan_number(text, example);
  if (!sc.error.empty()) {
    out.error = sc.error;
    return out;
  }
  if (sc.rest.empty()) {
    out.error = quoted(text) + " has no unit; a " + std::string(what) + " needs one, e.g. \"" + std::string(example) +
                "\" (accepted: " + list_units(units) + ")";
    return out;
  }
  const UnitFactor* u = find_unit(units, sc.rest);
  if (u == nullptr) {
    out.error = quoted(text) + ": unknown " + std::string(what) + " unit " + quoted(sc.rest) +
                " (accepted: " + list_units(units) + ")";
    return out;
  }
  if (!std::isfinite(sc.number * u->factor)) {
    out.error = quoted(text) + " is out of range";
    return out;
  }
  out.value = sc.number * u->factor;
  return out;
}

/// Number, optional SI multiplier glued or spaced ("15T", "25 M"), then an optional or required unit.
Parsed<double> parse_scaled(std::string_view text, std::span<const UnitFactor> units, bool unit_required,
                            std::string_view what, std::string_view example) {
  Parsed<double> out;
  Scanned sc = scan_number(text, example);
  if (!sc.error.empty()) {
    out.error = sc.error;
    return out;
  }
  double value = sc.number;
  std::string_view rest = sc.rest;
  if (!rest.empty()) {
    // A multiplier is one letter followed by the end or a space.
    const UnitFactor* m = find_unit(kCountSuffixes, rest.substr(0, 1));
    if (m != nullptr && (rest.size() == 1 || rest[1] == ' ')) {
      value *= m->factor;
      rest = trim(rest.substr(1));
    }
  }
  if (!std::isfinite(value)) {
    out.error = quoted(text) + " is out of range";
    return out;
  }
  if (rest.empty()) {
    if (unit_required) {
      out.error = quoted(text) + " has no unit; write e.g. \"" + std::string(example) + "\"";
      return out;
    }
    out.value = value;
    return out;
  }
  const UnitFactor* u = find_unit(units, rest);
  if (u == nullptr) {
    out.error = quoted(text) + ": unknown " + std::string(what) + " suffix " + quoted(rest) +
                " (accepted: " + (units.empty() ? std::string("K, M, B, T, P after the number") : list_units(units)) +
                ")";
    return out;
  }
  if (!std::isfinite(value * u->factor)) {
    out.error = quoted(text) + " is out of range";
    return out;
  }
  out.value = value * u->factor;
  return out;
}

template <class T, class F>
Parsed<T> convert(Parsed<double> p, F make) {
  Parsed<T> out;
  out.error = std::move(p.error);
  if (p.value) out.value = make(*p.value);
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  if (std::fabs(v) >= 1e15 && std::isfinite(v)) {  // not 301 digits (cut at 63) for 1e300: an exponent
    std::snprintf(buf, sizeof buf, "%.3e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  }
  return buf;
}

/// Three significant digits, enough for tables.
std::string sig3(double v) {
  const double a = std::fabs(v);
  if (a >= 100 || a == 0) return fixed(v, 0);
  if (a >= 10) return fixed(v, 1);
  return fixed(v, 2);
}

}  // namespace

Parsed<Time> parse_time(std::string_view text) {
  auto p = parse_with_units(text, kTimeUnits, "time", "10 min");
  Parsed<Time> out;
  out.error = p.error;
  if (!p.value) return out;
  if (*p.value >= 9.2e18) {
    out.error = quoted(text) + " is out of range (the longest time is about 292 years)";
    return out;
  }
  out.value = Time{static_cast<std::int64_t>(std::llround(*p.value))};
  return out;
}

Parsed<Duration> parse_duration(std::string_view text) {
  return convert<Duration>(parse_with_units(text, kTimeUnits, "time", "153.8 d"),
                           [](double v) { return Duration{v * 1e-9}; });
}

Parsed<Bytes> parse_bytes(std::string_view text) {
  auto p = parse_with_units(text, kByteUnits, "size", "80 GiB");
  Parsed<Bytes> out;
  out.error = p.error;
  if (!p.value) return out;
  if (*p.value >= 9.2e18) {
    out.error = quoted(text) + " is out of range (the largest size is 8 EiB)";
    return out;
  }
  out.value = Bytes{static_cast<std::int64_t>(std::llround(*p.value))};
  return out;
}

Parsed<Bandwidth> parse_bandwidth(std::string_view text) {
  return convert<Bandwidth>(parse_with_units(text, kBandwidthUnits, "bandwidth", "400 Gbit/s"),
                            [](double v) { return Bandwidth{v}; });
}

Parsed<FlopRate> parse_flop_rate(std::string_view text) {
  return convert<FlopRate>(parse_with_units(text, kFlopRateUnits, "FLOP rate", "989 TFLOP/s"),
                           [](double v) { return FlopRate{v}; });
}

Parsed<Flops> parse_flops(std::string_view text) {
  return convert<Flops>(parse_with_units(text, kFlopUnits, "FLOP count", "64 GFLOP"),
                        [](double v) { return Flops{v}; });
}

Parsed<Power> parse_power(std::string_view text) {
  return convert<Power>(parse_with_units(text, kPowerUnits, "power", "700 W"), [](double v) { return Power{v}; });
}

Parsed<Money> parse_money(std::string_view text) {
  return convert<Money>(parse_scaled(text, kMoneyUnits, true, "currency", "2.50 USD"),
                        [](double v) { return Money{v}; });
}

Parsed<Count> parse_count(std::string_view text) {
  return convert<Count>(parse_scaled(text, {}, false, "count", "15T"), [](double v) { return Count{v}; });
}

Parsed<double> parse_fraction(std::string_view text) {
  Parsed<double> out;
  Scanned sc = scan_number(text, "5%");
  if (!sc.error.empty()) {
    out.error = sc.error;
    return out;
  }
  if (sc.rest.empty()) {
    out.value = sc.number;
    return out;
  }
  if (sc.rest == "%") {
    out.value = sc.number / 100.0;
    return out;
  }
  out.error = quoted(text) + ": expected a fraction (0.05) or a percentage (5%)";
  return out;
}

std::string format_time(Time t) {
  const double s = t.seconds();
  if (s < 1e-6) return std::to_string(t.ns) + " ns";
  if (s < 1e-3) return sig3(s * 1e6) + " us";
  if (s < 1) return sig3(s * 1e3) + " ms";
  if (s < 120) return sig3(s) + " s";
  if (s < 7200) return sig3(s / 60) + " min";
  if (s < 2 * 86400) return sig3(s / 3600) + " h";
  return sig3(s / 86400) + " d";
}

std::string format_bytes(Bytes b) {
  const double v = static_cast<double>(b.n);
  if (v < kKi) return std::to_string(b.n) + " B";
  if (v < kKi * kKi) return sig3(v / kKi) + " KiB";
  if (v < kKi * kKi * kKi) return sig3(v / (kKi * kKi)) + " MiB";
  if (v < kKi * kKi * kKi * kKi) return fixed(v / (kKi * kKi * kKi), 1) + " GiB";
  return sig3(v / (kKi * kKi * kKi * kKi)) + " TiB";
}

std::string format_bandwidth(Bandwidth b) {
  return sig3(b.bytes_per_s * 1e-9) + " GB/s";
}

std::string format_flop_rate(FlopRate r) {
  if (r.flops_per_s >= 1e15) return sig3(r.flops_per_s * 1e-15) + " PFLOP/s";
  return sig3(r.flops_per_s * 1e-12) + " TFLOP/s";
}

std::string format_count(Count c) {
  const double v = c.n;
  if (v >= 1e12) return sig3(v / 1e12) + "T";
  if (v >= 1e9) return fixed(v / 1e9, 1) + "B";
  if (v >= 1e6) return sig3(v / 1e6) + "M";
  if (v >= 1e3) return sig3(v / 1e3) + "K";
  return sig3(v);
}

std::string format_money(Money m) {
  const double v = m.usd;
  if (v >= 1e6) return fixed(v / 1e6, 2) + "M USD";
  if (v >= 1e4) return fixed(v / 1e3, 1) + "K USD";
  return fixed(v, 2) + " USD";
}

}  // namespace sim::base
