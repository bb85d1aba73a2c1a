// sim/cli/shard_file.cpp: writing shard files, reading them back strictly, and checking a set is one whole job.
#include "sim/cli/shard_file.hpp"

#include "sim/base/assert.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/input_file.hpp"
#include "sim/base/sha256.hpp"
#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace sim::cli {

using base::ConfigError;
using base::Diagnostic;
using results::Json;

namespace {

/// The file's lines without their line ends; a final line end adds no empty line.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    at = end + 1;
  }
  return lines;
}

constexpr std::int64_t kMaxShardBytes = std::int64_t{256} << 20;  // a shard is its histograms: a few MiB

std::string read_text(const std::string& path) {
  return base::read_input_file(path, "a shard file (trainsim.shard/1)", kMaxShardBytes);
}

std::string in_quotes(const std::string& s) {
  return "\"" + s + "\"";
}

}  // namespace

std::string shard_inputs_sha256(const std::string& command, const std::string& scenario_path,
                                const std::vector<std::string>& sets, const results::Json& params) {
  std::vector<scenario::Override> overrides;
  for (const auto& s : sets)
    overrides.push_back(scenario::Override::parse(s));
  return base::sha256_hex("trainsim.shard-inputs/1\n" + command + "\n" + params.dump(-1) + "\n" +
                          scenario::canonical_text(scenario_path, overrides));
}

std::string shard_text(ShardHeader h, const std::vector<results::Json>& payload) {
  Json j = Json::object();
  j["schema"] = std::string(kShardSchema);
  j["command"] = h.command;
  j["shard_index"] = h.shard_index;
  j["shard_count"] = h.shard_count;
  j["scenario"] = h.scenario;
  Json sets = Json::array();
  for (const auto& s : h.sets)
    sets.push_back(s);
  j["sets"] = std::move(sets);
  j["inputs_sha256"] = h.inputs_sha256;
  j["trainsim_version"] = h.trainsim_version;
  j["payload_lines"] = static_cast<int>(payload.size());
  std::string lines;
  for (const auto& p : payload)
    lines += p.dump(-1) + "\n";
  j["payload_sha256"] = base::sha256_hex(lines);
  j["work"] = h.work.is_null() ? Json::object() : h.work;
  return j.dump(-1) + "\n" + lines;
}

base::JsonReader ShardFile::work(base::Diagnostics& diag) const {
  auto root = header_document.root(diag);
  auto w = root.required_object("work");
  SIM_ASSERT(w.has_value(), "read_shard_file checks that the header has a \"work\" object");
  return *w;
}

base::JsonDocument ShardFile::payload_document(std::size_t i) const {
  SIM_ASSERT(i < payload.size(), "a payload line past the end of a shard");
  return base::JsonDocument::parse_text(payload[i], path + ":" + std::to_string(i + 2));
}

ShardFile read_shard_file(const std::string& path) {
  auto lines = lines_of(read_text(path));
  if (lines.empty() || lines.front().empty())
    throw ConfigError(path, "", "is empty; expected a shard file (JSON lines, schema \"trainsim.shard/1\")");
  const std::string where = path + ":1";
  const auto header_document = [&] {
    try {
      return base::JsonDocument::parse_text(lines.front(), where);
    } catch (const ConfigError& e) {
      auto items = e.items();
      items.push_back({path, "",
                       "is not a shard file: its first line must be a JSON header (JSON lines, schema \"" +
                           std::string(kShardSchema) + "\")"});
      throw ConfigError(std::move(items));
    }
  };
  ShardFile f{path, {}, {}, header_document()};
  base::Diagnostics diag(where);
  auto r = f.header_document.root(diag);
  std::string schema;
  if (r.kind("schema") == base::JsonReader::Kind::String) r.required("schema", schema);
  if (schema != kShardSchema)
    throw ConfigError(where, "/schema",
                      (schema.empty() ? std::string("missing") : in_quotes(schema)) + "; expected \"" +
                          std::string(kShardSchema) + "\" (a file written by trainsim run --shard-index I)");
  ShardHeader& h = f.header;
  r.required("command", h.command);
  r.required("shard_index", h.shard_index, base::Range::at_least(0));
  r.required("shard_count", h.shard_count, base::Range::at_least(1));
  r.required("scenario", h.scenario);
  r.optional("sets", h.sets);
  r.required("inputs_sha256", h.inputs_sha256);
  r.required("trainsim_version", h.trainsim_version);
  r.required("payload_lines", h.payload_lines, base::Range::at_least(0));
  r.required("payload_sha256", h.payload_sha256);
  (void)r.required_object("work");  // the command's merger reads it (ShardFile::work)
  r.finish();
  if (diag.empty() && h.shard_index >= h.shard_count)
    r.error("shard_index", std::to_string(h.shard_index) + " is not below shard_count " +
                               std::to_string(h.shard_count) + "; shards are numbered from 0");
  diag.throw_if_any();
  f.payload.assign(std::make_move_iterator(lines.begin() + 1), std::make_move_iterator(lines.end()));
  if (static_cast<int>(f.payload.size()) != h.payload_lines)
    throw ConfigError(path, "",
                      std::to_string(f.payload.size()) + " lines follow the header, which announces " +
                          std::to_string(h.payload_lines) + ": a truncated or concatenated shard file");
  for (std::size_t i = 0; i < f.payload.size(); ++i)
    if (f.payload[i].empty())
      throw ConfigError(path + ":" + std::to_string(i + 2), "", "is empty; expected the command's JSON payload");
  // Every payload byte as written: a merge cannot recompute a plan's candidates, and an edited step time had been
  // ranked first with exit 0 (found by a user trial).
  std::string written;
  for (const auto& line : f.payload)
    written += line + "\n";
  if (base::sha256_hex(written) != h.payload_sha256)
    throw ConfigError(path + ":2", "",
                      "the payload's SHA-256 is not the header's payload_sha256: a damaged or edited shard; run the "
                      "shard again");
  return f;
}

