// The command line as a user meets it: exit codes, and error messages that name the file, the JSON path, what was
// found and what is accepted.
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"

#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sim::cli {
namespace {

using support::trainsim;
using Outcome = support::CliOutcome;

const char* kGoodScenario = R"({
  "schema": "trainsim.scenario/1",
  "name": "test",
  "model": "llama3-8b",
  "hardware": "h100-sxm5-80gb",
  "cluster": { "gpus": 64, "network": { "nic_bandwidth": "400 Gbit/s" } },
  "parallel": { "tp": 2, "pp": 2, "global_batch": 256 },
  "training": { "seq_len": 8192, "tokens": "1T" },
  "reliability": { "checkpoint": { "interval": "auto", "write": "30 s" } }
})";

/// Writes kGoodScenario with `from` replaced by `to`, then validates it.
Outcome validate_variant(const support::TempDir& dir, const std::string& from, const std::string& to) {
  std::string text = kGoodScenario;
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "test bug: " << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return trainsim({"validate", dir.write("s.json", text)});
}

void expect_bad_input(const Outcome& o, const std::string& path, const std::string& fragment) {
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find("s.json: " + path + ": "), std::string::npos) << "names file and JSON path: " << o.err;
  EXPECT_NE(o.err.find(fragment), std::string::npos) << o.err;
}

class BadInput : public ::testing::Test {
 protected:
  support::TempDir dir_;
};

TEST_F(BadInput, GoodScenarioValidates) {
  auto o = trainsim({"validate", dir_.write("s.json", kGoodScenario)});
  EXPECT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("ok"), std::string::npos);
}

TEST_F(BadInput, UnknownKey) {
  expect_bad_input(validate_variant(dir_, R"("tp": 2,)", R"("tp": 2, "bogus": 1,)"), "/parallel",
                   "unknown key \"bogus\"");
}

TEST_F(BadInput, MisspeltKeyGetsASuggestion) {
  expect_bad_input(validate_variant(dir_, R"("global_batch")", R"("global_bach")"), "/parallel",
                   "unknown key \"global_bach\" (did you mean \"global_batch\"?)");
}

TEST_F(BadInput, UnknownKeyListsKeysReadOnlyWhenPresent) {
  // "interval" and "failures" are read by their JSON type; they were missing from the accepted lists (a user trial).
  expect_bad_input(validate_variant(dir_, R"("interval": "auto", )", R"("zzz": 1, )"), "/reliability/checkpoint",
                   "accepted: interval, ");
  expect_bad_input(validate_variant(dir_, R"("reliability": {)", R"("reliability": { "bogus": 1,)"), "/reliability",
                   "failures, checkpoint");
}

TEST_F(BadInput, AFileNameTheSystemRefusesIsBadInputNotAnInternalError) {
  // A user trial: --set hardware=<300 characters>.json ended in "internal error" (exit 4), looked for beside the
  // scenario with a filesystem call that throws.
  const std::string s = dir_.write("s.json", kGoodScenario);
  for (const char* key : {"hardware", "model", "reliability.failures"}) {
    auto o = trainsim({"validate", s, "--set", std::string(key) + "=" + std::string(300, 'c') + ".json"});
    EXPECT_EQ(o.code, kExitBadInput) << key << ": " << o.err;
    EXPECT_NE(o.err.find("File name too long"), std::string::npos) << key << ": " << o.err;
  }
}

TEST_F(BadInput, ANegativeValueWherePositiveIsNeededGetsThePositiveRule) {
  // "-1 USD" said "must be zero or more" and "0 USD" "must be greater than zero" for one key (a user trial).
  const std::string s = dir_.write("s.json", kGoodScenario);
  for (const char* v : {"cost.gpu_hour=-1 USD", "cost.gpu_hour=0 USD"}) {
    auto o = trainsim({"validate", s, "--set", v});
    EXPECT_EQ(o.code, kExitBadInput) << v;
    EXPECT_NE(o.err.find("must be greater than zero"), std::string::npos) << v << ": " << o.err;
  }
}

