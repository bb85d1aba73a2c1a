// sim/base/units.hpp: strong unit types; quantities never travel as bare doubles.
#pragma once
#include "sim/base/assert.hpp"

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace sim::base {

/// Simulated time in integer nanoseconds (2^63 ns is about 292 years: enough for month-long runs).
struct Time {
  std::int64_t ns = 0;

  static constexpr Time zero() { return Time{0}; }
  static constexpr Time max() { return Time{std::numeric_limits<std::int64_t>::max()}; }
  /// Rounds to the nearest nanosecond (parsing and configuration; see transfer_time for durations).
  static Time from_seconds(double s) {
    SIM_ASSERT(std::isfinite(s) && std::fabs(s) < 9.2e9, "time out of the representable range");
    return Time{static_cast<std::int64_t>(std::llround(s * 1e9))};
  }
  constexpr double seconds() const { return static_cast<double>(ns) * 1e-9; }
  constexpr double hours() const { return seconds() / 3600.0; }
  constexpr double days() const { return seconds() / 86400.0; }

  auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time{ns + o.ns}; }
  constexpr Time operator-(Time o) const { return Time{ns - o.ns}; }
  constexpr Time& operator+=(Time o) {
    ns += o.ns;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ns -= o.ns;
    return *this;
  }
  constexpr Time operator*(std::int64_t k) const { return Time{ns * k}; }
};

/// A statistical duration (an MTBF, a mean repair time) in seconds as a double. Unlike Time it is not a point on the
/// simulated clock and may exceed 292 years: a per-GPU MTBF for a rare fault is thousands of years.
struct Duration {
  double s = 0;
  auto operator<=>(const Duration&) const = default;
  constexpr double hours() const { return s / 3600.0; }
  constexpr double days() const { return s / 86400.0; }
};

/// A byte count (64-bit: 8 EiB).
struct Bytes {
  std::int64_t n = 0;
  auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes{n + o.n}; }
  constexpr Bytes operator-(Bytes o) const { return Bytes{n - o.n}; }
  constexpr Bytes& operator+=(Bytes o) {
    n += o.n;
    return *this;
  }
  constexpr Bytes operator*(std::int64_t k) const { return Bytes{n * k}; }
  constexpr double gib() const { return static_cast<double>(n) / (1024.0 * 1024.0 * 1024.0); }
  constexpr double gb() const { return static_cast<double>(n) * 1e-9; }
};

/// Data rate in bytes per second.
struct Bandwidth {
  double bytes_per_s = 0;
  auto operator<=>(const Bandwidth&) const = default;
  constexpr double gbytes_per_s() const { return bytes_per_s * 1e-9; }
  constexpr double gbits_per_s() const { return bytes_per_s * 8e-9; }
};

/// A floating-point operation count (double: frontier runs exceed 2^63 FLOPs).
struct Flops {
  double n = 0;
  auto operator<=>(const Flops&) const = default;
  constexpr Flops operator+(Flops o) const { return Flops{n + o.n}; }
  constexpr Flops& operator+=(Flops o) {
    n += o.n;
    return *this;
  }
};

/// Compute throughput in floating-point operations per second.
struct FlopRate {
  double flops_per_s = 0;
  auto operator<=>(const FlopRate&) const = default;
  constexpr double tflops() const { return flops_per_s * 1e-12; }
};

/// Money in US dollars.
struct Money {
  double usd = 0;
  auto operator<=>(const Money&) const = default;
  constexpr Money operator+(Money o) const { return Money{usd + o.usd}; }
  constexpr Money& operator+=(Money o) {
    usd += o.usd;
    return *this;
  }
};

/// Electrical power in watts.
struct Power {
  double watts = 0;
  auto operator<=>(const Power&) const = default;
};

/// A dimensionless large count (tokens, parameters), written with SI suffixes: "15T", "70.6B".
struct Count {
  double n = 0;
  auto operator<=>(const Count&) const = default;
};

/// Durations round up: a transfer never completes early, and nothing non-empty takes 0 ns.
inline Time transfer_time(Bytes b, Bandwidth bw) {
  SIM_ASSERT(bw.bytes_per_s > 0, "transfer over a zero-bandwidth link");
  if (b.n <= 0) return Time::zero();
  return Time{static_cast<std::int64_t>(std::ceil(static_cast<double>(b.n) * 1e9 / bw.bytes_per_s))};
}

/// Time to execute `f` FLOPs at rate `r`, rounded up to whole nanoseconds.
inline Time compute_time(Flops f, FlopRate r) {
  SIM_ASSERT(r.flops_per_s > 0, "compute on a zero-throughput device");
  if (f.n <= 0) return Time::zero();
  return Time{static_cast<std::int64_t>(std::ceil(f.n * 1e9 / r.flops_per_s))};
}

namespace literals {
constexpr Time operator""_ns(unsigned long long v) {
  return Time{static_cast<std::int64_t>(v)};
}
constexpr Time operator""_us(unsigned long long v) {
  return Time{static_cast<std::int64_t>(v) * 1000};
}
constexpr Time operator""_ms(unsigned long long v) {
  return Time{static_cast<std::int64_t>(v) * 1000000};
}
constexpr Time operator""_s(unsigned long long v) {
  return Time{static_cast<std::int64_t>(v) * 1000000000};
}
constexpr Time operator""_min(unsigned long long v) {
  return Time{static_cast<std::int64_t>(v) * 60000000000};
}
constexpr Time operator""_h(unsigned long long v) {
  return Time{static_cast<std::int64_t>(v) * 3600000000000};
}
constexpr Time operator""_d(unsigned long long v) {
  return Time{static_cast<std::int64_t>(v) * 86400000000000};
}
constexpr Bytes operator""_B(unsigned long long v) {
  return Bytes{static_cast<std::int64_t>(v)};
}
constexpr Bytes operator""_KiB(unsigned long long v) {
  return Bytes{static_cast<std::int64_t>(v) << 10};
}
constexpr Bytes operator""_MiB(unsigned long long v) {
  return Bytes{static_cast<std::int64_t>(v) << 20};
}
constexpr Bytes operator""_GiB(unsigned long long v) {
  return Bytes{static_cast<std::int64_t>(v) << 30};
}
constexpr Bytes operator""_GB(unsigned long long v) {
  return Bytes{static_cast<std::int64_t>(v) * 1000000000};
}
constexpr Bandwidth operator""_GBps(unsigned long long v) {
  return Bandwidth{static_cast<double>(v) * 1e9};
}
constexpr Bandwidth operator""_Gbps(unsigned long long v) {
  return Bandwidth{static_cast<double>(v) * 1e9 / 8};
}
constexpr FlopRate operator""_TFLOPs(unsigned long long v) {
  return FlopRate{static_cast<double>(v) * 1e12};
}
}  // namespace literals

}  // namespace sim::base
