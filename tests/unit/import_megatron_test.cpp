// tests/unit/import_megatron_test.cpp: the Megatron-LM command line into a scenario, or a refusal naming file and line.
// Flags and Megatron-LM's defaults, shell variables and arrays, environment settings, unresolved variables, conflicts.
#include "tests/unit/import_test_support.hpp"
#include "sim/cli/app.hpp"
#include "sim/importers/importers.hpp"
#include "sim/base/errors.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace sim::cli::import_tests {
namespace {

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

TEST(ImportMegatron, QkvBiasWithoutTheOtherBiases) {
  // Qwen2 and GLM-4.5 recipes: --disable-bias-linear --add-qkv-bias (biases on q, k and v only); the flag had been
  // listed as not modelled.
  const auto im = importers::import_megatron_text(
      "torchrun --nproc_per_node=8 train.py --disable-bias-linear --add-qkv-bias --num-layers 28 --hidden-size 3584 "
      "--num-attention-heads 28\n",
      "launch.sh");
  ASSERT_NE(im.draft.find("model.qkv_bias"), nullptr);
  EXPECT_TRUE(std::get<bool>(im.draft.find("model.qkv_bias")->value));
  EXPECT_FALSE(std::get<bool>(im.draft.find("model.bias")->value));
  for (const auto& i : im.ignored)
    EXPECT_EQ(i.to_string().find("add-qkv-bias"), std::string::npos) << i.to_string();
}

TEST(ImportMegatron, AnOptimizerOtherThanAdamIsRefusedByName) {
  // Pai-Megatron-Patch's run_pretrain_llama_70b.sh passes --optimizer cpu-adam; any value but sgd and hybridadam
  // was costed as Adam without a word (a user trial).
  for (const std::string name : {"cpu-adam", "muon", "Adam"}) {
    try {
      importers::import_megatron_text(
          "torchrun train.py --optimizer " + name + " --num-layers 2 --hidden-size 64 --num-attention-heads 4\n",
          "launch.sh");
      ADD_FAILURE() << name << " was imported";
    } catch (const base::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--optimizer " + name + ": not an optimizer trainsim models"),
                std::string::npos)
          << e.what();
    }
  }
  for (const std::string name : {"adam", "adamw", "fused_adam"})  // the same two moments (forks' names)
    EXPECT_NO_THROW(importers::import_megatron_text(
        "torchrun train.py --optimizer " + name + " --num-layers 2 --hidden-size 64 --num-attention-heads 4\n",
        "launch.sh"))
        << name;
}

TEST(ImportMegatron, BcprunsCmdEqualsFormAndItsEnvironment) {
  // NVIDIA Base Command's bcprun: --cmd=STRING as -c STRING, and --env 'NAME=VALUE ...' the job's environment (the
  // review of the change that read bcprun -c found both unread).
  const auto im = importers::import_megatron_text(
      "bcprun -n 2 -p 8 --env 'NVTE_FUSED_ATTN=0 OTHER=1' --cmd='python main.py --num-layers 4 --hidden-size 256 "
      "--num-attention-heads 4 --tensor-model-parallel-size 2'\n",
      "launch.sh");
  EXPECT_EQ(im.draft.integer("parallel.tp"), 2);
  bool nvte = false;
  for (const auto& n : im.notes)
    nvte = nvte || n.to_string().find("NVTE_FUSED_ATTN=0") != std::string::npos;
  EXPECT_TRUE(nvte);
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
  for (const auto& f : im.not_modelled)
    foo = foo || contains(f.what, "--foo");
  EXPECT_TRUE(foo) << "a flag trainsim does not know is listed as a warning";
}

