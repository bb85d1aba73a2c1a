// sim/app/step.cpp: a scenario's step evaluated and written as JSON.
#include "sim/app/step.hpp"

#include "sim/scenario/step_setup.hpp"
#include "sim/workload/params.hpp"

namespace sim::app {

using results::Json;

namespace {
bool fits(const results::MemoryGib& m) {
  return m.total <= m.capacity;
}
}  // namespace

std::variant<StepOutcome, std::vector<parallel::Infeasible>> evaluate_step(const scenario::Scenario& s,
                                                                           const execution::StepOptions& opt) {
  auto setup = scenario::step_setup(s);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&setup)) return *bad;
  StepOutcome o{std::get<execution::StepInputs>(setup), {}, {}};
  o.plan = execution::build_step_plan(o.inputs);
  o.result = execution::simulate_step(o.plan, opt);
  o.result.memory = scenario::memory_gib(s, o.inputs.layout);
  o.result.fits = fits(o.result.memory);
  return o;
}

std::variant<KernelTable, std::vector<parallel::Infeasible>> step_kernels(const scenario::Scenario& s) {
  auto setup = scenario::step_setup(s);
  if (auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&setup)) return *bad;
  const auto& in = std::get<execution::StepInputs>(setup);
  KernelTable t{execution::kernel_table(in), scenario::memory_gib(s, in.layout)};
  t.fits = fits(t.memory);
  return t;
}

Json kernels_json(const KernelTable& table, const scenario::Scenario& s) {
  Json j;
  j["schema"] = "trainsim.kernels/1";
  j["scenario"] = s.name;
  j["scope"] =
      "one micro-batch on one GPU: a transformer layer (an MoE layer where the model has experts; part dense_layer: "
      "a dense layer of a model that mixes them), the input embedding, the output layer";
  Json& out = j["kernels"] = Json::array();
  for (const auto& r : table.rows) {
    Json k;
    k["part"] = r.part;
    k["pass"] = r.pass;
    k["name"] = r.name;
    k["kind"] = r.kind;
    // GEMMs: m x n x k, batch; attention: queries x keys x head dimension, batch x heads (its rate follows the length).
    if (r.kind == "gemm" || r.kind == "gemm_fp8" || r.kind == "attention") {
      k["m"] = r.m;
      k["n"] = r.n;
      k["k"] = r.k;
      k["batch"] = r.batch;
    }
    if (r.flops > 0) k["flops"] = r.flops;
    if (r.bytes > 0) k["bytes"] = r.bytes;
    if (r.group > 0) k["group"] = r.group;
    k["time_s"] = r.time.seconds();
    k["exposed_s"] = r.exposed.seconds();
    out.push_back(std::move(k));
  }
  // Whether the layout fits, as `trainsim step` says it (the exit code follows it).
  j["memory_gib"]["total"] = table.memory.total;
  j["memory_gib"]["capacity"] = table.memory.capacity;
  j["fits"] = table.fits;
  return j;
}

Json step_json(const results::StepResult& r, const scenario::Scenario& s) {
  Json j = results::to_json(r);
  j["scenario"] = s.name;
  // Token efficiency of the global batch (McCandlish et al. 2018): what the raw throughput buys in progress.
  const auto conv = scenario::convergence(s);
  Json& c = j["convergence"];
  c["global_batch_tokens"] = conv.batch.batch;
  c["critical_batch_tokens"] = conv.batch.critical_batch;
  c["critical_batch_source"] = conv.source;
  c["token_efficiency"] = conv.batch.token_efficiency();
  c["effective_tokens_per_s"] = r.tokens_per_s * conv.batch.token_efficiency();
  if (s.training.tokens) c["effective_tokens"] = conv.batch.effective_tokens(s.training.tokens->n);
  c["data_tokens_per_s"] = scenario::data_tokens_per_s(s);
  return j;
}

