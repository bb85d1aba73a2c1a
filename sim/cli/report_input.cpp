// sim/cli/report_input.cpp: from a scenario and its results to the report's input and the report folder.
#include "sim/cli/report_input.hpp"

#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/input_file.hpp"
#include "sim/base/quantity.hpp"
#include "sim/base/table.hpp"
#include "sim/base/builtin.hpp"
#include "sim/scenario/sensitivity.hpp"
#include "sim/workload/params.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sim::cli {

namespace {

constexpr std::string_view kBuiltinPrefix = "<built-in>/";

std::vector<std::pair<std::string, std::string>> facts_of(const scenario::Scenario& s, const StepOutcome& step) {
  const auto p = workload::count_params(s.model);
  const auto& L = step.inputs.layout;
  std::vector<std::pair<std::string, std::string>> f;
  f.emplace_back("model", s.model.name + " · " + base::format_count({p.total(s.model.layers)}) + " parameters, " +
                              std::to_string(s.model.layers) + " layers");
  const auto peak = s.hardware.gpu.peak_for(s.training.dtype);
  f.emplace_back("hardware", s.hardware.name + " · " + (peak ? base::format_flop_rate(*peak) : std::string("?")) + " " +
                                 hardware::to_string(s.training.dtype) + ", " + base::format_bytes(s.hardware.gpu.hbm) +
                                 " HBM");
  f.emplace_back("cluster", std::to_string(s.cluster.gpus) + " GPUs, " + std::to_string(s.cluster.gpus_per_node) +
                                " per node, " + fmt(s.cluster.network.nic_bandwidth.gbits_per_s(), 0) +
                                " Gbit/s NICs, " + s.cluster.network.topology);
  f.emplace_back("parallel", "TP " + std::to_string(L.tp) + " · PP " + std::to_string(L.pp) + " · DP " +
                                 std::to_string(L.dp) + " · CP " + std::to_string(L.cp) + " · EP " +
                                 std::to_string(L.ep) + (L.vpp > 1 ? " · VPP " + std::to_string(L.vpp) : "") + ", " +
                                 parallel::to_string(step.inputs.parallel.schedule) + ", " +
                                 std::to_string(L.micro_batches) + " micro-batches");
  f.emplace_back("training", (s.training.tokens ? base::format_count(*s.training.tokens) + " tokens"
                                                : "window " + base::format_time(*s.training.duration)) +
                                 ", sequence " + std::to_string(s.training.seq_len) + ", global batch " +
                                 std::to_string(s.parallel.global_batch));
  f.emplace_back("failures",
                 scenario::failures_line(s.reliability) + ", " + std::to_string(s.reliability.trials) + " trials");
  return f;
}

}  // namespace

std::string scenario_bytes(const scenario::Scenario& s) {
  if (s.source.rfind(kBuiltinPrefix, 0) == 0) {
    const auto text = base::builtin_text(std::string_view(s.source).substr(kBuiltinPrefix.size()));
    return text ? std::string(*text) : std::string();
  }
  try {
    return base::read_input_file(s.source, "the scenario file");
  } catch (const base::ConfigError&) {
    return {};  // read once already; a file changed since has no hash
  }
}

reports::ReportInput report_input(const scenario::Scenario& s, const StepOutcome& step, const RunOutcome& r) {
  reports::ReportInput in;
  in.scenario_name = s.name;
  in.scenario_source = s.source;
  in.description = s.description;
  in.trainsim_version = TRAINSIM_VERSION;
  in.seed = r.run.seed;
  // The run JSON's resolved scenario: the scenario's keys and the run level's settings as the run used them.
  in.effective_config_json = (r.resolved_scenario.is_null() ? scenario_json(s) : r.resolved_scenario).dump(2);
  const std::string bytes = scenario_bytes(s);
  if (!bytes.empty()) in.hashes.push_back({"scenario file", "FNV-1a-64", reports::hex64(reports::fnv1a64(bytes))});
  in.hashes.push_back(
      {"effective configuration", "FNV-1a-64", reports::hex64(reports::fnv1a64(in.effective_config_json))});
  in.facts = facts_of(s, step);
  for (const auto& note : scenario_notes(s))
    in.notes.push_back(note);
  if (const auto w = missing_price_warning(s)) {
    in.notes.push_back(*w);
    in.unpriced = true;
    in.unpriced_reason = *w;
  }
  // Spare nodes are not in the rented cost (README, "Cost"): said beside it, with what they would add if rented for
  // the job (a user trial found a less reliable cluster cheaper, its larger auto-sized pool free).
  if (s.cost.pricing == cost::Pricing::Rented && r.run.spares > 0 && s.cluster.gpus > 0) {
    const double share = static_cast<double>(r.run.spares) * s.cluster.gpus_per_node / s.cluster.gpus;
    in.notes.push_back("the " + std::to_string(r.run.spares) +
                       " spare nodes (reliability.spares) are not priced: they are taken as the provider's pool or "
                       "your fleet's; rented for this job they would add " +
                       base::fmt(100 * share, 1) + "% to the compute cost");
  }
  // A replayed failure log changes what every failure figure means: said where the summary is read (a user trial:
  // only the CLI and the HTML's configuration named it; summary.md did not).
  if (const auto& t = s.reliability.trace)
    in.notes.push_back("failures are replayed from " + t->source + " (" + scenario::trace_extent(*t) +
                       ", repeated after it), the same in every trial, not drawn from failure rates");
  in.gpus = s.cluster.gpus;
  in.step = step.result;
  in.run = r.run;
  in.cost = r.cost;
  in.sensitivity_delta = scenario::SensitivityOptions{}.delta;  // what `run` moves each input by (app/run.cpp)
  for (const auto& row : r.sensitivity)
    in.sensitivity.push_back({row.parameter, row.low_cost_usd, row.high_cost_usd, row.low_days, row.high_days,
                              row.base_cost_usd, row.base_days});
  if (s.cost.deadline) in.deadline_days = s.cost.deadline->days();
  if (s.cost.budget) in.budget_usd = s.cost.budget->usd;
  in.sources = {
      "Model FLOPs and MFU: Narayanan et al., \"Efficient Large-Scale Language Model Training on GPU Clusters "
      "Using Megatron-LM\", SC21.",
      "Activation memory: Korthikanti et al., \"Reducing Activation Recomputation in Large Transformer Models\", "
      "2022.",
      "Collectives: Thakur, Rabenseifner, Gropp, \"Optimization of Collective Communication Operations in MPICH\", "
      "IJHPCA 2005.",
      "Failure rates: Llama Team, \"The Llama 3 Herd of Models\", 2024 (54-day interruption table on 16,384 H100s).",
      "Checkpoint interval: Young, CACM 1974; Daly, FGCS 2006.",
  };
  return in;
}

std::vector<std::string> write_report_files(const std::string& dir, const reports::ReportInput& in,
                                            const std::string& result_json) {
  // The four files change together (a new folder swapped in): never a new report.html beside an old result.json.
  return base::write_file_set(dir, {{"report.html", reports::render_html(in)},
                                    {"summary.md", reports::render_markdown(in)},
                                    {"result.json", result_json},
                                    {"result.csv", reports::render_csv(in)}});
}

}  // namespace sim::cli
