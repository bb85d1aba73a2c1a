// sim/scenario/run_setup.cpp: checkpoint sizes, step times per cluster state and the failure model for a scenario.
#include "sim/scenario/run_setup.hpp"

#include "sim/base/errors.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/scenario/step_setup.hpp"
#include "sim/workload/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <variant>

namespace sim::scenario {
namespace {

// Failure domains from the topology (one source): the nodes whose GPUs hang off leaf 0 (a rail-optimised leaf
// carries one GPU of each of its group's nodes, so a leaf failure touches all of them), and the nodes of rack 0.
std::pair<int, int> failure_domains(const topology::Topology* topo) {
  if (topo == nullptr || topo->count(topology::DomainKind::Leaf) == 0) return {0, 0};
  std::set<int> leaf_nodes, rack_nodes;
  for (auto g : topo->gpus_in(topology::DomainKind::Leaf, 0))
    leaf_nodes.insert(topo->node_of(g));
  if (topo->count(topology::DomainKind::Rack) > 0)
    for (auto g : topo->gpus_in(topology::DomainKind::Rack, 0))
      rack_nodes.insert(topo->node_of(g));
  return {static_cast<int>(leaf_nodes.size()), static_cast<int>(rack_nodes.size())};
}

// "0.988 TB at 111 GB/s (aggregate)": the bytes and the binding rate behind a checkpoint time.
std::string basis(const reliability::CheckpointIo& io, const reliability::CheckpointTransfer& t) {
  const bool node = t.bound == "per node";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.3g TB%s at %.3g GB/s (%s)",
                static_cast<double>((node ? io.per_node_max : io.total).n) / 1e12, node ? " per node" : "",
                t.rate.bytes_per_s / 1e9, t.bound.c_str());
  return buf;
}

}  // namespace

reliability::CheckpointShape checkpoint_shape(const Scenario& s, const parallel::Layout& layout) {
  reliability::CheckpointShape sh;
  const auto pc = workload::count_params(s.model);
  sh.params = pc.total(s.model.layers);
  // 16-bit weights plus fp32 master weights and Adam's two moments, 12 bytes per
  // parameter (Rajbhandari et al., "ZeRO", SC20, Sec. 3.1: K = 12 for mixed-precision Adam); gradients are not saved.
  sh.weight_bytes = 2;  // fp32 training: master_weights "params" (training_section.cpp), below
  // With training.main_params / exp_avg / exp_avg_sq, the moments are saved in their dtype and the master in fp16
  // or fp32; an fp32 master kept as remainders is counted whole (4 B), the larger of what a checkpoint can hold.
  using MO = parallel::MemoryOptions;
  sh.optimizer_bytes = (s.memory.main_params == MO::MainParams::Fp16 ? 2 : 4) + MO::bytes(s.memory.exp_avg) +
                       MO::bytes(s.memory.exp_avg_sq);
  sh.gpus = s.cluster.gpus;
  sh.gpus_per_node = s.cluster.gpus_per_node;
  sh.dp = layout.dp * layout.cp;  // context-parallel ranks hold the same weights as data-parallel ones
  // Hybrid sharding (dp_shard): the sharded states exist once per group of dp_shard data-parallel ranks.
  if (s.parallel.dp_shard > 0) sh.shard_copies = std::max(1, layout.dp / s.parallel.dp_shard);
  sh.optimizer_sharded = s.parallel.zero_stage >= 1 || s.parallel.distributed_optimizer;
  sh.weights_sharded = s.parallel.zero_stage >= 3;
  if (s.memory.master_weights != parallel::MemoryOptions::MasterWeights::Separate) {
    // The parameters are the master (training.master_weights, PyTorch FSDP): a checkpoint holds them and Adam's two
    // moments, 4 + 8 bytes in fp32 ("params") or 2 + 4 in pure 16-bit training ("none"). The parameters are sharded
    // where the GPUs hold them sharded (ZeRO-3 / FSDP), else whole in each replica, as with a separate master: a user
    // trial found "none" under ZeRO-1 counted them sharded over data parallelism, while the step's memory (and the
    // "separate" case) hold them whole, a 3.5x shorter Daly interval for the same weights.
    const bool fp32 = s.memory.master_weights == parallel::MemoryOptions::MasterWeights::Params;
    sh.weight_bytes = fp32 ? 4 : 2;
    sh.optimizer_bytes = fp32 ? 8 : 4;
  }
  if (s.model.moe) {
    // The routed experts of every MoE layer, sharded over expert parallelism (and expert tensor parallelism, TP's
    // by default) in each pipeline stage: what each GPU holds of them, as the memory model counts it.
    sh.expert_params =
        static_cast<double>(s.model.layers - pc.dense_layers) * (pc.mlp_per_layer - pc.shared_mlp_per_layer);
    sh.expert_shards = layout.ep * (layout.expert_tp > 0 ? layout.expert_tp : layout.tp) * layout.pp;
  }
  // The pipeline ranks do not hold equal shares: the busiest GPU, whose bytes the asynchronous snapshot copies, is on
  // the rank with the most parameters (a user trial: the default scenario's snapshot counted an even 5.24 GB where
  // its first stage's GPUs hold 5.39).
  // Bytes, not parameters: a rank's dense weights and their optimizer states are sharded over data parallelism, its
  // experts' over the smaller expert-data-parallel group (ParamsPerGpu), so an MoE rank with the embedding is not the
  // one with the most bytes (a review: DeepSeek-V3's snapshot counted 12.5 GB against 7.6 GB held).
  if (layout.pp > 1) {
    const double dense_group = std::max(1, layout.dp * layout.cp);
    const double expert_group = std::max(1.0, dense_group / std::max(1, layout.ep));
    auto per_param = [&](double group) {
      return sh.weight_bytes / (sh.weights_sharded ? group : 1.0) +
             sh.optimizer_bytes / (sh.optimizer_sharded ? group : 1.0);
    };
    double most = 0, sum = 0;
    for (int r = 0; r < layout.pp; ++r) {
      const auto p = parallel::params_per_gpu(s.model, layout, r);
      const double bytes = p.dense * per_param(dense_group) + p.expert * per_param(expert_group);
      most = std::max(most, bytes);
      sum += bytes;
    }
    if (sum > 0) sh.busiest_rank_factor = most / (sum / layout.pp);
  }
  return sh;
}

