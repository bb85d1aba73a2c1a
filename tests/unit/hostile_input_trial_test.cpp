// Hostile and careless input found by a user trial (2026-12-05): inputs that grew time and memory as n^2, and
// importers that wrote a framework default for a value the file gives but cannot be read.
#include "sim/cli/app.hpp"
#include "sim/base/sha256.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace sim::cli {
namespace {

using support::trainsim;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(HostileInput, AnAllToAllPastFourThousandRanksIsRefusedNotReplayed) {
  // Replayed pair by pair: 16,384 ranks had taken 6 GB and over a minute.
  const auto r = trainsim({"collective", "alltoall", "--gpus", "16384", "--size", "1M"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "--gpus")) << r.err;
  EXPECT_TRUE(contains(r.err, "4096")) << r.err;
  EXPECT_EQ(trainsim({"collective", "alltoall", "--gpus", "64", "--size", "1M"}).code, kExitOk);
}

TEST(HostileInput, FailureComponentsAreBoundedAndADuplicateIsOneError) {
  // 3,000 copies of one component gave 4.5 million "appears twice" lines; 20,000 took 9 GB.
  support::TempDir dir;
  const std::string one = R"({"name": "dup", "scope": "gpu", "mtbf": "1000000 d", "effect": "crash", "repair": "1 h"})";
  std::string many = R"({"components": [)";
  for (int i = 0; i < 300; ++i)
    many += (i ? "," : "") + one;
  many += "]}";
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json";
  const auto big =
      trainsim({"step", scenario, "--set", "reliability.failures=\"" + dir.write("many.json", many) + "\""});
  EXPECT_EQ(big.code, kExitBadInput);
  EXPECT_TRUE(contains(big.err, "at most 256")) << big.err;
  const std::string twice = R"({"components": [)" + one + "," + one + "," + one + "]}";
  const auto dup =
      trainsim({"step", scenario, "--set", "reliability.failures=\"" + dir.write("dup.json", twice) + "\""});
  EXPECT_EQ(dup.code, kExitBadInput);
  std::size_t lines = 0;
  for (std::size_t at = dup.err.find("appears twice"); at != std::string::npos;
       at = dup.err.find("appears twice", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << dup.err;
}

TEST(HostileInput, AFrameworkDefaultDoesNotSettleAValueTheFileGivesUnreadably) {
  // `--global-batch-size $(cmd)` had been written as micro x dp, and `$(echo 4)` stages as pp 1, with exit 0; a
  // DeepSpeed "auto" batch as micro x dp. Both now stop with exit 2 until --set gives the value.
  support::TempDir dir;
  const std::string script = dir.write(
      "x.sh",
      "torchrun --nproc_per_node=8 --nnodes 2 train.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
      "--seq-length 4096 --global-batch-size `echo 4096` --pipeline-model-parallel-size $(echo 4) "
      "--micro-batch-size 1 --vocab-size 32000 --train-iters 100\n");
  const auto out = (dir.path() / "x.json").string();
  const auto refused = trainsim({"import", "megatron", script, "--hardware", "h100-sxm5-80gb", "-o", out});
  EXPECT_EQ(refused.code, kExitBadInput) << refused.err;
  EXPECT_TRUE(contains(refused.err, "unresolved: ")) << refused.err;
  EXPECT_EQ(trainsim({"import", "megatron", script, "--hardware", "h100-sxm5-80gb", "-o", out, "--set", "parallel.pp=4",
                      "--set", "parallel.global_batch=4096"})
                .code,
            kExitOk);
  const std::string ds = dir.write("ds.json", R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 1})");
  const std::vector<std::string> args = {"import",
                                         "deepspeed",
                                         ds,
                                         "--model",
                                         "llama3-8b",
                                         "--hardware",
                                         "h100-sxm5-80gb",
                                         "--gpus",
                                         "16",
                                         "--tokens",
                                         "1B",
                                         "--set",
                                         "training.seq_len=4096",
                                         "-o",
                                         out};
  EXPECT_EQ(trainsim(args).code, kExitBadInput);
  auto settled = args;
  settled.insert(settled.end(), {"--set", "parallel.global_batch=64"});
  EXPECT_EQ(trainsim(settled).code, kExitOk) << trainsim(settled).err;
}

TEST(HostileInput, TorchTitanTokenCountsPast2To63AreRefusedNotWrapped) {
  // steps = 2^48 + 1 at 8 sequences of 8,192 tokens had wrapped round to 65,536 tokens, exit 0.
  support::TempDir dir;
  const std::string toml = dir.write("tt.toml",
                                     "[training]\nsteps = 281474976710657\nlocal_batch_size = 1\nseq_len = 8192\n"
                                     "[parallelism]\ntensor_parallel_degree = 2\n");
  const auto r = trainsim({"import", "torchtitan", toml, "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb",
                           "--gpus", "16", "-o", (dir.path() / "tt.json").string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "2^63")) << r.err;
}

TEST(HostileInput, ValuesPastTheIntegerClockAreRefusedWithTheirPathNotAnInternalError) {
  // Each ended in "internal error (a trainsim bug)", exit 4, or (checkpoints at 10 B/s) in a silently wrong run.
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json";
  for (const auto& [set, path] :
       {std::pair<std::string, std::string>{"data.loader_tokens_per_s=\"1e-5\"", "/data/loader_tokens_per_s"},
        {"data.storage_bandwidth=\"1e-300 B/s\"", "/data/storage_bandwidth"},
        {"data.bytes_per_token=\"1e18 B\"", "/data/bytes_per_token"},
        {"reliability.checkpoint.write_bandwidth=\"10 B/s\"", "/reliability/checkpoint/write_bandwidth"},
        {"reliability.checkpoint.node_bandwidth=\"1 B/s\"", "/reliability/checkpoint/node_bandwidth"}}) {
    const auto r = trainsim({"step", scenario, "--set", set});
    EXPECT_EQ(r.code, kExitBadInput) << set << ": " << r.err;
    EXPECT_TRUE(contains(r.err, path)) << r.err;
  }
  support::TempDir dir;
  std::string model;
  {
    std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/models/llama3-8b.json");
    model.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto with = [&](const std::string& from, const std::string& to) {
    std::string m = model;
    m.replace(m.find(from), from.size(), to);
    return dir.write("m.json", m);
  };
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"vocab\": 128256", "\"vocab\": 2147483647"},
                                 {"\"hidden\": 4096", "\"hidden\": 1073741824"},
                                 {"\"layers\": 32", "\"layers\": 5000"}}) {
    const auto r = trainsim({"validate", with(from, to)});
    EXPECT_EQ(r.code, kExitBadInput) << to << ": " << r.out << r.err;
  }
}

