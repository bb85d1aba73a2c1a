// trainsim import: Megatron-LM, DeepSpeed, TorchTitan and Hugging Face inputs into scenarios and models. The inputs
// in tests/data/import/ were written for these tests from the published architectures (not copied from projects).
#include "sim/cli/app.hpp"
#include "sim/importers/importers.hpp"
#include "sim/importers/toml.hpp"
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

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/import/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// Exit 2 and one message naming the file and where in it, what was found and what is accepted.
void expect_bad(const support::CliOutcome& o, const std::vector<std::string>& fragments) {
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  for (const auto& f : fragments)
    EXPECT_TRUE(contains(o.err, f)) << "missing \"" << f << "\" in:\n" << o.err;
  EXPECT_TRUE(o.out.empty()) << "nothing is written on bad input: " << o.out;
}

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

// ---- the Megatron-LM command line -------------------------------------------------------------------------------

TEST(ImportMegatron, DeepEpDispatchAndExpertTensorParallelism) {
  const auto im = importers::import_megatron_text(
      "torchrun --nproc_per_node=8 --nnodes 32 train.py --tensor-model-parallel-size 2 "
      "--expert-model-parallel-size 32 --expert-tensor-parallel-size 1 --moe-token-dispatcher-type flex "
      "--moe-enable-deepep --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --squared-relu\n",
      "launch.sh");
  const auto* dispatcher = im.draft.find("parallel.moe_dispatcher");
  ASSERT_NE(dispatcher, nullptr);
  EXPECT_EQ(std::get<std::string>(dispatcher->value), "deepep");
  EXPECT_EQ(im.draft.integer("parallel.expert_tp"), 1);
  ASSERT_NE(im.draft.find("model.activation"), nullptr);
  EXPECT_EQ(std::get<std::string>(im.draft.find("model.activation")->value), "relu2") << "--squared-relu (Nemotron)";
}

TEST(ImportMegatron, CommunicationOverlapFlags) {
  // --tp-comm-overlap and --overlap-param-gather change the step model (execution/tp_overlap.hpp, the parameter
  // gather under the next forward); --overlap-grad-reduce, trainsim's default, is tested below.
  const auto im = importers::import_megatron_text(
      "torchrun --nproc_per_node=8 --nnodes 4 train.py --tensor-model-parallel-size 4 --sequence-parallel "
      "--tp-comm-overlap --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather "
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
      "launch.sh");
  ASSERT_NE(im.draft.find("parallel.tp_comm_overlap"), nullptr);
  EXPECT_TRUE(std::get<bool>(im.draft.find("parallel.tp_comm_overlap")->value));
  ASSERT_NE(im.draft.find("parallel.overlap_param_gather"), nullptr);
  EXPECT_TRUE(std::get<bool>(im.draft.find("parallel.overlap_param_gather")->value));
  const auto plain = importers::import_megatron_text(
      "torchrun --nproc_per_node=8 --nnodes 4 train.py --tensor-model-parallel-size 4 --sequence-parallel "
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
      "launch.sh");
  EXPECT_EQ(plain.draft.find("parallel.tp_comm_overlap"), nullptr) << "Megatron-LM's default: off";
  EXPECT_EQ(plain.draft.find("parallel.ep_comm_overlap"), nullptr) << "Megatron-LM's default: off";
  // --overlap-moe-expert-parallel-comm: MoE all-to-alls beside another micro-batch's compute (ep_overlap.hpp).
  const auto moe = importers::import_megatron_text(
      "torchrun --nproc_per_node=8 --nnodes 4 train.py --expert-model-parallel-size 8 --num-experts 64 "
      "--moe-router-topk 6 --overlap-moe-expert-parallel-comm --delay-wgrad-compute "
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
      "launch.sh");
  ASSERT_NE(moe.draft.find("parallel.ep_comm_overlap"), nullptr);
  EXPECT_TRUE(std::get<bool>(moe.draft.find("parallel.ep_comm_overlap")->value));
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

TEST(ImportMegatron, ContextParallelCommunicationType) {
  // --cp-comm-type: one type (or the same for every layer); Megatron-LM's help spells all_gather "allgather". The
  // all-to-all types and a different type per layer are not modelled and refused.
  auto comm = [](const std::string& flag) {
    const auto im =
        importers::import_megatron_text("torchrun --nproc_per_node=8 --nnodes 4 train.py --context-parallel-size 4 " +
                                            flag + " --num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
                                        "launch.sh");
    const auto* f = im.draft.find("parallel.cp_comm_type");
    return f ? std::get<std::string>(f->value) : std::string("absent");
  };
  EXPECT_EQ(comm(""), "absent") << "Megatron-LM's default, p2p, is trainsim's";
  EXPECT_EQ(comm("--cp-comm-type p2p"), "p2p");
  EXPECT_EQ(comm("--cp-comm-type all_gather"), "all_gather");
  EXPECT_EQ(comm("--cp-comm-type allgather"), "all_gather");
  EXPECT_EQ(comm("--cp-comm-type p2p p2p p2p"), "p2p");
  for (const std::string bad : {"--cp-comm-type a2a", "--cp-comm-type a2a+p2p", "--cp-comm-type p2p a2a"}) {
    try {
      comm(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const base::ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cp-comm-type"), std::string::npos) << what;
      EXPECT_NE(what.find("launch.sh"), std::string::npos) << "names the file: " << what;
    }
  }
}

TEST(ImportMegatron, SaveIntervalBecomesTheCheckpointIntervalInSteps) {
  // --save-interval N with --save (its directory may come from a variable the file does not set): checkpoints every N
  // steps. Without --save Megatron-LM saves nothing: the interval stays Daly's, with a note. Not an iteration count:
  // refused, naming the flag.
  const std::string flags =
      "torchrun --nproc_per_node=8 --nnodes 4 train.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 ";
  const auto saved = importers::import_megatron_text(flags + "--save $CKPT_DIR --save-interval 500\n", "launch.sh");
  const auto* f = saved.draft.find("reliability.checkpoint.interval");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(std::get<std::string>(f->value), "500 steps");
  EXPECT_TRUE(contains(f->origin, "--save-interval"));
  EXPECT_TRUE(saved.unresolved.empty()) << "the directory's value is not needed";
  const auto unsaved = importers::import_megatron_text(flags + "--save-interval 500\n", "launch.sh");
  EXPECT_EQ(unsaved.draft.find("reliability.checkpoint.interval"), nullptr);
  bool noted = false;
  for (const auto& n : unsaved.notes)
    noted = noted || contains(n.what, "without --save Megatron-LM writes no checkpoint");
  EXPECT_TRUE(noted);
  try {
    importers::import_megatron_text(flags + "--save /ckpt --save-interval 0\n", "launch.sh");
    ADD_FAILURE() << "--save-interval 0 was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), "--save-interval")) << e.what();
  }
}

TEST(ImportTorchTitan, CheckpointSectionGivesTheIntervalAndWhetherSavesAreAsynchronous) {
  // [checkpoint] enable (enable_checkpoint before 2025) with an interval in steps: checkpoints every that many steps,
  // synchronously unless async_mode says otherwise (TorchTitan's default "disabled"); interval_type "seconds" (2024)
  // gives a time. Not enabled: nothing (Daly's optimum, trainsim's asynchronous default). A mode TorchTitan does not
  // have is refused.
  auto draft = [](const std::string& checkpoint) {
    return importers::import_torchtitan_text(
               "[parallelism]\ndata_parallel_shard_degree = 8\n[checkpoint]\n" + checkpoint, "t.toml")
        .draft;
  };
  auto text_at = [](const importers::Draft& d, const char* path) {
    const auto* f = d.find(path);
    return f ? std::get<std::string>(f->value) : std::string("absent");
  };
  const auto sync = draft("enable = true\ninterval = 250\n");
  EXPECT_EQ(text_at(sync, "reliability.checkpoint.interval"), "250 steps");
  ASSERT_NE(sync.find("reliability.checkpoint.async"), nullptr);
  EXPECT_FALSE(std::get<bool>(sync.find("reliability.checkpoint.async")->value));
  const auto async = draft("enable_checkpoint = true\ninterval = 1\nasync_mode = \"async_with_pinned_mem\"\n");
  EXPECT_EQ(text_at(async, "reliability.checkpoint.interval"), "1 step");
  EXPECT_TRUE(std::get<bool>(async.find("reliability.checkpoint.async")->value));
  EXPECT_EQ(text_at(draft("enable_checkpoint = true\ninterval_type = \"seconds\"\ninterval = 600\n"),
                    "reliability.checkpoint.interval"),
            "600 s");
  const auto off = draft("enable = false\ninterval = 250\n");
  EXPECT_EQ(off.find("reliability.checkpoint.interval"), nullptr);
  EXPECT_EQ(off.find("reliability.checkpoint.async"), nullptr);
  try {
    draft("enable = true\nasync_mode = \"sometimes\"\n");
    ADD_FAILURE() << "an unknown async_mode was accepted";
  } catch (const base::ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), "async_mode")) << e.what();
    EXPECT_TRUE(contains(e.what(), "t.toml")) << e.what();
  }
}

