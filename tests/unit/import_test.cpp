// tests/unit/import_test.cpp: `trainsim import` end to end: imports step like hand-written scenarios.
// A Llama 3 8B config.json plus a Megatron-LM command line steps exactly like the hand-written scenario, `step
// --explain` reads back through the Megatron importer, and the check of an import leaves no temporary file. The
// inputs in tests/data/import/ were written for these tests and those of import_megatron_test.cpp,
// import_deepspeed_test.cpp, import_torchtitan_test.cpp and import_hf_config_test.cpp from the published architectures
// (not copied from projects).
#include "tests/unit/import_test_support.hpp"
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace sim::cli::import_tests {
namespace {

// Issue 22: the check that an import loads writes its temporary file through the one output writer, in TMPDIR, and
// leaves nothing there, whether the import is accepted or refused; a TMPDIR that cannot be written is an error.
TEST(ImportTemporary, IsWrittenByTheOutputWriterAndRemoved) {
  support::TempDir dir;
  const std::string tmp = (dir.path() / "tmp").string();
  std::filesystem::create_directories(tmp);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  auto ok = trainsim({"import", "megatron", kData + "llama3-8b-launch.sh", "--model-config",
                      kData + "llama3-8b-config.json", "--hardware", "h100-sxm5-80gb", "--tokens", "1T"});
  auto refused = trainsim({"import", "megatron", kData + "llama3-8b-launch.sh", "--model-config",
                           kData + "llama3-8b-config.json", "--hardware", "no-such-gpu", "--tokens", "1T"});
  ::setenv("TMPDIR", (dir.path() / "no-such-folder").c_str(), 1);
  auto unwritable = trainsim({"import", "megatron", kData + "llama3-8b-launch.sh", "--model-config",
                              kData + "llama3-8b-config.json", "--hardware", "h100-sxm5-80gb", "--tokens", "1T"});
  ::unsetenv("TMPDIR");
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_EQ(refused.code, kExitBadInput) << refused.err;
  EXPECT_TRUE(contains(refused.err, "the imported scenario")) << refused.err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the temporary file is removed";
  EXPECT_EQ(unwritable.code, kExitBadInput) << unwritable.out;
  EXPECT_TRUE(unwritable.out.empty()) << "no scenario printed when it could not be checked";
}

// ---- acceptance 3: a Llama 3 8B config.json plus a Megatron-LM command line is the hand-written scenario -----------

TEST(ImportAcceptance, Llama3MegatronPlusHfConfigStepsExactlyLikeTheHandWrittenScenario) {
  support::TempDir dir;
  const std::string imported = (dir.path() / "imported.json").string();
  auto im =
      trainsim({"import", "megatron", kData + "llama3-8b-launch.sh", "--model-config", kData + "llama3-8b-config.json",
                "--hardware", "h100-sxm5-80gb", "--tokens", "1T", "-o", imported});
  ASSERT_EQ(im.code, kExitOk) << im.err;
  EXPECT_TRUE(contains(im.err, "ignored: ")) << "unknown flags are listed: " << im.err;
  EXPECT_TRUE(contains(im.err, "--lr 3e-4")) << im.err;

  auto a = trainsim({"step", imported, "--json"});
  auto b = trainsim({"step", kData + "llama3-8b-hand.json", "--json"});
  ASSERT_EQ(a.code, kExitOk) << a.err;
  ASSERT_EQ(b.code, kExitOk) << b.err;
  EXPECT_EQ(a.out, b.out) << "byte-equal trainsim.step/1 JSON (same scenario name: the launch file's name)";
  // And at the analytic fidelity too.
  EXPECT_EQ(trainsim({"step", imported, "--json", "--fidelity", "analytic"}).out,
            trainsim({"step", kData + "llama3-8b-hand.json", "--json", "--fidelity", "analytic"}).out);
}

TEST(ImportAcceptance, StepExplainReadsBackThroughTheMegatronImporter) {
  support::TempDir dir;
  auto ex = trainsim({"step", kData + "llama3-8b-hand.json", "--explain"});
  ASSERT_EQ(ex.code, kExitOk) << ex.err;
  EXPECT_TRUE(contains(ex.out, "--tensor-model-parallel-size 2 \\\n")) << ex.out;
  EXPECT_TRUE(contains(ex.out, "--group-query-attention \\\n--num-query-groups 8")) << ex.out;
  EXPECT_TRUE(contains(ex.out, "# data-parallel size 32 = 64 GPUs")) << ex.out;
  const std::string flags = dir.write("flags.sh", ex.out);
  const std::string imported = (dir.path() / "back.json").string();
  auto im = trainsim({"import", "megatron", flags, "--gpus", "64", "--hardware", "h100-sxm5-80gb", "--tokens", "1T",
                      "--name", "llama3-8b-launch", "-o", imported});
  ASSERT_EQ(im.code, kExitOk) << im.err;
  EXPECT_EQ(trainsim({"step", imported, "--json"}).out,
            trainsim({"step", kData + "llama3-8b-hand.json", "--json"}).out);
}

/// `step --explain` of `scenario` with `set`, imported back by the Megatron importer with `import_args` (its
/// --gpus, --hardware, --tokens, --name): the flags written, and the step JSON of the imported scenario and of the
/// original with `set`, which a faithful round trip makes byte-equal.
struct ExplainedBack {
  std::string flags;
  std::string imported_step;
  std::string direct_step;
};
ExplainedBack explain_and_import(const std::string& scenario, const std::vector<std::string>& set,
                                 const std::vector<std::string>& import_args) {
  support::TempDir dir;
  auto with_set = [&](std::vector<std::string> args) {
    args.insert(args.end(), set.begin(), set.end());
    return args;
  };
  auto ex = trainsim(with_set({"step", scenario, "--explain"}));
  if (ex.code != kExitOk) {
    ADD_FAILURE() << "step --explain: " << ex.err;
    return {};
  }
  const std::string imported = (dir.path() / "back.json").string();
  std::vector<std::string> import = {"import", "megatron", dir.write("flags.sh", ex.out), "-o", imported};
  import.insert(import.end(), import_args.begin(), import_args.end());
  auto im = trainsim(import);
  if (im.code != kExitOk) {
    ADD_FAILURE() << "import megatron: " << im.err;
    return {ex.out, {}, {}};
  }
  return {ex.out, trainsim({"step", imported, "--json"}).out, trainsim(with_set({"step", scenario, "--json"})).out};
}

TEST(ImportAcceptance, ExplainWritesTheOverlapFlagsAndTheyReadBack) {
  const auto back = explain_and_import(
      kData + "llama3-8b-hand.json",
      {"--set", "parallel.tp_comm_overlap=true", "--set", "parallel.overlap_param_gather=true"},
      {"--gpus", "64", "--hardware", "h100-sxm5-80gb", "--tokens", "1T", "--name", "llama3-8b-launch"});
  EXPECT_TRUE(contains(back.flags, "--tp-comm-overlap")) << back.flags;
  EXPECT_TRUE(contains(back.flags, "--overlap-param-gather")) << back.flags;
  EXPECT_EQ(back.imported_step, back.direct_step);
}

TEST(ImportAcceptance, ExplainOfAnInterleavedPipelineRoundTrips) {
  support::TempDir dir;
  const std::string ci = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama2-70b-64-h100-pp.json";
  auto ex = trainsim({"step", ci, "--explain"});
  ASSERT_EQ(ex.code, kExitOk) << ex.err;
  EXPECT_TRUE(contains(ex.out, "--num-layers-per-virtual-pipeline-stage 10"))
      << "80 layers / (pp 4 x vpp 2): " << ex.out;
  const std::string imported = (dir.path() / "back.json").string();
  auto im =
      trainsim({"import", "megatron", dir.write("flags.sh", ex.out), "--gpus", "64", "--hardware", "h100-sxm5-80gb",
                "--tokens", "100B", "--name", "ci-llama2-70b-64-h100-interleaved", "-o", imported});
  ASSERT_EQ(im.code, kExitOk) << im.err;
  EXPECT_EQ(trainsim({"step", imported, "--json"}).out, trainsim({"step", ci, "--json"}).out);
}

TEST(ImportAcceptance, ExplainWritesAnUnevenSplitAsALayoutThatReadsBack) {
  // A split no first/last-stage flag expresses (interleaved, uneven everywhere) is written as Megatron-LM's
  // --pipeline-model-parallel-layout, and the import reads it back to the same step.
  const auto back = explain_and_import(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama2-70b-64-h100-pp.json",
                                       {"--set", "parallel.layers_per_stage=[9, 10, 11, 10, 10, 10, 10, 10]"},
                                       {"--gpus", "64", "--hardware", "h100-sxm5-80gb", "--tokens", "100B", "--name",
                                        "ci-llama2-70b-64-h100-interleaved"});
  EXPECT_TRUE(contains(back.flags, "--pipeline-model-parallel-layout \"Et*9|t*10|t*11|(t*10|)*4t*10L\"")) << back.flags;
  EXPECT_FALSE(contains(back.flags, "--num-layers-per-virtual-pipeline-stage"))
      << "the layout sets the stages: " << back.flags;
  EXPECT_EQ(back.imported_step, back.direct_step);
}

TEST(ImportAcceptance, ExplainOfDeepSeekV3WritesItsArchitectureAndReadsBack) {
  // MLA, the dense first layers, node-limited routing, the MTP module and the blockwise FP8 recipe are all Megatron-LM
  // flags; explained and imported again they give the same step, byte for byte. (The scenario's DualPipeV and FP8
  // dispatch have no flag here, so the round trip runs 1F1B over a layout Megatron-LM can write, dispatching BF16.)
  const std::string s = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/deepseek_v3_2048_h800_dualpipev.json";
  const auto back = explain_and_import(
      s,
      {"--set", "parallel.schedule=\"1f1b\"", "--set", "parallel.pipeline_layout=\"Ettt|(tttt|)*14ttmL\"", "--set",
       "parallel.moe_dispatch_dtype=\"bf16\""},
      {"--gpus", "2048", "--hardware", "h800-sxm5-80gb", "--tokens", "14.8T", "--name",
       "deepseek_v3_2048_h800_dualpipev"});
  for (const char* f :
       {"--multi-latent-attention", "--q-lora-rank 1536", "--kv-lora-rank 512", "--qk-head-dim 128",
        "--qk-pos-emb-head-dim 64", "--v-head-dim 128", "--moe-layer-freq \"([0]*3+[1]*58)\"",
        "--moe-router-num-groups 8", "--moe-router-group-topk 4", "--mtp-num-layers 1", "--fp8-recipe blockwise"})
    EXPECT_TRUE(contains(back.flags, f)) << f << " in " << back.flags;
  EXPECT_EQ(back.imported_step, back.direct_step);
  // Under DualPipeV no pipeline-split flag is written, and a note says why.
  auto dual = trainsim({"step", s, "--explain"});
  EXPECT_FALSE(contains(dual.out, "--pipeline-model-parallel-layout")) << dual.out;
  EXPECT_TRUE(contains(dual.out, "# schedule dualpipev: no Megatron-LM flag runs DeepSeek's DualPipe")) << dual.out;
  EXPECT_TRUE(contains(dual.out, "# moe_dispatch_dtype fp8: the MoE dispatch in FP8")) << dual.out;
}

TEST(ImportAcceptance, ExplainWritesTheEpOverlapFlag) {
  const std::string ci = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/mixtral-8x7b-32-h100-ep.json";
  auto ex = trainsim({"step", ci, "--explain", "--set", "parallel.ep_comm_overlap=true"});
  ASSERT_EQ(ex.code, kExitOk) << ex.err;
  EXPECT_TRUE(contains(ex.out, "--overlap-moe-expert-parallel-comm")) << ex.out;
  EXPECT_FALSE(contains(trainsim({"step", ci, "--explain"}).out, "--overlap-moe-expert-parallel-comm"));
}

}  // namespace
}  // namespace sim::cli::import_tests