TEST(ImportMegatron, FlagsItDoesNotReadAreSortedByWhatTheyMayDo) {
  // Found by a user trial: MindSpeed-LLM's DeepSeek-V2-Lite script spells its MLA, shared experts and dense first
  // layer in its own flags; listed as "ignored" beside --lr, they gave a 117B model for a 15.7B one. Now a fork's
  // model-defining spelling, or an unknown flag whose name says it shapes the model or layout, refuses the import;
  // Megatron-LM flags that change speed or memory but are not modelled are warnings; only flags that change
  // neither are "ignored".
  const std::string base =
      "torchrun --nproc_per_node=8 train.py --num-layers 27 --hidden-size 2048 "
      "--num-attention-heads 16 --lr 1e-4 --log-interval 1 ";
  auto refusal = [&](const std::string& flags) -> std::string {
    try {
      importers::import_megatron_text(base + flags + "\n", "launch.sh");
    } catch (const base::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refusal("--n-shared-experts 2").find("--moe-shared-expert-intermediate-size"), std::string::npos);
  EXPECT_NE(refusal("--multi-head-latent-attention").find("--multi-latent-attention"), std::string::npos);
  EXPECT_NE(refusal("--first-k-dense-replace 1").find("--moe-layer-freq"), std::string::npos);
  EXPECT_NE(refusal("--my-expert-width 1408").find("shape"), std::string::npos);
  EXPECT_EQ(refusal("--moe-grouped-gemm --wandb-project x"), "");
  const auto im = importers::import_megatron_text(
      base + "--first-last-layers-bf16 --fp8-param-gather --my-fused-thing --my-logger x\n", "launch.sh");
  auto listed = [](const std::vector<importers::Finding>& v, const char* flag) {
    for (const auto& f : v)
      if (contains(f.what, flag)) return true;
    return false;
  };
  EXPECT_TRUE(listed(im.ignored, "--lr"));
  EXPECT_TRUE(listed(im.ignored, "--log-interval"));
  EXPECT_TRUE(listed(im.not_modelled, "--first-last-layers-bf16"));
  EXPECT_TRUE(listed(im.not_modelled, "--fp8-param-gather"));
  EXPECT_TRUE(listed(im.not_modelled, "--my-logger")) << "unknown flags are warnings, not silently ignored";
  EXPECT_FALSE(listed(im.ignored, "--my-logger"));
}

TEST(ImportMegatron, NemoHydraLaunchesAreRefusedAndMegatronDeepSpeedAttentionIsUnfusedWithoutAFlashFlag) {
  // Found by a user trial: NeMo's megatron_gpt_pretraining.py with model.global_batch_size=4 was read as Megatron-LM
  // flags (none), giving a batch of 1 and fp32; Megatron-DeepSpeed without --use-flash-attn-* was taken as fused.
  auto refusal = [](const std::string& text) -> std::string {
    try {
      importers::import_megatron_text(text, "launch.sh");
    } catch (const base::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(
      refusal("python megatron_gpt_pretraining.py --config-name gpt_5b.yaml model.global_batch_size=4\n").find("Hydra"),
      std::string::npos);
  EXPECT_NE(
      refusal("python train.py --num-layers 2 --hidden-size 64 --num-attention-heads 2 model.tp=2\n").find("Hydra"),
      std::string::npos);
  auto fused = [](const std::string& flags) -> std::optional<bool> {
    const auto im = importers::import_megatron_text(
        "python pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 2 " + flags + "\n", "launch.sh");
    const auto* f = im.draft.find("training.fused_attention");
    if (!f) return std::nullopt;
    return std::get<bool>(f->value);
  };
  EXPECT_EQ(fused("--deepspeed"), false);
  EXPECT_EQ(fused("--deepspeed --use-flash-attn-v2"), true);
  EXPECT_EQ(fused(""), std::nullopt) << "Megatron-LM's default backend (auto) is fused: the scenario default";
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

// Megatron-LM counts the layers --account-for-embedding/loss-in-pipeline-split add before it divides them into virtual
// stages, and --num-virtual-stages-per-pipeline-rank gives the virtual stages directly (megatron/training/
// arguments.py, validate_args). A user trial found the first refused (30 + 2 layers, PP 4, 2 per virtual stage) and
// the second not read, the scenario running 1F1B (6% slower).
TEST(ImportMegatron, VirtualStagesCountTheAccountedLayersOrAreGivenPerRank) {
  const std::string base =
      "--num-layers 30 --hidden-size 4096 --num-attention-heads 32 --pipeline-model-parallel-size 4 ";
  const auto accounted = importers::import_megatron_text(
      base +
          "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split "
          "--num-layers-per-virtual-pipeline-stage 2",
      "a.txt");
  EXPECT_EQ(accounted.draft.integer("parallel.vpp"), 4) << "(30 + 2) / 4 / 2";
  const auto per_rank = importers::import_megatron_text(base + "--num-virtual-stages-per-pipeline-rank 4", "b.txt");
  EXPECT_EQ(per_rank.draft.integer("parallel.vpp"), 4);
  auto refused = [&](const std::string& flags) {
    try {
      importers::import_megatron_text(base + flags, "c.txt");
    } catch (const base::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("imported");
  };
  EXPECT_TRUE(contains(refused("--account-for-loss-in-pipeline-split --num-layers-per-virtual-pipeline-stage 2"),
                       "30 layers + 1 for --account-for-loss-in-pipeline-split do not split into pipeline size 4 x 2"));
  EXPECT_TRUE(contains(refused("--num-virtual-stages-per-pipeline-rank 4 --num-layers-per-virtual-pipeline-stage 2"),
                       "cannot both be given"));
  // An unknown flag whose name speaks of virtual stages is refused (the per-rank flag was dropped as unknown).
  EXPECT_TRUE(contains(refused("--num-virtual-stages-per-rank 4"), "may set the model's shape, the layout"));
}

TEST(ImportMegatron, UndefinedVariablesAreUnresolvedNeverGuessed) {
  const auto im = importers::import_megatron_text("--tensor-model-parallel-size $TP --seq-length 2048", "l.sh");
  EXPECT_FALSE(im.draft.has("parallel.tp") && im.draft.find("parallel.tp")->weak == false);
  ASSERT_FALSE(im.unresolved.empty());
  EXPECT_TRUE(contains(im.unresolved[0].what, "$TP")) << im.unresolved[0].what;
  EXPECT_EQ(im.unresolved[0].path, "parallel.tp");
}

TEST(ImportMegatron, ANodeCountTheFileCannotGiveIsUnresolvedNotOneNode) {
  // torchrun without --nnodes is one node (its default); with a --nnodes the file cannot read (a Slurm variable it does
  // not define, an elastic range) the count is the cluster's, unknown here: it is asked for, never taken as one node.
  const std::string line =
      "torchrun --nproc-per-node 8 --nnodes NODES pretrain_gpt.py --tensor-model-parallel-size 4 "
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
      "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 256 --bf16";
  for (const char* nodes : {"${SLURM_NNODES}", "1:4"}) {
    SCOPED_TRACE(nodes);
    std::string text = line;
    text.replace(text.find("NODES"), 5, nodes);
    const auto im = importers::import_megatron_text(text, "n.sh");
    EXPECT_FALSE(im.draft.has("cluster.gpus")) << "not one node of 8";
    EXPECT_TRUE(std::any_of(im.unresolved.begin(), im.unresolved.end(), [](const auto& f) {
      return f.what.find("--nnodes") != std::string::npos || f.path == "cluster.gpus";
    }));
  }
  const auto one = importers::import_megatron_text(
      line.substr(0, line.find("--nnodes")) + line.substr(line.find("pretrain_gpt.py")), "n.sh");
  ASSERT_TRUE(one.draft.has("cluster.gpus"));
  EXPECT_EQ(*one.draft.integer("cluster.gpus"), 8) << "without --nnodes: torchrun's one node";
  // DeepSpeed's runner alike: --num_gpus without --num_nodes runs on the local node (a user trial found it asked for
  // --gpus), with --num_nodes that many, and with a host list the file does not hold, unknown.
  const std::string flags = line.substr(line.find("--tensor-model-parallel-size"));
  const auto ds = importers::import_megatron_text("deepspeed --num_gpus 8 pretrain_gpt.py " + flags, "d.sh");
  ASSERT_TRUE(ds.draft.has("cluster.gpus"));
  EXPECT_EQ(*ds.draft.integer("cluster.gpus"), 8);
  EXPECT_TRUE(contains(ds.draft.find("cluster.gpus")->origin, "deepspeed without --num_nodes"))
      << ds.draft.find("cluster.gpus")->origin;
  const auto two =
      importers::import_megatron_text("deepspeed --num_nodes 2 --num_gpus 8 pretrain_gpt.py " + flags, "d.sh");
  EXPECT_EQ(two.draft.integer("cluster.gpus").value_or(0), 16);
  const auto hosts =
      importers::import_megatron_text("deepspeed --hostfile hosts --num_gpus 8 pretrain_gpt.py " + flags, "d.sh");
  EXPECT_FALSE(hosts.draft.has("cluster.gpus")) << "the hosts are in a file trainsim does not read";
  // Megatron-DeepSpeed below ZeRO-3 without --overlap-grad-reduce: DeepSpeed's default overlap_comm (false), not the
  // scenario's overlapped default (a user trial: microsoft/Megatron-DeepSpeed pretrain_llama2_distributed.sh).
  const auto zero0 = importers::import_megatron_text(
      "deepspeed --num_gpus 8 pretrain_gpt.py --deepspeed "
      "--zero-stage=0 " +
          flags,
      "d.sh");
  ASSERT_TRUE(zero0.draft.has("parallel.overlap_grad_reduce"));
  EXPECT_FALSE(std::get<bool>(zero0.draft.find("parallel.overlap_grad_reduce")->value));
}

TEST(ImportMegatron, SgdAndBothSixteenBitFormatsAreRefused) {
  // trainsim's states are Adam's; Megatron-LM refuses --fp16 beside --bf16. Neither is read silently.
  auto refusal = [](const std::string& line) -> std::string {
    try {
      (void)importers::import_megatron_text(line, "o.sh");
    } catch (const base::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_TRUE(contains(refusal("--num-layers 2 --optimizer sgd"), "--optimizer sgd: trainsim models Adam's states"));
  EXPECT_TRUE(contains(refusal("--num-layers 2 --bf16 --fp16"), "--fp16 beside --bf16: Megatron-LM refuses both"));
  EXPECT_EQ(refusal("--num-layers 2 --optimizer adam --bf16"), "");
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
  // A refused setting is not a field --partial can leave open: it says that nothing was written (a user trial saw the
  // refusal alone and no file).
  support::TempDir dir;
  auto refused = trainsim({"import", "megatron",
                           dir.write("alibi.sh",
                                     "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 256 "
                                     "--num-attention-heads 4 --position-embedding-type alibi\n"),
                           "--partial"});
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_TRUE(contains(refused.err, "nothing written: --partial leaves open what a file does not give")) << refused.err;
  EXPECT_TRUE(refused.out.empty());
  // A flag the file gives but whose value it does not determine is left open, not filled with Megatron-LM's default,
  // and not called absent (a tester's trial: tp 1, pp 1 and a default batch in the draft, "no --global-batch-size").
  auto loops = trainsim({"import", "megatron",
                         dir.write("loops.sh",
                                   "for TP in 1 2 4; do :; done\nfor G in 1 2; do GBS=$((G*256)); done\n"
                                   "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 "
                                   "--hidden-size 256 --num-attention-heads 4 --seq-length 1024 "
                                   "--tensor-model-parallel-size $TP --global-batch-size $GBS "
                                   "--micro-batch-size 1\n"),
                         "--partial"});
  EXPECT_EQ(loops.code, kExitOk) << loops.err;
  EXPECT_FALSE(contains(loops.out, "\"tp\"")) << loops.out;
  EXPECT_FALSE(contains(loops.out, "\"global_batch\"")) << loops.out;
  EXPECT_FALSE(contains(loops.err, "no --global-batch-size")) << loops.err;
  EXPECT_TRUE(contains(loops.err, "--tensor-model-parallel-size")) << "unresolved, by flag: " << loops.err;
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
  // A switch given a word, which argparse refuses (the word had been dropped and the switch left on).
  expect_bad(trainsim({"import", "megatron",
                       dir.write("i.sh", "python pretrain_gpt.py --num-layers 2 --use-distributed-optimizer false")}),
             {"i.sh: line 1: --use-distributed-optimizer false: a switch takes no value (argparse refuses \"false\")"});
  // A word after the script that is no flag and no flag's value: argparse refuses it, so the job would not start (a
  // tester's trial: a flag pasted with an en dash, or one hyphen, was dropped without a word and its setting lost).
  expect_bad(
      trainsim({"import", "megatron",
                dir.write("j.sh", "python pretrain_gpt.py --num-layers 2 \xE2\x80\x93tensor-model-parallel-size 8")}),
      {"j.sh: line 1: \"\xE2\x80\x93tensor-model-parallel-size\" starts with an en dash (U+2013), not \"--\"",
       "write --tensor-model-parallel-size"});
  expect_bad(trainsim({"import", "megatron",
                       dir.write("k.sh", "python pretrain_gpt.py --num-layers 2 -tensor-model-parallel-size 8")}),
             {"has one hyphen, and Megatron-LM's flags take two", "write --tensor-model-parallel-size"});
  expect_bad(trainsim({"import", "megatron", dir.write("l.sh", "python pretrain_gpt.py --num-layers 2 stray")}),
             {"\"stray\" after the training script is neither a flag nor a flag's value"});
  // Every word up to the next flag is the value of a flag trainsim has no spec for: Megatron-LM's data blends
  // (--data-path 0.5 A 0.5 B, nargs '*') are not stray words.
  const auto blend = importers::import_megatron_text(
      "python pretrain_gpt.py --num-layers 2 --data-path 0.5 /d/a 0.5 /d/b --train-data-path /x /y --split 949,50,1\n",
      "blend.sh");
  ASSERT_FALSE(blend.ignored.empty());
  EXPECT_NE(blend.ignored.front().what.find("--data-path 0.5 /d/a 0.5 /d/b"), std::string::npos)
      << blend.ignored.front().what;
}

TEST(ImportMegatron, GpusSettlesAnUnreadableGpusPerNode) {
  // Found by a user trial: --gpus 64 left `--nproc_per_node "$(python3 -c ...)"` unresolved (exit 2), though the
  // message had asked for --gpus.
  auto im = importers::import_megatron_text(
      "torchrun --nproc_per_node \"$(python3 -c 'print(8)')\" --nnodes 8 train.py --num-layers 2 --hidden-size 64 "
      "--num-attention-heads 2\n",
      "launch.sh");
  ASSERT_FALSE(importers::unsettled(im).empty());
  im.draft.override_value("cluster.gpus", std::int64_t{64}, "--gpus");
  for (const auto& f : importers::unsettled(im))
    EXPECT_NE(f.path, "cluster.gpus") << f.to_string();
}

}  // namespace
}  // namespace sim::cli::import_tests