TEST(ImportMegatron, ADefaultInsideAnArrayIsNotedOnItsOwnFlag) {
  // NVIDIA's example scripts pass DISTRIBUTED_ARGS=( --nproc_per_node 8 --nnodes $NNODES ... ) to torchrun. The default
  // NNODES took (${NNODES:-2}) belongs to --nnodes, not to the array's first flag, quoted "${ARR[@]}" or not.
  for (const std::string use : {"${DISTRIBUTED_ARGS[@]}", "\"${DISTRIBUTED_ARGS[@]}\""}) {
    const auto im = importers::import_megatron_text(
        "GPUS_PER_NODE=8\nNNODES=${NNODES:-2}\nNODE_RANK=${NODE_RANK:-0}\n"
        "DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK)\n"
        "torchrun " +
            use + " pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
        "launch.sh");
    std::vector<std::string> defaults;
    for (const auto& n : im.notes)
      if (contains(n.what, " from ${")) defaults.push_back(n.where + ": " + n.what);
    ASSERT_EQ(defaults.size(), 1U) << use << ": " << (defaults.empty() ? "" : defaults.front());
    EXPECT_TRUE(contains(defaults.front(), "--nnodes")) << defaults.front();
    EXPECT_TRUE(contains(defaults.front(), "${NNODES:-2}")) << defaults.front();
  }
}

TEST(ImportMegatron, NcclNvlsEnableZeroTurnsNvlinkSharpOff) {
  // NVIDIA's DGX Cloud recipes export NCCL_NVLS_ENABLE=0 ("Disable NVLink SHARP to save memory").
  const std::string flags =
      "torchrun --nproc_per_node=8 --nnodes 4 train.py --tensor-model-parallel-size 8 "
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32\n";
  const auto off = importers::import_megatron_text("export NCCL_NVLS_ENABLE=0\n" + flags, "launch.sh");
  ASSERT_NE(off.draft.find("cluster.network.nvls"), nullptr);
  EXPECT_FALSE(std::get<bool>(off.draft.find("cluster.network.nvls")->value));
  EXPECT_TRUE(contains(off.draft.find("cluster.network.nvls")->origin, "NCCL_NVLS_ENABLE"));
  EXPECT_EQ(importers::import_megatron_text("export NCCL_NVLS_ENABLE=1\n" + flags, "launch.sh")
                .draft.find("cluster.network.nvls"),
            nullptr)
      << "NCCL's default: on";
  EXPECT_EQ(importers::import_megatron_text(flags, "launch.sh").draft.find("cluster.network.nvls"), nullptr);
  // Given to the launching command alone, it is the job's environment too.
  const auto prefixed = importers::import_megatron_text("NCCL_NVLS_ENABLE=0 " + flags, "launch.sh");
  ASSERT_NE(prefixed.draft.find("cluster.network.nvls"), nullptr);
  EXPECT_FALSE(std::get<bool>(prefixed.draft.find("cluster.network.nvls")->value));
}

