// sim/base/atomic_file.cpp: temporary file plus rename.
#include "sim/base/atomic_file.hpp"

#include "sim/base/errors.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace sim::base {

void write_file_atomic(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (fs::is_directory(target)) throw ConfigError(path, "", "is a directory; expected a file name to write");
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ConfigError(path, "", std::string("cannot write: ") + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw ConfigError(path, "", std::string("cannot write: ") + std::strerror(errno));
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw ConfigError(path, "", "cannot write: " + ec.message());
  }
}

}  // namespace sim::base
