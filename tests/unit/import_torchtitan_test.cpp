// tests/unit/import_torchtitan_test.cpp: TorchTitan job configs (TOML) into a scenario, or a refusal naming the line.
// Each year's spelling of FP8, checkpoints, schedules, context and tensor parallelism as TorchTitan runs them, and the
// TOML reader.
#include "tests/unit/import_test_support.hpp"
#include "sim/cli/app.hpp"
#include "sim/importers/importers.hpp"
#include "sim/importers/toml.hpp"
#include "sim/base/errors.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace sim::cli::import_tests {
namespace {

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

TEST(ImportTorchTitan, LayerSelectiveCheckpointingRecomputesOneBlockInN) {
  // selective_ac_option "N" checkpoints one block in every N (torchtitan's apply_ac: count % ac_freq == 0); the rest
  // keep their activations. It was read as full recomputation of every layer and called an upper bound, which for
  // memory is a lower bound: a user trial's Qwen3-32B with N = 2 on 8 GPUs fitted (86.8 GiB) where it holds 140.8.
  auto draft = [](const std::string& extra) {
    return importers::import_torchtitan_text(
               "[model]\nname = \"qwen3\"\nflavor = \"32B\"\n[parallelism]\n"
               "data_parallel_shard_degree = 8\n" +
                   extra +
                   "[activation_checkpoint]\nmode = \"selective\"\n"
                   "selective_ac_option = \"2\"\n",
               "t.toml")
        .draft;
  };
  const auto d = draft("");
  ASSERT_NE(d.find("parallel.recompute_method"), nullptr);
  EXPECT_EQ(std::get<std::string>(d.find("parallel.recompute")->value), "full");
  EXPECT_EQ(std::get<std::string>(d.find("parallel.recompute_method")->value), "block");
  EXPECT_EQ(d.integer("parallel.recompute_num_layers"), 32) << "one of every 2 of Qwen3-32B's 64 layers";
  // Over 4 pipeline stages TorchTitan's split holds 16, 17, 16 and 15 layers: the busiest rank checkpoints 8 of 17.
  EXPECT_EQ(draft("pipeline_parallel_degree = 4\n").integer("parallel.recompute_num_layers"), 8);
  EXPECT_THROW((void)importers::import_torchtitan_text(
                   "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"two\"\n", "t.toml"),
               base::ConfigError);
  // "0" checkpoints every block (torchtitan: "if not ac_freq").
  const auto every = importers::import_torchtitan_text(
                         "[model]\nname = \"qwen3\"\nflavor = \"32B\"\n[activation_checkpoint]\nmode = "
                         "\"selective\"\nselective_ac_option = \"0\"\n",
                         "t.toml")
                         .draft;
  ASSERT_NE(every.find("parallel.recompute"), nullptr);
  EXPECT_EQ(std::get<std::string>(every.find("parallel.recompute")->value), "full");
  EXPECT_EQ(every.find("parallel.recompute_method"), nullptr);
}

TEST(ImportTorchTitan, ALayerNormRunSaysItIsPricedWithTheModelFilesNorm) {
  // eminorhan/frontier-torchtitan's llama3_8b.toml trains Llama 3 8B with norm_type = "layernorm"; the key was listed
  // as not modelled, hiding a 4% step difference (a user trial).
  auto im = [](const std::string& norm) {
    return importers::import_torchtitan_text(
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\nnorm_type = \"" + norm + "\"\n", "t.toml");
  };
  const auto ln = im("layernorm");
  ASSERT_EQ(ln.not_modelled.size(), 1u);
  EXPECT_NE(ln.not_modelled[0].what.find("\"norm\": \"layernorm\""), std::string::npos) << ln.not_modelled[0].what;
  for (const auto& i : ln.ignored)
    EXPECT_EQ(i.to_string().find("norm_type"), std::string::npos) << i.to_string();
  EXPECT_TRUE(im("rmsnorm").not_modelled.empty());
  EXPECT_TRUE(im("RMSNorm").not_modelled.empty()) << "build_norm lower-cases the name";
  EXPECT_EQ(im("LayerNorm").not_modelled.size(), 1u);
  EXPECT_TRUE(im("fused_rmsnorm").not_modelled.empty());
  EXPECT_THROW((void)im("batchnorm"), base::ConfigError);
  // fsdp_reshard_after_forward "never" is ZeRO-2, and the import says so (a user trial found it only as an origin).
  const auto never = importers::import_torchtitan_text(
      "[parallelism]\ndata_parallel_shard_degree = 8\nfsdp_reshard_after_forward = \"never\"\n", "t.toml");
  EXPECT_EQ(never.draft.integer("parallel.zero_stage"), 2);
  bool said = false;
  for (const auto& n : never.notes)
    said = said || n.what.find("zero_stage 2") != std::string::npos;
  EXPECT_TRUE(said);
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
  // The table's other keys are listed one by one, not the whole [quantize.linear] hidden. FSDP's float8 gathers
  // change the traffic, so they are a warning (a user trial found them "ignored": torchtitan llama3_405b.toml).
  const auto im = importers::import_torchtitan_text(
      "[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
      "enable_fsdp_float8_all_gather = true\nfilter_fqns = [\"output\"]\n",
      "t.toml");
  ASSERT_EQ(im.ignored.size(), 1u);
  EXPECT_TRUE(contains(im.ignored[0].what, "quantize.linear.float8.filter_fqns")) << im.ignored[0].what;
  EXPECT_FALSE(contains(im.ignored[0].what, "enable_fsdp_float8_all_gather")) << im.ignored[0].what;
  ASSERT_EQ(im.not_modelled.size(), 1u);
  EXPECT_TRUE(contains(im.not_modelled[0].where, "enable_fsdp_float8_all_gather")) << im.not_modelled[0].where;
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
  EXPECT_EQ(loss("[compile]\nenable = true\n"), "fused") << "components default to model and loss";
  EXPECT_EQ(loss("[training]\ncompile = true\n"), "upcast") << "TorchTitan of 2024 compiled the model only";
}

TEST(ImportTorchTitan, TheModelRunsEagerlyUnlessItIsACompiledComponent) {
  // A user trial: components = ["loss"] (a public Qwen3 config) was imported as compiled kernels, 12.6% fast.
  auto kernels = [](const std::string& text) { return torchtitan_drafted(text, "training.kernels"); };
  EXPECT_EQ(kernels("[compile]\nenable = true\n"), "fused") << "components default to model and loss";
  EXPECT_EQ(kernels("[compile]\nenable = true\ncomponents = [\"model\"]\n"), "fused");
  EXPECT_EQ(kernels("[compile]\nenable = true\ncomponents = [\"loss\"]\n"), "eager");
  EXPECT_EQ(kernels("[compile]\nenable = true\ncomponents = []\n"), "eager");
  EXPECT_EQ(kernels("[compile]\nenable = false\ncomponents = [\"model\"]\n"), "eager");
}

// A user trial: tensor_paralel_degree, tensor_parallel_size, pipeline_parallel_degre and global_batchsize were listed
// as "ignored: not modelled" and the run imported as tp 1, pp 1, batch 8; TorchTitan refuses keys it does not know.
TEST(ImportTorchTitan, UnreadKeysNamingTheLayoutOrBatchAreRefusedAndPrecisionOnesWarned) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      (void)importers::import_torchtitan_text(text, "t.toml");
    } catch (const base::ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  for (const char* typo :
       {"[parallelism]\ntensor_paralel_degree = 2\n", "[parallelism]\ntensor_parallel_size = 2\n",
        "[training]\nglobal_batchsize = 64\n", "[experimental]\npipeline_parallel_degree = 4\n",
        "[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_split_points = [\"layers.4\"]\n"}) {
    const auto e = error_of(typo);
    EXPECT_TRUE(contains(e, "t.toml: line ")) << typo << e;
    EXPECT_TRUE(contains(e, "the layout")) << typo << e;
  }
  // A layout key in a table TorchTitan does not read it from (a review: a dotted key appended after [validation], an
  // inline table) was "ignored: not modelled" and the run imported at the file's tp.
  for (const char* misplaced :
       {"[parallelism]\ntensor_parallel_degree = 8\n[validation]\nfreq = 5\n"
        "parallelism.tensor_parallel_degree = 4\n",
        "[parallelism]\nfoo = { tensor_parallel_degree = 4 }\n", "[[extras]]\npipeline_parallel_degree = 2\n",
        "[parallelsim]\ntensor_parallel_degree = 4\n", "[model]\ntensor_parallel_degree = 4\n"}) {
    const auto e = error_of(misplaced);
    EXPECT_TRUE(contains(e, "t.toml: line ") && contains(e, "move it")) << misplaced << e;
  }
  // TorchTitan's own keys at their defaults, or read only where they apply, are not refused (a review: real configs).
  EXPECT_EQ(error_of("[parallelism]\ncontext_parallel_degree = 1\ncontext_parallel_rotate_method = \"allgather\"\n"
                     "expert_parallel_comm_backend = \"standard\"\npipeline_parallel_microbatch_size = 2\n"
                     "[training]\ndata_parallel_degree = -1\n"),
            "(no error)");
  const auto quiet = importers::import_torchtitan_text(
      "[checkpoint]\nexport_dtype = \"float32\"\nasync_mode = \"disabled\"\n", "t.toml");
  EXPECT_TRUE(quiet.not_modelled.empty()) << "a checkpoint's export dtype changes no step: "
                                          << (quiet.not_modelled.empty() ? "" : quiet.not_modelled[0].where);
  // At TorchTitan's default they change nothing (2024's configs carry [experimental] pipeline_parallel_degree = 1).
  EXPECT_EQ(error_of("[experimental]\npipeline_parallel_degree = 1\ncontext_parallel_degree = 1\n"), "(no error)");
  const auto im = importers::import_torchtitan_text(
      "[parallelism]\ndisable_loss_parallel = true\n[optimizer]\nstate_dtype = \"bfloat16\"\n[metrics]\nlog_freq = 1\n",
      "t.toml");
  ASSERT_EQ(im.not_modelled.size(), 2u);
  EXPECT_TRUE(contains(im.not_modelled[0].where + im.not_modelled[1].where, "disable_loss_parallel"));
  EXPECT_TRUE(contains(im.not_modelled[0].where + im.not_modelled[1].where, "state_dtype"));
  ASSERT_EQ(im.ignored.size(), 1u);
  EXPECT_TRUE(contains(im.ignored[0].what, "metrics.log_freq")) << im.ignored[0].what;
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

}  // namespace
}  // namespace sim::cli::import_tests
