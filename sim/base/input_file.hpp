// sim/base/input_file.hpp: trainsim's one reader of input files (scenarios, models, profiles, failure models,
// baselines, shards, importers' and trainsim-calibrate's inputs): regular files only, with a size limit, as text.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace sim::base {

/// The limit most inputs share: trainsim's JSON files are a few KiB, logs and shards a few MiB.
inline constexpr std::int64_t kMaxInputBytes = std::int64_t{16} << 20;

/// Reads the whole file at `path`, described as `what` in messages ("a scenario file", "a shard file"). Throws
/// ConfigError naming the path for: no such file, a dangling link or a link loop, a directory, anything that is not a
/// regular file (a FIFO, which would block; a device such as /dev/zero, which never ends; a socket), a file over
/// `max_bytes` (checked before and while reading, so a growing file stops too), a NUL byte (text inputs only) and a
/// UTF-16 or UTF-32 byte-order mark (trainsim reads UTF-8). The open never blocks (O_NONBLOCK).
std::string read_input_file(const std::string& path, std::string_view what, std::int64_t max_bytes = kMaxInputBytes);

/// The regular files read_input_file read since the last forget_inputs() (each command starts with it), by device and
/// inode however they were named: write_file_atomic refuses to replace one of them (found by a user trial:
/// `step s.json --trace s.json` replaced the scenario it had just read).
bool was_read(std::uint64_t device, std::uint64_t inode);
/// The regular files this command wrote (write_file_atomic, write_file_set), each by a key of its identity
/// (atomic_file.cpp: inode, status change time, resolved path): a second output naming one of them is refused, not
/// written over the first (a tester's trial: check --update-baseline --junit naming the baseline file).
void note_written(const std::string& key);
bool was_written(const std::string& key);
/// Forgets the files read and written: each command starts with it.
void forget_inputs();

}  // namespace sim::base
