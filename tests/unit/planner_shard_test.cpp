// Distributed planning (issue 9): shards of a search merged, and a task farm, give exactly what one process gives;
// merge refuses shards that do not tile one search.
#include "sim/app/step.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/planner/planner.hpp"
#include "sim/scenario/plan_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace sim::planner {
namespace {

/// A small model on 8 or 16 GPUs: a search of a few hundred points, a short list of a few dozen.
std::string small_scenario() {
  return R"({"schema": "trainsim.scenario/1", "name": "small",
    "model": {"name": "small", "layers": 8, "hidden": 512, "ffn_hidden": 2048, "heads": 8, "vocab": 4096,
              "activation": "gelu", "max_seq_len": 2048},
    "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 16},
    "parallel": {"global_batch": 32}, "training": {"seq_len": 2048, "tokens": "2B"}})";
}

struct Fixture {
  support::TempDir dir;
  scenario::Scenario s;
  PlanOptions opt;
  PlanProblem problem;
  Fixture() : s(scenario::load_scenario(dir.write("s.json", small_scenario()))) {
    opt.gpus = {8, 16};
    opt.run_trials = 20;
    opt.threads = 2;
    opt.objective = Objective::Cost;
    problem = scenario::plan_problem(s, opt);
  }
};

/// A shard through its text form and back, as `trainsim merge` reads it from a file.
PlanShard round_trip(const PlanShard& shard, const PlanProblem& problem) {
  const std::string text = to_json(shard).dump(-1);
  base::Diagnostics diag("shard.jsonl");
  const auto doc = base::JsonDocument::parse_text(text, diag.file());
  auto r = doc.root(diag);
  PlanShard back = plan_shard_from_json(r, problem);
  diag.throw_if_any();
  return back;
}

TEST(PlanShards, MergedShardsGiveTheSingleProcessResultByteForByte) {
  Fixture f;
  const auto one = plan(f.problem, f.opt);
  const std::string expected = to_json(one, 1000).dump();
  ASSERT_GE(one.replica_evaluated, 20);
  ASSERT_GT(one.run_evaluated, 0);
  for (int count : {2, 3, 40}) {  // 40 shards: some hold a single candidate, some none
    std::vector<PlanShard> shards;
    for (int i = count - 1; i >= 0; --i)  // any order
      shards.push_back(round_trip(plan_shard(f.problem, f.opt, i, count), f.problem));
    EXPECT_EQ(to_json(merge_plan_shards(f.problem, f.opt, std::move(shards)), 1000).dump(), expected)
        << count << " shards";
  }
}

TEST(PlanShards, AFarmThatRunsTasksInAnyOrderGivesTheSameResult) {
  Fixture f;
  const std::string expected = to_json(plan(f.problem, f.opt), 1000).dump();
  PlanOptions farmed = f.opt;
  int tasks = 0;
  farmed.farm = [&](int n, const std::function<std::string(int)>& task) {
    std::vector<std::string> out(static_cast<std::size_t>(n));
    for (int k = n - 1; k >= 0; --k)  // reverse order, as a rank that frees up late might
      out[static_cast<std::size_t>(k)] = task(k);
    tasks += n;
    return out;
  };
  EXPECT_EQ(to_json(plan(f.problem, farmed), 1000).dump(), expected);
  EXPECT_GT(tasks, 20) << "the replica and run-level phases went through the farm";
}

