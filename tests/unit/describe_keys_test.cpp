// `trainsim describe keys` (sim/scenario/keys.hpp) against the README's key tables and the loader: the same keys in
// both, every key accepted with a value other than its default, and every listed default the one the loader applies
// (setting a key to it explicitly changes neither the step time nor the memory). Issue 16: "README and describe list
// the new keys with their defaults".
#include "sim/app/run.hpp"
#include "sim/app/step.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace sim {
namespace {

const std::string kSource = TRAINSIM_SOURCE_DIR;

/// The keys of the README's tables: the first cell's backticked names; a name without a section ("`hidden_dropout`"
/// after "`training.attention_dropout`") takes the first name's.
std::set<std::string> readme_keys() {
  std::ifstream in(kSource + "/README.md");
  std::set<std::string> keys;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string cell = line.substr(2, line.find(" |", 2) - 2);
    std::vector<std::string> names;
    for (std::size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', cell.find('`', a + 1) + 1))
      names.push_back(cell.substr(a + 1, cell.find('`', a + 1) - a - 1));
    if (names.empty()) continue;
    const auto dot = names.front().rfind('.');
    const std::string section = dot == std::string::npos ? "" : names.front().substr(0, dot + 1);
    static const std::vector<std::string> sections = {"training.", "parallel.",    "memory.", "cluster.",
                                                      "data.",     "reliability.", "cost."};
    bool known = false;
    for (const auto& s : sections)
      known = known || section.rfind(s, 0) == 0;
    if (!known) continue;
    for (const auto& n : names)
      keys.insert(n.find('.') == std::string::npos ? section + n : n);
  }
  return keys;
}

struct Use {
  std::string base;                                     // scenario file, relative to the source tree
  std::vector<scenario::Override> context;              // what the key needs beside it
  std::string sample;                                   // a value other than the default, as JSON
  std::vector<scenario::Override> sample_context = {};  // what only the sample needs (owned pricing's node price)
};

const std::string kDense = "scenarios/default.json";
const std::string kMoe = "scenarios/ci/mixtral-8x7b-32-h100-ep.json";

/// Stragglers have no default rate (README): the straggler keys are exercised beside one fail-slow component.
const scenario::Override kStragglers{
    "reliability.failures",
    R"({"components": [{"name": "slow_gpu", "scope": "gpu", "mtbf": "500 d", "effect": "straggler", "repair": "4 h"}],
        "replace": false})"};