TEST(ImportMegatron, ShellSyntaxVariablesAndBothFlagForms) {
  const auto im = importers::import_megatron_text(
      "export TP=4\nPP=2 # two stages\n"
      "torchrun --nproc_per_node=8 --nnodes 4 train.py \\\n"
      "  --tensor-model-parallel-size $TP --pipeline-model-parallel-size=${PP} \\\n"
      "  --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 \\\n"
      "  --micro-batch-size 2 --use-flash-attn --recompute-activations '--foo' \"a b\"\n",
      "launch.sh");
  const auto& d = im.draft;
  EXPECT_EQ(d.integer("parallel.tp"), 4);
  EXPECT_EQ(d.integer("parallel.pp"), 2);
  EXPECT_EQ(d.integer("cluster.gpus"), 32) << "--nnodes x --nproc-per-node";
  EXPECT_EQ(d.integer("cluster.gpus_per_node"), 8);
  EXPECT_EQ(d.integer("parallel.global_batch"), 2 * 4) << "Megatron-LM default: micro x dp = 2 x 32/(4x2)";
  EXPECT_EQ(d.integer("model.ffn_hidden"), 4 * 4096) << "Megatron-LM default without --swiglu";
  EXPECT_EQ(d.integer("model.kv_heads"), 32);
  ASSERT_NE(d.find("parallel.recompute"), nullptr);
  EXPECT_EQ(std::get<std::string>(d.find("parallel.recompute")->value), "selective");
  EXPECT_TRUE(contains(d.find("parallel.tp")->origin, "launch.sh:4")) << "origins name the line";
  bool foo = false;
  for (const auto& f : im.ignored)
    foo = foo || contains(f.what, "--foo");
  EXPECT_TRUE(foo) << "a flag trainsim does not read is listed";
}

TEST(ImportMegatron, SwigluWidthDefaultAndVirtualStagesFromLayersPerStage) {
  const auto im = importers::import_megatron_text(
      "--num-layers 48 --hidden-size 4096 --num-attention-heads 32 --swiglu --pipeline-model-parallel-size 4 "
      "--num-layers-per-virtual-pipeline-stage 3 --group-query-attention",
      "args.txt");
  EXPECT_EQ(im.draft.integer("model.ffn_hidden"), 10880) << "int(4 x 4096 x 2/3 / 64) x 64";
  EXPECT_EQ(im.draft.integer("parallel.vpp"), 4) << "48 / (4 x 3)";
  EXPECT_EQ(im.draft.integer("model.kv_heads"), 1) << "--group-query-attention alone: one group";
}

TEST(ImportMegatron, UndefinedVariablesAreUnresolvedNeverGuessed) {
  const auto im = importers::import_megatron_text("--tensor-model-parallel-size $TP --seq-length 2048", "l.sh");
  EXPECT_FALSE(im.draft.has("parallel.tp") && im.draft.find("parallel.tp")->weak == false);
  ASSERT_FALSE(im.unresolved.empty());
  EXPECT_TRUE(contains(im.unresolved[0].what, "$TP")) << im.unresolved[0].what;
  EXPECT_EQ(im.unresolved[0].path, "parallel.tp");
}

TEST(ImportMegatron, MissingClusterSizeExitsTwoWithTheOptionThatGivesIt) {
  auto o = trainsim(
      {"import", "megatron", kData + "llama3-8b-launch.sh", "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb"});
  // The launch line has a torchrun prefix (64 GPUs), but no training length.
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_TRUE(contains(o.err, "training.tokens: missing: give --tokens")) << o.err;
  EXPECT_TRUE(o.out.empty());
  auto p = trainsim({"import", "megatron", kData + "llama3-8b-launch.sh", "--model", "llama3-8b", "--partial"});
  EXPECT_EQ(p.code, kExitOk) << p.err;
  EXPECT_TRUE(contains(p.out, "\"tp\": 2")) << "--partial writes what is resolved: " << p.out;
  EXPECT_TRUE(contains(p.err, "unresolved: hardware")) << p.err;
}

TEST(ImportMegatron, ANamedModelThatDisagreesWithTheFlagsIsAConflict) {
  auto o = trainsim({"import", "megatron", kData + "llama3-8b-launch.sh", "--model", "llama2-70b", "--hardware",
                     "h100-sxm5-80gb", "--tokens", "1T"});
  expect_bad(o, {"model.layers: 32 (", "llama3-8b-launch.sh:16 --num-layers) disagrees with 80 (--model llama2-70b)"});
}

TEST(ImportMegatron, MalformedInputsExitTwoNamingFileLineAndWhatIsAccepted) {
  support::TempDir dir;
  expect_bad(trainsim({"import", "megatron",
                       dir.write("a.sh", "python pretrain_gpt.py \\\n  --tensor-model-parallel-size two\n")}),
             {"a.sh: line 2: --tensor-model-parallel-size: \"two\" is not a positive integer; write e.g."});
  expect_bad(trainsim({"import", "megatron", dir.write("b.sh", "--recompute-granularity partial")}),
             {"b.sh: line 1: --recompute-granularity: \"partial\" is not accepted; accepted: full, selective"});
  expect_bad(trainsim({"import", "megatron", dir.write("c.sh", "--num-layers 2\n--seq-length \"4096\n")}),
             {"c.sh: line 2: unterminated \"", "close it"});
  expect_bad(trainsim({"import", "megatron", dir.write("d.sh", "--bf16=true --seq-length 0")}),
             {"d.sh: line 1: --bf16 takes no value", "--seq-length: \"0\" is not a positive integer"});
  expect_bad(trainsim({"import", "megatron", dir.write("e.sh", "--micro-batch-size")}),
             {"e.sh: line 1: --micro-batch-size needs a value"});
  expect_bad(trainsim({"import", "megatron", dir.write("f.sh", "python train.py\n")}),
             {"f.sh: no Megatron-LM flags found"});
  expect_bad(trainsim({"import", "megatron", dir.write("g.sh", "  \n")}), {"g.sh: is empty"});
  expect_bad(trainsim({"import", "megatron", (dir.path() / "missing.sh").string()}),
             {"missing.sh: cannot open: no such file"});
  expect_bad(trainsim({"import", "megatron",
                       dir.write("h.sh",
                                 "--num-layers 30 --pipeline-model-parallel-size 4 "
                                 "--num-layers-per-virtual-pipeline-stage 2")}),
             {"h.sh: line 1: --num-layers-per-virtual-pipeline-stage 2: 30 layers do not split"});
}