reliability::CheckpointIo checkpoint_io(const Scenario& s, const parallel::Layout& layout, double data_bytes_per_s) {
  reliability::CheckpointStorage st = s.reliability.checkpoint.storage;
  st.shared = s.data.storage_bandwidth;  // the data pipeline's storage is the checkpoints' storage
  st.data_reads = base::Bandwidth{data_bytes_per_s};
  return reliability::checkpoint_io(checkpoint_shape(s, layout), st);
}

reliability::RunInputs run_inputs(const Scenario& s, const execution::StepPlan& plan, base::Time healthy,
                                  bool simulate_straggler) {
  // A step has no length; a run does (issue 17: `trainsim step` needs neither key).
  if (!s.training.tokens && !s.training.duration)
    throw base::ConfigError(s.source, "/training",
                            "missing \"tokens\" (train until done, e.g. \"15T\") or \"duration\" (a fixed window, "
                            "e.g. \"54 d\"): a run needs one (a step does not)");
  reliability::RunInputs in;
  const auto& L = plan.layout;
  const auto [nodes_per_leaf, nodes_per_rack] = failure_domains(plan.topology.get());
  in.job = reliability::JobShape::make(s.cluster.gpus, s.cluster.gpus_per_node, L.dp, nodes_per_leaf, nodes_per_rack);
  in.components = s.reliability.components;
  in.trace = s.reliability.trace;
  if (in.trace) in.trace->replaces = in.components.size();  // not the loss-spike component added below: still drawn
  in.detection.hang = s.reliability.hang_timeout;
  if (s.reliability.detect_crash) in.detection.crash = *s.reliability.detect_crash;
  if (s.reliability.detect_straggler) in.detection.straggler = *s.reliability.detect_straggler;
  if (s.reliability.detect_sdc) in.detection.sdc = *s.reliability.detect_sdc;
  if (s.reliability.straggler_slowdown) in.straggler_slowdown = *s.reliability.straggler_slowdown;
  in.restart = s.reliability.restart;
  in.node_swap = s.reliability.node_swap;
  in.when_spares_exhausted =
      s.reliability.shrink ? reliability::OnSparesExhausted::Shrink : reliability::OnSparesExhausted::Wait;

  // Checkpoint bytes and their times from the storage bandwidths, less what the data pipeline reads meanwhile
  // (tokens per second of the healthy step x bytes per token).
  const double bytes_per_token =
      s.data.bytes_per_token ? static_cast<double>(s.data.bytes_per_token->n) : (s.model.vocab < 65500 ? 2.0 : 4.0);
  const double data_reads =
      plan.tokens / std::max(1e-9, healthy.seconds()) * bytes_per_token * (1 - s.data.cache_hit_rate);
  const reliability::CheckpointIo io = checkpoint_io(s, L, data_reads);
  const CheckpointConfig& ck = s.reliability.checkpoint;
  in.checkpoint.policy = ck.auto_interval ? reliability::CheckpointPolicy::Daly : reliability::CheckpointPolicy::Fixed;
  in.checkpoint.interval = ck.interval;
  in.checkpoint.interval_steps = static_cast<double>(ck.interval_steps);
  in.checkpoint.write = ck.write.value_or(io.write.time);
  in.checkpoint.load = ck.load.value_or(io.load.time);
  in.checkpoint.async = ck.async;
  in.checkpoint.snapshot = std::min(io.snapshot, in.checkpoint.write);
  if (!ck.write) in.checkpoint.write_basis = basis(io, io.write);
  if (!ck.load) in.checkpoint.load_basis = basis(io, io.load);
  {  // a snapshot slower than the durable write leaves the write blocking: said, since snapshot_bandwidth then does
     // nothing
    char buf[160];
    const double gb = static_cast<double>(io.per_gpu_max.n) / 1e9;
    const double rate = s.reliability.checkpoint.storage.snapshot.bytes_per_s / 1e9;
    if (io.snapshot <= in.checkpoint.write)
      std::snprintf(buf, sizeof buf, "a GPU-to-host snapshot of %.3g GB per GPU at %.3g GB/s", gb, rate);
    else
      std::snprintf(buf, sizeof buf,
                    "the durable write, shorter than a GPU-to-host snapshot of %.3g GB per GPU at %.3g "
                    "GB/s (%.3g s)",
                    gb, rate, io.snapshot.seconds());
    in.checkpoint.snapshot_basis = buf;
  }

  // Loss spikes: a job-wide process whose rate is per optimiser step, so its MTBF in time follows the healthy step.
  if (s.training.loss_spikes && s.training.loss_spikes->per_million_steps > 0) {
    const LossSpikeConfig& ls = *s.training.loss_spikes;
    hardware::FailureComponentSpec spike;
    spike.name = "loss_spike";
    spike.scope = hardware::FailureScope::Job;
    spike.effect = hardware::FailureEffect::LossSpike;
    spike.mtbf = base::Duration{1e6 / ls.per_million_steps * healthy.seconds()};
    spike.rollback_steps = ls.rollback_steps;
    in.components.push_back(spike);
    in.detection.loss_spike = ls.detection;
  }

  if (s.training.tokens) in.total_steps = std::ceil(s.training.tokens->n / plan.tokens);
  if (s.training.duration) in.window = *s.training.duration;
  // A trial is cut off at horizon_factor x its failure-free time and counted as never finishing, so a deadline or a
  // budget beyond that horizon read cut-off trials as misses: a user trial had "6.5% deadline risk" for a 10-day
  // deadline on a 2-day horizon, where every trial finishes within 0.1 d. The horizon reaches past both.
  if (in.total_steps && healthy > base::Time::zero()) {
    const double failure_free_s = *in.total_steps * healthy.seconds();
    double limit_s = s.cost.deadline ? s.cost.deadline->seconds() : 0.0;
    if (s.cost.budget && s.cost.gpu_hour && s.cost.pricing == cost::Pricing::Rented && s.cluster.gpus > 0)
      limit_s = std::max(limit_s, s.cost.budget->usd / (s.cost.gpu_hour->usd * s.cluster.gpus) * 3600.0);
    in.horizon_factor = std::max(in.horizon_factor, 1.05 * limit_s / failure_free_s);
  }
  in.spares = s.reliability.spares.value_or(reliability::auto_spares(in));
  // A pool larger than the job can never be in use all at once ("auto" stops at the job's size); a user trial found
  // 200 spares for 128 nodes accepted without a word.
  if (s.reliability.spares && *s.reliability.spares > in.job.nodes)
    throw base::ConfigError(s.source, "/reliability/spares",
                            std::to_string(*s.reliability.spares) + " spare nodes for a job of " +
                                std::to_string(in.job.nodes) + " nodes: at most " + std::to_string(in.job.nodes) +
                                " can stand in (\"auto\" sizes the pool)");

  // Step time per cluster state. A straggler is simulated at full fidelity (one GPU slowed) for jobs of up to 16,384
  // GPUs, else the healthy step stretched by its factor. The simulation (seconds at 16k GPUs) runs on the first state
  // that has a straggler, not here: `validate` and runs whose trials never meet one do not pay for it. The run level
  // asks for step times under one lock (reliability::StepTimes), so the lazy value is computed once.
  const double slowdown = in.straggler_slowdown;
  auto straggler = std::make_shared<std::optional<base::Time>>();  // empty: not computed yet
  auto straggler_plan =
      simulate_straggler && plan.gpus <= 16384 ? std::make_shared<const execution::StepPlan>(plan) : nullptr;
  auto straggler_time = [healthy, slowdown, straggler, straggler_plan] {
    if (*straggler) return **straggler;
    *straggler = base::Time{static_cast<std::int64_t>(static_cast<double>(healthy.ns) * slowdown)};
    if (straggler_plan) {
      execution::StepOptions o;
      o.fidelity = execution::Fidelity::Full;
      o.slowdown.assign(static_cast<std::size_t>(straggler_plan->gpus), 1.0);
      o.slowdown[0] = slowdown;
      *straggler = execution::simulate_step(*straggler_plan, o).step_time;
    }
    return **straggler;
  };
  // Fewer replicas: the same global batch over dp - k replicas, more micro-batches each, simulated by the step level
  // (the pipeline bubble shrinks, the gradient all-reduce changes: not dp / live). Megatron-LM requires the global
  // batch to divide by micro_batch x dp, so a state where it does not is one the job cannot run in (Time::max()).
  // The healthy step's own fidelity scales the simulated ratio: replica fidelity (the planner: analytic).
  const Scenario base = s;
  const int dp = L.dp;
  const int other = L.tp * L.pp * L.cp;
  const execution::Fidelity fid = simulate_straggler ? execution::Fidelity::Replica : execution::Fidelity::Analytic;
  auto simulate = [base, other, fid](int live) -> double {
    Scenario sc = base;
    // The step simulator's cluster is whole nodes: a shrunk state that leaves part of a node (replicas of 20 GPUs on
    // 8-GPU nodes) is not simulated, and the job shrinks further or waits. It aborted the run and the planner's whole
    // search with a topology error about a GPU count the user never gave (a user trial: 24, 40, 56, 72 GPUs).
    if (const int per_node = std::max(1, base.cluster.gpus_per_node); (live * other) % per_node != 0) return -1;
    sc.cluster.gpus = live * other;
    sc.parallel.dp = live;
    const StepSetup setup = step_setup(sc);
    if (std::holds_alternative<std::vector<parallel::Infeasible>>(setup)) return -1;
    const auto p = execution::build_step_plan(std::get<execution::StepInputs>(setup));
    return (fid == execution::Fidelity::Analytic ? execution::analytic_step(p) : [&] {
             execution::StepOptions o;
             o.fidelity = fid;
             return execution::simulate_step(p, o);
           }()).step_time.seconds();
  };
  const int global_batch = s.parallel.global_batch, micro_batch = std::max(1, L.micro_batch);
  auto reference = std::make_shared<double>(-1);  // the simulated full-size step, computed on first need
  in.step_time = [healthy, straggler_time, dp, global_batch, micro_batch, simulate,
                  reference](const reliability::ClusterState& st) {
    const double full = static_cast<double>((st.straggler_factor > 1.0 ? straggler_time() : healthy).ns);
    if (st.missing_dp_replicas == 0) return base::Time{static_cast<std::int64_t>(full)};
    const int live = dp - st.missing_dp_replicas;
    if (live < 1 || global_batch % (micro_batch * live) != 0) return base::Time::max();
    if (*reference < 0) *reference = simulate(dp);
    const double shrunk = simulate(live);
    if (!(shrunk > 0) || !(*reference > 0)) return base::Time::max();
    // Never faster than the healthy job: the same global batch over fewer replicas is at least as much work for each,
    // and where the step level says otherwise (collectives over 524,288 replicas, latency-bound, lose more than their
    // compute gains), the healthy job would have run its steps as the shrunk one does. A user trial's shrunk states
    // were 27% faster, and the run reported goodput 121% and negative lost GPU-hours.
    return base::Time{static_cast<std::int64_t>(std::ceil(full * std::max(1.0, shrunk / *reference)))};
  };
  return in;
}

}  // namespace sim::scenario
