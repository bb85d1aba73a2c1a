// sim/cli/shard_file.hpp: shard files (JSON lines, schema trainsim.shard/1): a header line saying which command
// wrote the shard, for which inputs and which slice of the work, then that command's payload lines; reading a set
// of them back and checking that it is one whole job, each shard once. Knows no command: `trainsim merge`
// dispatches on the header's "command".
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/results/json.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sim::cli {

inline constexpr std::string_view kShardSchema = "trainsim.shard/1";

/// The first line of a shard file.
struct ShardHeader {
  std::string command;  // the subcommand that wrote it ("run"); merge dispatches on it
  int shard_index = 0;  // 0 <= shard_index < shard_count
  int shard_count = 1;
  std::string scenario;           // the scenario path as the command was given it; "" for the built-in default
  std::vector<std::string> sets;  // the --set overrides, in order
  std::string inputs_sha256;      // shard_inputs_sha256: everything the merged result depends on
  std::string trainsim_version;
  int payload_lines = 0;       // lines after the header: a truncated file is refused
  std::string payload_sha256;  // of the payload lines as written (each with its newline): an edited one is refused
  results::Json work;          // the command's own fields (its slice, seed, ...); read back with ShardFile::work
};

/// The SHA-256 of what a command's result depends on: the command, the canonical scenario document with the --set
/// overrides applied (scenario::canonical_text) and `params`, the command's options that change the result (for
/// `run`: trials and seed). Throws ConfigError for an unreadable scenario.
std::string shard_inputs_sha256(const std::string& command, const std::string& scenario_path,
                                const std::vector<std::string>& sets, const results::Json& params);

/// A shard file's bytes: the header (payload_lines filled in) and one line per payload entry, each compact JSON.
std::string shard_text(ShardHeader header, const std::vector<results::Json>& payload);

/// A shard file read back: its header, checked, and its payload lines, not parsed.
struct ShardFile {
  std::string path;
  ShardHeader header;  // `work` stays null: read it with work()
  std::vector<std::string> payload;
  /// A strict reader over the header's "work" object (problems go to `diag`, named "PATH:1").
  base::JsonReader work(base::Diagnostics& diag) const;
  /// Payload line `i` (0-based) parsed; messages name it "PATH:LINE". Throws ConfigError for invalid JSON.
  base::JsonDocument payload_document(std::size_t i) const;

  base::JsonDocument header_document;
};

/// Reads one shard file: header checked strictly, payload lines counted. Throws ConfigError naming the file.
ShardFile read_shard_file(const std::string& path);

/// Reads every file and checks that they are one whole job: the same schema, command, inputs, trainsim version
/// (`version`, this binary's: a merge recomputes parts of the result) and shard count, and every shard index exactly
/// once. Returns them in shard order. Throws one ConfigError listing every problem, each naming its file.
std::vector<ShardFile> read_shard_set(const std::vector<std::string>& paths, const std::string& version);

/// Shard `index` of `count` takes items [first, first + count) of an even split of `total` items.
struct ShardSlice {
  int first = 0;
  int count = 0;
};
ShardSlice shard_slice(int total, int index, int count);
/// Checks --shard-index and --shard-count for `total` items called `items` ("trials"): every shard must get at least
/// one. Throws ConfigError.
void check_shard_options(int index, int count, int total, const std::string& items);

}  // namespace sim::cli