TEST(HostileInput, OutputsNeverReplaceTheirInputsTheWorkingFolderOrAUsersFolderAndKeepPermissions) {
  support::TempDir dir;
  const std::string scenario = dir.write("s.json", [] {
    std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }());
  // An output naming the command's own input (however spelt) is refused and the input left as it was.
  const auto before = std::filesystem::file_size(scenario);
  const auto trace = trainsim({"step", scenario, "--trace", scenario});
  EXPECT_EQ(trace.code, kExitBadInput);
  EXPECT_TRUE(contains(trace.err, "is an input of this command")) << trace.err;
  EXPECT_EQ(std::filesystem::file_size(scenario), before);
  // Nor does a trace go where step prints its result (a tester's trial: two JSON documents on stdout, exit 0).
  const auto stdout_trace = trainsim({"step", scenario, "--json", "--trace", "/dev/stdout"});
  EXPECT_EQ(stdout_trace.code, kExitBadInput);
  EXPECT_TRUE(contains(stdout_trace.err, "is standard output, where step prints its result")) << stdout_trace.err;
  // Nor does a report folder replace an input under one of its file names: the scenario itself, or a failure file, as
  // result.json or summary.md in the folder named (a tester's trial: both were replaced, exit 0).
  const std::string inside = dir.write("o/result.json", [&] {
    std::ifstream in(scenario);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }());
  const auto replaced = trainsim({"run", inside, "--trials", "2", "--out", (dir.path() / "o").string()});
  EXPECT_EQ(replaced.code, kExitBadInput);
  EXPECT_TRUE(contains(replaced.err, "is an input of this command")) << replaced.err;
  EXPECT_EQ(std::filesystem::file_size(inside), before);
  const std::string log = dir.write(
      "o2/summary.md",
      R"({"components": [{"name": "x", "scope": "gpu", "mtbf": "50000 h", "effect": "crash", "repair": "1 h"}]})");
  const auto failures = trainsim({"run", scenario, "--trials", "2", "--set", "reliability.failures=" + log, "--out",
                                  (dir.path() / "o2").string()});
  EXPECT_EQ(failures.code, kExitBadInput) << failures.err;
  EXPECT_TRUE(contains(failures.err, "is an input of this command")) << failures.err;
  // The working folder or one above it is never swapped out from under the caller.
  const auto root =
      trainsim({"run", scenario, "--trials", "2", "--out", std::filesystem::current_path().parent_path().string()});
  EXPECT_EQ(root.code, kExitBadInput);
  EXPECT_TRUE(contains(root.err, "working folder or one above it")) << root.err;
  // A folder of the user's at a report file's name is refused, not moved into a hidden folder.
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(out / "report.html");
  dir.write("out/report.html/precious.txt", "mine");
  const auto taken = trainsim({"run", scenario, "--trials", "2", "--out", out.string()});
  EXPECT_EQ(taken.code, kExitBadInput);
  EXPECT_TRUE(std::filesystem::exists(out / "report.html" / "precious.txt"));
  // An existing folder and file keep their permissions when replaced.
  std::filesystem::remove_all(out / "report.html");
  std::filesystem::permissions(out, std::filesystem::perms::owner_all);
  ASSERT_EQ(trainsim({"run", scenario, "--trials", "2", "--out", out.string()}).code, kExitOk);
  EXPECT_EQ(std::filesystem::status(out).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  // And their owner, where the process may give it (root writing a user's folder).
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(out.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown((out / "summary.md").c_str(), 65534, 65534), 0);
    ASSERT_EQ(trainsim({"run", scenario, "--trials", "2", "--out", out.string()}).code, kExitOk);
    struct stat folder {
    }, file{};
    ASSERT_EQ(::stat(out.c_str(), &folder), 0);
    ASSERT_EQ(::stat((out / "summary.md").c_str(), &file), 0);
    EXPECT_EQ(folder.st_uid, 65534u);
    EXPECT_EQ(file.st_uid, 65534u);
  }
  const std::string t = dir.write("t.json", "{}");
  std::filesystem::permissions(t, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ASSERT_EQ(trainsim({"step", scenario, "--trace", t}).code, kExitOk);
  EXPECT_EQ(std::filesystem::status(t).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

/// Two run shards (4 trials over 2 shards) of a CI scenario, written in `dir`; empty if a run failed.
std::vector<std::string> two_run_shards(const support::TempDir& dir, const std::string& ci_scenario) {
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/" + ci_scenario;
  std::vector<std::string> shards;
  for (const char* i : {"0", "1"}) {
    shards.push_back((dir.path() / (std::string("s") + i + ".json")).string());
    if (trainsim({"run", scenario, "--trials", "4", "--shard-index", i, "--shard-count", "2", "--out", shards.back()})
            .code != kExitOk)
      return {};
  }
  return shards;
}

TEST(HostileInput, MergeRefusesRunShardsWhoseCountsNoSliceCanHave) {
  // Found by a user trial: histogram bins of 1e15 trials and a `never` of a million merged with exit 0.
  support::TempDir dir;
  const auto shards = two_run_shards(dir, "llama3-8b-16-h100.json");
  ASSERT_EQ(shards.size(), 2u);
  ASSERT_EQ(trainsim({"merge", shards[0], shards[1]}).code, kExitOk);
  std::string text;
  {
    std::ifstream in(shards[1]);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"never\":0", "\"never\":1000000"},
                                 {"\"count\":1}", "\"count\":1000000000000000}"}}) {
    std::string edited = text;
    const auto at = edited.find(from, edited.find('\n'));
    ASSERT_NE(at, std::string::npos) << from;
    edited.replace(at, from.size(), to);
    const auto r = trainsim({"merge", shards[0], dir.write("edited.json", edited)});
    EXPECT_EQ(r.code, kExitBadInput) << to;
    EXPECT_TRUE(contains(r.err, "damaged or edited shard")) << r.err;
  }
}

TEST(HostileInput, MergeRefusesATrialValueThatIsNotFiniteOrOutsideItsRange) {
  // Found by a user trial: a "nan" (or -1e308) among a shard's trial times, its payload hash recomputed, merged with
  // exit 0 and moved the merged deadline and budget risks.
  support::TempDir dir;
  const auto shards = two_run_shards(dir, "llama3-8b-256-h100-run.json");
  ASSERT_EQ(shards.size(), 2u);
  std::string text;
  {
    std::ifstream in(shards[1]);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto newline = text.find('\n');
  for (const std::string bad : {"nan", "-1e308"}) {
    std::string payload = text.substr(newline + 1);
    const auto key = payload.find("\"time_values\":\"");
    ASSERT_NE(key, std::string::npos) << payload;
    const auto first = key + std::string("\"time_values\":\"").size();
    payload.replace(first, payload.find_first_of(" \"", first) - first, bad);
    std::string header = text.substr(0, newline);
    const auto hash = header.find("\"payload_sha256\":\"") + std::string("\"payload_sha256\":\"").size();
    header.replace(hash, 64, base::sha256_hex(payload));
    const auto r = trainsim({"merge", shards[0], dir.write("edited-" + bad + ".json", header + "\n" + payload)});
    EXPECT_EQ(r.code, kExitBadInput) << bad << ": " << r.out;
    EXPECT_TRUE(
        contains(r.err, "/time_values: \"" + bad + "\" is neither within the shard's range nor a trial that never"))
        << r.err;
  }
  // A trial that never finished is written as inf, and merges (a review: the check above had refused it).
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-256-h100-run.json";
  std::vector<std::string> stalled;
  for (const char* i : {"0", "1"}) {
    stalled.push_back((dir.path() / (std::string("never") + i + ".json")).string());
    ASSERT_EQ(trainsim({"run", scenario, "--trials", "4", "--shard-index", i, "--shard-count", "2", "--out",
                        stalled.back(), "--set",
                        R"(reliability.failures={"components": [{"name": "x", "scope": "job", "mtbf": "1 h",
                           "effect": "crash"}]})",
                        "--set", "reliability.checkpoint.interval=\"30 d\""})
                  .code,
              kExitOk);
  }
  std::ifstream in(stalled[0]);
  const std::string text0((std::istreambuf_iterator<char>(in)), {});
  ASSERT_TRUE(contains(text0, "inf")) << "a trial that never finished";
  const auto merged = trainsim({"merge", stalled[0], stalled[1]});
  EXPECT_EQ(merged.code, kExitOk) << merged.err;
}

