// sim/engine/observer.cpp: the FNV-1a event-trace hash.
#include "sim/engine/observer.hpp"

#include <cstdint>

namespace sim::engine {

void TraceHasher::on_event(const EventKey& key, ComponentId target, std::uint64_t arg) {
  mix(static_cast<std::uint64_t>(key.at.ns), 8);
  mix(static_cast<std::uint32_t>(key.priority), 4);
  mix(key.seq, 8);
  mix(target, 4);
  mix(arg, 8);
  ++events_;
}

void TraceHasher::mix(std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    hash_ ^= (value >> (8 * i)) & 0xffU;
    hash_ *= kPrime;
  }
}

}  // namespace sim::engine
