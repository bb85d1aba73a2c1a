// results::metric_paths: the fields `expect` and baselines may name are exactly the numbers trainsim's step and run
// results hold (steps and window mode), and every command refuses a scenario that expects anything else (issue 22).
#include "sim/base/json_reader.hpp"
#include "sim/cli/app.hpp"
#include "sim/results/metric_paths.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace sim::results {
namespace {

using support::trainsim;

std::string scenario(const std::string& training, const std::string& expect) {
  return R"({ "schema": "trainsim.scenario/1", "name": "metric-paths", "model": "llama3-8b",
    "hardware": "h100-sxm5-80gb", "cluster": { "gpus": 16 },
    "parallel": { "tp": 2, "sequence_parallel": true, "global_batch": 32 },
    "training": { "seq_len": 4096, )" +
         training + R"( }, "reliability": { "trials": 4 }, "cost": { "gpu_hour": "2 USD", "deadline": "30 d" },
    "expect": )" +
         expect + " }";
}

/// Dotted paths of the numbers, flags and nulls (numbers not computed) of a JSON object; strings and arrays skipped.
void numeric_leaves(base::JsonReader& r, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& key : r.keys()) {
    const auto kind = r.kind(key);
    if (kind == base::JsonReader::Kind::Object) {
      auto sub = r.optional_object(key);
      numeric_leaves(*sub, prefix + key + ".", out);
    } else if (kind != base::JsonReader::Kind::String && kind != base::JsonReader::Kind::Array) {
      out.insert(prefix + key);
    }
    r.accept(key);
  }
}

std::set<std::string> leaves_of(const std::string& json) {
  auto doc = base::JsonDocument::parse_text(json, "result");
  base::Diagnostics diag("result");
  auto root = doc.root(diag);
  std::set<std::string> out;
  numeric_leaves(root, "", out);
  return out;
}

TEST(MetricPaths, AreExactlyTheNumbersOfTheStepAndRunResults) {
  support::TempDir dir;
  std::set<std::string> found;
  std::vector<std::string> causes;
  for (const char* training : {R"("tokens": "10B")", R"("duration": "2 d")"}) {
    const auto s = dir.write("s.json", scenario(training, "{}"));
    const auto step = trainsim({"step", s, "--json"});
    ASSERT_EQ(step.code, cli::kExitOk) << step.err;
    const auto run = trainsim({"run", s, "--json"});
    ASSERT_EQ(run.code, cli::kExitOk) << run.err;
    for (const auto& p : leaves_of(step.out))
      found.insert(p);
    for (const auto& p : leaves_of(run.out)) {
      const std::string group = "interruptions.by_cause.";
      if (p.starts_with(group)) causes.push_back(p.substr(group.size()));
      found.insert(p);
    }
  }
  ASSERT_FALSE(causes.empty());
  found.erase("never_finished.reason");  // a string (null when every trial finished)
  // Which GPU the breakdown describes: an index, not a quantity a check bounds.
  found.erase("critical_gpu");
  found.erase("step.critical_gpu");
  // The resolved scenario is the run's provenance (its inputs), not a result a check bounds.
  std::erase_if(found, [](const std::string& p) { return p.starts_with("resolved_scenario."); });
  // The deadline and budget the risks judge: the scenario's inputs beside them (for compare), not results.
  found.erase("deadline_days");
  found.erase("budget_usd");
  for (const auto& p : found)
    EXPECT_EQ(resolve_metric(p, causes), p) << p << " is a number of a result that `expect` cannot name";
  // Every listed path is in one of the outputs (as itself, or under "step." in the run result).
  for (const auto list : {step_metric_paths(), run_metric_paths()})
    for (const auto p : list)
      EXPECT_TRUE(found.count(std::string(p))) << p << " is listed but no result has it";
}