// ---- DeepSpeed ----------------------------------------------------------------------------------------------------

TEST(ImportDeepSpeed, ZeroStageBatchesAndCheckpointing) {
  auto o = trainsim({"import", "deepspeed", kData + "deepspeed-zero2.json", "--model", "llama3-8b", "--hardware",
                     "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B", "--set", "training.seq_len=4096"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"zero_stage\": 2")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"micro_batch\": 2")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"global_batch\": 256")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"recompute\": \"full\"")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"overlap_grad_reduce\": true")) << "overlap_comm is read: " << o.out;
  EXPECT_FALSE(contains(o.err, "/zero_optimization/overlap_comm")) << "read, not listed as ignored: " << o.err;
  EXPECT_TRUE(contains(o.err, "/zero_optimization/reduce_bucket_size"))
      << "ignored keys are listed by JSON path: " << o.err;
}

TEST(ImportDeepSpeed, Stage3LiveParametersBoundTheGatheredWeights) {
  support::TempDir dir;
  auto o = trainsim({"import", "deepspeed",
                     dir.write("z3.json",
                               "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, \"bf16\": "
                               "{\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
                               "\"stage3_max_live_parameters\": 1e9}}"),
                     "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B", "--set",
                     "training.seq_len=4096"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"zero3_live_params\": 1e+09")) << o.out;
  EXPECT_FALSE(contains(o.err, "/zero_optimization/stage3_max_live_parameters")) << "read, not listed as ignored";
}

