// What each training stack keeps per parameter and where: the master weights (training.master_weights), the
// optimizer stepped in the backward (training.optimizer_in_backward) and hybrid sharding (parallel.dp_shard), in the
// memory model (sim/parallel/memory.cpp) and the scenario's checks.
#include "sim/parallel/memory.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/layout.hpp"
#include "tests/support/scenario_errors.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sim::parallel {
namespace {

using scenario::Override;
using support::load_error;
using support::resolve;

TEST(Memory, FsdpKeepsItsFp32ParametersAsTheMaster) {
  // training.master_weights "params" (PyTorch FSDP's MixedPrecisionPolicy, TorchTitan): 4 + 4 + 8 bytes per parameter
  // of the shard instead of a bf16 copy beside an fp32 master (2 + 4 + 12); without sharding, 16 against 18 whole;
  // under ZeRO 1-2 (gathered bf16 weights whole beside the fp32 shard) nothing moves.
  const auto llama = scenario::load_model("llama3-8b");
  MemoryOptions o;
  MemoryOptions fsdp;
  fsdp.master_weights = MemoryOptions::MasterWeights::Params;
  for (int zero : {0, 1, 2, 3}) {
    ParallelConfig c;
    c.zero_stage = zero;
    c.global_batch = 8;
    const Layout l = resolve(llama, {8, 8, 8}, c, 4096);
    const auto a = memory_per_gpu(llama, l, c, 4096, 0, o);
    const auto b = memory_per_gpu(llama, l, c, 4096, 0, fsdp);
    const double states_a = static_cast<double>(a.params.n + a.grads.n + a.optimizer.n);
    const double states_b = static_cast<double>(b.params.n + b.grads.n + b.optimizer.n);
    if (zero == 1 || zero == 2) {
      EXPECT_EQ(states_b, states_a) << "ZeRO " << zero;
    } else {
      const double per_param = zero == 3 ? 8.0 : 1.0;  // ZeRO-3 shards over the 8 data-parallel ranks
      EXPECT_NEAR(states_b / states_a, 16.0 / 18.0, 1e-6) << "ZeRO " << zero;
      EXPECT_EQ(b.params.n, a.params.n * 2) << "fp32 weights, sharded as the bf16 ones were (x" << per_param << ")";
    }
  }
  // FSDP's reduce_dtype bf16 (main_grads "bf16") halves what is reduced, not the fp32 gradient shard it is cast to.
  ParallelConfig z3;
  z3.zero_stage = 3;
  z3.global_batch = 8;
  const Layout l3 = resolve(llama, {8, 8, 8}, z3, 4096);
  MemoryOptions reduce_bf16 = fsdp;
  reduce_bf16.fp32_main_grads = false;
  EXPECT_EQ(memory_per_gpu(llama, l3, z3, 4096, 0, reduce_bf16).grads,
            memory_per_gpu(llama, l3, z3, 4096, 0, fsdp).grads);
  // Pure bf16 training (master_weights "none", TorchTitan's [training] dtype "bfloat16"): 2 + 2 + 4 bytes.
  MemoryOptions pure;
  pure.master_weights = MemoryOptions::MasterWeights::None;
  const auto a3 = memory_per_gpu(llama, l3, z3, 4096, 0, o);
  const auto p3 = memory_per_gpu(llama, l3, z3, 4096, 0, pure);
  EXPECT_NEAR(static_cast<double>(p3.params.n + p3.grads.n + p3.optimizer.n) /
                  static_cast<double>(a3.params.n + a3.grads.n + a3.optimizer.n),
              8.0 / 18.0, 1e-6);
  EXPECT_NE(load_error({{"training.master_weights", "\"none\""}, {"training.main_grads", "\"fp32\""}})
                .find("/training/main_grads"),
            std::string::npos)
      << "no fp32 gradients in pure bf16 training";
  EXPECT_NE(load_error({{"training.master_weights", "\"fp32\""}}).find("/training/master_weights"), std::string::npos);
}

TEST(Memory, HybridShardingHoldsWhatItsGroupShardsOver) {
  // parallel.dp_shard (HSDP): ZeRO states sharded over groups of dp_shard data-parallel ranks, as if dp were dp_shard.
  const auto llama = scenario::load_model("llama3-70b");
  for (int zero : {1, 3}) {
    ParallelConfig hsdp;
    hsdp.tp = 8;
    hsdp.pp = 4;
    hsdp.sequence_parallel = true;
    hsdp.distributed_optimizer = true;
    hsdp.zero_stage = zero;
    hsdp.dp_shard = 8;
    hsdp.global_batch = 128;  // 4 micro-batches per replica either way
    ParallelConfig group = hsdp;
    group.dp_shard = 0;
    group.global_batch = 32;
    const Layout l32 = resolve(llama, {1024, 8, 8}, hsdp, 8192);
    const Layout l8 = resolve(llama, {256, 8, 8}, group, 8192);
    ASSERT_EQ(l32.dp, 32);
    ASSERT_EQ(l8.dp, 8);
    const auto a = memory_per_gpu(llama, l32, hsdp, 8192, 1, {});
    const auto b = memory_per_gpu(llama, l8, group, 8192, 1, {});
    EXPECT_EQ(a.params, b.params) << "ZeRO " << zero;
    EXPECT_EQ(a.grads, b.grads) << "ZeRO " << zero;
    EXPECT_EQ(a.optimizer, b.optimizer) << "ZeRO " << zero;
  }
  EXPECT_NE(load_error({{"parallel.zero_stage", "0"}, {"parallel.dp_shard", "8"}}).find("/parallel/dp_shard"),
            std::string::npos)
      << "nothing is sharded without ZeRO";
}

TEST(Memory, OptimizerInTheBackwardHoldsOneLayersGradients) {
  // TorchTitan's early_step_in_backward: each parameter is stepped as its sharded gradient lands and the gradient is
  // dropped, so a GPU holds one layer's share; refused where TorchTitan refuses it or where it would not accumulate.
  const std::vector<Override> fsdp{
      {"parallel.pp", "1"}, {"parallel.dp", "128"}, {"parallel.zero_stage", "3"}, {"parallel.global_batch", "128"}};
  auto with = fsdp;
  with.push_back({"training.optimizer_in_backward", "true"});
  const auto s = scenario::load_default_scenario(fsdp);
  const auto t = scenario::load_default_scenario(with);
  const auto& cfg = s.parallel;
  const Layout l = resolve(s.model, {1024, 8, 8}, cfg, s.training.seq_len);
  const auto held = memory_per_gpu(s.model, l, cfg, s.training.seq_len, 0, s.memory);
  const auto stepped = memory_per_gpu(t.model, l, t.parallel, t.training.seq_len, 0, t.memory);
  EXPECT_NEAR(static_cast<double>(stepped.grads.n), static_cast<double>(held.grads.n) / s.model.layers, 1.0);
  EXPECT_EQ(stepped.params, held.params);
  EXPECT_EQ(stepped.optimizer, held.optimizer);
  auto refused = [&](std::vector<Override> o, const char* what) {
    o.push_back({"training.optimizer_in_backward", "true"});
    const auto e = load_error(o);
    EXPECT_NE(e.find("/training/optimizer_in_backward"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  refused({}, "zero_stage");
  // One data-parallel rank: nothing to reduce, each gradient final as its backward makes it.
  EXPECT_EQ(load_error({{"cluster.gpus", "8"},
                        {"parallel.pp", "1"},
                        {"parallel.dp", "1"},
                        {"parallel.zero_stage", "0"},
                        {"parallel.global_batch", "1"},
                        {"training.optimizer_in_backward", "true"}}),
            "");
  refused({{"parallel.zero_stage", "3"}}, "pipeline or expert parallelism");
  refused({{"parallel.pp", "1"}, {"parallel.dp", "128"}, {"parallel.zero_stage", "3"}}, "one micro-batch per step");
}

}  // namespace
}  // namespace sim::parallel