TEST(HostileInput, SmallerEdgesFoundByTheSameTrial) {
  support::TempDir dir;
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json";
  // A legal 255-byte file name is written (the temporary's suffix had pushed it past the limit).
  const std::string name = std::string(250, 'a') + ".json";
  EXPECT_EQ(trainsim({"step", scenario, "--trace", (dir.path() / name).string()}).code, kExitOk);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / name));
  // scale --gpus 0 names what is wrong.
  const auto zero = trainsim({"scale", scenario, "--gpus", "0"});
  EXPECT_EQ(zero.code, kExitBadInput);
  EXPECT_TRUE(contains(zero.err, "positive GPU count")) << zero.err;
  // A size given twice is simulated once; more than 64 sizes are refused (the same size 10,000 times ran for hours).
  const auto twice = trainsim({"scale", scenario, "--gpus", "16,16", "--trials", "2", "--json"});
  ASSERT_EQ(twice.code, kExitOk) << twice.err;
  EXPECT_EQ(nlohmann::json::parse(twice.out).at("sizes").size(), 1u) << twice.out;
  EXPECT_TRUE(contains(twice.err, "each is simulated once")) << twice.err;
  std::string many = "16";
  for (int i = 2; i <= 65; ++i)
    many += "," + std::to_string(16 * i);
  const auto too_many = trainsim({"scale", scenario, "--gpus", many});
  EXPECT_EQ(too_many.code, kExitBadInput);
  EXPECT_TRUE(contains(too_many.err, "65 cluster sizes: at most 64")) << too_many.err;
  // Work past the simulator's 200 years names the scenario's key, not the run level's internal one.
  const auto long_run = trainsim({"run", scenario, "--trials", "2", "--set", "training.tokens=1e19"});
  EXPECT_EQ(long_run.code, kExitBadInput);
  EXPECT_TRUE(contains(long_run.err, "/training/tokens")) << long_run.err;
  EXPECT_FALSE(contains(long_run.err, "/work/total_steps")) << long_run.err;
}