TEST_F(BadInput, AFailureComponentThatTakesNodesOutSaysForHowLong) {
  // No repair on a node-scope part was 0 h: no spares, no degraded time (a user trial).
  expect_bad_input(validate_variant(dir_, R"("reliability": {)",
                                    R"("reliability": { "failures": {"components": [{"name": "tor", "scope": "node",
                                       "mtbf": "100 d", "effect": "crash"}]},)"),
                   "/reliability/failures/components/0/repair", "is required for a node-scope component");
  EXPECT_EQ(validate_variant(dir_, R"("reliability": {)",
                             R"("reliability": { "failures": {"components": [{"name": "bug", "scope": "job",
                                "mtbf": "1 d", "effect": "crash"}]},)")
                .code,
            kExitOk);
}

TEST_F(BadInput, WrongType) {
  expect_bad_input(validate_variant(dir_, R"("tp": 2)", R"("tp": "2")"), "/parallel/tp",
                   "expected an integer, found \"2\" (a string)");
}

TEST_F(BadInput, MissingRequiredField) {
  expect_bad_input(validate_variant(dir_, R"("seq_len": 8192, )", ""), "/training/seq_len",
                   "missing required field \"seq_len\"");
}

TEST_F(BadInput, MissingUnit) {
  expect_bad_input(validate_variant(dir_, R"("400 Gbit/s")", R"("400")"), "/cluster/network/nic_bandwidth",
                   "has no unit");
}

TEST_F(BadInput, NumberWhereAQuantityIsExpected) {
  expect_bad_input(validate_variant(dir_, R"("30 s")", "30"), "/reliability/checkpoint/write", "has no unit");
}

TEST_F(BadInput, WrongUnit) {
  expect_bad_input(validate_variant(dir_, R"("400 Gbit/s")", R"("400 GHz")"), "/cluster/network/nic_bandwidth",
                   "unknown bandwidth unit \"GHz\"");
}

TEST_F(BadInput, ZeroWherePositiveIsRequired) {
  expect_bad_input(validate_variant(dir_, R"("gpus": 64)", R"("gpus": 0)"), "/cluster/gpus", "at least 1");
}

TEST_F(BadInput, NegativeQuantity) {
  expect_bad_input(validate_variant(dir_, R"("30 s")", R"("-30 s")"), "/reliability/checkpoint/write", "negative");
}

TEST_F(BadInput, ZeroQuantity) {
  expect_bad_input(validate_variant(dir_, R"("400 Gbit/s")", R"("0 Gbit/s")"), "/cluster/network/nic_bandwidth",
                   "greater than zero");
}

TEST_F(BadInput, BadEnumValue) {
  expect_bad_input(validate_variant(dir_, R"("global_batch": 256)", R"("global_batch": 256, "recompute": "ful")"),
                   "/parallel/recompute", "did you mean \"full\"");
}

TEST_F(BadInput, UnknownBuiltinModel) {
  expect_bad_input(validate_variant(dir_, R"("llama3-8b")", R"("llama3-9b")"), "/model", "not a built-in model");
}

// A user trial: a referenced file that cannot be read was reported as "nonexist.json: cannot open", naming neither the
// scenario nor its key; a failures file's message read "beside the scenario file, the working folder, then in the
// working folder".
TEST_F(BadInput, AReferencedFileThatCannotBeReadIsNamedAtTheScenarioKey) {
  expect_bad_input(validate_variant(dir_, R"("llama3-8b")", R"("nonexist.json")"), "/model",
                   "\"nonexist.json\": cannot open: no such file (a relative path is looked for beside the scenario "
                   "file, in " +
                       dir_.path().string() + ", then in the working folder)");
  expect_bad_input(validate_variant(dir_, R"("h100-sxm5-80gb")", "\"" + dir_.path().string() + "\""), "/hardware",
                   "is a directory");
}

TEST_F(BadInput, DpDisagreesWithGpuCount) {
  expect_bad_input(validate_variant(dir_, R"("pp": 2,)", R"("pp": 2, "dp": 8,)"), "/parallel/dp",
                   "tp*pp*dp*cp = 2*2*8*1 = 32 but cluster.gpus = 64");
}

TEST_F(BadInput, TokensAndDurationTogether) {
  expect_bad_input(validate_variant(dir_, R"("tokens": "1T")", R"("tokens": "1T", "duration": "54 d")"), "/training",
                   "not both");
}

TEST_F(BadInput, FewerTokensThanOneStepAreRefused) {
  // 256 x 8,192 = 2.1M tokens a step; a review ran "0.5" and "1" as one full step without a word.
  for (const char* tokens : {R"("tokens": "0.5")", R"("tokens": "1")", R"("tokens": "2M")"})
    expect_bad_input(validate_variant(dir_, R"("tokens": "1T")", tokens), "/training/tokens", "less than one step");
  EXPECT_EQ(validate_variant(dir_, R"("tokens": "1T")", R"("tokens": "2.1M")").code, kExitOk) << "one step";
}