Json scenario_json(const scenario::Scenario& s) {
  const auto p = workload::count_params(s.model);
  Json j = Json::object();
  j["schema"] = "trainsim.resolved-scenario/1";
  j["name"] = s.name;
  j["source"] = s.source;
  // The document as run, every key and --set included: the summary below leaves most keys out.
  if (!s.document_sha256.empty()) j["document_sha256"] = s.document_sha256;
  if (!s.overrides.empty()) {
    Json sets = Json::array();
    for (const auto& o : s.overrides)
      sets.push_back(o);
    j["overrides"] = std::move(sets);
  }
  j["model"]["name"] = s.model.name;
  j["model"]["params"] = p.total(s.model.layers);
  j["model"]["active_params"] = p.active(s.model.layers);
  j["hardware"]["name"] = s.hardware.name;
  const auto peak = s.hardware.gpu.peak_for(s.training.dtype);
  j["hardware"]["peak_flops_per_s"] = peak ? Json(peak->flops_per_s) : Json();
  j["hardware"]["hbm_bytes"] = s.hardware.gpu.hbm.n;
  j["cluster"]["gpus"] = s.cluster.gpus;
  j["cluster"]["gpus_per_node"] = s.cluster.gpus_per_node;
  j["cluster"]["nic_bandwidth_bytes_per_s"] = s.cluster.network.nic_bandwidth.bytes_per_s;
  j["cluster"]["topology"] = s.cluster.network.topology;
  j["cluster"]["oversubscription"] = s.cluster.network.oversubscription;
  if (!s.cluster.network.failed.empty()) {  // a degraded fabric (absent when healthy: earlier outputs unchanged)
    Json failed = Json::array();
    for (const auto& f : s.cluster.network.failed)
      failed.push_back(topology::to_string(f));
    j["cluster"]["failed"] = std::move(failed);
  }
  if (!s.cluster.network.nvls) j["cluster"]["nvls"] = false;  // absent when on (the default): outputs unchanged
  const auto& pc = s.parallel;
  j["parallel"]["tp"] = pc.tp;
  j["parallel"]["pp"] = pc.pp;
  j["parallel"]["dp"] = pc.dp ? Json(*pc.dp) : Json();
  j["parallel"]["cp"] = pc.cp;
  j["parallel"]["ep"] = pc.ep;
  j["parallel"]["vpp"] = pc.vpp;
  j["parallel"]["sequence_parallel"] = pc.sequence_parallel;
  j["parallel"]["zero_stage"] = pc.zero_stage;
  j["parallel"]["recompute"] = parallel::to_string(pc.recompute);
  j["parallel"]["micro_batch"] = pc.micro_batch;
  j["parallel"]["global_batch"] = pc.global_batch;
  j["parallel"]["schedule"] = parallel::to_string(pc.schedule);
  // Communication overlap, when on (absent when off: earlier outputs unchanged).
  if (pc.tp_comm_overlap) j["parallel"]["tp_comm_overlap"] = true;
  if (pc.tp_comm_overlap && pc.tp_comm_overlap_method != parallel::TpOverlapMethod::Userbuffers)
    j["parallel"]["tp_comm_overlap_method"] = parallel::to_string(pc.tp_comm_overlap_method);
  if (pc.overlap_param_gather) j["parallel"]["overlap_param_gather"] = true;
  if (!pc.overlap_grad_reduce) j["parallel"]["overlap_grad_reduce"] = false;
  if (pc.dp_shard > 0) j["parallel"]["dp_shard"] = pc.dp_shard;
  if (pc.ep_comm_overlap) j["parallel"]["ep_comm_overlap"] = true;
  if (pc.moe_dispatch_fp8) j["parallel"]["moe_dispatch_dtype"] = "fp8";
  if (pc.backward_prefetch != parallel::BackwardPrefetch::Pre)
    j["parallel"]["backward_prefetch"] = parallel::to_string(pc.backward_prefetch);
  if (!pc.zero3_overlap) j["parallel"]["zero3_overlap"] = false;
  if (pc.zero3_engine_bytes_per_s > 0) j["parallel"]["zero3_engine_gbs"] = pc.zero3_engine_bytes_per_s / 1e9;
  if (pc.cp_comm_type != parallel::CpCommType::P2p)
    j["parallel"]["cp_comm_type"] = parallel::to_string(pc.cp_comm_type);
  j["training"]["seq_len"] = s.training.seq_len;
  j["training"]["tokens"] = s.training.tokens ? Json(s.training.tokens->n) : Json();
  j["training"]["duration_s"] = s.training.duration ? Json(s.training.duration->seconds()) : Json();
  j["training"]["dtype"] = hardware::to_string(s.training.dtype);
  j["reliability"]["failure_components"] = static_cast<int>(s.reliability.components.size());
  if (!s.reliability.failures_sha256.empty()) j["reliability"]["failures_sha256"] = s.reliability.failures_sha256;
  j["reliability"]["trials"] = s.reliability.trials;
  j["reliability"]["seed"] = static_cast<std::int64_t>(s.reliability.seed);
  // Every input of the cost, as the run used it (a user trial: an owned cluster's configuration showed only the
  // profile's rented price, which that run does not use, and none of the owned or energy inputs).
  const auto& c = s.cost;
  j["cost"]["pricing"] = c.pricing == cost::Pricing::Owned ? "owned" : "rented";
  if (c.pricing == cost::Pricing::Owned) {
    j["cost"]["node_price_usd"] = c.owned.node_price.usd;
    j["cost"]["amortisation_years"] = c.owned.amortisation_years;
    j["cost"]["utilisation"] = c.owned.utilisation;
  } else {
    j["cost"]["gpu_hour_usd"] = c.gpu_hour ? Json(c.gpu_hour->usd) : Json();
  }
  j["cost"]["energy"]["billed"] = c.energy.billed;
  j["cost"]["energy"]["usd_per_kwh"] = c.energy.usd_per_kwh;
  j["cost"]["energy"]["pue"] = c.energy.pue;
  j["cost"]["energy"]["node_power_w"] = c.energy.node_power.watts;
  j["cost"]["energy"]["idle_fraction"] = c.energy.idle_fraction;
  j["cost"]["storage"]["checkpoints_kept"] = c.storage.checkpoints_kept;
  j["cost"]["storage"]["usd_per_gb_month"] = c.storage.usd_per_gb_month;
  if (s.cost.deadline) j["cost"]["deadline_days"] = s.cost.deadline->days();
  if (s.cost.budget) j["cost"]["budget_usd"] = s.cost.budget->usd;
  return j;
}

}  // namespace sim::app
