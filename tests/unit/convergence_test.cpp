// Convergence and data (issue 11): McCandlish's large-batch relations as closed-form oracles, the critical-batch
// estimate, loss-spike rollbacks at run level, and the data pipeline stalling a step.
#include "sim/base/json_reader.hpp"
#include "sim/cli/app.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/base/builtin.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/batch_efficiency.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace sim {
namespace {

using workload::steps_to_target;
using workload::tokens_to_target;

TEST(BatchEfficiency, McCandlishRelationsHold) {
  const double e_min = 1e12, b_noise = 4e6;
  for (double b : {1e4, 1e5, 1e6, 4e6, 1.6e7, 1e8, 1e9}) {
    const double e = tokens_to_target(e_min, b, b_noise);
    const double s = steps_to_target(e_min, b, b_noise);
    const double s_min = e_min / b_noise;
    EXPECT_NEAR(e, s * b, 1e-9 * e) << b;  // tokens = steps x batch
    // The trade-off hyperbola (McCandlish et al. 2018, Eq. 2.11): (S/S_min - 1)(E/E_min - 1) = 1.
    EXPECT_NEAR((s / s_min - 1.0) * (e / e_min - 1.0), 1.0, 1e-9) << b;
  }
  // At the critical batch both costs are twice their minimum.
  EXPECT_DOUBLE_EQ(tokens_to_target(e_min, b_noise, b_noise), 2 * e_min);
  EXPECT_DOUBLE_EQ(steps_to_target(e_min, b_noise, b_noise), 2 * e_min / b_noise);
}

TEST(BatchEfficiency, DoublingFarBelowTheNoiseScaleHalvesStepsFarAboveDoublesTokens) {
  const double e_min = 1e12, b_noise = 4e6;
  // B = B_noise / 1000: S(2B) / S(B) = (1 + 500) / (1 + 1000) = 0.5005; tokens grow by only 0.05%.
  const double small = b_noise / 1000;
  EXPECT_NEAR(steps_to_target(e_min, 2 * small, b_noise) / steps_to_target(e_min, small, b_noise), 0.5, 0.001);
  EXPECT_NEAR(tokens_to_target(e_min, 2 * small, b_noise) / tokens_to_target(e_min, small, b_noise), 1.0, 0.001);
  // B = 1000 B_noise: E(2B) / E(B) = (1 + 2000) / (1 + 1000) = 1.9990; steps shrink by only 0.05%.
  const double big = b_noise * 1000;
  EXPECT_NEAR(tokens_to_target(e_min, 2 * big, b_noise) / tokens_to_target(e_min, big, b_noise), 2.0, 0.001);
  EXPECT_NEAR(steps_to_target(e_min, 2 * big, b_noise) / steps_to_target(e_min, big, b_noise), 1.0, 0.001);
}

TEST(BatchEfficiency, EquivalentTokensKeepTheTarget) {
  // 1T tokens at B = B_noise reach the loss that E_min = 0.5T buys; at B = 3 B_noise that loss costs 0.5T x 4 = 2T.
  EXPECT_DOUBLE_EQ(workload::equivalent_tokens(1e12, 4e6, 1.2e7, 4e6), 2e12);
  EXPECT_DOUBLE_EQ(workload::equivalent_tokens(1e12, 4e6, 4e6, 4e6), 1e12);
  const workload::BatchEfficiency be{4e6, 1.2e7};
  EXPECT_DOUBLE_EQ(be.token_efficiency(), 0.25);
  EXPECT_DOUBLE_EQ(be.step_efficiency(), 0.75);
}

TEST(BatchEfficiency, CriticalBatchEstimateFollowsDeepSeeksFit) {
  const auto m = scenario::load_model("llama3-70b");
  const double b = workload::estimate_critical_batch(m, 8192, 15e12);
  // By hand: non-embedding parameters of Llama 3 70B ~ 68.5e9 (70.6B less 2 x 128256 x 8192 embeddings), so
  // M ~ 6 x 68.5e9 + 6 x 80 x 8192 x 8192 = 4.43e11 FLOPs/token, C = M x 15e12 = 6.6e24 and
  // B = 0.292 x C^0.3271 ~ 3.9e7 tokens (about 4,700 sequences of 8192; Llama 3 itself trained at 16M tokens).
  EXPECT_GT(b, 3.0e7);
  EXPECT_LT(b, 5.0e7);
  // More compute, a larger critical batch: C^0.3271 -> x10 compute = x2.12.
  EXPECT_NEAR(workload::estimate_critical_batch(m, 8192, 150e12) / b, std::pow(10.0, 0.3271), 1e-9);
}

// ---- loss spikes at run level --------------------------------------------------------------------------------------

hardware::FailureComponentSpec spike(double mtbf_s, double rollback) {
  hardware::FailureComponentSpec c;
  c.name = "loss_spike";
  c.scope = hardware::FailureScope::Job;
  c.effect = hardware::FailureEffect::LossSpike;
  c.mtbf = base::Duration{mtbf_s};
  c.rollback_steps = rollback;
  return c;
}

reliability::RunInputs spiky_run(double rollback) {
  reliability::RunInputs in;
  in.job = reliability::JobShape::make(8, 8, 1);
  in.components = {spike(20'000.0, rollback)};  // one spike every 20,000 steps of 1 s
  in.detection.loss_spike = base::Time::from_seconds(60);
  in.restart = base::Time::from_seconds(300);
  in.checkpoint.policy = reliability::CheckpointPolicy::Fixed;
  in.checkpoint.interval = base::Time::from_seconds(1000);
  in.checkpoint.async = false;
  in.checkpoint.write = base::Time::from_seconds(10);
  in.checkpoint.snapshot = base::Time::zero();
  in.checkpoint.load = base::Time::from_seconds(60);
  in.total_steps = 200'000;
  in.step_time = [](const reliability::ClusterState&) { return base::Time::from_seconds(1.0); };
  return in;
}

TEST(LossSpikes, RollBackBeforeTheSpikeAndCountAsACause) {
  const auto r0 = reliability::run_monte_carlo(spiky_run(0), 400, 7, 1, {});
  const auto r100 = reliability::run_monte_carlo(spiky_run(100), 400, 7, 1, {});
  ASSERT_EQ(r0.causes.size(), 1U);
  EXPECT_EQ(r0.causes[0].name, "loss_spike");
  EXPECT_EQ(r0.causes[0].effect, "loss_spike");
  // Spikes come per executed step: ~200,000 steps plus the replayed work, / 20,000 = a little over 10 per run.
  EXPECT_GT(r0.interruptions_mean, 9.5);
  EXPECT_LT(r0.interruptions_mean, 12.5);
  // Lost work per spike: the detection delay (60 steps run on a spiked state) plus, on average, half a checkpoint
  // interval (500 steps) back to the newest checkpoint; rolling back 100 more steps first costs more, on average
  // about 100 steps more (the checkpoint grid is uniform relative to the onset).
  const double lost0 = r0.accounting.lost_work_s / r0.interruptions_mean;
  const double lost100 = r100.accounting.lost_work_s / r100.interruptions_mean;
  EXPECT_GT(lost0, 450);
  EXPECT_LT(lost0, 650);
  EXPECT_GT(lost100 - lost0, 60);
  EXPECT_LT(lost100 - lost0, 140);
}

// ---- the scenario level: defaults, "none", a data-bound step -------------------------------------------------------

const std::string kSmall = R"({
  "schema": "trainsim.scenario/1", "name": "small", "model": "llama3-8b", "hardware": "h100-sxm5-80gb",
  "cluster": { "gpus": 64 },
  "parallel": { "tp": 2, "pp": 1, "zero_stage": 1, "micro_batch": 1, "global_batch": 512 },
  "training": { "seq_len": 8192, "tokens": "50B" DATA_TRAINING }, "reliability": { "trials": 50 } DATA })";

std::string small(const std::string& training_extra, const std::string& data) {
  std::string s = kSmall;
  s.replace(s.find("DATA_TRAINING"), 13, training_extra);
  s.replace(s.find("DATA }"), 4, data);
  return s;
}

std::string trainsim_json(const std::vector<std::string>& args) {
  const auto o = support::trainsim(args);
  EXPECT_EQ(o.code, cli::kExitOk) << o.err;
  return o.out;
}

double number_at(const std::string& json, std::initializer_list<const char*> path) {
  auto doc = base::JsonDocument::parse_text(json, "stdout");
  base::Diagnostics diag("stdout");
  auto r = doc.root(diag);
  std::optional<base::JsonReader> cur = r;
  auto it = path.begin();
  for (; std::next(it) != path.end(); ++it)
    cur = cur->required_object(*it);
  double v = std::nan("");
  cur->required(*it, v);
  return v;
}

TEST(LossSpikes, OffByDefaultAnObjectOptsInAtPalmsRate) {
  support::TempDir dir;
  EXPECT_EQ(trainsim_json({"run", dir.write("o.json", small("", "")), "--json"}).find("\"loss_spike\""),
            std::string::npos)
      << "no source scales PaLM 540B's spike rate with model size: off unless asked for";
  const auto with = trainsim_json({"run", dir.write("a.json", small(", \"loss_spikes\": {}", "")), "--json"});
  ASSERT_NE(with.find("\"loss_spike\""), std::string::npos);
  // 50B tokens / (512 x 8192) = 11,921 steps x 78.4 per million = 0.93 spikes per run.
  EXPECT_NEAR(number_at(with, {"interruptions", "by_cause", "loss_spike"}), 0.93, 0.45);
  const auto without = trainsim_json({"run", dir.write("b.json", small(", \"loss_spikes\": \"none\"", "")), "--json"});
  EXPECT_EQ(without.find("\"loss_spike\""), std::string::npos);
}

TEST(LossSpikes, BadConfigurationIsRejectedWithItsPath) {
  support::TempDir dir;
  auto o = support::trainsim(
      {"step", dir.write("s.json", small(", \"loss_spikes\": {\"per_million_steps\": -1}", "")), "--json"});
  EXPECT_EQ(o.code, cli::kExitBadInput);
  EXPECT_NE(o.err.find("/training/loss_spikes/per_million_steps"), std::string::npos) << o.err;
  o = support::trainsim({"step", dir.write("t.json", small(", \"loss_spikes\": \"sometimes\"", "")), "--json"});
  EXPECT_EQ(o.code, cli::kExitBadInput);
  EXPECT_NE(o.err.find("/training/loss_spikes"), std::string::npos) << o.err;
}

TEST(DataPipeline, SlowStorageStallsTheStepAndSaysSo) {
  support::TempDir dir;
  const auto fast = trainsim_json({"step", dir.write("f.json", small("", "")), "--json", "--fidelity", "analytic"});
  EXPECT_EQ(number_at(fast, {"breakdown_s", "data_stall"}), 0.0);
  // 512 x 8192 = 4,194,304 tokens of 4 bytes (vocabulary 128,256 > 65,500: int32 ids) from 1 MB/s of storage:
  // 16.78 s per step, far above the ~6.5 s of compute.
  const auto slow =
      trainsim_json({"step", dir.write("s.json", small("", ", \"data\": {\"storage_bandwidth\": \"1 MB/s\"}")),
                     "--json", "--fidelity", "analytic"});
  EXPECT_NEAR(number_at(slow, {"step_time_s"}), 4194304.0 * 4 / 1e6, 1e-6);
  const double stall = number_at(slow, {"breakdown_s", "data_stall"});
  EXPECT_NEAR(stall, number_at(slow, {"step_time_s"}) - number_at(fast, {"step_time_s"}), 2e-9);
  // Half the reads served by node caches halve the storage traffic. A loader cap of 50K tokens/s per node (8 nodes)
  // binds instead of the storage: 4,194,304 / 400,000 = 10.49 s, above the ~6.5 s of compute.
  const auto cached = trainsim_json(
      {"step",
       dir.write("c.json", small("", ", \"data\": {\"storage_bandwidth\": \"1 MB/s\", \"cache_hit_rate\": 0.5}")),
       "--json", "--fidelity", "analytic"});
  EXPECT_NEAR(number_at(cached, {"step_time_s"}), 4194304.0 * 4 * 0.5 / 1e6, 1e-6);
  const auto loader =
      trainsim_json({"step", dir.write("l.json", small("", ", \"data\": {\"loader_tokens_per_s\": \"50K\"}")), "--json",
                     "--fidelity", "analytic"});
  EXPECT_NEAR(number_at(loader, {"step_time_s"}), 4194304.0 / 400000.0, 1e-6);
  // The text output names the stall.
  auto o = support::trainsim({"step", dir.path().string() + "/s.json", "--fidelity", "analytic"});
  EXPECT_NE(o.out.find("data stall"), std::string::npos) << o.out;
}

TEST(Convergence, StepReportsTokenEfficiencyWithItsSource) {
  support::TempDir dir;
  const auto given = trainsim_json({"step", dir.write("g.json", small(", \"critical_batch\": \"4194304\"", "")),
                                    "--json", "--fidelity", "analytic"});
  EXPECT_DOUBLE_EQ(number_at(given, {"convergence", "critical_batch_tokens"}), 4194304.0);
  EXPECT_DOUBLE_EQ(number_at(given, {"convergence", "token_efficiency"}), 0.5);  // B = B_noise
  EXPECT_NEAR(number_at(given, {"convergence", "effective_tokens"}), 25e9, 1);
  EXPECT_NE(given.find("\"critical_batch_source\": \"scenario\""), std::string::npos);
  const auto estimated =
      trainsim_json({"step", dir.write("e.json", small("", "")), "--json", "--fidelity", "analytic"});
  EXPECT_NE(estimated.find("DeepSeek LLM"), std::string::npos);
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

/// The planner's pick of global batch (sequences) for llama3-8b on 64 H100s, the batch and micro-batch freed.
int planned_global_batch(const std::string& training_extra) {
  support::TempDir dir;
  const std::string path = dir.write("p.json", R"({
    "schema": "trainsim.scenario/1", "name": "batch", "model": "llama3-8b", "hardware": "h100-sxm5-80gb",
    "cluster": { "gpus": 64 },
    "parallel": { "tp": 2, "pp": 1, "zero_stage": 1, "recompute": "selective", "sequence_parallel": true,
                  "micro_batch": 1, "global_batch": 512 },
    "training": { "seq_len": 8192, "tokens": "200B")" +
                                                   training_extra + R"( },
    "reliability": { "trials": 20 } })");
  const auto o = support::trainsim({"plan", path, "--free", "global_batch,micro_batch", "--objective", "time", "--top",
                                    "1", "--threads", "1", "--json"});
  EXPECT_EQ(o.code, cli::kExitOk) << o.err;
  auto doc = base::JsonDocument::parse_text(o.out, "stdout");
  base::Diagnostics diag("stdout");
  auto r = doc.root(diag);
  auto cands = r.object_array("candidates", true);
  EXPECT_FALSE(cands.empty());
  if (cands.empty()) return 0;
  auto p = cands.front().required_object("parallel");
  int gb = 0;
  p->required("global_batch", gb);
  return gb;
}

TEST(Convergence, PlannerStopsPickingBatchesFarPastTheCriticalBatch) {
  // The scenario's batch is 512 x 8192 = 4.2M tokens. With a critical batch of 1M tokens, batches of 8M and more buy
  // little per step (S(B)/S_min = 1 + 1M/B): the planner must pick at most ~4x the critical batch (512 sequences),
  // since a smaller batch reaches the target sooner. With a critical batch far above every candidate (1T tokens:
  // every batch is in the perfectly-scaling regime) the largest batch that keeps the GPUs busiest wins instead.
  const int with_critical = planned_global_batch(R"(, "critical_batch": "1M")");
  EXPECT_GT(with_critical, 0);
  EXPECT_LE(static_cast<double>(with_critical) * 8192, 4.0 * 1.05e6 * 1.0) << with_critical;
  const int scaling = planned_global_batch(R"(, "critical_batch": "1T")");
  EXPECT_GT(scaling, with_critical);
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

TEST(ScalingStudy, SameModelAtSeveralSizesWithThePlannersBestStrategy) {
  const auto o =
      support::trainsim({"scale", std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-8b-64-h100.json",
                         "--gpus", "16,64", "--trials", "10", "--threads", "1", "--json"});
  ASSERT_EQ(o.code, cli::kExitOk) << o.err;
  auto doc = base::JsonDocument::parse_text(o.out, "stdout");
  base::Diagnostics diag("stdout");
  auto r = doc.root(diag);
  std::string schema;
  r.required("schema", schema);
  EXPECT_EQ(schema, "trainsim.scale/1");
  auto sizes = r.object_array("sizes", true);
  ASSERT_EQ(sizes.size(), 2U);
  double step16 = 0, step64 = 0, days16 = 0, days64 = 0;
  int g = 0;
  sizes[0].required("gpus", g);
  EXPECT_EQ(g, 16);
  auto run16 = sizes[0].required_object("run");
  auto run64 = sizes[1].required_object("run");
  run16->required_object("step")->required("step_time_s", step16);
  run64->required_object("step")->required("step_time_s", step64);
  run16->required_object("time_to_train_days")->required("p50", days16);
  run64->required_object("time_to_train_days")->required("p50", days64);
  // Every size keeps the scenario's global batch (512): the planner searches the layout, not the batch.
  for (auto& size : sizes) {
    int gb = 0;
    size.required_object("parallel")->required("global_batch", gb);
    EXPECT_EQ(gb, 512);
  }
  // Four times the GPUs on the same global batch: a shorter step and a shorter run (not 4x: bubbles, communication).
  EXPECT_LT(step64, step16);
  EXPECT_LT(days64, days16);
  EXPECT_GT(days64, days16 / 4.5);
  // Bad sizes are rejected with exit 2.
  EXPECT_EQ(support::trainsim({"scale", "--gpus", "12"}).code, cli::kExitBadInput);
  // A layout field --set gives and trials past the scenario's are said to be unused (a tester's trial: dropped
  // without a word).
  const auto notes =
      support::trainsim({"scale", std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-8b-64-h100.json",
                         "--gpus", "16", "--trials", "100000", "--threads", "1", "--set", "parallel.tp=4", "--json"});
  ASSERT_EQ(notes.code, cli::kExitOk) << notes.err;
  EXPECT_NE(notes.err.find("note: --set parallel.tp is not used"), std::string::npos) << notes.err;
  EXPECT_NE(notes.err.find("note: --trials 100000: each size runs at most the scenario's"), std::string::npos)
      << notes.err;
  // Not about the default of --trials, which the user did not give (a review: a scenario of 4 trials drew the note).
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-8b-64-h100.json");
  auto few = nlohmann::json::parse(in);
  few["reliability"]["trials"] = 4;
  support::TempDir dir;
  const auto quiet = support::trainsim({"scale", dir.write("few.json", few.dump()), "--gpus", "16", "--threads", "1"});
  ASSERT_EQ(quiet.code, cli::kExitOk) << quiet.err;
  EXPECT_EQ(quiet.err.find("note: --trials"), std::string::npos) << quiet.err;
}

// A size's row names every field the planner chose, so that it can be run: on a model with experts the expert-parallel
// size decides the step (scale printed tp, pp, cp and dp only, and its JSON had no ep, schedule or recompute).
TEST(ScalingStudy, EachSizeNamesEveryFieldThePlannerChoseExpertParallelismIncluded) {
  const std::string mixtral = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/mixtral-8x7b-256-h100.json";
  const auto o = support::trainsim({"scale", mixtral, "--gpus", "64", "--trials", "5", "--threads", "1", "--json"});
  ASSERT_EQ(o.code, cli::kExitOk) << o.err;
  auto doc = base::JsonDocument::parse_text(o.out, "stdout");
  base::Diagnostics diag("stdout");
  auto sizes = doc.root(diag).object_array("sizes", true);
  ASSERT_EQ(sizes.size(), 1U);
  auto p = sizes[0].required_object("parallel");
  int ep = 0, zero = -1;
  std::string schedule, recompute, flags;
  p->required("ep", ep);
  p->required("zero_stage", zero);
  p->required("schedule", schedule);
  p->required("recompute", recompute);
  sizes[0].required("megatron_flags", flags);
  EXPECT_GT(ep, 1) << "Mixtral's 8 experts are spread over an expert-parallel group";
  EXPECT_FALSE(schedule.empty());
  EXPECT_FALSE(recompute.empty());
  EXPECT_NE(flags.find("--expert-model-parallel-size " + std::to_string(ep)), std::string::npos) << flags;
  // The table shows the same fields and the flags of each size.
  const auto t = support::trainsim({"scale", mixtral, "--gpus", "64", "--trials", "5", "--threads", "1"});
  ASSERT_EQ(t.code, cli::kExitOk) << t.err;
  EXPECT_NE(t.out.find(" ep "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("schedule"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("Megatron-LM flags\n    64  " + flags), std::string::npos) << t.out;
}

// A scenario with a fixed window (training.duration) has no time to train: its rows show the window, marked, and
// interruptions per day of it (a user trial read "never", the word for runs that do not finish, and "-").
TEST(ScalingStudy, AFixedWindowIsShownAsTheWindowNotAsNever) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/mixtral-8x7b-256-h100.json");
  auto scenario = nlohmann::json::parse(in);
  scenario["training"].erase("tokens");
  scenario["training"]["duration"] = "30 d";
  support::TempDir dir;
  const auto t = support::trainsim(
      {"scale", dir.write("window.json", scenario.dump()), "--gpus", "64", "--trials", "5", "--threads", "1"});
  ASSERT_EQ(t.code, cli::kExitOk) << t.err;
  EXPECT_EQ(t.out.find("never"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("30.0*"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("* the scenario's fixed window"), std::string::npos) << t.out;
}

}  // namespace
}  // namespace sim