TEST_F(BadInput, AnUnnamedFailureComponentIsNamedByItsFullPath) {
  expect_bad_input(validate_variant(dir_, R"("reliability": {)",
                                    R"("reliability": { "failures": { "components": [
                                        { "name": "", "scope": "gpu", "mtbf": "1000 d" } ] },)"),
                   "/reliability/failures/components/0/name", "must not be empty");
  // An MTBF under a second is no fleet's (a tester's trial: "1 ns" ran, reporting 1 interruption and 0 GPU-hours lost).
  expect_bad_input(validate_variant(dir_, R"("reliability": {)",
                                    R"("reliability": { "failures": { "components": [
                                        { "name": "x", "scope": "gpu", "mtbf": "1 ns", "effect": "crash",
                                          "repair": "1 h" } ] },)"),
                   "/reliability/failures/components/0/mtbf", "is under one second");
}

TEST_F(BadInput, WrongSchema) {
  expect_bad_input(validate_variant(dir_, R"("trainsim.scenario/1")", R"("trainsim.scenario/2")"), "/schema",
                   "expected one of");
}

TEST_F(BadInput, ManyProblemsAreReportedTogether) {
  auto o = validate_variant(dir_, R"("tp": 2, "pp": 2)", R"("tp": "x", "pp": -1)");
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("/parallel/tp"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("/parallel/pp"), std::string::npos) << o.err;
}

TEST_F(BadInput, TruncatedJson) {
  auto path = dir_.write("s.json", std::string(kGoodScenario).substr(0, 120));
  auto o = trainsim({"validate", path});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(path + ": invalid JSON"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("line"), std::string::npos) << "says where: " << o.err;
}

TEST_F(BadInput, EmptyFile) {
  auto path = dir_.write("s.json", "");
  auto o = trainsim({"validate", path});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(path + ": the file is empty"), std::string::npos) << o.err;
}

TEST_F(BadInput, DirectoryInsteadOfFile) {
  auto o = trainsim({"validate", dir_.path().string()});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(dir_.path().string() + ": is a directory"), std::string::npos) << o.err;
}

TEST_F(BadInput, MissingFile) {
  auto path = (dir_.path() / "nope.json").string();
  auto o = trainsim({"validate", path});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(path + ": cannot open: no such file"), std::string::npos) << o.err;
}

TEST_F(BadInput, MissingScenarioForTheMainJob) {
  auto o = trainsim({(dir_.path() / "nope.json").string()});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("no such file"), std::string::npos) << o.err;
}

TEST_F(BadInput, BadModelFileNamesItsPath) {
  auto path = dir_.write("m.json", R"({"schema": "trainsim.model/1", "name": "m", "layers": 2, "hidden": 100,
    "ffn_hidden": 400, "heads": 3, "vocab": 1000, "activation": "relu"})");
  auto o = trainsim({"validate", path});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(path + ": /activation: \"relu\" is not accepted"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(path + ": /heads: 3 does not divide hidden = 100"), std::string::npos) << o.err;
}

TEST_F(BadInput, InlineModelProblemsCarryTheirPath) {
  auto o = validate_variant(dir_, R"("llama3-8b")",
                            R"({"name": "tiny", "layers": 2, "hidden": 256, "ffn_hidden": 1024, "heads": 4,
                               "kv_heads": 3, "vocab": 1000, "activation": "gelu"})");
  expect_bad_input(o, "/model/kv_heads", "does not divide heads = 4");
}

