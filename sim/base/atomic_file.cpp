// sim/base/atomic_file.cpp: the output writer. Three seams: what a path names (lstat: regular, stream, device,
// refused), the exclusive temporary file and its rename, and the folder swap with its lock.
#include "sim/base/atomic_file.hpp"

#include "sim/base/errors.hpp"
#include "sim/base/input_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sim::base {
namespace {

namespace fs = std::filesystem;

// Process state a signal handler reads (static storage, sig_atomic_t): whether an output was written in full, and the
// folders the live FolderLock created, NUL-separated, innermost first, an empty string last.
volatile std::sig_atomic_t g_committed = 0;
volatile std::sig_atomic_t g_created_ready = 0;
char g_created[8192];

/// The CLI may end the process at Ctrl-C (sim/cli/interrupt.cpp): SIGINT and SIGTERM wait while a temporary file
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

std::string errno_text(int e) {
  return std::strerror(e);
}

/// 16 hex digits from the kernel's random source: a temporary name nobody can plant in advance.
std::string random_suffix() {
  std::array<unsigned char, 8> bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ConfigError("", "", "cannot name a temporary file: getrandom failed: " + errno_text(errno));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

/// Writes all of `content` to `fd`; 0 or the errno of the failing write.
int write_all(int fd, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

/// The stream an output path names: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
std::optional<int> stream_fd(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size() || path.size() > prefix.size() + 6) continue;
    int fd = 0;
    for (char c : std::string_view(path).substr(prefix.size())) {
      if (c < '0' || c > '9') return std::nullopt;
      fd = fd * 10 + (c - '0');
    }
    return fd;
  }
  return std::nullopt;
}

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw ConfigError(path, "",
                    what +
                        "; trainsim writes regular files (replaced whole), character devices such as /dev/null "
                        "and the streams /dev/stdout and /dev/stderr (written in place)");
}

void write_in_place(const std::string& path, int fd, std::string_view content) {
  std::cout.flush();  // what the process already printed comes first
  std::fflush(stdout);
  if (const int e = write_all(fd, content); e != 0) throw ConfigError(path, "", "cannot write: " + errno_text(e));
}

/// Creates `dir/.NAME.tmp-<random>` exclusively (never through a planted link), writes and syncs `content`.
/// Returns the temporary path; removes it and throws on any failure.
fs::path write_temporary(const fs::path& dir, const std::string& name, std::string_view content,
                         const std::string& shown) {
  for (int attempt = 0;; ++attempt) {
    // The name cut to 200 bytes, so that a legal name of up to 255 still leaves room for the suffix (found by a
    // user trial: names of 231-255 characters failed with "File name too long").
    const fs::path tmp = dir / ("." + name.substr(0, 200) + ".tmp-" + random_suffix());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && attempt < 8) continue;
    if (fd < 0) throw ConfigError(shown, "", "cannot write: " + errno_text(errno));
    int e = write_all(fd, content);
    if (e == 0 && ::fsync(fd) != 0 && errno != EINVAL) e = errno;  // a full disk may only show here
    if (::close(fd) != 0 && e == 0) e = errno;
    if (e != 0) {
      ::unlink(tmp.c_str());
      throw ConfigError(shown, "", "cannot write: " + errno_text(e));
    }
    return tmp;
  }
}

/// What an existing output path is; throws for what trainsim must not replace. True: a regular file or nothing.
bool replaceable(const std::string& path, struct stat* st) {
  if (::lstat(path.c_str(), st) != 0) {
    if (errno == ENOENT) return true;
    throw ConfigError(path, "", "cannot write: " + errno_text(errno));
  }
  if (S_ISREG(st->st_mode)) return true;
  if (S_ISCHR(st->st_mode)) return false;
  if (S_ISLNK(st->st_mode)) refuse(path, "is a symbolic link, which trainsim does not write through");
  if (S_ISDIR(st->st_mode)) refuse(path, "is a directory; expected a file name to write");
  if (S_ISFIFO(st->st_mode)) refuse(path, "is a FIFO (named pipe)");
  if (S_ISSOCK(st->st_mode)) refuse(path, "is a socket");
  refuse(path, "is a block device or another special file");
}