TEST(MetricPaths, ResolveUnitSuffixesStepPrefixAndCauses) {
  const std::vector<std::string> causes{"faulty_gpu"};
  EXPECT_EQ(resolve_metric("step_time", causes), "step_time_s");
  EXPECT_EQ(resolve_metric("memory.total", causes), "memory_gib.total");
  EXPECT_EQ(resolve_metric("time_to_train.p90", causes), "time_to_train_days.p90");
  EXPECT_EQ(resolve_metric("step.mfu", causes), "step.mfu");
  EXPECT_EQ(resolve_metric("interruptions.by_cause.faulty_gpu", causes), "interruptions.by_cause.faulty_gpu");
  EXPECT_EQ(resolve_metric("interruptions.by_cause.nope", causes), std::nullopt);
  EXPECT_EQ(resolve_metric("no_such_metric", causes), std::nullopt);
  EXPECT_EQ(resolve_metric("", causes), std::nullopt);
  EXPECT_EQ(resolve_metric("memory_gib", causes), std::nullopt) << "a group is not a number";
}

TEST(MetricPaths, UnknownExpectMetricsAreRefusedByEveryCommand) {
  support::TempDir dir;
  const auto typo = dir.write("typo.json", scenario(R"("tokens": "10B")", R"({ "memory_gib.totl": { "max": 80 } })"));
  const auto cause =
      dir.write("cause.json", scenario(R"("tokens": "10B")", R"({ "interruptions.by_cause.nope": { "max": 8 } })"));
  for (const std::vector<std::string>& cmd : {std::vector<std::string>{"validate"},
                                              {"step"},
                                              {"run", "--trials", "2"},
                                              {"check"},
                                              {"plan"},
                                              {"compare", typo}}) {
    auto args = cmd;
    args.insert(args.begin() + 1, typo);
    const auto o = trainsim(args);
    EXPECT_EQ(o.code, cli::kExitBadInput) << cmd[0] << ": " << o.out;
    EXPECT_NE(o.err.find(typo + ": /expect/memory_gib.totl: \"memory_gib.totl\" is not a field of the step or run "
                                "result (did you mean \"memory_gib.total\"?); accepted: within_best, step_time_s, "
                                "tokens_per_s"),
              std::string::npos)
        << cmd[0] << ": " << o.err;
    EXPECT_NE(o.err.find("memory_gib.{params, grads, optimizer, activations, buffers, total, capacity}"),
              std::string::npos)
        << o.err;
  }
  const auto o = trainsim({"validate", cause});
  EXPECT_EQ(o.code, cli::kExitBadInput);
  EXPECT_NE(o.err.find("/expect/interruptions.by_cause.nope: "), std::string::npos) << o.err;
  const auto known =
      dir.write("known.json", scenario(R"("tokens": "10B")", R"({ "interruptions.by_cause.faulty_gpu": { "max": 8 },
        "step.mfu": { "min": 0.1 }, "step_time": { "max": "60 s" }, "fits": true, "within_best": "50%" })"));
  const auto ok = trainsim({"validate", known});
  EXPECT_EQ(ok.code, cli::kExitOk) << ok.err;
}

TEST(MetricPaths, ManyUnknownMetricsGiveTenMessagesAndACount) {
  support::TempDir dir;
  std::string expect = "{";
  for (int i = 0; i < 30; ++i)
    expect += std::string(i ? ", " : "") + "\"nothing_here_" + std::to_string(i) + "\": {\"max\": 1}";
  const auto s = dir.write("many.json", scenario(R"("tokens": "10B")", expect + "}"));
  const auto o = trainsim({"validate", s});
  EXPECT_EQ(o.code, cli::kExitBadInput);
  EXPECT_NE(o.err.find("/expect/nothing_here_0: \"nothing_here_0\" is not a field of the step or run result; accepted: "
                       "within_best, "),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("accepted: as for /expect/nothing_here_0\n"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("/expect: and 20 more metrics that are not result fields"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 12) << "ten metrics, the count, the summary: " << o.err;
}

}  // namespace
}  // namespace sim::results
