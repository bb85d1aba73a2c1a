// sim/base/rng.hpp: seeded random streams; one named stream per component, so adding one never shifts the others.
#pragma once
#include <cmath>
#include <cstdint>
#include <string_view>

namespace sim::base {

/// SplitMix64 step (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// FNV-1a over a name: a stable 64-bit id for a stream name (not a cryptographic hash).
constexpr std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// xoshiro256** (Blackman and Vigna, 2018). Distributions are implemented here by inverse transform, not with
/// <random>'s distributions, whose algorithms differ between standard libraries: the same seed gives the same
/// numbers on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& w : s_)
      w = splitmix64(sm);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in (0, 1]: safe to take the logarithm of.
  double uniform_open0() { return 1.0 - uniform(); }
  /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-64 * n, negligible here).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using U128 = unsigned __int128;  // GCC/Clang extension; silences -Wpedantic
    return static_cast<std::uint64_t>((static_cast<U128>(next()) * n) >> 64);
  }
  /// Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log(uniform_open0()); }
  /// Weibull with shape k and scale lambda: lambda * (-ln U)^(1/k).
  double weibull(double shape, double scale) { return scale * std::pow(-std::log(uniform_open0()), 1.0 / shape); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

/// The root of all randomness of one simulation: a seed, from which named (and indexed) streams derive.
class RngStreams {
 public:
  explicit RngStreams(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  /// The stream of one component ("failures.gpu") and index (trial number, GPU id, ...).
  Rng stream(std::string_view name, std::uint64_t index = 0) const {
    std::uint64_t state = seed_ ^ fnv1a64(name);
    std::uint64_t a = splitmix64(state);
    state = a ^ (index * 0xd1b54a32d192ed03ULL);
    return Rng(splitmix64(state));
  }

 private:
  std::uint64_t seed_;
};

}  // namespace sim::base
