// sim/scenario/run_setup.cpp: checkpoint sizes, step times per cluster state and the failure model for a scenario.
#include "sim/scenario/run_setup.hpp"

#include "sim/execution/step_sim.hpp"
#include "sim/workload/params.hpp"

#include <cmath>

namespace sim::scenario {

reliability::RunInputs run_inputs(const Scenario& s, const execution::StepPlan& plan, base::Time healthy,
                                  bool simulate_straggler) {
  reliability::RunInputs in;
  const auto& L = plan.layout;
  in.job = reliability::JobShape::make(s.cluster.gpus, s.cluster.gpus_per_node, L.dp);
  in.components = s.reliability.components;
  in.detection.hang = s.reliability.hang_timeout;
  in.restart = s.reliability.restart;
  in.spares = s.reliability.spares;

  // Checkpoint: 16-bit weights plus fp32 master weights and Adam moments, 14 bytes per parameter for the job
  // (Rajbhandari et al. 2020 Sec. 3.1); each GPU snapshots its share.
  const double params = workload::count_params(s.model).total(s.model.layers);
  const double bytes = params * 14.0;
  in.checkpoint.policy = s.reliability.checkpoint.auto_interval ? reliability::CheckpointPolicy::Daly
                                                                : reliability::CheckpointPolicy::Fixed;
  in.checkpoint.interval = s.reliability.checkpoint.interval;
  in.checkpoint.write = s.reliability.checkpoint.write;
  in.checkpoint.async = s.reliability.checkpoint.async;
  in.checkpoint.snapshot =
      base::transfer_time(base::Bytes{static_cast<std::int64_t>(bytes / s.cluster.gpus)}, kDefaultSnapshotBandwidth);
  if (in.checkpoint.snapshot > in.checkpoint.write) in.checkpoint.snapshot = in.checkpoint.write;
  in.checkpoint.load = base::transfer_time(base::Bytes{static_cast<std::int64_t>(bytes)}, s.data.storage_bandwidth);

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

  // Step time per cluster state: the straggler state is simulated once here (the callback must be thread-safe).
  base::Time straggler = base::Time{static_cast<std::int64_t>(static_cast<double>(healthy.ns) * in.straggler_slowdown)};
  if (simulate_straggler && plan.gpus <= 16384) {
    execution::StepOptions o;
    o.fidelity = execution::Fidelity::Full;
    o.slowdown.assign(static_cast<std::size_t>(plan.gpus), 1.0);
    o.slowdown[0] = in.straggler_slowdown;
    straggler = execution::simulate_step(plan, o).step_time;
  }
  const int dp = L.dp;
  in.step_time = [healthy, straggler, dp](const reliability::ClusterState& st) {
    const double base = static_cast<double>((st.straggler_factor > 1.0 ? straggler : healthy).ns);
    const int live = std::max(1, dp - st.missing_dp_replicas);
    return base::Time{static_cast<std::int64_t>(base * dp / live)};
  };
  return in;
}

}  // namespace sim::scenario
