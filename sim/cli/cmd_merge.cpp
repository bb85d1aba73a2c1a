// sim/cli/cmd_merge.cpp: `trainsim merge SHARD...`: the shard files of one job back into the result one process
// gives, by the merger of the command that wrote them.
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/shard_file.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string_view>

#ifndef TRAINSIM_VERSION
#define TRAINSIM_VERSION "0.0.0-dev"
#endif

namespace sim::cli {

namespace {

/// The commands whose shards merge reads (the header's "command"), one merger each.
struct Merger {
  std::string_view command;
  ShardMerger merge;
};
constexpr Merger kMergers[] = {
    {"run", merge_run_shards},
    {"plan", merge_plan_shards},
};

int merge_command(const MergeArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  if (!o.sets.empty())
    throw base::ConfigError("--set", "",
                            "merge applies the overrides the shards recorded (their \"sets\"); give --set to the "
                            "command that writes the shards");
  const auto shards = read_shard_set(a.shards, TRAINSIM_VERSION);
  const ShardFile& first = shards.front();
  std::string known;
  for (const auto& m : kMergers) {
    if (m.command == first.header.command) return m.merge(shards, a, o, out, err);
    known += (known.empty() ? "" : ", ") + std::string(m.command);
  }
  throw base::ConfigError(
      first.path + ":1", "/command",
      "\"" + first.header.command + "\" is not a command whose shards merge reads; expected " + known);
}

}  // namespace

void write_shard(const std::string& command, const std::string& scenario, const Options& o, int index, int count,
                 const results::Json& params, results::Json work, const std::vector<results::Json>& payload,
                 const std::string& path, std::ostream& out, std::ostream& err) {
  ShardHeader h;
  h.command = command;
  h.shard_index = index;
  h.shard_count = count;
  h.scenario = scenario;
  h.sets = o.sets;
  h.inputs_sha256 = shard_inputs_sha256(command, scenario, o.sets, params);
  h.trainsim_version = TRAINSIM_VERSION;
  h.work = std::move(work);
  const std::string text = shard_text(std::move(h), payload);
  if (path.empty()) {
    out << text;
    return;
  }
  base::write_file_atomic(path, text);
  if (!o.quiet) err << "wrote " << path << " (shard " << index << " of " << count << ")\n";
}

scenario::Scenario load_shards_scenario(const std::vector<ShardFile>& shards, const MergeArgs& a, const Options& o,
                                        const std::string& command, const results::Json& params) {
  const ShardFile& first = shards.front();
  Options so = o;
  so.sets = first.header.sets;
  const std::string path = a.scenario.empty() ? first.header.scenario : a.scenario;
  auto s = [&] {
    try {
      return load_scenario_or_default(path, so);
    } catch (const base::ConfigError& e) {
      auto items = e.items();
      // The hint is for the shards' own scenario path; a --scenario given is the user's file, whose error says it all.
      if (a.scenario.empty())
        items.push_back({"merge", "",
                         "the shards ran scenario \"" + first.header.scenario +
                             "\" (a path relative to where they ran): merge there, or give the file with --scenario"});
      throw base::ConfigError(std::move(items));
    }
  }();
  const std::string sha = shard_inputs_sha256(command, path, so.sets, params);
  if (sha != first.header.inputs_sha256)
    throw base::ConfigError(path.empty() ? s.source : path, "",
                            "is not the scenario the shards ran (with their --set overrides, inputs sha256 " +
                                sha.substr(0, 12) + "... here, " + first.header.inputs_sha256.substr(0, 12) +
                                "... in " + first.path +
                                "): edited since, or another file; give the one they ran with --scenario");
  return s;
}

void add_merge_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand(
      "merge",
      "Combine the shard files of one job (run or plan --shard-index I --shard-count N) into its one-process result");
  auto a = std::make_shared<MergeArgs>();
  cmd->add_option("shards", a->shards, "Shard files, one per index, in any order")->required()->type_name("SHARD");
  cmd->add_flag("--json", a->json, "JSON result (as the sharded command's --json), same as --format json");
  cmd->add_option("--out", a->out, "Write the report files, as the sharded command's --out DIR does")->type_name("DIR");
  cmd->add_option("--scenario", a->scenario,
                  "Read the scenario here instead of at the path the shards recorded (it must have the same contents)")
      ->type_name("FILE");
  cmd->add_option("--threads", a->threads, "Worker threads for what merge computes itself (run --out: sensitivity)")
      ->check(CLI::Range(1, 1024));
  commands.push_back({cmd, [a, &o](std::ostream& out, std::ostream& err) { return merge_command(*a, o, out, err); }});
}

}  // namespace sim::cli