TEST(ImportDeepSpeed, AutoValuesAreUnresolvedUntilGiven) {
  auto o = trainsim({"import", "deepspeed", kData + "deepspeed-auto.json", "--model", "llama3-8b", "--hardware",
                     "h100-sxm5-80gb", "--gpus", "16", "--tokens", "10B"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_TRUE(contains(o.err, "deepspeed-auto.json /train_micro_batch_size_per_gpu: \"auto\" is filled in at run time"))
      << o.err;
  EXPECT_TRUE(contains(o.err, "/bf16/enabled")) << o.err;
  auto ok = trainsim({"--set", "parallel.micro_batch=1", "--set", "parallel.global_batch=64", "--set",
                      "training.seq_len=2048", "--set", "training.dtype=bf16", "import", "deepspeed",
                      kData + "deepspeed-auto.json", "--model", "llama3-8b", "--hardware", "h100-sxm5-80gb", "--gpus",
                      "16", "--tokens", "10B"});
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_TRUE(contains(ok.err, "settled: ")) << ok.err;
  EXPECT_TRUE(contains(ok.out, "\"zero_stage\": 3")) << ok.out;
}

TEST(ImportDeepSpeed, MalformedInputsExitTwoNamingTheJsonPath) {
  support::TempDir dir;
  expect_bad(trainsim({"import", "deepspeed", dir.write("a.json", "{\"zero_optimization\": {\"stage\": 5}}")}),
             {"a.json: /zero_optimization/stage: ", "5"});
  expect_bad(trainsim({"import", "deepspeed", dir.write("b.json", "{\"train_micro_batch_size_per_gpu\": \"two\"}")}),
             {"b.json: /train_micro_batch_size_per_gpu: expected an integer or \"auto\", found \"two\""});
  expect_bad(trainsim({"import", "deepspeed",
                       dir.write("c.json", "{\"train_batch_size\": 8,\n \"bf16\": {\"enabled\": tru}}")}),
             {"c.json", "line 2"});
  expect_bad(trainsim({"import", "deepspeed", dir.write("d.json", "[1, 2]")}), {"d.json: /: expected an object"});
  expect_bad(trainsim({"import", "deepspeed",
                       dir.write("e.json",
                                 "{\"train_batch_size\": 100, \"train_micro_batch_size_per_gpu\": 2, "
                                 "\"gradient_accumulation_steps\": 4}"),
                       "--gpus", "16"}),
             {"e.json: /train_batch_size: 100 is not train_micro_batch_size_per_gpu x gradient_accumulation_steps x "
              "data-parallel size = 2 x 4 x 16 = 128"});
}

// ---- TorchTitan and its TOML ------------------------------------------------------------------------------------

TEST(ImportTorchTitan, JobConfigToAScenarioThatSteps) {
  support::TempDir dir;
  const std::string out = (dir.path() / "t.json").string();
  auto o = trainsim(
      {"import", "torchtitan", kData + "torchtitan-llama3-8b.toml", "--hardware", "h100-sxm5-80gb", "-o", out});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const std::string text = read(out);
  EXPECT_TRUE(contains(text, "\"model\": \"llama3-8b\"")) << text;
  EXPECT_TRUE(contains(text, "\"gpus\": 16")) << "dp_shard 8 x tp 2: " << text;
  EXPECT_TRUE(contains(text, "\"zero_stage\": 3")) << "FSDP: " << text;
  EXPECT_TRUE(contains(text, "\"global_batch\": 8")) << "local 1 x dp 8: " << text;
  EXPECT_TRUE(contains(text, "\"tokens\": 65536000")) << "1,000 steps x 8 x 8192: " << text;
  EXPECT_TRUE(contains(text, "\"recompute\": \"op\""))
      << "selective_ac_option op: per-operator checkpointing: " << text;
  EXPECT_EQ(trainsim({"step", out}).code, kExitOk);
}

/// The string a TorchTitan TOML's import drafts at `path`, or "absent".
std::string torchtitan_drafted(const std::string& text, const char* path) {
  const auto im = importers::import_torchtitan_text(text, "t.toml");
  const auto* f = im.draft.find(path);
  return f ? std::get<std::string>(f->value) : std::string("absent");
}

// FP8 as TorchTitan's configs turn it on, in each year's form, with torchao's recipe: [float8] and converters
// "float8" (2024), [quantize.linear.float8] and "quantize.linear.float8" (2025), [quantize.dense.float8] and
// "quantize.dense.float8" (late 2025), MX ("quantize.dense.mx"). The 2025 forms were listed as not modelled and the
// run imported as BF16; every form had TE's delayed scaling where torchao scales per tensor.
TEST(ImportTorchTitan, Float8ConvertersOfEveryYearWithTheirRecipe) {
  auto drafted = [](const std::string& text) {
    return torchtitan_drafted(text, "training.dtype") + " " + torchtitan_drafted(text, "training.fp8_recipe");
  };
  EXPECT_EQ(drafted("[model]\nconverters = \"float8\"\n"), "fp8 tensorwise") << "torchao's default recipe";
  EXPECT_EQ(drafted("[model]\nconverters = [\"float8\"]\n[float8]\nrecipe_name = \"rowwise\"\n"), "fp8 rowwise");
  EXPECT_EQ(drafted("[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
                    "recipe_name = \"rowwise_with_gw_hp\"\nfilter_fqns = [\"output\"]\n"),
            "fp8 rowwise");
  EXPECT_EQ(drafted("[model]\nconverters = [\"quantize.dense.float8\", \"quantize.moe.float8\"]\n"
                    "[quantize.dense.float8]\nrecipe_name = \"tensorwise\"\n"),
            "fp8 tensorwise");
  EXPECT_EQ(drafted("[model]\nconverters = [\"quantize.dense.mx\"]\n"), "fp8 mxfp8");
  EXPECT_EQ(drafted("[quantize.linear.float8]\nrecipe_name = \"rowwise\"\n"), "bf16 absent")
      << "the table configures; only a converter turns FP8 on";
  // The table's other keys are listed one by one as not modelled, not the whole [quantize.linear] hidden.
  const auto im = importers::import_torchtitan_text(
      "[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
      "enable_fsdp_float8_all_gather = true\n",
      "t.toml");
  ASSERT_EQ(im.ignored.size(), 1u);
  EXPECT_TRUE(contains(im.ignored[0].what, "quantize.linear.float8.enable_fsdp_float8_all_gather"))
      << im.ignored[0].what;
  // FP8 experts beside BF16 dense layers, or an unknown recipe: refused naming the construct.
  for (const std::string& bad :
       {std::string("[model]\nconverters = [\"quantize.moe.float8\"]\n"),
        std::string("[model]\nconverters = [\"float8\"]\n[float8]\nrecipe_name = \"blockwise\"\n")}) {
    try {
      (void)importers::import_torchtitan_text(bad, "t.toml");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const base::ConfigError& e) {
      EXPECT_TRUE(contains(e.what(), "t.toml: line ")) << e.what();
    }
  }
}

TEST(ImportTorchTitan, DualPipeVIsTheDualpipevSchedule) {
  // torch.distributed.pipelining's ScheduleDualPipeV (DeepSeek's DualPipe in its V form), TorchTitan's "DualPipeV".
  auto schedule = [](const std::string& text) { return torchtitan_drafted(text, "parallel.schedule"); };
  EXPECT_EQ(schedule("[parallelism]\npipeline_parallel_degree = 4\npipeline_parallel_schedule = \"DualPipeV\"\n"),
            "dualpipev");
  EXPECT_EQ(schedule("[parallelism]\npipeline_parallel_degree = 4\npipeline_parallel_schedule = \"ZBVZeroBubble\"\n"),
            "absent")
      << "not modelled: listed as unresolved, not guessed";
}

TEST(ImportTorchTitan, TheLossIsUpcastUnlessCompiled) {
  auto loss = [](const std::string& text) { return torchtitan_drafted(text, "training.cross_entropy"); };
  EXPECT_EQ(loss("[training]\nseq_len = 8192\n"), "upcast") << "cross_entropy(pred.float(), labels)";
  EXPECT_EQ(loss("[compile]\nenable = true\ncomponents = [\"model\"]\n"), "upcast");
  EXPECT_EQ(loss("[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n"), "fused");
  EXPECT_EQ(loss("[compile]\nenable = false\ncomponents = [\"loss\"]\n"), "upcast") << "not compiled";
}

TEST(ImportTorchTitan, ContextParallelismMovesRepeatedKeysAndValues) {
  // TorchTitan's Llama repeats the key/value heads before SDPA, which context parallelism then gathers.
  auto kv = [](const std::string& text) { return torchtitan_drafted(text, "training.attention_kv"); };
  EXPECT_EQ(kv("[parallelism]\ncontext_parallel_degree = 4\n"), "repeated");
  EXPECT_EQ(kv("[parallelism]\ncontext_parallel_degree = 1\n"), "absent") << "nothing is gathered without CP";
}

TEST(ImportTorchTitan, ContextParallelismGathersKeysAndValuesByDefault) {
  // context_parallel_rotate_method: "allgather" (TorchTitan's default) gathers every rank's chunk; "alltoall" passes
  // chunks around the ring. Read from [parallelism] (2025) or [experimental] (2024); anything else is refused.
  auto comm = [](const std::string& text) { return torchtitan_drafted(text, "parallel.cp_comm_type"); };
  EXPECT_EQ(comm("[parallelism]\ncontext_parallel_degree = 4\n"), "all_gather") << "TorchTitan's default";
  EXPECT_EQ(comm("[parallelism]\ncontext_parallel_degree = 4\ncontext_parallel_rotate_method = \"alltoall\"\n"), "p2p");
  EXPECT_EQ(comm("[parallelism]\ncontext_parallel_degree = 4\n[experimental]\ncontext_parallel_rotate_method = "
                 "\"allgather\"\n"),
            "all_gather");
  EXPECT_EQ(comm("[parallelism]\ncontext_parallel_degree = 1\n"), "absent") << "no context parallelism";
  try {
    importers::import_torchtitan_text(
        "[parallelism]\ncontext_parallel_degree = 4\ncontext_parallel_rotate_method = \"ring\"\n", "t.toml");
    ADD_FAILURE() << "an unknown rotate method was accepted";
  } catch (const base::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("context_parallel_rotate_method"), std::string::npos) << what;
    EXPECT_NE(what.find("allgather, alltoall"), std::string::npos) << what;
  }
}

TEST(ImportTorchTitan, TensorParallelLinearsSaveTheirGatheredInput) {
  auto saved = [](const std::string& text) { return torchtitan_drafted(text, "training.sp_saved_inputs"); };
  EXPECT_EQ(saved("[parallelism]\ntensor_parallel_degree = 8\n"), "gathered") << "DTensor ColwiseParallel";
  EXPECT_EQ(saved("[parallelism]\ntensor_parallel_degree = 1\n"), "absent") << "no tensor parallelism";
  // DTensor's Shard(1) on [batch, sequence, hidden]: each gather and scatter is copied into place.
  auto layout = [](const std::string& text) { return torchtitan_drafted(text, "training.sp_layout"); };
  EXPECT_EQ(layout("[parallelism]\ntensor_parallel_degree = 8\n"), "batch_first");
  EXPECT_EQ(layout("[parallelism]\ntensor_parallel_degree = 1\n"), "absent") << "no sequence parallelism";
}

TEST(ImportTorchTitan, AttentionIsSdpaFlashAttention2) {
  EXPECT_EQ(torchtitan_drafted("[parallelism]\ntensor_parallel_degree = 1\n", "training.attention_kernel"), "flash2");
}

TEST(ImportTorchTitan, PipelineParallelismHoldsAReceiveBufferPerMicroBatch) {
  auto buffers = [](const std::string& text) { return torchtitan_drafted(text, "memory.pipeline_buffers"); };
  EXPECT_EQ(buffers("[parallelism]\npipeline_parallel_degree = 8\n"), "per_micro_batch") << "torch pipelining";
  EXPECT_EQ(buffers("[parallelism]\npipeline_parallel_degree = 1\n"), "absent") << "no pipeline";
}

TEST(ImportTorchTitan, PipelinedFsdpGathersOncePerStep) {
  // FSDP over 8 ranks: ZeRO-3 without a pipeline; with one, weights stay gathered and gradients unsynced until the
  // last micro-batch (ZeRO-1), unless fsdp_reshard_after_forward is "always".
  auto stage = [](const std::string& text) {
    const auto im = importers::import_torchtitan_text(text, "t.toml");
    const auto* f = im.draft.find("parallel.zero_stage");
    return f ? std::get<std::int64_t>(f->value) : std::int64_t{-1};
  };
  const std::string fsdp = "[parallelism]\ndata_parallel_shard_degree = 8\n";
  EXPECT_EQ(stage(fsdp), 3);
  EXPECT_EQ(stage(fsdp + "pipeline_parallel_degree = 4\n"), 1);
  EXPECT_EQ(stage(fsdp + "fsdp_reshard_after_forward = \"never\"\n"), 2);
  EXPECT_EQ(stage(fsdp + "pipeline_parallel_degree = 4\nfsdp_reshard_after_forward = \"always\"\n"), 3);
}

TEST(ImportTorchTitan, AsyncTensorParallelIsTpCommunicationOverlapWhenCompiled) {
  // enable_async_tensor_parallel, wherever TorchTitan kept it ([experimental] 2024, [parallelism] 2025, [compile]
  // since): the TP overlap, PyTorch's method, with torch.compile on; noted and not applied without it, or without
  // tensor parallelism.
  auto overlap = [](const std::string& text) {
    const auto im = importers::import_torchtitan_text(text, "t.toml");
    const auto* method = im.draft.find("parallel.tp_comm_overlap_method");
    const bool on = im.draft.find("parallel.tp_comm_overlap") != nullptr;
    EXPECT_EQ(on, method != nullptr);
    if (method) {
      EXPECT_EQ(std::get<std::string>(method->value), "async_tp");
    }
    return on;
  };
  auto noted = [](const std::string& text) {
    const auto im = importers::import_torchtitan_text(text, "t.toml");
    for (const auto& n : im.notes)
      if (n.where.find("enable_async_tensor_parallel") != std::string::npos) return true;
    return false;
  };
  const std::string tp = "[parallelism]\ndata_parallel_shard_degree = 2\ntensor_parallel_degree = 4\n";
  const std::string compiled = "[compile]\nenable = true\n";
  EXPECT_TRUE(overlap(tp + "enable_async_tensor_parallel = true\n" + compiled));
  EXPECT_TRUE(overlap(tp + compiled + "enable_async_tensor_parallel = true\n"));
  EXPECT_TRUE(overlap(tp + "[training]\ncompile = true\n[experimental]\nenable_async_tensor_parallel = true\n"));
  EXPECT_FALSE(overlap(tp + "enable_async_tensor_parallel = false\n" + compiled));
  EXPECT_FALSE(overlap(tp + compiled));
  EXPECT_FALSE(overlap(tp + "enable_async_tensor_parallel = true\n"));
  EXPECT_TRUE(noted(tp + "enable_async_tensor_parallel = true\n"));
  EXPECT_TRUE(noted("[parallelism]\nenable_async_tensor_parallel = true\n" + compiled));
  // Read, so not listed as ignored; a wrong type is an error naming the key.
  const auto im = importers::import_torchtitan_text(tp + "enable_async_tensor_parallel = true\n" + compiled, "t.toml");
  for (const auto& i : im.ignored)
    EXPECT_EQ(i.what.find("enable_async_tensor_parallel"), std::string::npos);
  try {
    (void)importers::import_torchtitan_text(tp + "enable_async_tensor_parallel = 1\n", "t.toml");
    FAIL() << "expected a ConfigError";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("enable_async_tensor_parallel: expected true or false, found"),
              std::string::npos);
  }
}

