// sim/results/metric_paths.cpp: the table of result fields `expect` and baselines may name, and their lookup.
#include "sim/results/metric_paths.hpp"

#include <algorithm>

namespace sim::results {
namespace {

constexpr std::string_view kStep[] = {
    "step_time_s",
    "tokens_per_s",
    "tflops_per_gpu",
    "mfu",
    "hfu",
    "breakdown_s.compute",
    "breakdown_s.tp_exposed",
    "breakdown_s.pp_bubble",
    "breakdown_s.pp_exposed",
    "breakdown_s.dp_exposed",
    "breakdown_s.cp_exposed",
    "breakdown_s.ep_exposed",
    "breakdown_s.optimizer",
    "breakdown_s.data_stall",
    "memory_gib.params",
    "memory_gib.grads",
    "memory_gib.optimizer",
    "memory_gib.activations",
    "memory_gib.buffers",
    "memory_gib.total",
    "memory_gib.capacity",
    "fits",
    "simulated_gpus",
    "events",
    "convergence.global_batch_tokens",
    "convergence.critical_batch_tokens",
    "convergence.token_efficiency",
    "convergence.effective_tokens_per_s",
    "convergence.effective_tokens",
    "convergence.data_tokens_per_s",
};

constexpr std::string_view kRun[] = {
    "trials",
    "seed",
    "time_to_train_days.mean",
    "time_to_train_days.p10",
    "time_to_train_days.p50",
    "time_to_train_days.p90",
    "time_to_train_days.p99",
    "goodput.mean",
    "goodput.p10",
    "goodput.p50",
    "goodput.p90",
    "interruptions.mean",
    "job_mtbf_h",
    "job_mtbf_h_simulated",
    "lost_gpu_hours.mean",
    "checkpoint.interval_s",
    "checkpoint.interval_steps",
    "checkpoint.optimum_interval_s",
    "checkpoint.wall_vs_optimum",
    "checkpoint.overhead_fraction",
    "checkpoint.write_s",
    "checkpoint.async",
    "checkpoint.snapshot_s",
    "checkpoint.load_s",
    "checkpoint.durable_per_trial",
    "cost_usd.mean",
    "cost_usd.p10",
    "cost_usd.p50",
    "cost_usd.p90",
    "cost_usd.cvar95",
    "cost_usd.burn_per_hour",
    "cost_usd.per_wall_day",
    "cost_usd.failures_mean",
    "cost_usd.energy_mean",
    "cost_usd.energy_mwh_mean",
    "cost_usd.storage_mean",
    "cost_per_failure_usd.mean",
    "p_deadline_miss",
    "p_budget_overrun",
    "work.total_steps",
    "work.window_days",
    "work.step_time_s",
    "work.failure_free_days",
    "work.horizon_days",
    "time_accounting_days.wall",
    "time_accounting_days.productive",
    "time_accounting_days.checkpoint",
    "time_accounting_days.detection",
    "time_accounting_days.restart",
    "time_accounting_days.lost_work",
    "time_accounting_days.waiting_for_repair",
    "time_accounting_days.degraded",
    "time_accounting_days.drain",
    "never_finished.trials",
    "sample_trial.trial",
};

constexpr std::string_view kByCause[] = {"interruptions.by_cause", "lost_gpu_hours.by_cause",
                                         "cost_per_failure_usd.by_cause"};

bool listed(std::span<const std::string_view> list, std::string_view path) {
  return std::find(list.begin(), list.end(), path) != list.end();
}

/// `path` exactly as a field: listed, "step." + a step field, or a by_cause group and one of `causes`.
bool is_field(std::string_view path, std::span<const std::string> causes) {
  if (listed(kStep, path) || listed(kRun, path)) return true;
  if (path.starts_with("step.") && listed(kStep, path.substr(5))) return true;
  for (std::string_view group : kByCause)
    if (path.size() > group.size() + 1 && path.starts_with(group) && path[group.size()] == '.' &&
        std::find(causes.begin(), causes.end(), path.substr(group.size() + 1)) != causes.end())
      return true;
  return false;
}

}  // namespace

std::span<const std::string_view> step_metric_paths() {
  return kStep;
}
std::span<const std::string_view> run_metric_paths() {
  return kRun;
}
std::span<const std::string_view> by_cause_groups() {
  return kByCause;
}

std::optional<std::string> resolve_metric(std::string_view path, std::span<const std::string> causes) {
  const auto dot = path.find('.');
  const std::string_view head = path.substr(0, dot), tail = dot == std::string_view::npos ? "" : path.substr(dot);
  for (std::string_view suffix : kMetricUnitSuffixes) {
    std::string candidate = std::string(head) + std::string(suffix) + std::string(tail);
    if (is_field(candidate, causes)) return candidate;
  }
  return std::nullopt;
}

std::string metric_paths_text() {
  // Consecutive entries sharing a first segment are written once: "memory_gib.{params, grads, ...}".
  std::string out;
  auto add_list = [&out](std::span<const std::string_view> list) {
    for (std::size_t i = 0; i < list.size();) {
      const auto dot = list[i].find('.');
      if (!out.empty()) out += ", ";
      if (dot == std::string_view::npos) {
        out += list[i++];
        continue;
      }
      const std::string_view group = list[i].substr(0, dot + 1);
      std::size_t end = i;
      while (end < list.size() && list[end].starts_with(group))
        ++end;
      if (end == i + 1) {
        out += list[i++];
        continue;
      }
      out += std::string(group) + "{";
      for (; i < end; ++i)
        out += std::string(list[i].substr(group.size())) + (i + 1 < end ? ", " : "}");
    }
  };
  add_list(kStep);
  add_list(kRun);
  for (std::string_view group : kByCause)
    out += ", " + std::string(group) + ".CAUSE";
  return out + " (CAUSE: a failure component's name; a step field also as step.FIELD)";
}

std::vector<std::string> all_metric_paths(std::span<const std::string> causes) {
  std::vector<std::string> all(std::begin(kStep), std::end(kStep));
  all.insert(all.end(), std::begin(kRun), std::end(kRun));
  for (std::string_view group : kByCause)
    for (const auto& c : causes)
      all.push_back(std::string(group) + "." + c);
  return all;
}

}  // namespace sim::results
