// tests/fuzz/fuzz_quantity.cpp: libFuzzer target for the quantity parsers ("400 Gbit/s", "15T", "5%"). The first
// byte picks the parser; an accepted value must be finite and not negative, and must format without trouble.
#include "sim/base/quantity.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>
#include <string_view>

namespace {

using namespace sim::base;

template <class T, class Get>
void check(const Parsed<T>& p, Get get, const char* what) {
  fuzz::require(p.value.has_value() != !p.error.empty(), "exactly one of value and error");
  if (!p.value) return;
  const double v = get(*p.value);
  fuzz::require_finite(v, what);
  fuzz::require(v >= 0, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 10) {
    case 0: {
      auto p = parse_time(text);
      check(
          p, [](Time t) { return static_cast<double>(t.ns); }, "time");
      if (p.value) (void)format_time(*p.value);
      break;
    }
    case 1:
      check(
          parse_duration(text), [](Duration d) { return d.s; }, "duration");
      break;
    case 2: {
      auto p = parse_bytes(text);
      check(
          p, [](Bytes b) { return static_cast<double>(b.n); }, "bytes");
      if (p.value) (void)format_bytes(*p.value);
      break;
    }
    case 3: {
      auto p = parse_bandwidth(text);
      check(
          p, [](Bandwidth b) { return b.bytes_per_s; }, "bandwidth");
      if (p.value) (void)format_bandwidth(*p.value);
      break;
    }
    case 4: {
      auto p = parse_flop_rate(text);
      check(
          p, [](FlopRate r) { return r.flops_per_s; }, "FLOP rate");
      if (p.value) (void)format_flop_rate(*p.value);
      break;
    }
    case 5:
      check(
          parse_flops(text), [](Flops f) { return f.n; }, "FLOP count");
      break;
    case 6:
      check(
          parse_power(text), [](Power w) { return w.watts; }, "power");
      break;
    case 7: {
      auto p = parse_money(text);
      check(
          p, [](Money m) { return m.usd; }, "money");
      if (p.value) (void)format_money(*p.value);
      break;
    }
    case 8: {
      auto p = parse_count(text);
      check(
          p, [](Count c) { return c.n; }, "count");
      if (p.value) (void)format_count(*p.value);
      break;
    }
    default:
      check(
          parse_fraction(text), [](double f) { return f; }, "fraction");
      break;
  }
  return 0;
}
