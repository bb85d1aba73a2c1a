// The optimizer's own states in low precision (training.main_params, training.exp_avg, training.exp_avg_sq):
// Megatron-Core's precision-aware optimizer (megatron/core/optimizer/optimizer_config.py). Its bytes in memory, the
// optimizer step's memory traffic and the checkpoint; the scenario's refusals; `trainsim import megatron`'s reading
// of --use-precision-aware-optimizer and its dtypes; and the Megatron-LM flags trainsim writes back.
#include "sim/base/errors.hpp"
#include "sim/importers/importers.hpp"
#include "sim/parallel/megatron_flags.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"
#include "tests/support/layout.hpp"
#include "tests/support/scenario_errors.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace sim::parallel {
namespace {

using scenario::Override;
using support::load_error;

const std::vector<Override> kLowPrecisionStates{
    {"training.main_params", "fp32_remainders"}, {"training.exp_avg", "bf16"}, {"training.exp_avg_sq", "bf16"}};

TEST(OptimizerPrecision, StatesTakeTheirDtypesBytesInMemoryTheStepAndTheCheckpoint) {
  // The default keeps a 4-byte fp32 master and two 4-byte moments (12 B per parameter of the shard); 16-bit
  // remainders of the master and bf16 moments keep 2 + 2 + 2 = 6 B: the optimizer's share of memory halves exactly.
  const auto s = scenario::load_default_scenario();
  const auto t = scenario::load_default_scenario(kLowPrecisionStates);
  EXPECT_DOUBLE_EQ(s.memory.optimizer_state_bytes(), 12);
  EXPECT_DOUBLE_EQ(t.memory.optimizer_state_bytes(), 6);
  const Layout l = support::resolve(s.model, {s.cluster.gpus, 8, 8}, s.parallel, s.training.seq_len);
  const auto a = memory_per_gpu(s.model, l, s.parallel, s.training.seq_len, 0, s.memory);
  const auto b = memory_per_gpu(t.model, l, t.parallel, t.training.seq_len, 0, t.memory);
  EXPECT_NEAR(static_cast<double>(b.optimizer.n), static_cast<double>(a.optimizer.n) / 2, 1.0);
  EXPECT_EQ(b.params, a.params);
  EXPECT_EQ(b.grads, a.grads);
  EXPECT_EQ(b.activations, a.activations);
  // FP8 moments: 1 byte each.
  auto fp8 = kLowPrecisionStates;
  fp8[1].value = fp8[2].value = "fp8";
  EXPECT_DOUBLE_EQ(scenario::load_default_scenario(fp8).memory.optimizer_state_bytes(), 4);
  // The step: 2 x grad + 2 x states + 2 bytes per parameter, 34 -> 22 with fp32 main gradients.
  auto state_bytes = [](const scenario::Scenario& x) {
    const auto setup = scenario::step_setup(x);
    const auto* in = std::get_if<execution::StepInputs>(&setup);
    return in ? in->optimizer_state_bytes : -1.0;
  };
  EXPECT_DOUBLE_EQ(state_bytes(s), 12);
  EXPECT_DOUBLE_EQ(state_bytes(t), 6);
  // The checkpoint saves the moments in their dtype and the master whole (remainders counted as the fp32 they are).
  EXPECT_DOUBLE_EQ(scenario::checkpoint_shape(s, l).optimizer_bytes, 12);
  EXPECT_DOUBLE_EQ(scenario::checkpoint_shape(t, l).optimizer_bytes, 8);
}

TEST(OptimizerPrecision, KeysThatCannotApplyAreRefused) {
  auto refused = [](std::vector<Override> o, const char* key, const char* what) {
    const auto e = load_error(o);
    EXPECT_NE(e.find(key), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  // The parameters are the master (FSDP) or there is none: no separate master copy to set.
  refused({{"training.master_weights", "params"}, {"training.main_params", "fp16"}}, "/training/main_params",
          "master_weights");
  refused({{"training.master_weights", "none"}, {"training.exp_avg", "bf16"}}, "/training/exp_avg", "\"separate\"");
  // Remainders complete bf16 weights only.
  refused({{"training.dtype", "fp16"}, {"training.main_params", "fp32_remainders"}}, "/training/main_params",
          "bf16 weights");
  refused({{"training.exp_avg_sq", "int8"}}, "/training/exp_avg_sq", "fp8");
  EXPECT_EQ(load_error({{"training.dtype", "fp16"}, {"training.main_params", "fp16"}}), "");
}

TEST(OptimizerPrecision, MegatronFlagsAreReadAndWrittenBack) {
  auto import = [](const std::string& flags) {
    return importers::import_megatron_text("torchrun --nproc_per_node=8 train.py --bf16 " + flags +
                                               " --num-layers 32 --hidden-size 4096 --num-attention-heads 32\n",
                                           "launch.sh");
  };
  // The refusal's text, or "" when the file imports.
  auto refusal = [&](const std::string& flags) -> std::string {
    try {
      import(flags);
    } catch (const base::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  auto text = [](const importers::Import& im, const char* path) -> std::string {
    const auto* f = im.draft.find(path);
    return f ? std::get<std::string>(f->value) : "";
  };
  // DeepSeek-V3's and many MoE recipes' setting: bf16 moments; the master as remainders (TransformerEngine >= 2.1).
  const auto aware = import(
      "--use-distributed-optimizer --use-precision-aware-optimizer --exp-avg-dtype bf16 "
      "--exp-avg-sq-dtype bf16 --main-grads-dtype bf16");
  EXPECT_EQ(text(aware, "training.main_params"), "fp32_remainders");
  EXPECT_EQ(text(aware, "training.exp_avg"), "bf16");
  EXPECT_EQ(text(aware, "training.exp_avg_sq"), "bf16");
  EXPECT_EQ(text(aware, "training.main_grads"), "bf16");
  EXPECT_EQ(text(import("--use-distributed-optimizer --use-precision-aware-optimizer --main-params-dtype fp16"),
                 "training.main_params"),
            "fp16");
  // FP8 parameters keep a whole fp32 master.
  EXPECT_EQ(text(import("--use-distributed-optimizer --use-precision-aware-optimizer --fp8-format hybrid "
                        "--fp8-param-gather"),
                 "training.main_params"),
            "fp32");
  // What Megatron-Core's OptimizerConfig asserts: dtypes need the flag, the flag needs the distributed optimizer.
  EXPECT_NE(refusal("--use-distributed-optimizer --exp-avg-dtype bf16").find("--use-precision-aware-optimizer"),
            std::string::npos);
  EXPECT_NE(refusal("--use-precision-aware-optimizer").find("--use-distributed-optimizer"), std::string::npos);
  EXPECT_EQ(refusal("--use-distributed-optimizer --exp-avg-dtype fp32"), "");
  EXPECT_EQ(text(import("--use-distributed-optimizer"), "training.main_params"), "");

  // Written back as the flags that give the same states.
  const auto t = scenario::load_default_scenario(kLowPrecisionStates);
  const Layout l = support::resolve(t.model, {t.cluster.gpus, 8, 8}, t.parallel, t.training.seq_len);
  const std::string flags =
      megatron_flags(t.parallel, l, t.model, t.training.seq_len, t.training.dtype, "delayed", &t.memory);
  EXPECT_NE(flags.find("--use-precision-aware-optimizer"), std::string::npos) << flags;
  EXPECT_NE(flags.find("--exp-avg-dtype bf16"), std::string::npos) << flags;
  EXPECT_NE(flags.find("--exp-avg-sq-dtype bf16"), std::string::npos) << flags;
  EXPECT_EQ(flags.find("--main-params-dtype"), std::string::npos) << flags;
  const auto d = scenario::load_default_scenario();
  EXPECT_EQ(megatron_flags(d.parallel, l, d.model, d.training.seq_len, d.training.dtype, "delayed", &d.memory)
                .find("precision-aware"),
            std::string::npos);
}

}  // namespace
}  // namespace sim::parallel