/// A relative output path is refused where one of its existing parent folders is a symbolic link: a checkout a pull
/// request controls could point `reports` anywhere, and `--out reports/pr123` would then write there (a user trial).
/// An absolute path is taken as its writer typed it.
void refuse_linked_parents(const std::string& shown, const fs::path& path) {
  if (path.is_absolute()) return;
  fs::path prefix;
  for (auto it = path.begin(); it != path.end(); ++it) {
    if (std::next(it) == path.end()) break;  // the last component is the caller's to check
    prefix /= *it;
    struct stat st {};
    if (::lstat(prefix.c_str(), &st) != 0) return;  // from here on nothing exists: nothing can be linked
    if (S_ISLNK(st.st_mode))
      throw ConfigError(shown, "",
                        "its folder " + prefix.string() +
                            " is a symbolic link, which trainsim does not write through; name the real folder");
  }
}

/// A written file's identity: its inode, status change time and resolved path (an inode freed and reused is another
/// file, even within one tick of a coarse clock; the same file named another way is the same).
std::string output_key(const std::string& path, const struct stat& st) {
  std::error_code ec;
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec) + ":" + fs::weakly_canonical(path, ec).string();
}

/// Each file this command wrote, for was_written.
void note_outputs(const std::vector<std::string>& paths) {
  for (const auto& p : paths)
    if (struct stat st{}; ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) note_written(output_key(p, st));
}

/// A regular file an output would replace that this command read, or wrote as another output: refused (a user trial:
/// `step s.json --trace s.json` replaced the scenario; a tester's: the scenario saved as DIR/result.json under
/// run --out DIR, and check --junit naming the baseline it wrote). `in_folder`: the report folder it is written in.
void refuse_replacing(const std::string& path, const struct stat& st, bool may_replace_input,
                      const std::string& in_folder) {
  if (!S_ISREG(st.st_mode)) return;
  const std::string name_another = in_folder.empty() ? "name another file" : "name another folder";
  if (was_written(output_key(path, st)))
    throw ConfigError(path, "", "was written by this command already, as another of its outputs; " + name_another);
  if (!may_replace_input && was_read(static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)))
    throw ConfigError(
        path, "",
        "is an input of this command (it was read to compute the output)" +
            (in_folder.empty() ? "" : ", and trainsim writes a report file of that name in " + in_folder) + "; " +
            name_another);
}

}  // namespace

bool is_standard_output(const std::string& path) {
  struct stat named {
  }, out{};
  return ::stat(path.c_str(), &named) == 0 && ::fstat(1, &out) == 0 && named.st_dev == out.st_dev &&
         named.st_ino == out.st_ino;
}

void write_file_atomic(const std::string& path, std::string_view content, bool may_replace_input) {
  if (path.empty()) throw ConfigError("(empty file name)", "", "an output path must not be empty");
  if (const auto fd = stream_fd(path)) return write_in_place(path, *fd, content);
  refuse_linked_parents(path, fs::path(path));
  const HoldInterrupts hold;
  struct stat st {};
  if (!replaceable(path, &st)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw ConfigError(path, "", "cannot write: " + errno_text(errno));
    const int e = write_all(fd, content);
    ::close(fd);
    if (e != 0) throw ConfigError(path, "", "cannot write: " + errno_text(e));
    g_committed = 1;
    return;
  }
  refuse_replacing(path, st, may_replace_input, "");
  const fs::path target(path);
  if (target.filename().empty()) refuse(path, "names a folder (it ends in /)");
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const fs::path tmp = write_temporary(dir, target.filename().string(), content, path);
  // A replaced file keeps its permissions (found by a user trial: a 0600 trace became 0644 under the umask).
  if (S_ISREG(st.st_mode)) ::chmod(tmp.c_str(), st.st_mode & 07777);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw ConfigError(path, "", "cannot write: " + errno_text(e));
  }
  g_committed = 1;  // before the signals are released: a Ctrl-C held meanwhile finds the file written
  note_outputs({path});
}