TEST(PlanShards, MergeRefusesShardsThatDoNotTileOneSearch) {
  Fixture f;
  auto shard = [&](int i, int n) { return plan_shard(f.problem, f.opt, i, n); };
  auto merge_error = [&](std::vector<PlanShard> shards) -> std::string {
    try {
      merge_plan_shards(f.problem, f.opt, std::move(shards));
    } catch (const base::ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(merge_error({shard(0, 3), shard(2, 3)}).find("shard 1 of 3 is missing"), std::string::npos);
  EXPECT_NE(merge_error({shard(0, 2), shard(0, 2), shard(1, 2)}).find("shard 0 of 2 appears twice"), std::string::npos);
  EXPECT_NE(merge_error({shard(0, 2), shard(1, 3)}).find("is not one of 2 shards"), std::string::npos);
  // A shard of another search (other cluster sizes): it screened other points.
  PlanOptions other = f.opt;
  other.gpus = {16};
  auto foreign = plan_shard(scenario::plan_problem(f.s, other), other, 1, 2);
  EXPECT_NE(merge_error({shard(0, 2), std::move(foreign)}).find("searched other points"), std::string::npos);
  EXPECT_THROW(plan_shard(f.problem, f.opt, 2, 2), base::ConfigError);
  EXPECT_THROW(plan_shard(f.problem, f.opt, 0, 0), base::ConfigError);
}

TEST(PlanShards, ReadingRejectsAPointOutsideTheSearch) {
  Fixture f;
  auto s = plan_shard(f.problem, f.opt, 0, 1);
  ASSERT_FALSE(s.candidates.empty());
  std::string text = to_json(s).dump(-1);
  const auto at = text.find("\"point\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 8, "9999999");  // point 9999999<n>: beyond the search
  base::Diagnostics diag("shard.jsonl");
  const auto doc = base::JsonDocument::parse_text(text, diag.file());
  auto r = doc.root(diag);
  plan_shard_from_json(r, f.problem);
  try {
    diag.throw_if_any();
    FAIL() << "accepted a point outside the search";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist: this search has"), std::string::npos) << e.what();
  }
}

TEST(PlanShards, ReadingRejectsAShardOfAnotherSearch) {
  // A shard names its candidates by point index: read against a search numbered otherwise (another build's
  // enumeration, other plan options), the same indices would be other configurations. Its fingerprint says so.
  Fixture f;
  const auto s = plan_shard(f.problem, f.opt, 0, 1);
  EXPECT_EQ(s.search.size(), 16u) << "64 bits in hex";
  EXPECT_EQ(round_trip(s, f.problem).search, s.search);
  PlanOptions fewer = f.opt;
  fewer.gpus = {16};
  const auto other = scenario::plan_problem(f.s, fewer);
  const std::string text = to_json(s).dump(-1);
  base::Diagnostics diag("shard.jsonl");
  const auto doc = base::JsonDocument::parse_text(text, diag.file());
  auto r = doc.root(diag);
  const auto back = plan_shard_from_json(r, other);
  EXPECT_TRUE(back.candidates.empty()) << "no point index is read against the other numbering";
  try {
    diag.throw_if_any();
    FAIL() << "accepted a shard of another search";
  } catch (const base::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/search"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("another trainsim build or with other plan options"), std::string::npos)
        << e.what();
  }
}

// A user trial: Ctrl-C during plan's run level went unheard for two minutes, each finalist's trials running on. The
// evaluator is now handed the plan's stop flag: here it waits for it (at most a minute, then fails the test).
TEST(PlanCancellation, AnAbandonedPlanStopsTheRunLevelItIsEvaluating) {
  Fixture f;
  struct Cancel {};
  std::atomic<bool> evaluating{false}, saw_stop{false};
  f.problem.run = [&](const parallel::ParallelConfig&, const execution::StepPlan&, const results::StepResult&, int,
                      const std::atomic<bool>& stop) -> RunEstimate {
    evaluating = true;
    for (int ms = 0; ms < 60'000 && !stop.load(); ++ms)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    saw_stop = stop.load();
    throw Abandoned{};
  };
  f.opt.progress = [&](int, int) {
    if (evaluating.load()) throw Cancel{};
  };
  EXPECT_THROW(plan(f.problem, f.opt), Cancel);
  EXPECT_TRUE(saw_stop.load()) << "the evaluation ran to its end, not stopped";
}

// The scenario's own evaluator (scenario::plan_problem) polls the flag while its trials run: a stop already set ends
// the Monte Carlo with Abandoned instead of a result (a review: the test above replaces the evaluator).
TEST(PlanCancellation, TheScenariosRunEvaluatorStopsItsTrials) {
  Fixture f;
  f.opt.progress = nullptr;
  const auto shard = plan_shard(f.problem, f.opt, 0, 1);
  ASSERT_FALSE(shard.candidates.empty());
  const Candidate& c = shard.candidates.front();
  scenario::Scenario sized = f.s;
  sized.cluster.gpus = c.gpus;
  sized.parallel = c.parallel;
  const auto step = app::evaluate_step(sized, {});
  ASSERT_TRUE(std::holds_alternative<app::StepOutcome>(step));
  const std::atomic<bool> stop{true};
  EXPECT_THROW((void)f.problem.run(c.parallel, std::get<app::StepOutcome>(step).plan, c.step, 100000, stop), Abandoned);
}

}  // namespace
}  // namespace sim::planner