TEST(ImportTorchTitan, TomlSubset) {
  const auto t = importers::parse_toml(
      "title = 'x' # comment\n[a.b]\nn = -1_000\nf = 3.5e-2\nok = true\narr = [\n  1, 2, # two\n  3,\n]\n"
      "c.d = \"q\\\"\\u00e9\"\ninline = { x = 1, y = [\"s\"] }\n",
      "t.toml");
  const auto* b = t.get("a")->get("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->get("n")->integer, -1000);
  EXPECT_DOUBLE_EQ(b->get("f")->number, 0.035);
  EXPECT_TRUE(b->get("ok")->boolean);
  EXPECT_EQ(b->get("arr")->array.size(), 3u);
  EXPECT_EQ(b->get("c")->get("d")->string, "q\"\xC3\xA9");
  EXPECT_EQ(b->get("inline")->get("y")->array[0].string, "s");
  EXPECT_EQ(b->get("arr")->line, 6);
  // Members in file order (toml++ keeps them sorted), and TOML 1.0 beyond the old subset: arrays of tables,
  // multi-line strings, hexadecimal integers.
  const auto u = importers::parse_toml(
      "z = 1\na = 2\n[[stage]]\nn = 1\n[[stage]]\nn = 2\ns = \"\"\"two\nlines\"\"\"\nh = 0xff\n", "u.toml");
  ASSERT_EQ(u.table.size(), 3u);
  EXPECT_EQ(u.table[0].first, "z");
  EXPECT_EQ(u.table[1].first, "a");
  EXPECT_EQ(u.get("stage")->array.size(), 2u);
  EXPECT_EQ(u.get("stage")->array[1].get("s")->string, "two\nlines");
  EXPECT_EQ(u.get("stage")->array[1].get("h")->integer, 255);
}

TEST(ImportTorchTitan, MalformedInputsExitTwoWithTheLine) {
  support::TempDir dir;
  auto bad = [&](const std::string& name, const std::string& text, const std::vector<std::string>& fragments) {
    SCOPED_TRACE(name);
    expect_bad(trainsim({"import", "torchtitan", dir.write(name, text)}), fragments);
  };
  bad("a.toml", "[parallelism]\ntensor_parallel_degree = \"2\"\n",
      {"a.toml: line 2: [parallelism] tensor_parallel_degree: expected an integer, found a string"});
  bad("b.toml", "[training]\nseq_len = 8192\nseq_len = 4096\n",
      {"b.toml: line 3: Error while parsing key-value pair: cannot redefine existing integer 'seq_len'"});
  bad("c.toml", "[parallelism\n", {"c.toml: line 1: Error while parsing table header: expected ']'"});
  bad("d.toml", "[job]\ndescription = \"unterminated\n", {"d.toml: line 2: Error while parsing string"});
  bad("e.toml", "[activation_checkpoint]\nmode = \"sometimes\"\n",
      {"e.toml: line 2: [activation_checkpoint] mode: \"sometimes\" is not accepted; accepted: none, selective, full"});
  bad("g.toml", "[job]\nwhen = 1979-05-27\n", {"g.toml: line 2: a date or time"});
  bad("h.toml", "[training]\nsteps = 01\n", {"h.toml: line 2: Error while parsing decimal integer: leading zeroes"});
  bad("i.toml", "[training]\nseq_len = 8192 extra\n",
      {"i.toml: line 2: Error while parsing key-value pair: expected a comment or whitespace, saw 'e'"});
  bad("j.toml", "[parallelism]\ndata_parallel_shard_degree = -2\n",
      {"j.toml: line 2: [parallelism] data_parallel_shard_degree: -2 is not accepted; expected a positive integer or "
       "-1"});
  bad("k.toml", "[a]\nx = 1\n[a]\n",
      {"k.toml: line 3: Error while parsing table header: cannot redefine existing table 'a'"});
  // Found by fuzz_importers: a backslash at the very end of the file was read past (ASan heap-buffer-overflow).
  bad("l.toml", "[job]\nname = \"x\\", {"l.toml: line 2: Error while parsing string: encountered end-of-file"});
}

// ---- Hugging Face config.json -------------------------------------------------------------------------------------

TEST(ImportHfConfig, MixtralToAModelThatValidatesAndMatchesTheBuiltIn) {
  support::TempDir dir;
  const std::string out = (dir.path() / "m.json").string();
  auto o = trainsim({"import", "hf-config", kData + "mixtral-config.json", "-o", out});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_EQ(trainsim({"validate", out}).code, kExitOk);
  const std::string text = read(out);
  EXPECT_TRUE(contains(text, "\"experts\": 8")) << text;
  EXPECT_TRUE(contains(text, "\"top_k\": 2")) << text;
  // Same parameter count as the built-in model: describe both through a scenario's resolved print.
  const std::string scen =
      R"({"schema": "trainsim.scenario/1", "name": "m", "model": "MODEL", "hardware": "h100-sxm5-80gb",
    "cluster": {"gpus": 64}, "parallel": {"tp": 2, "ep": 8, "global_batch": 64}, "training": {"seq_len": 4096, "tokens": "1T"}})";
  auto with = [&](const std::string& model) {
    std::string s = scen;
    s.replace(s.find("MODEL"), 5, model);
    return trainsim({"step", dir.write("s-" + std::to_string(model.size()) + ".json", s), "--json"}).out;
  };
  EXPECT_EQ(with(out), with("mixtral-8x7b"));
}

