// sim/base/atomic_file.hpp: trainsim's one writer of output paths: a whole file or nothing (an unpredictable
// temporary name created exclusively, then a rename), streams and character devices written in place, links and
// special files refused; and a folder of files that changes as one (a new folder swapped in), with one writer.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::base {

/// Writes `content` to `path`, never destroying what the path names:
/// - a regular file (or a new name): through a temporary file `.NAME.tmp-<16 random hex digits>` created with
///   O_EXCL | O_NOFOLLOW in the same folder (a name planted there in advance is never followed), flushed to disk,
///   then renamed over `path`: an interrupted or failed write leaves the old file as it was;
/// - a character device (/dev/null, /dev/full, a terminal) and the streams /dev/stdout, /dev/stderr, /dev/fd/N:
///   written in place, never replaced;
/// - a symbolic link (other than those streams), a directory, a FIFO, a socket or a block device: refused.
/// Every write error (a full disk, /dev/full) throws ConfigError naming the path; nothing is left half-written.
/// A regular file this command read (base::was_read) is refused unless `may_replace_input` (check --update-baseline
/// rewrites the baselines it compared with).
void write_file_atomic(const std::string& path, std::string_view content, bool may_replace_input = false);
/// Whether `path` is where standard output goes (/dev/stdout, /proc/self/fd/1, or the file stdout is redirected to):
/// a command that prints its result there refuses to write another output to it.
bool is_standard_output(const std::string& path);

/// Appends `content` to the regular file `path` (created when missing), for files a caller must append to (GitHub's
/// step summary): a link, FIFO, device or folder there is refused, since it would lead elsewhere, block or swallow
/// the text. Returns "" when all of it was written, or why not.
std::string append_file(const std::string& path, std::string_view content);

/// Holds the right to write the output folder `dir` (created when missing) for as long as it lives: a second
/// trainsim process that asks for the same folder meanwhile is refused with ConfigError, so two runs never mix
/// their files. Take it before the long computation, so that the second run is refused at once. The folders it
/// created that are still empty when it is released (the run failed) are removed.
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
  std::vector<std::string> created_;  // the folders it made, innermost first
};

/// Whether this process has written an output (a file or a file set) in full. Async-signal-safe: the interrupt handler
/// asks it to tell "stopped before writing any result" from "the results are written".
bool outputs_committed() noexcept;

/// Removes the folders the live FolderLock created, as far as they are still empty, for a signal handler that ends the
/// process without unwinding (async-signal-safe: rmdir only).
void remove_created_folders_after_signal() noexcept;

/// Replaces the files `files` (name, content) of folder `dir` as one: they are written into a new hidden folder
/// beside `dir` (`.DIR.new-<random>`), the other entries of the old folder are moved into it, and the two folders are
/// exchanged with one rename (renameat2 RENAME_EXCHANGE), so that a reader, a kill or a full disk sees the old set
/// or the new one, never a mix. The caller holds a FolderLock on `dir`. Returns the paths written, in order.
std::vector<std::string> write_file_set(const std::string& dir,
                                        const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace sim::base