std::vector<ShardFile> read_shard_set(const std::vector<std::string>& paths, const std::string& version) {
  if (paths.empty()) throw ConfigError("merge", "", "no shard files given; e.g. trainsim merge shard-*.jsonl");
  std::vector<ShardFile> files;
  std::vector<Diagnostic> problems;
  for (const auto& p : paths) {
    try {
      files.push_back(read_shard_file(p));
    } catch (const ConfigError& e) {
      problems.insert(problems.end(), e.items().begin(), e.items().end());
    }
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));

  const ShardFile& first = files.front();
  const ShardHeader& ref = first.header;
  const auto differs = [&](const ShardFile& f, const char* key, const std::string& found, const std::string& expected,
                           const std::string& why) {
    problems.push_back(
        {f.path + ":1", std::string("/") + key, found + " where " + first.path + " has " + expected + ": " + why});
  };
  for (const ShardFile& f : files) {
    const ShardHeader& h = f.header;
    if (h.trainsim_version != version)
      problems.push_back({f.path + ":1", "/trainsim_version",
                          in_quotes(h.trainsim_version) + ", but this is trainsim " + version +
                              ": merge with the trainsim that wrote the shards (a merge recomputes the step)"});
    if (&f == &first) continue;
    if (h.command != ref.command)
      differs(f, "command", in_quotes(h.command), in_quotes(ref.command), "shards of different commands");
    if (h.shard_count != ref.shard_count)
      differs(f, "shard_count", std::to_string(h.shard_count), std::to_string(ref.shard_count),
              "shards of different splits of the work");
    if (h.inputs_sha256 != ref.inputs_sha256) {
      std::string why = "shards of different inputs";
      if (h.scenario != ref.scenario) {
        why += " (scenario " + in_quotes(h.scenario) + " against " + in_quotes(ref.scenario) + ")";
      } else if (h.sets != ref.sets) {
        why += " (other --set overrides)";
      } else {
        why += " (other options such as --trials or --seed, or the scenario file changed between shards)";
      }
      differs(f, "inputs_sha256", h.inputs_sha256.substr(0, 12) + "...", ref.inputs_sha256.substr(0, 12) + "...", why);
    }
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));

  // Each index exactly once.
  std::map<int, const ShardFile*> by_index;
  for (const ShardFile& f : files) {
    auto [it, inserted] = by_index.emplace(f.header.shard_index, &f);
    if (!inserted)
      problems.push_back({f.path + ":1", "/shard_index",
                          "shard " + std::to_string(f.header.shard_index) + " of " + std::to_string(ref.shard_count) +
                              (it->second->path == f.path ? " given twice" : " again (also " + it->second->path + ")") +
                              "; give each shard once"});
  }
  std::string missing;
  int n_missing = 0;
  for (int i = 0; i < ref.shard_count; ++i) {
    if (by_index.count(i) != 0) continue;
    if (n_missing < 20) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    ++n_missing;
  }
  if (n_missing > 0) {
    std::string given;
    for (const auto& [index, f] : by_index)
      given += (given.empty() ? "" : ", ") + f->path + " (" + std::to_string(index) + ")";
    problems.push_back(
        {"merge", "",
         (n_missing == 1 ? "shard " + missing + " of " + std::to_string(ref.shard_count) + " is missing"
                         : "shards " + missing + (n_missing > 20 ? ", ..." : "") + " of " +
                               std::to_string(ref.shard_count) + " are missing (" + std::to_string(n_missing) + ")") +
             "; given: " + given});
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
  std::sort(files.begin(), files.end(),
            [](const ShardFile& a, const ShardFile& b) { return a.header.shard_index < b.header.shard_index; });
  return files;
}

ShardSlice shard_slice(int total, int index, int count) {
  SIM_ASSERT(count >= 1 && index >= 0 && index < count, "shard_slice of an unchecked shard");
  const auto begin = static_cast<std::int64_t>(total) * index / count;
  const auto end = static_cast<std::int64_t>(total) * (index + 1) / count;
  return {static_cast<int>(begin), static_cast<int>(end - begin)};
}

void check_shard_options(int index, int count, int total, const std::string& items) {
  if (count < 1)
    throw ConfigError("--shard-count", "", std::to_string(count) + " is not a number of shards; expected 1 or more");
  if (index < 0 || index >= count)
    throw ConfigError("--shard-index", "",
                      std::to_string(index) + " is outside 0 to " + std::to_string(count - 1) +
                          " (shards are numbered from 0 up to --shard-count " + std::to_string(count) + " - 1)");
  if (count > total)
    throw ConfigError("--shard-count", "",
                      std::to_string(count) + " shards for " + std::to_string(total) + " " + items +
                          ": every shard needs at least one; use at most " + std::to_string(total) + " shards");
}

}  // namespace sim::cli