// A multimodal config (Llama 4's Llama4ForConditionalGeneration) holds its language model in text_config, which was
// refused ("no architecture found"). Llama 4's text model (transformers' Llama4TextConfig, the fields of
// meta-llama/Llama-4-Scout-17B-16E's config.json): MoE layers with one shared expert of intermediate_size, dense
// layers of intermediate_size_mlp (Maverick's every second layer), chunked attention with every fourth layer global.
// Counts against the model cards: Scout 17B active (109B total with the vision encoder, which is not modelled),
// Maverick 400B total and 17B active.
TEST(ImportHfConfig, MultimodalWrapperAndLlama4TextModel) {
  support::TempDir dir;
  auto config = [](int experts, int step, const std::string& moe_layers) {
    std::string rope = "[";
    for (int i = 0; i < 48; ++i)
      rope += std::string(i ? ", " : "") + ((i + 1) % 4 == 0 ? "0" : "1");
    rope += "]";
    return R"({"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
      "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
        "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8,
        "head_dim": 128, "vocab_size": 202048, "num_local_experts": )" +
           std::to_string(experts) + R"(, "num_experts_per_tok": 1, "interleave_moe_layer_step": )" +
           std::to_string(step) + moe_layers + R"(, "no_rope_layers": )" + rope +
           R"(, "attention_chunk_size": 8192, "use_qk_norm": true, "hidden_act": "silu", "rms_norm_eps": 1e-05,
        "rope_theta": 500000.0, "tie_word_embeddings": false, "max_position_embeddings": 10485760},
      "vision_config": {"hidden_size": 1408, "num_hidden_layers": 34}})";
  };
  std::string all = ", \"moe_layers\": [";
  for (int i = 0; i < 48; ++i)
    all += std::string(i ? ", " : "") + std::to_string(i);
  all += "]";
  const auto scout = dir.write("scout.json", config(16, 1, all));
  const auto maverick = dir.write("maverick.json", config(128, 2, ""));
  auto j = trainsim({"describe", "models", scout, maverick, "--format", "json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  const auto models = nlohmann::json::parse(j.out);
  ASSERT_EQ(models.size(), 2U);
  EXPECT_NEAR(models[0].at("active_params").get<double>(), 17e9, 0.03 * 17e9);
  EXPECT_GT(models[0].at("params").get<double>(), 105e9);
  EXPECT_LT(models[0].at("params").get<double>(), 109e9) << "the card's 109B holds the vision encoder";
  EXPECT_NEAR(models[1].at("params").get<double>(), 400e9, 0.01 * 400e9);
  EXPECT_NEAR(models[1].at("active_params").get<double>(), 17e9, 0.03 * 17e9);
  auto o = trainsim({"import", "hf-config", maverick});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"ffn_hidden\": 16384")) << "dense layers: " << o.out;
  EXPECT_TRUE(contains(o.out, "\"shared_experts\": 1")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"sliding_window\": 8192")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"global_every\": 4")) << o.out;
  EXPECT_TRUE(contains(o.err, "the language model of a multimodal config")) << o.err;
  EXPECT_TRUE(contains(o.err, "vision_config")) << "what is not modelled is named: " << o.err;
}

