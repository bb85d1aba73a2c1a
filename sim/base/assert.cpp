// sim/base/assert.cpp: turns a broken invariant into an InternalError naming where it broke.
#include "sim/base/assert.hpp"

namespace sim::base {

void assertion_failed(const char* expr, const char* why, const char* file, int line) {
  throw InternalError(std::string("internal error (a trainsim bug): ") + why + " [" + expr + "] at " + file + ":" +
                      std::to_string(line));
}

}  // namespace sim::base