TEST_F(BadInput, BadSetOverride) {
  auto o = trainsim({"--set", "parallel.tp", "describe", "models"});
  EXPECT_EQ(o.code, kExitOk) << "describe takes no scenario; --set is unused there";
  o = trainsim({"--set", "parallel.tp"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("is not KEY=VALUE"), std::string::npos) << o.err;
  o = trainsim({"--set", "parallel.tp=\"8\""});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("/parallel/tp: expected an integer"), std::string::npos) << o.err;
  // An index under a key the scenario lacks indexes nothing (a tester's trial: read as an object's key, "expected an
  // array of integers, found an object"; a review: --set a.01=3 was told "a" is an array); the message names the whole
  // value to give. A bracket is not a --set path.
  for (const char* key : {"parallel.layers_per_stage.0=4", "parallel.a.01=3"}) {
    o = trainsim({"--set", key});
    EXPECT_EQ(o.code, kExitBadInput) << key;
    EXPECT_NE(o.err.find("indexes an array, and the scenario has none at /parallel/"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("give the whole value: --set parallel."), std::string::npos) << o.err;
  }
  o = trainsim({"--set", "parallel.layers_per_stage[0]=4"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("write an element of an array the scenario has as parallel.layers_per_stage.INDEX, or give "
                       "the whole array: --set parallel.layers_per_stage=[...]"),
            std::string::npos)
      << o.err;
}

// An element of an array the scenario has is KEY.INDEX (a review: --set reliability.failures.components.0.mtbf was
// refused as "not a scenario key" though the array is real); an index past its end is refused with its length.
TEST_F(BadInput, SetAddressesAnElementOfAnArrayTheScenarioHas) {
  const std::string text = R"({"schema": "trainsim.scenario/1", "name": "arr", "model": "llama3-8b",
    "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 8},
    "parallel": {"tp": 1, "pp": 2, "dp": 4, "micro_batch": 1, "global_batch": 32, "recompute": "full",
                 "layers_per_stage": [16, 16]},
    "training": {"seq_len": 4096, "tokens": "1B"}})";
  const auto path = dir_.write("arr.json", text);
  auto o = trainsim({"step", path, "--set", "parallel.layers_per_stage.0=15"});
  EXPECT_EQ(o.code, kExitInfeasible) << o.out;
  EXPECT_NE((o.out + o.err).find("layers_per_stage sums to 31"), std::string::npos) << o.out << o.err;
  o = trainsim(
      {"step", path, "--json", "--set", "parallel.layers_per_stage.0=17", "--set", "parallel.layers_per_stage.1=15"});
  EXPECT_EQ(o.code, kExitOk) << o.err;
  o = trainsim({"step", path, "--set", "parallel.layers_per_stage.2=1"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("\"2\" is not an index of this array of 2 elements"), std::string::npos) << o.err;
}

TEST_F(BadInput, UnknownSubcommandOrOptionIsUsageError) {
  EXPECT_EQ(trainsim({"--frobnicate"}).code, kExitBadInput);
  EXPECT_EQ(trainsim({"describe", "gpus"}).code, kExitBadInput);
  EXPECT_EQ(trainsim({"--format", "xml"}).code, kExitBadInput);
}

// A review: --json beside --format md, --explain --json and --format md on a shard were each dropped without a word.
TEST_F(BadInput, TwoOutputFormatsOrAFormatAShardIgnoresAreRefused) {
  const std::string s = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"step", s, "--json", "--format", "csv"},
        {"run", s, "--trials", "2", "--format", "md", "--json"},
        {"step", s, "--format", "table", "--json"},
        {"step", s, "--explain", "--json"},
        {"run", s, "--trials", "2", "--shard-index", "0", "--shard-count", "1", "--format", "md"}}) {
    const auto o = trainsim(args);
    EXPECT_EQ(o.code, kExitBadInput) << args[0] << " " << args[2] << ": " << o.err;
    EXPECT_TRUE(o.err.find("json") != std::string::npos || o.err.find("JSON") != std::string::npos) << o.err;
  }
  EXPECT_EQ(trainsim({"step", s, "--json", "--format", "json"}).code, kExitOk) << "the same format twice";
}

// The README's example of the main job with an override (a tester's trial: the default scenario fixed dp 32, so
// --set parallel.tp=4 was refused); the data-parallel size it derives is printed.
TEST(Cli, TheReadmesOverrideExampleRuns) {
  const std::string s = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/default.json";
  // A name of its own: the main job's folder takes one writer at a time, and other tests run the default's.
  const auto o = trainsim(
      {s, "--set", "parallel.tp=4", "--set", "reliability.trials=4", "--set", "name=cli-readme-example", "-q"});
  EXPECT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("tp 4, pp 4, dp 64 (derived)"), std::string::npos) << o.out;
}

TEST(Cli, VersionAndHelpExitZero) {
  auto v = trainsim({"--version"});
  EXPECT_EQ(v.code, kExitOk);
  EXPECT_NE(v.out.find("trainsim "), std::string::npos);
  auto h = trainsim({"--help"});
  EXPECT_EQ(h.code, kExitOk);
  EXPECT_NE(h.out.find("describe"), std::string::npos);
}