/// How each key is exercised. A key added to the table without an entry here fails the test.
const std::map<std::string, Use>& uses() {
  static const std::map<std::string, Use> u = {
      {"training.fused_attention", {kDense, {}, "false"}},
      {"training.attention_dropout", {kDense, {}, "0.1"}},
      {"training.hidden_dropout", {kDense, {}, "0.1"}},
      {"training.main_grads", {kDense, {}, "\"bf16\""}},
      {"training.main_params", {kDense, {}, "\"fp16\""}},
      {"training.exp_avg", {kDense, {}, "\"bf16\""}},
      {"training.exp_avg_sq", {kDense, {}, "\"fp8\""}},
      {"training.fp8_weight_copies", {kDense, {{"training.dtype", "\"fp8\""}}, "true"}},
      {"training.cross_entropy", {kDense, {}, "\"upcast\""}},
      {"training.sp_saved_inputs", {kDense, {}, "\"gathered\""}},
      {"training.sp_layout", {kDense, {}, "\"batch_first\""}},
      {"training.fp8_activations", {kDense, {{"training.dtype", "\"fp8\""}}, "true"}},
      {"parallel.expert_tp", {kMoe, {}, "1"}},
      {"memory.reserve", {kDense, {}, "\"4 GiB\""}},
      {"memory.zero3_units", {kDense, {{"parallel.zero_stage", "3"}}, "3"}},
      {"memory.pipeline_buffers", {kDense, {}, "\"per_micro_batch\""}},
      {"memory.zero3_live_params", {kDense, {{"parallel.zero_stage", "3"}}, "1e9"}},
      {"training.kernels", {kDense, {}, "\"eager\""}},
      {"training.attention_kv",
       {kDense,
        {{"parallel.cp", "2"}, {"parallel.dp", "16"}, {"parallel.cp_comm_type", "\"all_gather\""}},
        "\"repeated\""}},
      {"training.moe_imbalance", {kMoe, {}, "1.2"}},
      {"training.moe_capacity_factor", {kMoe, {}, "1.25"}},
      {"training.moe_pad_to_capacity", {kMoe, {{"training.moe_capacity_factor", "1.25"}}, "true"}},
      {"parallel.moe_dispatcher", {kMoe, {}, "\"deepep\""}},
      {"parallel.moe_dispatch_dtype", {kMoe, {{"training.dtype", "\"fp8\""}}, "\"fp8\""}},
      {"cluster.network.failed", {kDense, {}, "[\"spine 0\"]"}},
      {"cluster.network.nvls", {kDense, {}, "false"}},
      {"cluster.nvlink_domain", {kDense, {{"hardware", "\"gb200-nvl72\""}, {"cluster.gpus_per_node", "4"}}, "64"}},
      {"parallel.tp_comm_overlap", {kDense, {}, "true"}},
      {"parallel.tp_comm_overlap_method", {kDense, {{"parallel.tp_comm_overlap", "true"}}, "\"async_tp\""}},
      {"parallel.overlap_param_gather", {kDense, {}, "true"}},
      {"parallel.overlap_grad_reduce", {kDense, {}, "false"}},
      {"parallel.dp_shard", {kDense, {}, "8"}},
      {"training.master_weights", {kDense, {}, "\"params\""}},
      {"training.optimizer_in_backward",
       {kDense,
        {{"parallel.pp", "1"}, {"parallel.dp", "128"}, {"parallel.zero_stage", "3"}, {"parallel.global_batch", "128"}},
        "true"}},
      {"parallel.ep_comm_overlap", {kMoe, {}, "true"}},
      {"parallel.pipeline_layout", {kDense, {}, "\"Et*19|t*20|t*20|t*21L\""}},
      {"parallel.backward_prefetch", {kDense, {{"parallel.zero_stage", "3"}}, "\"post\""}},
      {"parallel.zero3_overlap", {kDense, {{"parallel.zero_stage", "3"}}, "false"}},
      {"parallel.zero3_engine_gbs", {kDense, {{"parallel.zero_stage", "3"}}, "20"}},
      {"parallel.cp_comm_type", {kDense, {{"parallel.cp", "2"}, {"parallel.dp", "16"}}, "\"all_gather\""}},
      {"parallel.recompute", {kDense, {}, "\"full\""}},
      {"parallel.schedule", {kDense, {{"parallel.vpp", "2"}}, "\"dualpipev\""}},
      {"parallel.recompute_modules", {kDense, {{"parallel.recompute", "\"selective\""}}, "[\"core_attn\", \"mlp\"]"}},
      {"parallel.recompute_method", {kDense, {{"parallel.recompute", "\"full\""}}, "\"block\""}},
      {"parallel.recompute_num_layers", {kDense, {{"parallel.recompute", "\"full\""}}, "2"}},
      {"parallel.account_for_embedding_in_pipeline_split", {kDense, {}, "true"}},
      {"parallel.account_for_loss_in_pipeline_split", {kDense, {}, "true"}},
      {"parallel.first_stage_layers", {kDense, {{"parallel.last_stage_layers", "20"}}, "18"}},
      {"parallel.last_stage_layers", {kDense, {{"parallel.first_stage_layers", "20"}}, "22"}},
      {"parallel.layers_per_stage", {kDense, {}, "[19, 21, 21, 19]"}},
      {"parallel.order", {kDense, {}, "\"pp-tp-cp-dp\""}},
      {"training.tokens", {kDense, {}, "\"1T\""}},
      {"training.duration", {kMoe, {}, "\"30 d\""}},
      {"training.fp8_recipe", {kDense, {{"training.dtype", "\"fp8\""}}, "\"tensorwise\""}},
      {"training.attention_kernel", {kDense, {}, "\"flash2\""}},
      {"training.critical_batch", {kDense, {}, "\"4M\""}},
      {"training.loss_spikes", {kDense, {}, "{\"per_million_steps\": 10}"}},
      {"data.storage_bandwidth", {kDense, {}, "\"1 TB/s\""}},
      {"data.bytes_per_token", {kDense, {}, "\"8 B\""}},
      {"data.loader_tokens_per_s", {kDense, {}, "\"1K\""}},
      {"data.cache_hit_rate", {kDense, {}, "0.5"}},
      {"reliability.spares", {kDense, {}, "4"}},
      {"reliability.node_swap", {kDense, {}, "\"10 min\""}},
      {"reliability.on_spares_exhausted", {kDense, {}, "\"wait\""}},
      {"reliability.detection.crash", {kDense, {}, "\"5 min\""}},
      {"reliability.detection.straggler", {kDense, {kStragglers}, "\"20 min\""}},
      {"reliability.detection.sdc", {kDense, {}, "\"2 h\""}},
      {"reliability.straggler_slowdown", {kDense, {kStragglers}, "1.5"}},
      {"reliability.checkpoint.interval", {kDense, {}, "\"1000 steps\""}},
      {"reliability.checkpoint.write", {kDense, {}, "\"30 s\""}},
      {"reliability.checkpoint.load", {kDense, {}, "\"60 s\""}},
      {"reliability.checkpoint.write_bandwidth", {kDense, {}, "\"50 GB/s\""}},
      {"reliability.checkpoint.read_bandwidth", {kDense, {}, "\"20 GB/s\""}},
      {"reliability.checkpoint.node_bandwidth", {kDense, {}, "\"1 GB/s\""}},
      {"reliability.checkpoint.snapshot_bandwidth", {kDense, {}, "\"10 GB/s\""}},
      {"cost.pricing", {kDense, {}, "\"owned\"", {{"cost.owned", "{\"node_price\": \"300K USD\"}"}}}},
      {"cost.price_kind", {kDense, {}, "\"spot\""}},
      {"cost.price_date", {kDense, {}, "\"2026-09\""}},
      {"cost.owned.node_price", {kDense, {{"cost.pricing", "\"owned\""}}, "\"300K USD\""}},
      {"cost.owned.amortisation",
       {kDense, {{"cost.pricing", "\"owned\""}, {"cost.owned.node_price", "\"300K USD\""}}, "\"3 y\""}},
      {"cost.owned.utilisation",
       {kDense, {{"cost.pricing", "\"owned\""}, {"cost.owned.node_price", "\"300K USD\""}}, "0.8"}},
      {"cost.energy.pue", {kDense, {}, "1.5"}},
      {"cost.energy.price", {kDense, {{"cost.energy.billed", "true"}}, "\"0.1 USD/kWh\""}},
      {"cost.energy.idle_fraction", {kDense, {}, "0.5"}},
      {"cost.energy.node_power", {kDense, {}, "\"8 kW\""}},
      {"cost.energy.billed", {kDense, {}, "true"}},
      {"cost.storage.price", {kDense, {}, "\"0.05 USD/GB-month\""}},
      {"cost.storage.checkpoints_kept", {kDense, {}, "3"}},
  };
  return u;
}