// Gemma 3's multimodal config.json leaves most of its text model to Gemma3TextConfig's defaults (google/gemma-3-27b-it:
// text_config gives sizes and sliding_window only): vocab_size 262208, hidden_activation gelu_pytorch_tanh (a gated
// GeLU MLP), every sliding_window_pattern-th (6) layer global, QK-norm. Imported before as every layer windowed, and
// refused for want of hidden_act and vocab_size.
TEST(ImportHfConfig, Gemma3TextModelTakesItsClassDefaults) {
  support::TempDir dir;
  const auto gemma = dir.write("gemma3.json", R"({"architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3", "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504,
    "model_type": "gemma3_text", "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
    "query_pre_attn_scalar": 168, "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
    "vision_config": {"hidden_size": 1152}})");
  auto o = trainsim({"import", "hf-config", gemma});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  for (const char* field : {"\"vocab\": 262208", "\"activation\": \"geglu\"", "\"sliding_window\": 1024",
                            "\"global_every\": 6", "\"qk_norm\": true"})
    EXPECT_TRUE(contains(o.out, field)) << field << "\n" << o.out;
  auto j = trainsim({"describe", "models", gemma, "--format", "json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  EXPECT_NEAR(nlohmann::json::parse(j.out)[0].at("params").get<double>(), 27e9, 0.02 * 27e9) << "Gemma 3 27B";
  // Gemma 2 (google/gemma-2-9b's config.json sizes): every second layer global (Gemma2 is_sliding = layer_idx even).
  const auto gemma2 = dir.write("gemma2.json", R"({"model_type": "gemma2", "hidden_size": 3584,
    "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
    "head_dim": 256, "vocab_size": 256000, "hidden_activation": "gelu_pytorch_tanh", "sliding_window": 4096})");
  auto g2 = trainsim({"import", "hf-config", gemma2});
  ASSERT_EQ(g2.code, kExitOk) << g2.err;
  EXPECT_TRUE(contains(g2.out, "\"global_every\": 2")) << g2.out;
  EXPECT_TRUE(contains(g2.out, "\"activation\": \"geglu\"")) << g2.out;
}

TEST(ImportHfConfig, MalformedInputsExitTwo) {
  support::TempDir dir;
  expect_bad(
      trainsim({"import", "hf-config", dir.write("a.json", R"({"num_hidden_layers": "32", "hidden_size": 4096})")}),
      {"a.json: /num_hidden_layers: expected an integer, found \"32\" (a string)"});
  expect_bad(trainsim({"import", "hf-config", dir.write("b.json", R"({"num_hidden_layers": -4})")}),
             {"b.json: /num_hidden_layers: "});
  expect_bad(trainsim({"import", "hf-config", dir.write("c.json", "{\"hidden_size\": 4096,\n\"x\": }")}),
             {"c.json", "line 2"});
  expect_bad(trainsim({"import", "hf-config", dir.write("d.json", R"({"foo": 1})")}),
             {"d.json: /: no architecture found"});
  expect_bad(trainsim({"import", "hf-config",
                       dir.write("e.json", R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                                 "intermediate_size": 256, "vocab_size": 1000, "hidden_act": "relu"})")}),
             {"e.json /hidden_act: \"relu\" is not modelled; accepted: silu"});
  expect_bad(trainsim({"import", "hf-config",
                       dir.write("f.json", R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                                 "vocab_size": 1000, "hidden_act": "silu"})")}),
             {"unresolved: model.ffn_hidden: missing"});
}

}  // namespace
}  // namespace sim::cli
