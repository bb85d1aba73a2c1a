// `trainsim run --shard-index I --shard-count N` and `trainsim merge` end to end (issue 9): the shard file format,
// merged shards give the bytes one process gives (JSON, summary, report files), and every way a set of shards can
// be wrong is refused with the file named.
#include "sim/cli/app.hpp"
#include "sim/cli/shard_file.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sim::cli {
namespace {

using support::trainsim;

/// Step level in milliseconds and 30 trials in a few more: fast enough to run five times per test.
const std::string kScenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json";

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Writes shards 0..count-1 of `kScenario` with `extra` options into `dir` and returns their paths.
std::vector<std::string> write_shards(const support::TempDir& dir, int count, std::vector<std::string> extra = {}) {
  std::vector<std::string> paths;
  for (int i = 0; i < count; ++i) {
    const std::string path = (dir.path() / ("shard-" + std::to_string(i) + ".jsonl")).string();
    std::vector<std::string> args = {"run",
                                     kScenario,
                                     "--trials",
                                     "30",
                                     "--shard-index",
                                     std::to_string(i),
                                     "--shard-count",
                                     std::to_string(count),
                                     "--out",
                                     path,
                                     "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto o = trainsim(args);
    EXPECT_EQ(o.code, kExitOk) << o.err;
    paths.push_back(path);
  }
  return paths;
}

std::vector<std::string> merge_args(std::vector<std::string> shards, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"merge"};
  args.insert(args.end(), shards.begin(), shards.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(ShardFile, IsAHeaderLineThenTheSlicesPayload) {
  const auto o = trainsim({"run", kScenario, "--trials", "30", "--shard-index", "1", "--shard-count", "3"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  ASSERT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 2) << "JSON lines: a header and one payload line";
  const std::string header = o.out.substr(0, o.out.find('\n'));
  for (const char* key :
       {R"("schema":"trainsim.shard/1")", R"("command":"run")", R"("shard_index":1)", R"("shard_count":3)",
        R"("sets":[])", R"("inputs_sha256":")", R"("trainsim_version":")", R"("payload_lines":1)", R"("trials":30)",
        R"("seed":"42")", R"("first":10)", R"("count":10)", R"("step_time_ns":)"})
    EXPECT_NE(header.find(key), std::string::npos) << key << " in " << header;
  EXPECT_NE(header.find(R"("scenario":")" + kScenario + "\""), std::string::npos) << header;
  const std::string payload = o.out.substr(o.out.find('\n') + 1);
  for (const char* key : {R"("first":10)", R"("count":10)", R"("sums":{)", R"("goodput_bins":[)"})
    EXPECT_NE(payload.find(key), std::string::npos) << key;

  // The fingerprint covers the scenario, the overrides and the options that change the result, not the shard.
  const auto again = trainsim({"run", kScenario, "--trials", "30", "--shard-index", "0", "--shard-count", "2"});
  const auto seeded =
      trainsim({"run", kScenario, "--trials", "30", "--seed", "7", "--shard-index", "1", "--shard-count", "3"});
  const auto sha = [](const std::string& text) {
    const auto at = text.find(R"("inputs_sha256":")") + 17;
    return text.substr(at, 64);
  };
  EXPECT_EQ(sha(again.out), sha(o.out));
  EXPECT_NE(sha(seeded.out), sha(o.out));
  EXPECT_EQ(sha(o.out), shard_inputs_sha256("run", kScenario, {}, [] {
              results::Json p = results::Json::object();
              p["trials"] = 30;
              p["seed"] = "42";
              return p;
            }()));
}

TEST(ShardSlices, SplitTheWorkEvenlyAndExactlyOnce) {
  int next = 0;
  for (int i = 0; i < 7; ++i) {
    const ShardSlice s = shard_slice(30, i, 7);
    EXPECT_EQ(s.first, next);
    EXPECT_TRUE(s.count == 4 || s.count == 5) << s.count;
    next = s.first + s.count;
  }
  EXPECT_EQ(next, 30);
  EXPECT_EQ(shard_slice(2'000'000'000, 2, 3).count, 666'666'667) << "no int overflow";
}

TEST(Merge, ThreeShardsGiveTheJsonOfOneProcessByteForByte) {
  const support::TempDir dir;
  const auto one = trainsim({"run", kScenario, "--trials", "30", "--json"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  const auto shards = write_shards(dir, 3);
  const auto merged = trainsim(merge_args({shards[2], shards[0], shards[1]}, {"--json"}));  // any order
  ASSERT_EQ(merged.code, kExitOk) << merged.err;
  EXPECT_EQ(merged.out, one.out);
  EXPECT_GT(one.out.size(), 1000U);
  const auto table = trainsim({"run", kScenario, "--trials", "30"});
  EXPECT_EQ(trainsim(merge_args(shards)).out, table.out) << "the summary too";
}

TEST(Merge, OverridesAndOptionsTravelInTheShards) {
  const support::TempDir dir;
  const std::vector<std::string> extra = {"--seed", "5", "--set", "reliability.spares=2"};
  std::vector<std::string> one_args = {"run", kScenario, "--trials", "30", "--json"};
  one_args.insert(one_args.end(), extra.begin(), extra.end());
  const auto one = trainsim(one_args);
  ASSERT_EQ(one.code, kExitOk) << one.err;
  const auto merged = trainsim(merge_args(write_shards(dir, 2, extra), {"--json"}));
  ASSERT_EQ(merged.code, kExitOk) << merged.err;
  EXPECT_EQ(merged.out, one.out);
  EXPECT_EQ(trainsim(merge_args(write_shards(dir, 2, extra), {"--set", "reliability.spares=4"})).code, kExitBadInput);
}

TEST(Merge, WritesTheReportFilesRunOutWrites) {
  const support::TempDir dir;
  const auto a = dir.path() / "one";
  const auto b = dir.path() / "merged";
  const auto one = trainsim({"run", kScenario, "--trials", "30", "--out", a.string(), "-q"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  const auto merged = trainsim(merge_args(write_shards(dir, 3), {"--out", b.string(), "-q"}));
  ASSERT_EQ(merged.code, kExitOk) << merged.err;
  EXPECT_EQ(merged.out, one.out);
  for (const char* file : {"report.html", "summary.md", "result.json", "result.csv"}) {
    ASSERT_TRUE(std::filesystem::exists(b / file)) << file;
    EXPECT_EQ(read((b / file).string()), read((a / file).string())) << file;
  }
}

TEST(Merge, RefusesAnIncompleteOrMixedSetNamingTheFiles) {
  const support::TempDir dir;
  const auto shards = write_shards(dir, 3);
  auto o = trainsim(merge_args({shards[0], shards[2]}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("shard 1 of 3 is missing"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(shards[0] + " (0)"), std::string::npos) << o.err;

  o = trainsim(merge_args({shards[0], shards[1], shards[1], shards[2]}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(shards[1] + ":1: /shard_index: shard 1 of 3 given twice"), std::string::npos) << o.err;

  const std::string copy = dir.write("copy.jsonl", read(shards[1]));
  o = trainsim(merge_args({shards[0], shards[1], copy, shards[2]}));
  EXPECT_NE(o.err.find(copy + ":1: /shard_index: shard 1 of 3 again (also " + shards[1] + ")"), std::string::npos)
      << o.err;

  // A shard of another seed, of other overrides, of another split.
  const support::TempDir other;
  const auto seeded = write_shards(other, 3, {"--seed", "1"});
  o = trainsim(merge_args({shards[0], seeded[1], shards[2]}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(seeded[1] + ":1: /inputs_sha256:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--seed"), std::string::npos) << o.err;
  const auto set = write_shards(other, 3, {"--set", "reliability.spares=2"});
  o = trainsim(merge_args({shards[0], set[1], shards[2]}));
  EXPECT_NE(o.err.find(set[1] + ":1: /inputs_sha256:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("other --set overrides"), std::string::npos) << o.err;
  const auto halves = write_shards(other, 2);
  o = trainsim(merge_args({shards[0], halves[1]}));
  EXPECT_NE(o.err.find(halves[1] + ":1: /shard_count: 2 where " + shards[0] + " has 3"), std::string::npos) << o.err;
}

TEST(Merge, RefusesFilesThatAreNotWholeShards) {
  const support::TempDir dir;
  const auto shards = write_shards(dir, 2);
  const std::string text = read(shards[1]);
  const std::string truncated = dir.write("truncated.jsonl", text.substr(0, text.find('\n') + 1));
  auto o = trainsim(merge_args({shards[0], truncated}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(truncated + ": 0 lines follow the header, which announces 1"), std::string::npos) << o.err;

  const std::string result = dir.write("result.json", trainsim({"run", kScenario, "--trials", "4", "--json"}).out);
  o = trainsim(merge_args({result}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(result + ": is not a shard file"), std::string::npos) << o.err;

  const std::string other_schema = dir.write("other.jsonl", "{\"schema\": \"trainsim.run/1\"}\n");
  o = trainsim(merge_args({other_schema}));
  EXPECT_NE(o.err.find(other_schema + ":1: /schema: \"trainsim.run/1\"; expected \"trainsim.shard/1\""),
            std::string::npos)
      << o.err;

  const auto fly_shard = [&](const std::string& path, const std::string& name) {
    std::string edited = read(path);
    edited.replace(edited.find("\"command\":\"run\""), 15, "\"command\":\"fly\"");
    return dir.write(name, edited);
  };
  const std::string fly = fly_shard(shards[0], "fly0.jsonl");
  o = trainsim(merge_args({fly, fly_shard(shards[1], "fly1.jsonl")}));
  EXPECT_NE(o.err.find(fly + ":1: /command: \"fly\" is not a command whose shards merge reads; expected run"),
            std::string::npos)
      << o.err;

  // A hand-edited seed that std::stoull used to take in part ("12abc" as 12) or wrapped ("-1" as 2^64-1).
  for (const char* seed : {"12abc", "-1"}) {
    std::string edited = read(shards[0]);
    edited.replace(edited.find("\"seed\":\"42\""), 11, std::string("\"seed\":\"") + seed + "\"");
    const std::string path = dir.write("seed.jsonl", edited);
    o = trainsim(merge_args({path, shards[1]}));
    EXPECT_EQ(o.code, kExitBadInput);
    EXPECT_NE(o.err.find(path + ":1: /work/seed: \"" + seed + "\" is not an unsigned integer"), std::string::npos)
        << o.err;
  }

  std::string bad_payload = text;
  bad_payload.replace(bad_payload.find("\"sums\":{"), 8, "\"sums\":[");
  const std::string broken = dir.write("broken.jsonl", bad_payload);
  o = trainsim(merge_args({shards[0], broken}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(broken + ":2: "), std::string::npos) << o.err;

  EXPECT_EQ(trainsim({"merge", (dir.path() / "absent.jsonl").string()}).code, kExitBadInput);
  EXPECT_EQ(trainsim({"merge"}).code, kExitBadInput);
}

TEST(Merge, NeedsTheScenarioTheShardsRan) {
  const support::TempDir dir;
  const std::string scenario = dir.write("s.json", read(kScenario));
  std::vector<std::string> shards;
  for (int i = 0; i < 2; ++i) {
    shards.push_back((dir.path() / ("s" + std::to_string(i) + ".jsonl")).string());
    ASSERT_EQ(trainsim({"run", scenario, "--trials", "30", "--shard-index", std::to_string(i), "--shard-count", "2",
                        "--out", shards.back(), "-q"})
                  .code,
              kExitOk);
  }
  std::filesystem::rename(scenario, dir.path() / "moved.json");
  auto o = trainsim(merge_args(shards));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("give the file with --scenario"), std::string::npos) << o.err;
  EXPECT_EQ(trainsim(merge_args(shards, {"--scenario", (dir.path() / "moved.json").string()})).code, kExitOk);
  // A --scenario given that cannot be read: its own error, not the hint to give --scenario (a user trial).
  o = trainsim(merge_args(shards, {"--scenario", (dir.path() / "gone.json").string()}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_EQ(o.err.find("give the file with --scenario"), std::string::npos) << o.err;

  std::string edited = read(kScenario);
  edited.replace(edited.find("\"global_batch\": 64"), 18, "\"global_batch\": 32");
  dir.write("edited.json", edited);
  o = trainsim(merge_args(shards, {"--scenario", (dir.path() / "edited.json").string()}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("is not the scenario the shards ran"), std::string::npos) << o.err;
}

TEST(RunShardOptions, AreCheckedAgainstTheTrials) {
  const auto run = [](std::vector<std::string> shard) {
    std::vector<std::string> args = {"run", kScenario, "--trials", "30"};
    args.insert(args.end(), shard.begin(), shard.end());
    return trainsim(args);
  };
  auto o = run({"--shard-index", "3", "--shard-count", "3"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("--shard-index: 3 is outside 0 to 2"), std::string::npos) << o.err;
  o = run({"--shard-index", "-1", "--shard-count", "3"});
  EXPECT_EQ(o.code, kExitBadInput);
  o = run({"--shard-index", "0", "--shard-count", "0"});
  EXPECT_NE(o.err.find("--shard-count: 0 is not a number of shards"), std::string::npos) << o.err;
  o = run({"--shard-index", "0", "--shard-count", "31"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("--shard-count: 31 shards for 30 trials"), std::string::npos) << o.err;
  EXPECT_EQ(run({"--shard-index", "1"}).code, kExitBadInput);
  EXPECT_EQ(run({"--shard-count", "2"}).code, kExitBadInput);
  EXPECT_EQ(run({"--shard-index", "29", "--shard-count", "30"}).code, kExitOk);
}

/// plan shards: every shard screens alike and simulates every N-th entry of the short list; merged, the plan one
/// process prints (JSON and table), with the plan options carried in the shards.
TEST(MergePlan, ThreeShardsGiveThePlanOfOneProcessByteForByte) {
  const support::TempDir dir;
  const std::vector<std::string> plan = {"plan",        kScenario, "--free",   "tp,pp,micro_batch,recompute,zero_stage",
                                         "--objective", "cost",    "--trials", "20"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = plan;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const auto one = trainsim(with({"--json"}));
  ASSERT_EQ(one.code, kExitOk) << one.err;
  std::vector<std::string> shards;
  for (int i = 0; i < 3; ++i) {
    shards.push_back((dir.path() / ("plan-" + std::to_string(i) + ".jsonl")).string());
    const auto o =
        trainsim(with({"--shard-index", std::to_string(i), "--shard-count", "3", "--out", shards.back(), "-q"}));
    ASSERT_EQ(o.code, kExitOk) << o.err;
  }
  EXPECT_NE(read(shards[0]).find("\"command\":\"plan\""), std::string::npos);
  const auto merged = trainsim(merge_args({shards[1], shards[2], shards[0]}, {"--json"}));
  ASSERT_EQ(merged.code, kExitOk) << merged.err;
  EXPECT_EQ(merged.out, one.out);
  EXPECT_NE(one.out.find("\"run_evaluated\""), std::string::npos);
  EXPECT_EQ(trainsim(merge_args(shards)).out, trainsim(with({})).out) << "the table too";

  // A missing shard, a run shard among plan shards, bad shard options, --out without a shard.
  auto o = trainsim(merge_args({shards[0], shards[1]}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("missing"), std::string::npos) << o.err;
  const auto run_shard = write_shards(dir, 1);
  EXPECT_EQ(trainsim(merge_args({shards[0], shards[1], run_shard[0]})).code, kExitBadInput);
  o = trainsim(with({"--shard-index", "3", "--shard-count", "3"}));
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("accepted: 0 <= I < N"), std::string::npos) << o.err;
  EXPECT_EQ(trainsim(with({"--out", (dir.path() / "x").string()})).code, kExitBadInput);
  EXPECT_EQ(trainsim(merge_args(shards, {"--out", (dir.path() / "report").string()})).code, kExitBadInput);
}

}  // namespace
}  // namespace sim::cli
