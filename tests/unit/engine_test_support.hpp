// tests/unit/engine_test_support.hpp: a seeded random stream and a recording component for the engine's tests.
#pragma once
#include "sim/engine/component.hpp"
#include "sim/base/units.hpp"

#include <cstdint>
#include <utility>
#include <vector>

// The namespace of the engine's tests (engine_*test.cpp, each in an anonymous namespace inside it): they see these
// helpers and the names below unqualified.
namespace sim::engine::tests {

using base::Time;
using namespace base::literals;  // NOLINT(google-build-using-namespace): unit literals only

// splitmix64 (Steele, Lea, Flood 2014): a tiny deterministic stream, local to the engine's tests on purpose.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

// A component that records (time, arg) of every event it receives.
class Recorder final : public Component {
 public:
  using Component::Component;
  void handle(std::uint64_t arg) override { seen.emplace_back(now(), arg); }
  std::vector<std::pair<Time, std::uint64_t>> seen;
};

}  // namespace sim::engine::tests