/// The base scenario with the table's keys it sets removed, so that a key left out takes the loader's default.
std::string without_table_keys(const std::string& base, const support::TempDir& dir) {
  auto j = nlohmann::json::parse(std::ifstream(kSource + "/" + base));
  for (const auto& k : scenario::extension_keys()) {
    const std::string path(k.path);
    nlohmann::json* node = &j;
    std::size_t a = 0;
    for (std::size_t b; node && (b = path.find('.', a)) != std::string::npos && node->is_object(); a = b + 1)
      node = node->contains(path.substr(a, b - a)) ? &(*node)[path.substr(a, b - a)] : nullptr;
    if (node && node->is_object()) node->erase(path.substr(a));
  }
  const auto file = dir.path() / (std::to_string(std::hash<std::string>{}(base)) + ".json");
  std::ofstream(file) << j.dump(2);
  return file.string();
}

/// The scenario's step at analytic fidelity (fast: every key is evaluated twice or three times).
app::StepOutcome analytic_step(const scenario::Scenario& s) {
  execution::StepOptions analytic;
  analytic.fidelity = execution::Fidelity::Analytic;
  auto evaluated = app::evaluate_step(s, analytic);
  if (!std::holds_alternative<app::StepOutcome>(evaluated)) throw std::runtime_error("infeasible");
  return std::get<app::StepOutcome>(std::move(evaluated));
}

results::StepResult step_of(const std::string& path, const std::vector<scenario::Override>& o) {
  return analytic_step(scenario::load_scenario(path, o)).result;
}

/// The run-level keys (data pipeline, reliability, cost) change nothing in the step: their defaults are checked on
/// the whole run's JSON (20 trials, one thread), which holds every run-level and cost figure.
bool run_level(const std::string& path) {
  return path.starts_with("data.") || path.starts_with("reliability.") || path.starts_with("cost.") ||
         path == "training.loss_spikes" || path == "training.critical_batch";
}

std::string run_of(const std::string& path, std::vector<scenario::Override> o) {
  o.insert(o.begin(), {"training.tokens", "\"15T\""});  // the base has no tokens (a key of the table)
  o.emplace_back("reliability.trials", "20");
  const auto s = scenario::load_scenario(path, o);
  // Without the provenance, which names the overrides and so differs whenever a key is set.
  auto j = nlohmann::json::parse(
      app::evaluate_run(s, analytic_step(s), s.reliability.trials, s.reliability.seed, 1, {}).json.dump());
  j.erase("resolved_scenario");
  return j.dump();
}

