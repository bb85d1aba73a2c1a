// sim/base/atomic_file.cpp: temporary file plus rename.
#include "sim/base/atomic_file.hpp"

#include "sim/base/errors.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <csignal>

#include <pthread.h>
#include <unistd.h>

namespace sim::base {
namespace {

/// The CLI may end the process at Ctrl-C (sim/cli/interrupt.cpp): SIGINT and SIGTERM wait while the temporary file
/// exists, so that it is always renamed or removed first.
class HoldInterrupts {
 public:
  HoldInterrupts() {
    sigset_t held;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~HoldInterrupts() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  HoldInterrupts(const HoldInterrupts&) = delete;
  HoldInterrupts& operator=(const HoldInterrupts&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  const HoldInterrupts hold;
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
