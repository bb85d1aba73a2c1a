// `trainsim compare`: two scenarios that differ only in the checkpoint interval (Daly's optimum against a fixed 6 h)
// show the expected direction of change; result files compare the same way; anything else is rejected.
#include "sim/base/json_reader.hpp"
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

namespace sim::cli {
namespace {

using support::trainsim;

std::string default_text() {
  std::ifstream f(support::kDefaultScenario);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The default scenario with a fixed checkpoint interval instead of "auto".
std::string with_interval(const std::string& interval) {
  std::string t = default_text();
  const std::string from = "\"interval\": \"auto\"";
  const auto at = t.find(from);
  EXPECT_NE(at, std::string::npos);
  return t.replace(at, from.size(), "\"interval\": \"" + interval + "\"");
}

struct Delta {
  std::optional<double> a, b, delta;
};

/// metric -> values of a trainsim.compare/1 document.
std::map<std::string, Delta> metrics_of(const std::string& json) {
  auto doc = base::JsonDocument::parse_text(json, "compare output");
  base::Diagnostics diag("compare output");
  auto root = doc.root(diag);
  std::map<std::string, Delta> out;
  for (auto& m : root.object_array("metrics", true)) {
    std::string name;
    m.required("metric", name);
    Delta d;
    for (auto [key, slot] : {std::pair{"a", &d.a}, std::pair{"b", &d.b}, std::pair{"delta", &d.delta}}) {
      double v = 0;
      if (m.kind(key) != base::JsonReader::Kind::Null && m.required(key, v)) *slot = v;
    }
    out[name] = d;
  }
  return out;
}

TEST(CompareCommand, BadCheckpointIntervalLowersGoodputAndRaisesCost) {
  support::TempDir dir;
  const auto a = dir.write("auto.json", default_text());
  const auto b = dir.write("six_hours.json", with_interval("6 h"));
  const auto o = trainsim({"compare", a, b, "--trials", "40", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  auto m = metrics_of(o.out);
  ASSERT_TRUE(m["goodput.mean"].delta && m["cost_usd.mean"].delta && m["time_to_train_days.p50"].delta) << o.out;
  EXPECT_LT(*m["goodput.mean"].delta, -0.05) << "a 6 h interval loses hours of work per failure";
  EXPECT_GT(*m["cost_usd.mean"].delta, 0.0);
  EXPECT_GT(*m["cost_usd.p90"].delta, 0.0);
  EXPECT_GT(*m["time_to_train_days.p50"].delta, 0.0);
  EXPECT_NEAR(*m["checkpoint.interval_s"].b, 6 * 3600.0, 10.0) << "6 h in whole steps of ~9 s";
  EXPECT_LT(*m["checkpoint.interval_s"].a, 3600.0) << "Daly's optimum for a ~16 h job MTBF and a 0.6 s snapshot";
  // The step beside the run: the same layout, so the same step (the interval is a run-level setting).
  ASSERT_TRUE(m["step.step_time_s"].a && m["step.mfu"].b && m["step.tokens_per_s"].delta) << o.out;
  EXPECT_GT(*m["step.step_time_s"].a, 0.0);
  EXPECT_DOUBLE_EQ(*m["step.step_time_s"].delta, 0.0);

  const auto table = trainsim({"compare", a, b, "--trials", "40"});
  ASSERT_EQ(table.code, kExitOk) << table.err;
  for (const char* row : {"step time", "MFU", "tokens/s", "time to train p50", "goodput mean", "checkpoint interval",
                          "cost mean", "cost CVaR95", "P(miss deadline)", "B - A"})
    EXPECT_NE(table.out.find(row), std::string::npos) << row << "\n" << table.out;
}

TEST(CompareCommand, ReadsResultFiles) {
  support::TempDir dir;
  const auto a = dir.write("auto.json", default_text());
  const auto b = dir.write("six_hours.json", with_interval("6 h"));
  const auto dir_a = (dir.path() / "a").string(), dir_b = (dir.path() / "b").string();
  ASSERT_EQ(trainsim({"run", a, "--trials", "20", "--out", dir_a, "-q"}).code, kExitOk);
  ASSERT_EQ(trainsim({"run", b, "--trials", "20", "--out", dir_b, "-q"}).code, kExitOk);
  const auto o = trainsim({"compare", dir_a + "/result.json", dir_b + "/result.json", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  auto m = metrics_of(o.out);
  EXPECT_LT(*m["goodput.mean"].delta, 0.0);
  EXPECT_GT(*m["cost_usd.mean"].delta, 0.0);
  // A scenario against a result of the same scenario: simulated with the same trials and seed, nothing changes.
  const auto same = trainsim({"compare", a, dir_a + "/result.json", "--trials", "20", "--json"});
  ASSERT_EQ(same.code, kExitOk) << same.err;
  auto s = metrics_of(same.out);
  EXPECT_DOUBLE_EQ(*s["cost_usd.mean"].delta, 0.0);
  EXPECT_DOUBLE_EQ(*s["time_to_train_days.p90"].delta, 0.0);
  EXPECT_DOUBLE_EQ(*s["deadline_days"].b, 200.0) << "the result file's deadline";
  // A result file from before deadline_days and budget_usd were written: its goals are unknown, not different (a
  // review found the notes printed for two files of one scenario).
  std::ifstream in(dir_a + "/result.json");
  auto old = nlohmann::json::parse(in);
  old.erase("deadline_days");
  old.erase("budget_usd");
  const auto old_path = dir.write("old.json", old.dump());
  const auto notes = trainsim({"compare", old_path, dir_a + "/result.json"});
  ASSERT_EQ(notes.code, kExitOk) << notes.err;
  EXPECT_EQ(notes.out.find("note:"), std::string::npos) << notes.out;
  EXPECT_NE(notes.out.find("(" + dir_a + "/result.json, result file, 20 trials, trained to the end)"),
            std::string::npos)
      << notes.out;
  // What only a simulated scenario takes is refused for two result files, not dropped (a tester's trial: --trials,
  // --seed, --threads and even an unknown --set key were ignored, exit 0).
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--trials", "5"}, {"--seed", "9"}, {"--threads", "2"}, {"--set", "bogus.key=1"}}) {
    std::vector<std::string> args = {"compare", dir_a + "/result.json", dir_b + "/result.json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = trainsim(args);
    EXPECT_EQ(r.code, kExitBadInput) << extra[0] << ": " << r.out;
    EXPECT_NE(r.err.find("are result files"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(extra[0] + " applies to a scenario"), std::string::npos) << r.err;
  }
  // Different trial counts, and a window against a run to the end, are said.
  std::string window = default_text();
  window.replace(window.find("\"tokens\": \"15T\""), 15, "\"duration\": \"3 d\"");
  const auto w = dir.write("window.json", window);
  const auto mixed = trainsim({"compare", dir_a + "/result.json", w, "--trials", "10"});
  ASSERT_EQ(mixed.code, kExitOk) << mixed.err;
  EXPECT_NE(mixed.out.find("note: A ran 20 trials and B 10"), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("note: one run trains to the end of its tokens and the other simulates a fixed window"),
            std::string::npos)
      << mixed.out;
}

TEST(CompareCommand, SaysWhenTheTwoSidesJudgeDifferentDeadlinesOrBudgets) {
  // A user trial: a 200 d against a 210 d deadline read as P(miss deadline) 100% -> 0%, every other row equal, with
  // neither deadline shown. The goals are rows now, and a note says the risk rows compare different goals.
  support::TempDir dir;
  std::string later = default_text();
  const std::string from = "\"deadline\": \"200 d\"";
  ASSERT_NE(later.find(from), std::string::npos);
  later.replace(later.find(from), from.size(), "\"deadline\": \"210 d\"");
  const auto a = dir.write("a.json", default_text());
  const auto b = dir.write("b.json", later);
  const auto o = trainsim({"compare", a, b, "--trials", "10"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("200.0 d     210.0 d"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("note: A and B judge different deadlines"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("different budgets"), std::string::npos) << o.out;
  const auto same = trainsim({"compare", a, a, "--trials", "10"});
  EXPECT_EQ(same.out.find("note:"), std::string::npos) << same.out;
}

TEST(CompareCommand, RejectsOtherFilesWithTheirPath) {
  support::TempDir dir;
  const auto a = dir.write("auto.json", default_text());
  const auto model = std::string(TRAINSIM_SOURCE_DIR) + "/models/llama3-8b.json";
  const auto o = trainsim({"compare", a, model});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(model + ": /schema"), std::string::npos) << o.err;
  const auto broken = dir.write("broken.json", R"({"schema": "trainsim.run/1", "goodput": {"mean": "high"}})");
  const auto b = trainsim({"compare", broken, broken});
  EXPECT_EQ(b.code, kExitBadInput);
  EXPECT_NE(b.err.find("/time_to_train_days"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("/goodput/mean"), std::string::npos) << b.err;
  EXPECT_EQ(trainsim({"compare", a}).code, kExitBadInput) << "two inputs are required";
}

TEST(CompareCommand, RejectsResultsNoRunProduces) {
  support::TempDir dir;
  // A trainsim.run/1 result with every compared field; three of them given by the caller.
  auto result = [&](const std::string& name, const std::string& ttt, const std::string& goodput,
                    const std::string& p_deadline) {
    return dir.write(name, R"({"schema": "trainsim.run/1", "scenario": "s",
      "time_to_train_days": {"mean": 5, "p10": 4, "p50": )" +
                               ttt + R"(, "p90": 6, "p99": 7},
      "goodput": {"mean": 0.9, "p10": 0.8, "p50": )" +
                               goodput + R"(, "p90": 0.95},
      "interruptions": {"mean": 3}, "checkpoint": {"interval_s": 3600},
      "cost_usd": {"mean": 100, "p50": 90, "p90": 120, "cvar95": 130},
      "p_deadline_miss": )" + p_deadline +
                               R"(, "p_budget_overrun": 0})");
  };
  const auto good = result("good.json", "5", "0.9", "0.1");
  ASSERT_EQ(trainsim({"compare", good, good}).code, kExitOk) << "the fixture itself is a valid result";
  auto refused = [&](const std::string& file, const std::string& fragment) {
    const auto o = trainsim({"compare", good, file});
    EXPECT_EQ(o.code, kExitBadInput) << o.out;
    EXPECT_NE(o.err.find(file + ": " + fragment), std::string::npos) << o.err;
  };
  refused(result("negative.json", "-5", "0.9", "0.1"), "/time_to_train_days/p50: -5 is negative");
  // A missing object is named once, not once per field compared in it (a tester's trial: /goodput twice).
  nlohmann::json no_goodput = nlohmann::json::parse(std::ifstream(good));
  no_goodput.erase("goodput");
  const auto missing = trainsim({"compare", good, dir.write("no_goodput.json", no_goodput.dump())});
  EXPECT_EQ(missing.code, kExitBadInput);
  const auto first = missing.err.find("/goodput: missing required field");
  ASSERT_NE(first, std::string::npos) << missing.err;
  EXPECT_EQ(missing.err.find("/goodput: missing required field", first + 1), std::string::npos) << missing.err;
  refused(result("above_p90.json", "9", "0.9", "0.1"), "/time_to_train_days/p50: p50 = 9 is above p90 = 6");
  refused(result("goodput.json", "5", "1e20", "0.1"), "/goodput/p50: 1e+20 is above 1");
  refused(result("probability.json", "5", "0.9", "-0.5"), "/p_deadline_miss: -0.5 is negative");
}

}  // namespace
}  // namespace sim::cli
