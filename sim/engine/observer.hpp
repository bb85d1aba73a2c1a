// sim/engine/observer.hpp: hooks that see every dispatched event, and a trace hash for determinism tests.
#pragma once
#include "sim/engine/event.hpp"

#include <cstdint>

namespace sim::engine {

/// Sees every event just before it is dispatched (the clock already shows key.at). Attach with
/// Simulator::add_observer. An observer watches: it must not schedule events (that would make the trace depend on
/// who watches). With none attached the run loop pays one predictable branch per event.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_event(const EventKey& key, ComponentId target, std::uint64_t arg) = 0;
};

/// FNV-1a (64-bit) over the little-endian bytes of (time, priority, sequence, target id, argument) of every event:
/// two runs with equal hashes dispatched the same events in the same order.
class TraceHasher final : public Observer {
 public:
  void on_event(const EventKey& key, ComponentId target, std::uint64_t arg) override;

  std::uint64_t hash() const { return hash_; }
  std::uint64_t events() const { return events_; }

 private:
  void mix(std::uint64_t value, int bytes);

  static constexpr std::uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
  static constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t hash_ = kOffsetBasis;
  std::uint64_t events_ = 0;
};

}  // namespace sim::engine
