// sim/base/assert.hpp: SIM_ASSERT for our own bugs; stays on in release builds, never reachable from user input.
#pragma once
#include <stdexcept>
#include <string>

namespace sim::base {

/// Thrown when an internal invariant breaks: a bug in trainsim, never a user mistake.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void assertion_failed(const char* expr, const char* why, const char* file, int line);

}  // namespace sim::base

#define SIM_ASSERT(cond, why)                                                   \
  do {                                                                          \
    if (!(cond)) ::sim::base::assertion_failed(#cond, why, __FILE__, __LINE__); \
  } while (false)
