// sim/cli/cmd_describe.cpp: `trainsim describe` (built-in models, hardware, collectives, schedules, failures, keys) and
// `trainsim validate` (strict lint of any trainsim file).
#include "sim/base/errors.hpp"
#include "sim/base/quantity.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/base/table.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/hardware/compute_model.hpp"
#include "sim/parallel/schedule.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/base/builtin.hpp"
#include "sim/workload/params.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace sim::cli {
namespace {

using results::Json;

// ---- describe ---------------------------------------------------------------------------------------------------

int describe_models(const Options& o, std::ostream& out) {
  Table t({"model", "params", "active", "layers", "hidden", "ffn", "heads", "kv", "vocab", "mlp", "moe"});
  Json arr = Json::array();
  for (const auto& name : base::builtin_names("models")) {
    const auto m = scenario::load_model(name);
    const auto p = workload::count_params(m);
    const double total = p.total(m.layers);
    const double active = p.active(m.layers);
    std::string moe = m.moe ? std::to_string(m.moe->experts) + "x top-" + std::to_string(m.moe->top_k) : "-";
    t.add({m.name, base::format_count({total}), m.moe ? base::format_count({active}) : "-", std::to_string(m.layers),
           std::to_string(m.hidden), std::to_string(m.ffn_hidden), std::to_string(m.heads), std::to_string(m.kv_heads),
           std::to_string(m.vocab), workload::to_string(m.activation), moe});
    Json j = Json::object();
    j["name"] = m.name;
    j["description"] = m.description;
    j["params"] = total;
    j["active_params"] = active;
    j["layers"] = m.layers;
    j["hidden"] = m.hidden;
    j["ffn_hidden"] = m.ffn_hidden;
    j["heads"] = m.heads;
    j["kv_heads"] = m.kv_heads;
    j["vocab"] = m.vocab;
    j["activation"] = workload::to_string(m.activation);
    if (m.moe) {
      j["moe"]["experts"] = m.moe->experts;
      j["moe"]["top_k"] = m.moe->top_k;
      j["moe"]["ffn_hidden"] = m.moe->ffn_hidden;
      j["moe"]["shared_experts"] = m.moe->shared_experts;
    } else {
      j["moe"] = nullptr;
    }
    j["published_params"] = m.published_params ? Json(m.published_params->n) : Json();
    arr.push_back(std::move(j));
  }
  if (o.format == "json") {
    out << arr.dump() << '\n';
  } else {
    t.print(out);
    out << "params: counted per weight matrix from the architecture (sim/workload/params.cpp)\n";
  }
  return kExitOk;
}

/// One layer kind's shape in words: attention, MLP or experts, parameters per layer.
struct LayerGroup {
  int first = 0, last = 0;
  bool moe = false;
  bool windowed = false;
};

std::string attention_shape(const workload::ModelSpec& m) {
  if (m.mla) {
    const auto& a = *m.mla;
    return "MLA " + std::to_string(m.heads) + " heads, q_lora " + std::to_string(a.q_lora_rank) + ", kv_lora " +
           std::to_string(a.kv_lora_rank) + ", qk " + std::to_string(a.qk_nope_head_dim) + "+" +
           std::to_string(a.qk_rope_head_dim) + " rope, v " + std::to_string(a.v_head_dim);
  }
  return std::to_string(m.heads) + " heads x " + std::to_string(m.head_dim()) + ", " + std::to_string(m.kv_heads) +
         " kv heads" + (m.qk_norm ? ", qk-norm" : "") +
         (m.bias       ? ", biases"
          : m.qkv_bias ? ", qkv biases"
                       : "");
}

/// `trainsim describe models FILE...`: each model (a model file, a scenario's model, or a built-in name) with its
/// parameter count and the shape of every run of layers of one kind, so a user can check it before simulating.
int describe_model_files(const std::vector<std::string>& files, const Options& o, std::ostream& out) {
  Json arr = Json::array();
  for (const auto& f : files) {
    const bool is_file = f.find('/') != std::string::npos || f.ends_with(".json");
    // A Hugging Face config.json is read as `trainsim import hf-config` reads it.
    const bool hf = is_file && is_hf_config(f);
    const auto kind = hf ? scenario::FileKind::Model : is_file ? scenario::validate_file(f) : scenario::FileKind::Model;
    if (kind == scenario::FileKind::Hardware)
      throw base::ConfigError(f, "/schema", "is a hardware profile; describe models takes a model or scenario file");
    const workload::ModelSpec m = hf                                     ? load_hf_config_model(f)
                                  : kind == scenario::FileKind::Scenario ? scenario::load_scenario(f).model
                                                                         : scenario::load_model(f);
    const auto p = workload::count_params(m);
    std::vector<LayerGroup> groups;
    for (int l = 0; l < m.layers; ++l) {
      const bool moe = m.is_moe_layer(l), win = m.is_windowed_layer(l);
      if (!groups.empty() && groups.back().moe == moe && groups.back().windowed == win) {
        groups.back().last = l;
      } else {
        groups.push_back({l, l, moe, win});
      }
    }
    Json j = Json::object();
    j["name"] = m.name;
    j["source"] = f;
    j["params"] = p.total(m.layers);
    j["active_params"] = p.active(m.layers);
    j["embedding_params"] = p.embedding + p.position;
    j["output_params"] = p.output;
    j["mtp_params"] = p.mtp;
    j["published_params"] = m.published_params ? Json(m.published_params->n) : Json();
    j["attention"] = attention_shape(m);
    j["attention_params_per_layer"] = p.attention_per_layer;
    Json layers = Json::array();
    Table t({"layers", "kind", "attention", "mlp", "params/layer"});
    for (const auto& g : groups) {
      std::string mlp;
      double per_layer = 0;
      if (g.moe) {
        mlp = std::to_string(m.moe->experts) + " experts top-" + std::to_string(m.moe->top_k) +
              (m.moe->router_groups > 0 ? " in " + std::to_string(m.moe->router_group_topk) + " of " +
                                              std::to_string(m.moe->router_groups) + " groups"
                                        : "") +
              " x " + std::to_string(m.moe->ffn_hidden) +
              (m.moe->shared_experts > 0 ? ", shared " + std::to_string(m.shared_expert_ffn()) : "");
        per_layer = p.per_layer();
      } else {
        mlp = std::to_string(m.dense_ffn());
        per_layer = p.dense_layer();
      }
      mlp += " " + workload::to_string(m.activation);
      const std::string range = std::to_string(g.first) + (g.last > g.first ? "-" + std::to_string(g.last) : "");
      const std::string kind_name =
          std::string(g.moe ? "moe" : "dense") + (g.windowed ? ", window " + std::to_string(m.sliding_window) : "");
      t.add({range, kind_name, attention_shape(m), mlp, base::format_count({per_layer})});
      Json lj = Json::object();
      lj["first"] = g.first;
      lj["last"] = g.last;
      lj["moe"] = g.moe;
      lj["sliding_window"] = g.windowed ? m.sliding_window : 0;
      lj["mlp"] = mlp;
      lj["params_per_layer"] = per_layer;
      layers.push_back(std::move(lj));
    }
    j["layer_groups"] = std::move(layers);
    if (o.format == "json") {
      arr.push_back(std::move(j));
      continue;
    }
    out << m.name << " (" << f << "): " << base::format_count({p.total(m.layers)}) << " params";
    // Model cards count "active" differently (Qwen and DeepSeek with the embedding, OpenAI's gpt-oss without it):
    // say what this count holds.
    if (m.moe)
      out << ", " << base::format_count({p.active(m.layers)}) << " active per token (embedding and output included)";
    if (m.published_params) out << " (published " << base::format_count({m.published_params->n}) << ")";
    out << "; " << m.layers << " layers, hidden " << m.hidden << ", vocab " << m.vocab << " (embedding "
        << base::format_count({p.embedding + p.position}) << ", output "
        << (m.tied_embeddings ? std::string("tied") : base::format_count({p.output})) << ")";
    if (m.mtp_layers > 0) out << ", " << m.mtp_layers << " MTP module(s) " << base::format_count({p.mtp});
    out << '\n';
    t.print(out);
  }
  if (o.format == "json") out << arr.dump() << '\n';
  return kExitOk;
}

int describe_hardware(const Options& o, std::ostream& out) {
  Table t({"hardware", "bf16 peak", "fp8 peak", "HBM", "HBM bw", "NVLink/GPU", "domain", "NIC/GPU", "price/GPU-h",
           "GEMM", "attn f/b"});
  // The fraction of the 16-bit peak a fused attention pass sustains over 8k-token calls (compute_model.hpp).
  auto attention_rate = [](const hardware::HardwareProfile& h, bool flash2, bool backward) {
    const auto kernel = flash2 ? hardware::AttentionKernel::Flash2 : hardware::AttentionKernel::Fused;
    const auto d = hardware::Dtype::Bf16;
    const double flops = 1e12, seq = 8192;
    const double secs = hardware::attention_time(h.gpu, d, h.efficiency, flops, {kernel, backward, seq}).seconds();
    return flops / secs / h.gpu.peak_for(d)->flops_per_s;
  };
  Json arr = Json::array();
  for (const auto& name : base::builtin_names("hardware_profiles")) {
    const auto h = scenario::load_hardware(name);
    const auto bf16 = h.gpu.peak_for(hardware::Dtype::Bf16);
    const auto fp8 = h.gpu.peak_for(hardware::Dtype::Fp8);
    const base::Bandwidth nic{h.network.nic_bandwidth.bytes_per_s * h.network.nics_per_gpu};
    t.add({h.name, bf16 ? fmt(bf16->tflops(), 0) + " TFLOP/s" : "-", fp8 ? fmt(fp8->tflops(), 0) + " TFLOP/s" : "-",
           fmt(h.gpu.hbm.gib(), 1) + " GiB", fmt(h.gpu.hbm_bandwidth.gbytes_per_s() / 1000, 2) + " TB/s",
           fmt(h.nvlink.bandwidth.gbytes_per_s(), 0) + " GB/s", std::to_string(h.nvlink.domain),
           fmt(nic.gbits_per_s(), 0) + " Gbit/s", h.price ? base::format_money(h.price->gpu_hour) : "-",
           fmt(h.efficiency.gemm, 2) + (fp8 ? "/" + fmt(h.efficiency.gemm_fp8.value_or(h.efficiency.gemm), 2) : ""),
           fmt(attention_rate(h, false, false), 2) + "/" + fmt(attention_rate(h, false, true), 2)});
    Json j = Json::object();
    j["name"] = h.name;
    j["description"] = h.description;
    Json peak = Json::object();
    for (const auto& [d, r] : h.gpu.peak)
      peak[hardware::to_string(d)] = r.flops_per_s;
    j["peak_flops_per_s"] = std::move(peak);
    j["hbm_bytes"] = h.gpu.hbm.n;
    j["hbm_bandwidth_bytes_per_s"] = h.gpu.hbm_bandwidth.bytes_per_s;
    j["nvlink_bandwidth_bytes_per_s"] = h.nvlink.bandwidth.bytes_per_s;
    j["nvlink_domain"] = h.nvlink.domain;
    j["nic_bandwidth_bytes_per_s"] = nic.bytes_per_s;
    j["gpus_per_node"] = h.node.gpus;
    j["gpu_hour_usd"] = h.price ? Json(h.price->gpu_hour.usd) : Json();
    j["failure_components"] = static_cast<int>(h.failures.size());
    Json eff = Json::object();
    eff["gemm"] = h.efficiency.gemm;
    if (fp8) eff["gemm_fp8"] = h.efficiency.gemm_fp8.value_or(h.efficiency.gemm);
    // The isolated GEMM rate whose ratio to gemm derates measured attention kernels (compute_model.hpp), where set.
    if (h.efficiency.gemm_isolated) eff["gemm_isolated"] = *h.efficiency.gemm_isolated;
    eff["attention_forward_8k"] = attention_rate(h, false, false);
    eff["attention_backward_8k"] = attention_rate(h, false, true);
    eff["attention_flash2_forward_8k"] = attention_rate(h, true, false);
    eff["attention_flash2_backward_8k"] = attention_rate(h, true, true);
    j["efficiency"] = std::move(eff);
    arr.push_back(std::move(j));
  }
  if (o.format == "json") {
    out << arr.dump() << '\n';
  } else {
    t.print(out);
    out << "peaks are dense (no sparsity); NVLink is per GPU per direction; GEMM: the fraction of the bf16 / fp8 peak\n"
           "a large GEMM sustains in a training loop; attn f/b: the fraction of the bf16 peak of fused attention's\n"
           "forward / backward over 8k-token calls (compute_model.hpp); sources: provenance in each profile\n";
  }
  return kExitOk;
}

int describe_named(const std::vector<std::pair<std::string, std::string>>& rows, const char* what, const Options& o,
                   std::ostream& out) {
  if (o.format == "json") {
    Json arr = Json::array();
    for (const auto& [name, description] : rows) {
      Json j = Json::object();
      j["name"] = name;
      j["description"] = description;
      arr.push_back(std::move(j));
    }
    out << arr.dump() << '\n';
    return kExitOk;
  }
  Table t({what, "description"});
  for (const auto& [name, description] : rows)
    t.add({name, description});
  t.print(out);
  return kExitOk;
}

/// `trainsim describe keys`: every scenario key, DESIGN.md's schema first, its default and accepted values.
int describe_keys(const Options& o, std::ostream& out) {
  std::vector<scenario::KeyDoc> keys = scenario::schema_keys();
  keys.insert(keys.end(), scenario::extension_keys().begin(), scenario::extension_keys().end());
  if (o.format == "json") {
    Json arr = Json::array();
    for (const auto& k : keys) {
      Json j = Json::object();
      j["key"] = std::string(k.path);
      j["default"] = std::string(k.fallback);
      j["accepted"] = std::string(k.accepted);
      j["meaning"] = std::string(k.meaning);
      arr.push_back(std::move(j));
    }
    out << arr.dump() << '\n';
    return kExitOk;
  }
  Table t({"key", "default", "accepted", "meaning"});
  for (const auto& k : keys)
    t.add({std::string(k.path), std::string(k.fallback), std::string(k.accepted), std::string(k.meaning)});
  t.print(out);
  out << "optional unless \"required\"; unknown keys are errors; set one with --set key=value; sources and details: "
         "README.md\n";
  return kExitOk;
}

int describe_failures(const Options& o, std::ostream& out) {
  const auto h = scenario::load_hardware("h100-sxm5-80gb");
  Table t({"component", "scope", "MTBF per instance", "effect", "repair"});
  Json arr = Json::array();
  for (const auto& c : h.failures) {
    t.add({c.name, hardware::to_string(c.scope), fmt(c.mtbf.days(), 1) + " d", hardware::to_string(c.effect),
           fmt(c.repair.hours(), 1) + " h"});
    Json j = Json::object();
    j["name"] = c.name;
    j["scope"] = hardware::to_string(c.scope);
    j["mtbf_h"] = c.mtbf.hours();
    j["effect"] = hardware::to_string(c.effect);
    j["repair_h"] = c.repair.hours();
    arr.push_back(std::move(j));
  }
  if (o.format == "json") {
    out << arr.dump() << '\n';
    return kExitOk;
  }
  t.print(out);
  out << "the default failure model of every built-in profile: derived from Llama 3's 54-day interruption table "
         "(see hardware_profiles/README.md)\n";
  return kExitOk;
}

// ---- validate ---------------------------------------------------------------------------------------------------

/// A scenario as `run` would take it: with the --set overrides, and through the checks that run applies after
/// loading (the step's inputs, the run level's ranges), so that what validate accepts never fails later as bad input.
/// A scenario with neither training.tokens nor training.duration is a step's (issue 17: a step has no length): valid,
/// the run level's checks skipped; false then (a user trial: validate refused what `step` runs).
bool validate_as_run(const std::string& f, const Options& o) {
  const auto s = scenario::load_scenario(f, overrides_of(o));
  execution::StepOptions analytic;
  analytic.fidelity = execution::Fidelity::Analytic;
  auto evaluated = evaluate_step(s, analytic);
  if (!s.training.tokens && !s.training.duration) return false;
  if (const auto* step = std::get_if<StepOutcome>(&evaluated); step != nullptr && step->result.fits)
    (void)app::run_inputs(s, *step);
  return true;
}

int validate(const std::vector<std::string>& files, const Options& o, std::ostream& out, std::ostream& err) {
  int bad = 0;
  for (const auto& f : files) {
    try {
      if (validate_baseline_file(f)) {
        if (!o.sets.empty()) throw base::ConfigError("--set", "", "applies to scenario files, not to " + f);
        out << "ok  " << f << " (check baseline)\n";
        continue;
      }
      const auto kind = scenario::validate_file(f, overrides_of(o));  // --set applies to scenarios, as in run
      const bool runs = kind != scenario::FileKind::Scenario || validate_as_run(f, o);
      if (kind != scenario::FileKind::Scenario && !o.sets.empty())
        throw base::ConfigError("--set", "", "applies to scenario files, not to " + f);
      const char* what = kind == scenario::FileKind::Scenario ? "scenario"
                         : kind == scenario::FileKind::Model  ? "model"
                                                              : "hardware profile";
      out << "ok  " << base::printable(f) << " (" << what
          << (runs ? "" : "; step only: run, and plan by cost or risk, need training.tokens or training.duration")
          << ")\n";
    } catch (const base::ConfigError& e) {
      ++bad;
      for (const auto& d : e.items())
        err << "error: " << base::printable(d.to_string()) << '\n';
    }
  }
  if (bad) err << bad << " of " << files.size() << " file(s) invalid\n";
  return bad ? kExitBadInput : kExitOk;
}

}  // namespace

