// tests/unit/cli_summary_test.cpp: what the command line's summaries say, where a user trial found them wrong: the
// pricing a run's cost line names, a run without failures, `validate` with --set, and the GPU a step's breakdown
// describes.
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include "sim/base/exit_code.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using sim::base::kExitOk;
using support::trainsim;

const std::string kSource = TRAINSIM_SOURCE_DIR;

TEST(RunSummaryText, OwnedPricingIsNotCalledRented) {
  const auto o = trainsim({"run", support::kDefaultScenario, "--trials", "5", "--set", "cost.pricing=owned", "--set",
                           "cost.owned.node_price=300K USD"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("(owned, amortised at "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("rented"), std::string::npos) << o.out;
  const auto rented = trainsim({"run", support::kDefaultScenario, "--trials", "5"});
  EXPECT_NE(rented.out.find("(rented at "), std::string::npos) << rented.out;
}

TEST(RunSummaryText, ARunWithoutFailuresNeedsNoCheckpointAndHasNoMtbf) {
  // Daly's interval for an unbounded MTBF was printed as "every 47336400.0 min" beside "job MTBF inf h".
  const auto o = trainsim({"run", support::kDefaultScenario, "--trials", "5", "--set", "reliability.failures=none"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("job MTBF none (no failures modelled)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("checkpoint      none needed (no failures modelled), overhead 0.0%"), std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("inf h"), std::string::npos) << o.out;
  // A fixed interval is still taken, failures or not.
  const auto fixed = trainsim({"run", support::kDefaultScenario, "--trials", "5", "--set", "reliability.failures=none",
                               "--set", "reliability.checkpoint.interval=100 steps"});
  ASSERT_EQ(fixed.code, kExitOk) << fixed.err;
  EXPECT_NE(fixed.out.find("(fixed, 100 steps)"), std::string::npos) << fixed.out;
}

TEST(ValidateCommand, SetOverridesApplyToTheFileAsRunAppliesThem) {
  // A scenario with an `owned` section under rented pricing is refused as written; with --set cost.pricing=owned
  // run takes it, and so must validate (it ignored --set in its first check).
  const std::string file = kSource + "/tests/data/owned_section_rented.json";
  EXPECT_NE(trainsim({"validate", file}).code, kExitOk);
  const auto o = trainsim({"validate", file, "--set", "cost.pricing=owned"});
  EXPECT_EQ(o.code, kExitOk) << o.err;
}

TEST(StepJson, NamesTheCriticalGpuAndASlowGpuIsTheOneDescribed) {
  // The breakdown describes the GPU the others wait for: a slowed GPU with no pipeline, not GPU 0 waiting for it in
  // its gradient reduction (which showed half the step as exposed data-parallel time).
  const std::string scenario = kSource + "/scenarios/ci/llama3-8b-16-h100.json";
  for (const char* slow : {"0", "3"}) {
    const auto o = trainsim({"step", scenario, "--fidelity", "full", "--slowdown", std::string(slow) + "=2", "--json"});
    ASSERT_EQ(o.code, kExitOk) << o.err;
    const auto j = nlohmann::json::parse(o.out);
    ASSERT_TRUE(j.contains("critical_gpu")) << "documented in the README";
    EXPECT_EQ(j.at("critical_gpu").get<int>(), std::stoi(slow));
    EXPECT_GT(j.at("breakdown_s").at("compute").get<double>(), 0.9 * j.at("step_time_s").get<double>() -
                                                                   j.at("breakdown_s").at("optimizer").get<double>() -
                                                                   j.at("breakdown_s").at("tp_exposed").get<double>())
        << "slow GPU " << slow << ": " << j.at("breakdown_s").dump();
  }
}

TEST(RunSummaryText, AProfileWithoutAPriceIsSaidAndPlanByCostIsRefused) {
  // Found by a user trial: gb300-nvl72 has no price; without cost.gpu_hour run printed "rented at 0.00 USD/h" and
  // plan --objective cost ranked the layouts on checkpoint storage alone, both silently.
  const std::string scenario = kSource + "/scenarios/examples/llama3-8b-64-h100.json";
  const std::vector<std::string> gb300 = {"--set", "hardware=\"gb300-nvl72\""};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), gb300.begin(), gb300.end());
    return args;
  };
  const auto run = trainsim(with({"run", scenario, "--trials", "5"}));
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.err.find("warning: the hardware profile gb300-nvl72 has no price"), std::string::npos) << run.err;
  const auto plan = trainsim(with({"plan", scenario, "--objective", "cost", "--trials", "5"}));
  EXPECT_EQ(plan.code, sim::base::kExitBadInput) << plan.out;
  EXPECT_NE(plan.err.find("--objective: cost ranks by price"), std::string::npos) << plan.err;
  const auto compare = trainsim(with({"compare", scenario, scenario, "--trials", "5"}));
  EXPECT_NE(compare.err.find("has no price"), std::string::npos) << compare.err;
  // A budget without a price is refused: judged on storage alone it had a 0.0% chance of being exceeded.
  const auto budget = trainsim(with({"run", scenario, "--trials", "5", "--set", "cost.budget=12M USD"}));
  EXPECT_EQ(budget.code, sim::base::kExitBadInput) << budget.out;
  EXPECT_NE(budget.err.find("/cost/budget: needs a price"), std::string::npos) << budget.err;
  const auto priced = trainsim(with({"run", scenario, "--trials", "5", "--set", "cost.gpu_hour=6 USD"}));
  EXPECT_EQ(priced.err.find("no price"), std::string::npos) << priced.err;
}

TEST(StepKernels, AnMoeModelWithDenseLayersListsADenseLayerToo) {
  // Found by a user trial: the table said "first transformer layer" and listed an MoE layer's router and experts
  // while DeepSeek-V3's first three layers are dense.
  const auto o =
      trainsim({"step", kSource + "/scenarios/validation/deepseek_v3_2048_h800_dualpipev.json", "--kernels", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  bool dense_mlp = false, dense_router = false, moe_router = false;
  const auto table = nlohmann::json::parse(o.out);
  for (const auto& k : table.at("kernels")) {
    const auto part = k.at("part").get<std::string>();
    const auto name = k.at("name").get<std::string>();
    dense_mlp = dense_mlp || (part == "dense_layer" && name == "mlp_up");
    dense_router = dense_router || (part == "dense_layer" && name.find("router") != std::string::npos);
    moe_router = moe_router || (part == "layer" && name.find("router") != std::string::npos);
  }
  EXPECT_TRUE(dense_mlp);
  EXPECT_FALSE(dense_router);
  EXPECT_TRUE(moe_router);
}

TEST(StepKernels, ALayoutThatDoesNotFitIsPrintedAndExitsAsStepDoes) {
  // Found by a user trial: DeepSeek-V3 on 8 H100s, 1,800 GiB per GPU, printed its kernel table with exit 0.
  const std::vector<std::string> tiny = {"--set", "model=\"deepseek-v3\"",  "--set", "cluster.gpus=8",
                                         "--set", "parallel.tp=1",          "--set", "parallel.ep=8",
                                         "--set", "parallel.global_batch=8"};
  std::vector<std::string> args = {"step", kSource + "/scenarios/examples/llama3-8b-64-h100.json", "--kernels"};
  args.insert(args.end(), tiny.begin(), tiny.end());
  const auto table = trainsim(args);
  EXPECT_EQ(table.code, sim::base::kExitInfeasible) << table.err;
  EXPECT_NE(table.out.find("expert_up"), std::string::npos) << "the table is still printed";
  EXPECT_NE(table.err.find("does not fit: "), std::string::npos) << table.err;
  args.push_back("--json");
  const auto json = trainsim(args);
  EXPECT_EQ(json.code, sim::base::kExitInfeasible);
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_FALSE(doc.at("fits").get<bool>());
  EXPECT_GT(doc.at("memory_gib").at("total").get<double>(), doc.at("memory_gib").at("capacity").get<double>());
  const auto fits = trainsim({"step", kSource + "/scenarios/examples/llama3-8b-64-h100.json", "--kernels", "--json"});
  EXPECT_EQ(fits.code, kExitOk) << fits.err;
  EXPECT_TRUE(nlohmann::json::parse(fits.out).at("fits").get<bool>());
}

TEST(SetOverrides, ARefusedDegreeIsTheOnlyError) {
  // Found by a user trial: --set parallel.tp=abc was followed by "tp*pp*dp*cp = 1*4*64*1 ... but cluster.gpus =
  // 2048", a tp of 1 nobody gave.
  for (const char* bad : {"parallel.tp=abc", "parallel.tp=-8"}) {
    const auto o = trainsim({"step", kSource + "/scenarios/examples/llama3-8b-64-h100.json", "--set", bad});
    EXPECT_EQ(o.code, sim::base::kExitBadInput) << bad;
    EXPECT_NE(o.err.find("--set parallel.tp: /parallel/tp"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("tp*pp*dp*cp"), std::string::npos) << o.err;
  }
  // Another key's error does not hide a real mismatch (a review).
  const auto both = trainsim({"step", kSource + "/scenarios/examples/llama3-8b-64-h100.json", "--set", "parallel.dp=8",
                              "--set", "parallel.recompute=bogus"});
  EXPECT_NE(both.err.find("/parallel/recompute"), std::string::npos) << both.err;
  EXPECT_NE(both.err.find("tp*pp*dp*cp = 2*1*8*1 = 16 but cluster.gpus = 64"), std::string::npos) << both.err;
}

TEST(PlanConstraints, CandidatesThatMeetTheDeadlineRankFirstAndTheTableSaysWhatTheOthersMiss) {
  // Found by a user trial: plan ranked by cost layouts certain to miss the scenario's deadline and budget, and said
  // nothing; the one size that met the deadline was 21st. Llama 3 8B on 64 GPUs takes about 19 days, on 128 about 10.
  const std::string scenario = kSource + "/scenarios/examples/llama3-8b-64-h100.json";
  const std::vector<std::string> base = {"plan", scenario,   "--gpus", "64,128", "--objective",
                                         "cost", "--trials", "5",      "--top",  "12"};
  const auto plain = trainsim(base);
  ASSERT_EQ(plain.code, kExitOk) << plain.err;
  auto with_deadline = base;
  with_deadline.insert(with_deadline.end(), {"--set", "cost.deadline=15 d"});
  const auto o = trainsim(with_deadline);
  ASSERT_EQ(o.code, kExitOk) << o.err;
  // The four 128-GPU layouts under 15 days (CP 1-8) first, each "met"; the rest by cost, with what they miss.
  EXPECT_NE(o.out.find("deadline 15.0 d: 4 of the 12 run-level candidates meet it"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("deadline 100%"), std::string::npos) << o.out;
  with_deadline.push_back("--json");
  const auto doc = nlohmann::json::parse(trainsim(with_deadline).out);
  const auto& cands = doc.at("candidates");
  ASSERT_EQ(cands.size(), 12u);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const auto& run = cands[i].at("run");
    EXPECT_EQ(run.at("meets_constraints").get<bool>(), i < 4) << i;
    EXPECT_EQ(run.at("time_to_train_days").at("p90").get<double>() <= 15.0, i < 4) << i;
    EXPECT_EQ(run.at("p_deadline_miss").get<double>(), i < 4 ? 0.0 : 1.0) << i;
    if (i < 4) {
      EXPECT_EQ(cands[i].at("gpus").get<int>(), 128) << i;
    }
  }
  EXPECT_EQ(cands[4].at("gpus").get<int>(), 64) << "then the cheapest of those that miss it";
  // Without a deadline the cheaper 64-GPU layouts come first, and nothing is said about constraints.
  EXPECT_EQ(plain.out.find("run-level candidates"), std::string::npos) << plain.out;
  auto plain_json = base;
  plain_json.push_back("--json");
  const auto free = nlohmann::json::parse(trainsim(plain_json).out);
  EXPECT_EQ(free.at("candidates")[0].at("gpus").get<int>(), 64);
  EXPECT_FALSE(free.at("candidates")[0].at("run").contains("meets_constraints"));
  // A fixed duration has no deadline to miss: said, not counted as met (a review found "6 of the 6 meet it").
  support::TempDir dir;
  std::ifstream in(scenario);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string tokens = "\"tokens\": \"1T\"";
  text.replace(text.find(tokens), tokens.size(), "\"duration\": \"20 d\"");
  auto window = base;
  window[1] = dir.write("window.json", text);
  window.insert(window.end(), {"--set", "cost.deadline=5 d"});
  const auto w = trainsim(window);
  ASSERT_EQ(w.code, kExitOk) << w.err;
  EXPECT_NE(w.out.find("cost.deadline does not apply to a fixed duration"), std::string::npos) << w.out;
  EXPECT_EQ(w.out.find("run-level candidates meet"), std::string::npos) << w.out;
  EXPECT_EQ(w.out.find("never"), std::string::npos) << "a fixed duration lasts its window: " << w.out;
  // A budget alone: the line names the budget only.
  auto budget = base;
  budget.insert(budget.end(), {"--set", "cost.budget=1K USD"});
  const auto b = trainsim(budget);
  ASSERT_EQ(b.code, kExitOk) << b.err;
  EXPECT_NE(b.out.find("budget 1000.00 USD: none of the 12 run-level candidates meets it"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("relax the budget, or plan"), std::string::npos) << b.out;
  // A deadline is shown as given, not rounded past it (19.05 d read as 19.1 d, a user trial).
  auto precise = base;
  precise.insert(precise.end(), {"--set", "cost.deadline=19.05 d"});
  EXPECT_NE(trainsim(precise).out.find("deadline 19.05 d:"), std::string::npos);
}

}  // namespace

namespace {

// A step's scenario (no training.tokens, no training.duration) is valid and compared on its step: `validate` and
// `compare` refused what `step` runs (a user trial); `run` still refuses it, naming /training.
TEST(StepOnlyScenario, ValidatesAndComparesOnItsStep) {
  support::TempDir dir;
  const auto path = dir.write("step.json", R"({"schema": "trainsim.scenario/1", "name": "step-only",
    "model": "llama3-8b", "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 16},
    "parallel": {"tp": 2, "zero_stage": 1, "micro_batch": 1, "global_batch": 64}, "training": {"seq_len": 8192}})");
  const auto v = trainsim({"validate", path});
  EXPECT_EQ(v.code, kExitOk) << v.err;
  EXPECT_NE(v.out.find("step only: run, and plan by cost or risk, need training.tokens"), std::string::npos) << v.out;
  const auto c = trainsim({"compare", path, path, "--json"});
  ASSERT_EQ(c.code, kExitOk) << c.err;
  const auto j = nlohmann::json::parse(c.out);
  for (const auto& m : j.at("metrics")) {
    const std::string key = m.at("metric");
    EXPECT_EQ(m.at("a").is_null(), key.rfind("step.", 0) != 0) << key;
  }
  EXPECT_NE(c.err.find("compared on its step only"), std::string::npos) << c.err;
  const auto r = trainsim({"run", path, "--trials", "5"});
  EXPECT_NE(r.code, kExitOk);
  EXPECT_NE(r.err.find("/training: missing \"tokens\""), std::string::npos) << r.err;
}

}  // namespace

namespace {

// An FP8 or FP4 step's MFU line names the bf16 peak it also quotes, and says when the rate passes it (a user trial read
// "117.5% of the bf16 peak" beside MFU 29.4% on an NVFP4 run as a bug).
TEST(StepSummaryText, TheBf16MfuNamesItsPeak) {
  const auto o = trainsim({"step", support::kDefaultScenario, "--set", "training.dtype=\"fp8\""});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("; against the bf16 dense peak of 989 TFLOP/s, "), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("above it"), std::string::npos) << o.out;
}

}  // namespace