// ---- folders ----------------------------------------------------------------------------------------------------

std::string append_file(const std::string& path, std::string_view content) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return "not a regular file (a link, FIFO, device or folder)";
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) return errno_text(errno);
  const int e = write_all(fd, content);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  return e != 0 ? errno_text(e) : closed != 0 ? errno_text(closed) : "";
}

namespace {

fs::path folder_path(const std::string& dir) {
  fs::path d = fs::path(dir).lexically_normal();
  if (d.filename().empty()) d = d.parent_path();  // "out/" -> "out"
  return d;
}

void check_folder(const std::string& dir, const fs::path& d) {
  fs::path raw(dir);
  if (raw.filename().empty()) raw = raw.parent_path();  // "out/" -> "out"
  const std::string name = raw.filename().string();
  if (dir.empty()) throw ConfigError("(empty folder name)", "", "an output folder must not be empty");
  if (name == "." || name == ".." || name.empty())
    throw ConfigError(dir, "", "names the current or a parent folder; name a folder for the report files");
  refuse_linked_parents(dir, d);
  struct stat st {};
  if (::lstat(d.c_str(), &st) != 0) return;
  if (S_ISLNK(st.st_mode))
    throw ConfigError(dir, "", "is a symbolic link, which trainsim does not write through; name the folder itself");
  if (!S_ISDIR(st.st_mode)) throw ConfigError(dir, "", "exists and is not a folder");
  // The working folder or one above it, however spelt ($PWD, an absolute parent): swapping it would leave the caller
  // in a deleted folder (found by a user trial: --out "$PWD" passed the check on "." and "..").
  std::error_code ec;
  const fs::path here = fs::current_path(ec);
  const fs::path target = fs::canonical(d, ec);
  if (!ec && !here.empty()) {
    const auto mismatch = std::mismatch(target.begin(), target.end(), here.begin(), here.end());
    if (mismatch.first == target.end())
      throw ConfigError(dir, "", "is the working folder or one above it; name a folder for the report files");
  }
}

}  // namespace

FolderLock::FolderLock(const std::string& dir) {
  const fs::path d = folder_path(dir);
  check_folder(dir, d);
  std::error_code ec;
  // The folders this lock creates, the report folder first, so that a failed run can remove them again.
  for (fs::path p = d; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path())
    created_.push_back(p.string());
  fs::create_directories(d, ec);
  if (ec) throw ConfigError(dir, "", "cannot create the report directory: " + ec.message());
  fd_ = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) throw ConfigError(dir, "", "cannot open the folder: " + errno_text(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK)
      throw ConfigError(dir, "",
                        "another trainsim process is writing this folder now; refused, so that the two runs do not "
                        "mix their files (wait for it, or choose another --out)");
    throw ConfigError(dir, "", "cannot lock the folder: " + errno_text(e));
  }
  // For a signal that ends the process without unwinding (a user trial found an early Ctrl-C left the empty folder).
  std::size_t used = 0;
  for (const auto& folder : created_) {
    if (used + folder.size() + 2 > sizeof g_created) break;
    std::memcpy(g_created + used, folder.c_str(), folder.size() + 1);
    used += folder.size() + 1;
  }
  g_created[used] = '\0';
  g_created_ready = 1;
}

FolderLock::~FolderLock() {
  g_created_ready = 0;
  if (fd_ < 0) return;
  // A folder this lock created and nothing was written to (the run failed) is removed again, if the path still names
  // it (found by a user trial: a failed run left an empty --out folder behind). rmdir keeps a folder with files.
  struct stat ours {
  }, now{};
  if (!created_.empty() && ::fstat(fd_, &ours) == 0 && ::lstat(created_.front().c_str(), &now) == 0 &&
      ours.st_dev == now.st_dev && ours.st_ino == now.st_ino)
    for (const auto& folder : created_)
      if (::rmdir(folder.c_str()) != 0) break;
  ::close(fd_);
}

bool outputs_committed() noexcept {
  return g_committed != 0;
}