TEST(DescribeKeys, TheReadmeAndTheTableListTheSameKeys) {
  std::set<std::string> table;
  for (const auto& k : scenario::extension_keys())
    EXPECT_TRUE(table.insert(std::string(k.path)).second) << "listed twice: " << k.path;
  const auto readme = readme_keys();
  for (const auto& k : readme)
    EXPECT_TRUE(table.count(k)) << k << " is in the README's key tables but not in `describe keys`";
  for (const auto& k : table)
    EXPECT_TRUE(readme.count(k)) << k << " is in `describe keys` but not in the README's key tables";
  EXPECT_GE(table.size(), 40u);
}

TEST(DescribeKeys, EveryKeyLoadsAndEveryListedDefaultIsTheLoadersOwn) {
  support::TempDir dir;
  for (const auto& k : scenario::extension_keys()) {
    const std::string path(k.path);
    const auto it = uses().find(path);
    ASSERT_NE(it, uses().end()) << path << ": say in this test how the key is exercised";
    const Use& use = it->second;
    const std::string base = without_table_keys(use.base, dir);
    auto with = [&](const std::string& value) {
      auto o = use.context;
      o.emplace_back(path, value);
      if (value == use.sample) o.insert(o.end(), use.sample_context.begin(), use.sample_context.end());
      return o;
    };
    try {
      (void)scenario::load_scenario(base, with(use.sample));
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << " = " << use.sample << " was refused: " << e.what();
      continue;
    }
    // A default that is a JSON value (not "tp", "not given", ...): set explicitly, it changes nothing.
    const auto fallback = nlohmann::json::parse(std::string(k.fallback), nullptr, /*allow_exceptions=*/false);
    if (fallback.is_discarded()) continue;
    try {
      if (run_level(path)) {
        const std::string plain = run_of(base, use.context);
        EXPECT_TRUE(plain == run_of(base, with(std::string(k.fallback))))
            << path << ": the listed default " << k.fallback << " changes the run";
        EXPECT_FALSE(plain == run_of(base, with(use.sample)))
            << path << " = " << use.sample << " changes nothing in the run: is the key read?";
        continue;
      }
      const auto plain = step_of(base, use.context);
      const auto explicit_default = step_of(base, with(std::string(k.fallback)));
      EXPECT_EQ(plain.step_time, explicit_default.step_time) << path << ": the listed default " << k.fallback;
      EXPECT_EQ(plain.memory.total, explicit_default.memory.total) << path << ": the listed default " << k.fallback;
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << " = " << k.fallback << " (its listed default) was refused: " << e.what();
    }
  }
}

TEST(DescribeKeys, TheSchemasKeysAreListedWithTheLoadersDefaults) {
  // Found by a user trial: `describe keys` left out cluster.gpus, the layout, the price and the deadline.
  support::TempDir dir;
  const std::string minimal = dir.write(
      "minimal.json",
      R"({"schema": "trainsim.scenario/1", "name": "minimal", "model": "llama3-8b", "hardware": "h100-sxm5-80gb",
          "cluster": {"gpus": 8}, "parallel": {"global_batch": 8}, "training": {"seq_len": 2048}})");
  std::set<std::string> listed;
  for (const auto& k : scenario::extension_keys())
    listed.insert(std::string(k.path));
  for (const auto& k : scenario::schema_keys()) {
    const std::string path(k.path);
    EXPECT_TRUE(listed.insert(path).second) << path << " is listed twice";
    const auto fallback = nlohmann::json::parse(std::string(k.fallback), nullptr, /*allow_exceptions=*/false);
    if (fallback.is_discarded()) continue;  // "required", "the profile's", "not given", ...
    try {
      if (run_level(path)) {
        EXPECT_EQ(run_of(minimal, {}), run_of(minimal, {{path, std::string(k.fallback)}}))
            << path << ": the listed default " << k.fallback << " changes the run";
        continue;
      }
      const auto plain = step_of(minimal, {});
      const auto given = step_of(minimal, {{path, std::string(k.fallback)}});
      EXPECT_EQ(plain.step_time, given.step_time) << path << ": the listed default " << k.fallback;
      EXPECT_EQ(plain.memory.total, given.memory.total) << path << ": the listed default " << k.fallback;
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << " = " << k.fallback << " (its listed default) was refused: " << e.what();
    }
  }
  for (const char* needed : {"cluster.gpus", "parallel.tp", "parallel.global_batch", "training.seq_len",
                             "cost.gpu_hour", "cost.deadline", "reliability.trials"})
    EXPECT_TRUE(listed.count(needed)) << needed;
}

}  // namespace
}  // namespace sim
