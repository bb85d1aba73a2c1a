// sim/base/atomic_file.hpp: write a whole file or nothing (temporary file, then rename).
#pragma once
#include <string>
#include <string_view>

namespace sim::base {

/// Writes `content` to `path` through a temporary file in the same directory and a rename, so that an interrupted
/// run never leaves a half-written file that looks complete. Throws ConfigError naming the path on failure.
void write_file_atomic(const std::string& path, std::string_view content);

}  // namespace sim::base
