// sim/engine/event.hpp: the deterministic event order (time, priority, sequence) and the 32-byte queue entry.
#pragma once
#include "sim/base/units.hpp"

#include <compare>
#include <cstdint>

namespace sim::engine {

/// A component's index in its Simulator: assigned at registration, stable for the component's lifetime.
using ComponentId = std::uint32_t;

/// Priority of an event among events at the same time: lower first (e.g. completions before new issues).
inline constexpr std::int32_t kDefaultPriority = 0;

/// Deterministic event order is a type, not a convention: lexicographic by time, priority, insertion sequence.
struct EventKey {
  base::Time at;
  std::int32_t priority = kDefaultPriority;  // lower first at equal time
  std::uint64_t seq = 0;                     // insertion counter: final tie-break, never a pointer value
  auto operator<=>(const EventKey&) const = default;
};

/// One scheduled event as the queue stores it: its key, the target component and a 64-bit argument, in 32 bytes,
/// so scheduling copies a small value and never allocates.
struct Event {
  base::Time at;
  std::int32_t priority = kDefaultPriority;
  ComponentId target = 0;
  std::uint64_t seq = 0;
  std::uint64_t arg = 0;

  EventKey key() const { return EventKey{at, priority, seq}; }
};
static_assert(sizeof(Event) == 32, "queue entries are kept at half a cache line");

/// True when `a` is dispatched before `b`: the EventKey order, written out for the hot path.
inline bool earlier(const Event& a, const Event& b) {
  if (a.at.ns != b.at.ns) return a.at.ns < b.at.ns;
  if (a.priority != b.priority) return a.priority < b.priority;
  return a.seq < b.seq;
}

}  // namespace sim::engine
