// tests/fuzz/fuzz_support.hpp: what the libFuzzer targets share: the input as text, and a check that aborts (a
// crash for libFuzzer) when a loader's result breaks an invariant instead of being rejected with a ConfigError.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A broken invariant in accepted input: print what and abort, so that libFuzzer keeps the input.
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

inline void require_finite(double v, const char* what) {
  require(std::isfinite(v), what);
}

}  // namespace fuzz