TEST(HostileInput, AFailedRunRemovesTheOutputFoldersItCreatedAndKeepsTheUsers) {
  // A run that stopped (here: does not fit) had left the --out folder it created behind, empty.
  support::TempDir dir;
  const std::string oom =
      std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/memory/oom_korthikanti22_175B_tp_no_recompute.json";
  const auto fresh = trainsim({"run", oom, "--out", (dir.path() / "new" / "report").string()});
  EXPECT_EQ(fresh.code, kExitInfeasible) << fresh.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "new")) << "both folders the run made are removed";
  std::filesystem::create_directory(dir.path() / "mine");
  const auto kept = trainsim({"run", oom, "--out", (dir.path() / "mine" / "report").string()});
  EXPECT_EQ(kept.code, kExitInfeasible) << kept.err;
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "mine")) << "a folder the user made stays";
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "mine" / "report"));
}

TEST(HostileInput, AnErrorFromTheFileAndTheCommandLineTogetherNamesBoth) {
  // The layout check that --set parallel.tp=3 breaks had named the file alone, which a user reads as "the file is
  // wrong"; a value --set gives itself is still the command line's.
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-405b-16384-h100.json";
  const auto r = trainsim({"step", scenario, "--set", "parallel.tp=4"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "h100.json with --set parallel.tp=4: /parallel/dp:")) << r.err;
  const auto own = trainsim({"step", scenario, "--set", "training.seq_len=0"});
  EXPECT_TRUE(contains(own.err, "error: --set training.seq_len: /training/seq_len:")) << own.err;
}