TEST(Cli, DescribeHardwareListsTheSevenProfiles) {
  auto o = trainsim({"describe", "hardware"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  for (const char* h : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "h800-sxm5-80gb", "h200-sxm-141gb",
                        "b200-sxm-180gb", "gb200-nvl72"})
    EXPECT_NE(o.out.find(h), std::string::npos) << h;
  EXPECT_NE(o.out.find("989 TFLOP/s"), std::string::npos) << "H100 bf16 dense peak: " << o.out;
  EXPECT_NE(o.out.find("400 Gbit/s"), std::string::npos) << o.out;
  // Achieved fractions: H100's fused attention over 8k tokens, forward and backward, in a training loop (the
  // measured isolated kernels x gemm / gemm_isolated = 0.70 / 0.87).
  EXPECT_NE(o.out.find("0.44/0.37"), std::string::npos) << o.out;
  auto j = trainsim({"describe", "hardware", "--format", "json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  EXPECT_NE(j.out.find("\"attention_backward_8k\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"gemm_isolated\""), std::string::npos) << j.out;  // Hopper's, for the attention derate
}

TEST(Cli, DescribeModelsListsParameterCounts) {
  auto o = trainsim({"describe", "models"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("174.6B"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("70.6B"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("12.9B"), std::string::npos) << "Mixtral active params: " << o.out;
  auto j = trainsim({"describe", "models", "--format", "json"});
  EXPECT_EQ(j.out.front(), '[');
}

TEST(Cli, DescribeModelsFilesGivesParametersAndLayerShapesOfAnyModelSource) {
  // Issue 16: a user checks a model before simulating it. A built-in name, a scenario's model and a Hugging Face
  // config.json (read as `trainsim import hf-config` reads it; tests/data/import/corpus, copied unchanged from the
  // models' repositories): parameter counts against the model cards (Qwen3-30B-A3B "30.5B total, 3.3B activated";
  // DeepSeek-V3 "671B total parameters with 37B activated", the MTP module counted apart) and the layer shapes.
  const std::string corpus = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/import/corpus/";
  auto o = trainsim({"describe", "models", "llama3-8b", corpus + "hf-qwen3-30b-a3b-config.json",
                     corpus + "hf-deepseek-v3-config.json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("qwen3_moe"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("128 experts top-8 x 768 swiglu"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" active per token (embedding and output included)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("MLA 128 heads, q_lora 1536, kv_lora 512"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("0-2     dense"), std::string::npos) << "DeepSeek-V3's first three layers: " << o.out;
  auto j = trainsim(
      {"describe", "models", corpus + "hf-qwen3-30b-a3b-config.json", corpus + "hf-deepseek-v3-config.json",
       std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/mixtral-8x7b-256-h100.json", "--format", "json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  const auto models = nlohmann::json::parse(j.out);
  ASSERT_EQ(models.size(), 3U);
  EXPECT_NEAR(models[0].at("params").get<double>(), 30.5e9, 0.01 * 30.5e9);
  EXPECT_NEAR(models[0].at("active_params").get<double>(), 3.3e9, 0.03 * 3.3e9);
  EXPECT_NEAR(models[1].at("params").get<double>(), 671e9, 0.005 * 671e9);
  EXPECT_NEAR(models[1].at("active_params").get<double>(), 37e9, 0.03 * 37e9);
  EXPECT_EQ(models[2].at("name").get<std::string>(), "mixtral-8x7b");
  // A hardware profile, and a config.json the importer cannot complete: bad input naming the file.
  auto hw =
      trainsim({"describe", "models", std::string(TRAINSIM_SOURCE_DIR) + "/hardware_profiles/h100-sxm5-80gb.json"});
  EXPECT_EQ(hw.code, kExitBadInput);
  EXPECT_NE(hw.err.find("is a hardware profile"), std::string::npos) << hw.err;
  support::TempDir dir;
  const auto partial = dir.write("config.json", R"({"model_type": "llama", "num_hidden_layers": 4})");
  auto bad = trainsim({"describe", "models", partial});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("config.json"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("/hidden: missing required field"), std::string::npos) << bad.err;
}

TEST(Cli, DescribeKeysListsEveryKeyWithItsDefault) {
  auto o = trainsim({"describe", "keys"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("training.moe_capacity_factor"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("parallel.cp_comm_type"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"in_flight\""), std::string::npos) << "defaults shown: " << o.out;
  auto j = trainsim({"describe", "keys", "--format", "json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  EXPECT_NE(j.out.find("\"default\""), std::string::npos) << j.out;
  EXPECT_EQ(j.out.front(), '[');
}

TEST(Cli, MainJobRunsTheBuiltInDefault) {
  auto o = trainsim({"--set", "reliability.trials=20"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("llama3-70b"), std::string::npos);
  EXPECT_NE(o.out.find("step time"), std::string::npos) << "the step level: " << o.out;
  EXPECT_NE(o.out.find("time to train"), std::string::npos) << "the run level: " << o.out;
  EXPECT_NE(o.err.find("built-in default"), std::string::npos);
  EXPECT_NE(o.err.find("wrote trainsim-out/llama3-70b-on-1024-h100/result.json"), std::string::npos) << o.err;
  EXPECT_TRUE(std::filesystem::exists("trainsim-out/llama3-70b-on-1024-h100/result.json"));
}

// A user trial: the names "a/b" and "a_b" both wrote trainsim-out/a_b/, one run silently replacing the other's
// report. A rewritten name carries its original's hash; a name that needs no rewriting keeps its folder (above).
TEST(Cli, NamesRewrittenAlikeKeepReportFoldersOfTheirOwn) {
  std::vector<std::string> folders;
  for (const char* name : {"cli-fold/er", "cli-fold_er"}) {
    auto o = trainsim({"--set", "reliability.trials=5", "--set", std::string("name=\"") + name + "\""});
    ASSERT_EQ(o.code, kExitOk) << o.err;
    const auto at = o.err.find("wrote trainsim-out/");
    ASSERT_NE(at, std::string::npos) << o.err;
    folders.push_back(o.err.substr(at + 6, o.err.find('/', at + 19) - at - 6));
  }
  EXPECT_EQ(folders[1], "trainsim-out/cli-fold_er") << "a safe name keeps its folder";
  EXPECT_TRUE(folders[0].starts_with("trainsim-out/cli-fold_er-")) << folders[0];
  EXPECT_NE(folders[0], folders[1]);
}

TEST(Cli, SetOverridesTheScenario) {
  auto step_time = [](std::vector<std::string> sets) {
    // A name of its own: the main job's folder trainsim-out/<name> takes one writer at a time (issue 22), and other
    // tests run the default scenario's main job in the same working directory at the same time.
    std::vector<std::string> args{"--format", "json", "--set", "reliability.trials=10", "--set", "name=cli-set-test"};
    for (auto& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    auto o = trainsim(args);
    EXPECT_EQ(o.code, kExitOk) << o.err;
    const auto at = o.out.find("\"step_time_s\": ");
    return at == std::string::npos ? 0.0 : std::stod(o.out.substr(at + 15));
  };
  const double tp8 = step_time({});
  const double tp4 = step_time({"parallel.tp=4", "parallel.dp=64"});
  EXPECT_GT(tp8, 0);
  EXPECT_NE(tp8, tp4) << "--set parallel.tp=4 must change the simulated step";
}

TEST(Cli, ShippedFilesAllValidate) {
  std::vector<std::string> args{"validate"};
  for (const char* dir : {"models", "hardware_profiles", "scenarios"})
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(std::filesystem::path(TRAINSIM_SOURCE_DIR) / dir))
      if (e.path().extension() == ".json") args.push_back(e.path().string());
  ASSERT_GT(args.size(), 15u);
  auto o = trainsim(args);
  EXPECT_EQ(o.code, kExitOk) << o.err;
}

TEST(Formats, MdAndCsvAsDesignMdListsThemAndRefusedWhereACommandWouldIgnoreThem) {
  // DESIGN.md: --format table|json|md|csv. md and csv were refused everywhere, and validate and step --explain
  // printed text under --format json (a user trial).
  const std::string s = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json";
  auto md = trainsim({"step", s, "--format", "md"});
  ASSERT_EQ(md.code, kExitOk) << md.err;
  EXPECT_EQ(md.out.rfind("| metric | value |\n| --- | --- |\n", 0), 0u) << md.out;
  EXPECT_NE(md.out.find("| memory_gib.total | "), std::string::npos) << md.out;
  auto csv = trainsim({"step", s, "--format", "csv"});
  ASSERT_EQ(csv.code, kExitOk) << csv.err;
  EXPECT_EQ(csv.out.rfind("metric,value\nschema,trainsim.step/1\n", 0), 0u) << csv.out;
  auto run = trainsim({"run", s, "--trials", "2", "--format", "csv"});
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_EQ(run.out.rfind("scenario,source,", 0), 0u) << "the report's result.csv: " << run.out;
  auto plan = trainsim({"plan", s, "--format", "md"});
  ASSERT_EQ(plan.code, kExitOk) << plan.err;
  EXPECT_EQ(plan.out.rfind("| # | gpus | tp |", 0), 0u) << plan.out;
  for (const auto& args : std::vector<std::vector<std::string>>{{"validate", s, "--format", "json"},
                                                                {"step", s, "--explain", "--format", "json"},
                                                                {"describe", "models", "--format", "csv"},
                                                                {"check", s, "--format", "md"}}) {
    auto o = trainsim(args);
    EXPECT_EQ(o.code, kExitBadInput) << args[0] << ": " << o.out;
    EXPECT_NE(o.err.find("accepted: table"), std::string::npos) << o.err;
  }
}

TEST(StepNotes, Fp32AndTf32CountTheirTensorsAtFourBytes) {
  // A user trial: fp32 changed the GEMM rate only, memory and traffic stayed a bf16 layout's (later with a note).
  // fp32 training's weights and activations are 4 bytes and its fp32 parameters their own master (Megatron-LM's
  // FP32Optimizer keeps no copy): 4 + 4 + 8 bytes per parameter, the moments sharded by the distributed optimizer.
  const std::string s = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json";
  auto bf16 = trainsim({"step", s, "--json"});
  ASSERT_EQ(bf16.code, kExitOk) << bf16.err;
  EXPECT_EQ(bf16.err.find("call costs"), std::string::npos) << bf16.err;
  const auto b = nlohmann::json::parse(bf16.out)["memory_gib"];
  for (const char* dtype : {"fp32", "tf32"}) {
    auto r = trainsim({"step", s, "--json", "--set", std::string("training.dtype=") + dtype});
    ASSERT_EQ(r.code, kExitInfeasible) << dtype << r.err;  // 104 GiB of 80: twice the activations and weights
    EXPECT_EQ(r.err.find("2 bytes"), std::string::npos) << r.err;
    const auto f = nlohmann::json::parse(r.out)["memory_gib"];
    EXPECT_NEAR(f["params"].get<double>(), 2 * b["params"].get<double>(), 1e-6) << dtype;
    EXPECT_NEAR(f["grads"].get<double>(), b["grads"].get<double>(), 1e-6) << dtype;  // fp32 main gradients both
    EXPECT_NEAR(f["optimizer"].get<double>(), b["optimizer"].get<double>() * 8 / 12, 1e-3) << dtype;
    // Every stored activation doubles but the fused attention's fp32 statistics.
    const double ratio = f["activations"].get<double>() / b["activations"].get<double>();
    EXPECT_GT(ratio, 1.95) << dtype;
    EXPECT_LE(ratio, 2.0) << dtype;
  }
  // A separate 16-bit copy or pure 16-bit state contradicts fp32 parameters: refused, naming the key.
  auto sep = trainsim({"step", s, "--set", "training.dtype=fp32", "--set", "training.master_weights=separate"});
  EXPECT_EQ(sep.code, kExitBadInput) << sep.err;
  EXPECT_NE(sep.err.find("training.master_weights"), std::string::npos) << sep.err;
  EXPECT_NE(sep.err.find("their own master"), std::string::npos) << sep.err;
  // A profile with fitted call costs: the step says it does not add them (a user trial fitted 100 ms, saw no change).
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/hardware_profiles/h100-sxm5-80gb.json");
  auto profile = nlohmann::json::parse(in);
  profile["latency"] = {{"base", {{"all_reduce", "100 ms"}}}};
  profile["provenance"]["latency.base.all_reduce"] = "a test";
  support::TempDir dir;
  auto fitted = trainsim({"step", s, "--set", "hardware=" + dir.write("fitted.json", profile.dump())});
  ASSERT_EQ(fitted.code, kExitOk) << fitted.err;
  EXPECT_NE(fitted.err.find("the step's collectives do not add them"), std::string::npos) << fitted.err;
}

}  // namespace
}  // namespace sim::cli
