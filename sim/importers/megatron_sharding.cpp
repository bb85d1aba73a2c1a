// sim/importers/megatron_sharding.cpp: Megatron-LM's data-parallel sharding flags (Megatron-DeepSpeed's --zero-stage,
// Megatron-FSDP's strategies, PyTorch FSDP2, distributed optimizer instances) into the scenario's ZeRO stage and
// hybrid sharding. Seam: megatron.cpp reads the script and the parallel layout. Flag meanings follow
// megatron/training/arguments.py.
#include "sim/importers/megatron_args.hpp"

namespace sim::importers::megatron {
namespace {

/// --num-distributed-optimizer-instances N: the data-parallel group (with context parallelism) split into N groups
/// of consecutive ranks, each sharding a whole copy of the distributed optimizer's (or Megatron-FSDP's) states; the
/// gradients reduce-scattered within a group, then all-reduced across the groups (megatron/core/distributed/
/// param_and_grad_buffer.py, start_grad_sync's partial_distopt path): trainsim's hybrid sharding, dp_shard = dp / N.
void apply_optimizer_instances(const Context& c) {
  const Given* g = c.given("num-distributed-optimizer-instances");
  if (g == nullptr) return;
  const auto instances = python_int(g->value);
  if (!instances || *instances <= 1) return;  // 1: Megatron-LM's default, one group
  Draft& d = c.out.draft;
  if (!c.given("use-distributed-optimizer") && !c.given("use-megatron-fsdp")) {
    c.out.notes.push_back({where(c, *g), "read only with --use-distributed-optimizer or --use-megatron-fsdp"});
    return;
  }
  if (const Given* outer = c.given("outer-dp-sharding-strategy"); outer && outer->value != "no_shard")
    c.out.notes.push_back({where(c, *outer), "\"" + outer->value +
                                                 "\" also shards across the instances; trainsim keeps a whole copy of "
                                                 "the states per instance (more memory than the run holds)"});
  const auto gpus = c.lookup("cluster.gpus");
  const std::int64_t model =
      c.lookup("parallel.tp").value_or(1) * c.lookup("parallel.pp").value_or(1) * c.lookup("parallel.cp").value_or(1);
  if (!gpus) {
    c.out.unresolved.push_back(
        {where(c, *g), "needs the GPU count to size each instance's group; give --gpus N", "parallel.dp_shard"});
    return;
  }
  const std::int64_t dp = *gpus / model;
  if (*gpus % model != 0 || dp % *instances != 0) {
    c.error(g->line, g->flag + " " + g->value + " does not divide the " + std::to_string(dp) +
                         " data-parallel ranks (" + std::to_string(*gpus) + " GPUs / tp x pp x cp " +
                         std::to_string(model) + ") into whole groups");
    return;
  }
  d.put("parallel.dp_shard", dp / *instances,
        where(c, *g) + " (" + std::to_string(dp) + " data-parallel ranks in " + g->value + " instances)");
}

}  // namespace

/// Data-parallel sharding: Megatron-FSDP's strategies (arguments.py --data-parallel-sharding-strategy, default
/// no_shard) shard what ZeRO stages 0-3 shard (Rajbhandari et al. 2020): optim = 1, optim_grads = 2,
/// optim_grads_params = 3; PyTorch FSDP2 (fully_shard) shards all three.
void apply_sharding_flags(const Context& c) {
  Draft& d = c.out.draft;
  if (const Given* z = c.given("zero-stage")) {  // Megatron-DeepSpeed's --zero-stage (its DeepSpeed config's stage)
    const auto stage = python_int(z->value);
    const Given* bf16 = c.given("bf16");
    if (stage && *stage == 0 && bf16 && c.given("deepspeed")) {
      // DeepSpeed's engine then wraps the optimizer in its BF16_Optimizer, which shards like ZeRO-1 (as the DeepSpeed
      // importer reads "bf16" with stage 0: sim/importers/deepspeed.cpp, bf16_optimizer()). BigScience's BLOOM-176B
      // script runs so ("bf16 must use z0! it implements its own zero stage 1 equivalent"); found by a user trial.
      d.put("parallel.zero_stage", std::int64_t{1},
            where(c, *z) + " with " + bf16->flag +
                " (DeepSpeed's BF16_Optimizer: fp32 master weights and Adam states sharded over data parallelism, "
                "as ZeRO-1)");
      c.out.notes.push_back({where(c, *z), "with " + bf16->flag +
                                               " and --deepspeed: DeepSpeed's BF16_Optimizer, zero_stage 1 (fp32 "
                                               "master weights and Adam states sharded) with fp32 gradients; the "
                                               "bf16 gradients it also keeps (2 B per parameter) are not counted"});
      d.put("training.main_grads", std::string("fp32"),
            where(c, *z) + " with " + bf16->flag +
                " (BF16_Optimizer keeps the gradients in fp32; its bf16 all-reduce moves what a reduce-scatter of "
                "fp32 gradients does)");
    } else if (stage && *stage >= 0 && *stage <= 3) {
      d.put("parallel.zero_stage", *stage, where(c, *z));
    } else {
      c.error(z->line, z->flag + ": \"" + z->value + "\" is not accepted; accepted: 0, 1, 2, 3");
    }
  }
  const Given* strategy = c.given("data-parallel-sharding-strategy");
  if (const Given* f = c.given("use-megatron-fsdp")) {
    const std::string s = strategy ? strategy->value : "no_shard";
    const std::int64_t stage = s == "optim" ? 1 : s == "optim_grads" ? 2 : s == "optim_grads_params" ? 3 : 0;
    d.put("parallel.zero_stage", stage,
          (strategy ? where(c, *strategy) : where(c, *f) + " (default no_shard)") + " (Megatron-FSDP " + s +
              ": ZeRO stage " + std::to_string(stage) + ")");
  } else if (const Given* t = c.given("use-torch-fsdp2")) {
    d.put("parallel.zero_stage", std::int64_t{3},
          where(c, *t) +
              " (FSDP2 shards parameters, gradients and optimizer "
              "states: ZeRO stage 3)");
  } else if (strategy) {
    c.out.notes.push_back({where(c, *strategy), "read only with --use-megatron-fsdp, as Megatron-LM does"});
  }
  apply_optimizer_instances(c);
}

}  // namespace sim::importers::megatron