void remove_created_folders_after_signal() noexcept {
  if (g_created_ready == 0) return;
  for (const char* p = g_created; *p != '\0';) {
    if (::rmdir(p) != 0) return;  // not empty (or not there): it and those above it stay
    while (*p != '\0')
      ++p;
    ++p;
  }
}

std::vector<std::string> write_file_set(const std::string& dir,
                                        const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path d = folder_path(dir);
  check_folder(dir, d);
  const HoldInterrupts hold;
  const fs::path parent = d.parent_path().empty() ? fs::path(".") : d.parent_path();
  // A report file's name taken by a folder or a link of the user's: refused, not moved aside (found by a user
  // trial: out/report.html/ ended up in the hidden .out.new-* folder left behind).
  struct stat old {};
  const bool existed = ::lstat(d.c_str(), &old) == 0;
  for (const auto& [name, content] : files) {
    struct stat f {};
    if (!existed || ::lstat((d / name).c_str(), &f) != 0) continue;
    if (!S_ISREG(f.st_mode))
      throw ConfigError((d / name).string(), "",
                        "exists and is not a regular file; trainsim writes a report file of "
                        "that name: move it away or name another folder");
    refuse_replacing((d / name).string(), f, false, dir);
  }
  const fs::path fresh = parent / ("." + d.filename().string().substr(0, 200) + ".new-" + random_suffix());
  if (::mkdir(fresh.c_str(), 0777) != 0) throw ConfigError(dir, "", "cannot write: " + errno_text(errno));
  // The swapped-in folder and files keep the old ones' permissions (a 0700 folder had become 0755) and, where the
  // process may give them (root writing a user's folder), their owner (found by user trials).
  if (existed) {
    [[maybe_unused]] const int owned = ::chown(fresh.c_str(), old.st_uid, old.st_gid);
    ::chmod(fresh.c_str(), old.st_mode & 07777);
  }
  std::set<std::string> ours;
  const auto discard = [&] {
    std::error_code ec;
    for (const auto& name : ours)
      fs::remove(fresh / name, ec);
    ::rmdir(fresh.c_str());
  };
  std::vector<std::string> written;
  try {
    for (const auto& [name, content] : files) {
      const fs::path tmp = write_temporary(fresh, name, content, (d / name).string());
      ours.insert(tmp.filename().string());
      if (struct stat f{}; existed && ::lstat((d / name).c_str(), &f) == 0) {
        [[maybe_unused]] const int owned = ::chown(tmp.c_str(), f.st_uid, f.st_gid);
        ::chmod(tmp.c_str(), f.st_mode & 07777);
      }
      if (::rename(tmp.c_str(), (fresh / name).c_str()) != 0)
        throw ConfigError((d / name).string(), "", "cannot write: " + errno_text(errno));
      ours.erase(tmp.filename().string());
      ours.insert(name);
      written.push_back((d / name).string());
    }
  } catch (...) {
    discard();
    throw;
  }
  if (!existed) {  // no old folder: the new one takes its name
    if (::rename(fresh.c_str(), d.c_str()) == 0) {
      g_committed = 1;
      note_outputs(written);
      return written;
    }
    const int e = errno;
    discard();
    throw ConfigError(dir, "", "cannot write: " + errno_text(e));
  }
  // The old folder's other entries (a trace, the user's notes) move into the new one, each by one rename.
  std::vector<std::string> moved;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(d, ec)) {
    const std::string name = entry.path().filename().string();
    if (ours.count(name) != 0) continue;
    if (::rename(entry.path().c_str(), (fresh / name).c_str()) == 0) moved.push_back(name);
  }
  if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, d.c_str(), RENAME_EXCHANGE) != 0) {
    const int e = errno;
    for (const auto& name : moved)
      ::rename((fresh / name).c_str(), (d / name).c_str());
    discard();
    throw ConfigError(dir, "", "cannot replace the folder's files as one: " + errno_text(e));
  }
  g_committed = 1;
  // `fresh` now holds the old report files only.
  for (const auto& [name, content] : files)
    fs::remove(fresh / name, ec);
  ::rmdir(fresh.c_str());
  note_outputs(written);
  return written;
}

}  // namespace sim::base