TEST(HostileInput, ContradictoryCheckpointAndNodeSettingsAreRefusedOrModelled) {
  // Found by a tech lead's trial: "write": "30 s" beside "write_bandwidth": "5 GB/s" dropped the bandwidth silently;
  // 16 GPUs per node of an 8-GPU profile were accepted, and tensor parallelism over nodes of 4 was timed on NVLink.
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json";
  const auto both = trainsim({"step", scenario, "--set", R"(reliability.checkpoint.write="30 s")", "--set",
                              R"(reliability.checkpoint.write_bandwidth="5 GB/s")"});
  EXPECT_EQ(both.code, kExitBadInput);
  EXPECT_TRUE(contains(both.err, "/reliability/checkpoint/write_bandwidth: is not read when checkpoint.write"))
      << both.err;
  const auto big = trainsim({"step", scenario, "--set", "cluster.gpus_per_node=16"});
  EXPECT_EQ(big.code, kExitBadInput);
  EXPECT_TRUE(contains(big.err, "/cluster/gpus_per_node: 16 GPUs per node, but a h100-sxm5-80gb node holds 8"))
      << big.err;
  const auto whole = trainsim({"step", scenario, "--format", "json"});
  const auto half = trainsim({"step", scenario, "--format", "json", "--set", "cluster.gpus_per_node=4"});
  ASSERT_EQ(whole.code, kExitOk) << whole.err;
  ASSERT_EQ(half.code, kExitOk) << half.err;
  auto step_time = [](const std::string& json) {
    const auto at = json.find("\"step_time_s\":");
    return at == std::string::npos ? 0.0 : std::stod(json.substr(at + 14));
  };
  EXPECT_GT(step_time(half.out), 1.05 * step_time(whole.out)) << "TP 8 over two nodes of 4 crosses the network";
}

TEST(HostileInput, AnEditedPlanShardIsRefusedAndRunJsonCarriesItsProvenance) {
  // Found by a CI engineer's trial: a plan shard whose candidate step time was edited merged with exit 0 and ranked
  // first; `run --out` wrote no resolved scenario where the main job's result.json had one; --seed -1 was "not in
  // range 0.000000 to 1.8e308".
  support::TempDir dir;
  const std::string scenario = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json";
  std::vector<std::string> shards;
  for (const char* i : {"0", "1"}) {
    shards.push_back((dir.path() / (std::string("p") + i + ".jsonl")).string());
    ASSERT_EQ(trainsim({"plan", scenario, "--trials", "10", "--top", "2", "--shard-index", i, "--shard-count", "2",
                        "--out", shards.back()})
                  .code,
              kExitOk);
  }
  ASSERT_EQ(trainsim({"merge", shards[0], shards[1]}).code, kExitOk);
  std::string text;  // shard 0 holds the layout's one candidate
  {
    std::ifstream in(shards[0]);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = text.find("\"step_ns\":", text.find('\n'));
  ASSERT_NE(at, std::string::npos) << text.substr(0, 400);
  text.insert(at + 10, "1");
  const auto edited = trainsim({"merge", dir.write("edited.jsonl", text), shards[1]});
  EXPECT_EQ(edited.code, kExitBadInput);
  EXPECT_TRUE(contains(edited.err, "edited.jsonl:2: the payload's SHA-256 is not the header's")) << edited.err;

  const auto out = (dir.path() / "r").string();
  ASSERT_EQ(trainsim({"run", scenario, "--trials", "4", "--out", out, "-q"}).code, kExitOk);
  std::ifstream result(out + "/result.json");
  const std::string json((std::istreambuf_iterator<char>(result)), {});
  EXPECT_TRUE(contains(json, "\"resolved_scenario\"")) << json.substr(0, 200);

  const auto seed = trainsim({"run", scenario, "--seed", "-1"});
  EXPECT_EQ(seed.code, kExitBadInput);
  EXPECT_TRUE(contains(seed.err, "--seed: \"-1\" is not a seed: an integer from 0 to 9223372036854775807")) << seed.err;
}

}  // namespace
}  // namespace sim::cli
