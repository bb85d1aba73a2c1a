// sim/base/quantity.hpp: parsing and formatting of quantities with units ("400 Gbit/s", "54 d", "15T").
#pragma once
#include "sim/base/units.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace sim::base {

/// The outcome of parsing one quantity: a value, or a message saying what was wrong and what is accepted.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;  // empty when value is set
  explicit operator bool() const { return value.has_value(); }
};

// Each parser accepts "<number> <unit>" (the space is optional); the number may use an exponent ("1e3 s").
// A dimensional value without a unit is an error: "400" is not a bandwidth.
Parsed<Time> parse_time(std::string_view text);            // ns, us, ms, s, min, h, d, w
Parsed<Duration> parse_duration(std::string_view text);    // same units as time, no 292-year limit
Parsed<Bytes> parse_bytes(std::string_view text);          // B, KB, MB, GB, TB, PB, KiB ... PiB
Parsed<Bandwidth> parse_bandwidth(std::string_view text);  // B/s ... TB/s, KiB/s ... and bit/s ... Tbit/s, Gb/s, Gbps
Parsed<FlopRate> parse_flop_rate(std::string_view text);   // FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s
Parsed<Flops> parse_flops(std::string_view text);          // FLOP, GFLOP, TFLOP, PFLOP, EFLOP
Parsed<Power> parse_power(std::string_view text);          // W, kW, MW
Parsed<Money> parse_money(std::string_view text);          // "2.50 USD", "25M USD", "1.2K USD"
Parsed<Count> parse_count(std::string_view text);          // "15T", "70.6B", "512K", "1e9", "1000"
/// A fraction or percentage: "5%" or "0.05".
Parsed<double> parse_fraction(std::string_view text);

// Human-readable formatting with a sensible unit (for tables and messages, never for JSON results).
std::string format_time(Time t);            // "1.25 s", "3.2 h", "54.0 d"
std::string format_bytes(Bytes b);          // "80.0 GiB"
std::string format_bandwidth(Bandwidth b);  // "400 Gbit/s" for network-like values is not guessed: always "50.0 GB/s"
std::string format_flop_rate(FlopRate r);   // "989 TFLOP/s"
std::string format_count(Count c);          // "70.6B"
std::string format_money(Money m);          // "2.50 USD", "25.0M USD"

}  // namespace sim::base
