// sim/base/input_file.cpp: stat, then a non-blocking open, a second check of the opened file, a bounded read and the
// text checks.
#include "sim/base/input_file.hpp"

#include "sim/base/errors.hpp"

#include <cerrno>
#include <mutex>
#include <set>
#include <utility>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sim::base {

namespace {

std::set<std::pair<std::uint64_t, std::uint64_t>>& inputs() {
  static std::set<std::pair<std::uint64_t, std::uint64_t>> read;
  return read;
}
std::set<std::string>& outputs() {
  static std::set<std::string> written;
  return written;
}
std::mutex& inputs_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

bool was_read(std::uint64_t device, std::uint64_t inode) {
  const std::lock_guard<std::mutex> lock(inputs_mutex());
  return inputs().count({device, inode}) != 0;
}

void note_written(const std::string& key) {
  const std::lock_guard<std::mutex> lock(inputs_mutex());
  outputs().insert(key);
}

bool was_written(const std::string& key) {
  const std::lock_guard<std::mutex> lock(inputs_mutex());
  return outputs().count(key) != 0;
}

void forget_inputs() {
  const std::lock_guard<std::mutex> lock(inputs_mutex());
  inputs().clear();
  outputs().clear();
}

namespace {

std::string mib(std::int64_t bytes) {
  if (bytes >= (std::int64_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

/// Why a file that is not a regular one is refused.
std::string not_regular(mode_t mode, std::string_view what) {
  const char* kind = S_ISFIFO(mode)   ? "a FIFO (named pipe), which could block forever"
                     : S_ISCHR(mode)  ? "a character device (such as /dev/zero), which may never end"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "not a regular file";
  return std::string("is ") + kind + "; expected " + std::string(what) + " (trainsim reads regular files only)";
}

}  // namespace

std::string read_input_file(const std::string& path, std::string_view what, std::int64_t max_bytes) {
  if (path.empty()) throw ConfigError("(empty file name)", "", "an input path must not be empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    struct stat link {};
    if (e == ELOOP) throw ConfigError(path, "", "cannot open: a loop of symbolic links");
    if (e == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      throw ConfigError(path, "", "cannot open: a symbolic link to a file that does not exist");
    if (e == ENOENT) throw ConfigError(path, "", "cannot open: no such file");
    throw ConfigError(path, "", std::string("cannot open: ") + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) throw ConfigError(path, "", "is a directory; expected " + std::string(what));
  if (!S_ISREG(st.st_mode)) throw ConfigError(path, "", not_regular(st.st_mode, what));
  const auto too_large = [&](std::int64_t size) {
    return ConfigError(path, "",
                       "is " + (size > max_bytes ? mib(size) + ", larger than " : "larger than ") + mib(max_bytes) +
                           ", the limit for " + std::string(what));
  };
  if (st.st_size > max_bytes) throw too_large(st.st_size);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw ConfigError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  try {
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw ConfigError(path, "", not_regular(st.st_mode, what));
    {
      const std::lock_guard<std::mutex> lock(inputs_mutex());
      inputs().insert({static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
    }
    text.reserve(static_cast<std::size_t>(st.st_size));
    char chunk[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw ConfigError(path, "", std::string("cannot read: ") + std::strerror(errno));
      if (n == 0) break;
      text.append(chunk, static_cast<std::size_t>(n));
      if (static_cast<std::int64_t>(text.size()) > max_bytes) throw too_large(-1);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  const auto starts = [&](std::string_view bom) { return text.compare(0, bom.size(), bom) == 0; };
  if (starts("\xff\xfe") || starts("\xfe\xff"))
    throw ConfigError(path, "", "is UTF-16 (it starts with a byte-order mark); save it as UTF-8");
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw ConfigError(
        path, "",
        "has a NUL byte at offset " + std::to_string(nul) + "; expected " + std::string(what) + " as UTF-8 text");
  return text;
}

}  // namespace sim::base