void add_describe_commands(CLI::App& app, const Options& o, CommandList& commands) {
  auto* describe = app.add_subcommand(
      "describe", "List built-in models, hardware profiles, collectives, schedules, failures or keys");
  auto what = std::make_shared<std::string>();
  describe->add_option("what", *what, "models | hardware | collectives | schedules | failures | keys")
      ->required()
      ->check(CLI::IsMember({"models", "hardware", "collectives", "schedules", "failures", "keys"}));
  auto model_files = std::make_shared<std::vector<std::string>>();
  describe->add_option("files", *model_files,
                       "With models: model or scenario files (or built-in names) to describe layer by layer");
  commands.push_back({describe, [what, model_files, &o](std::ostream& out, std::ostream&) {
                        if (*what == "models" && !model_files->empty())
                          return describe_model_files(*model_files, o, out);
                        if (!model_files->empty())
                          throw base::ConfigError("describe", "", "files are taken only by `describe models`");
                        if (*what == "models") return describe_models(o, out);
                        if (*what == "hardware") return describe_hardware(o, out);
                        if (*what == "collectives")
                          return describe_named(collectives::describe_algorithms(), "algorithm", o, out);
                        if (*what == "failures") return describe_failures(o, out);
                        if (*what == "keys") return describe_keys(o, out);
                        std::vector<std::pair<std::string, std::string>> rows;
                        for (const auto& sch : parallel::describe_schedules())
                          rows.emplace_back(sch.name, sch.description);
                        return describe_named(rows, "schedule", o, out);
                      }});

  auto* validate_cmd = app.add_subcommand("validate", "Strict lint of scenario, model and hardware files");
  auto files = std::make_shared<std::vector<std::string>>();
  validate_cmd->add_option("files", *files, "Files to check (kind detected from their \"schema\")")->required();
  commands.push_back(
      {validate_cmd, [files, &o](std::ostream& out, std::ostream& err) { return validate(*files, o, out, err); }});
}

}  // namespace sim::cli
