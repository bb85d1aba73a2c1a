// `trainsim run` end to end: the run JSON contract with cost and risk fields, thread-count independence, and an
// impossible run reported as never finishing, with its reason, in bounded time.
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace sim::cli {
namespace {

using support::trainsim;
using Outcome = support::CliOutcome;

const std::string& kDefault = support::kDefaultScenario;

TEST(RunCommand, JsonCarriesTheRunContract) {
  auto o = trainsim({"run", kDefault, "--trials", "20", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  for (const char* key : {"\"schema\": \"trainsim.run/1\"", "\"trials\": 20", "\"step\": {", "\"time_to_train_days\"",
                          "\"goodput\"", "\"interruptions\"", "\"by_cause\"", "\"job_mtbf_h\"", "\"lost_gpu_hours\"",
                          "\"checkpoint\"", "\"interval_s\"", "\"overhead_fraction\"", "\"cost_usd\"", "\"p50\"",
                          "\"cost_per_failure_usd\"", "\"p_deadline_miss\"", "\"p_budget_overrun\""})
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
}

TEST(RunCommand, SameResultOnOneOrTwoThreads) {
  auto one = trainsim({"run", kDefault, "--trials", "16", "--threads", "1", "--json"});
  auto two = trainsim({"run", kDefault, "--trials", "16", "--threads", "2", "--json"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  EXPECT_EQ(one.out, two.out);
}

// With a report, the trials and then the report's what-if reruns: each phase on its own line with its own unit (a user
// trial saw the reruns drawn as "trials" with a rate counted from the first phase's start).
TEST(RunCommand, TheReportsReRunsAreTheirOwnProgressPhase) {
  support::TempDir dir;
  auto o = trainsim({"run", kDefault, "--trials", "12", "--out", (dir.path() / "r").string(), "--progress", "always"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto trials = o.err.find("12/12 trials,");
  const auto reruns = o.err.find("trials of the report's what-if reruns");
  ASSERT_NE(trials, std::string::npos) << o.err;
  ASSERT_NE(reruns, std::string::npos) << o.err;
  EXPECT_GT(reruns, trials);
  EXPECT_NE(o.err.substr(trials, reruns - trials).find('\n'), std::string::npos) << "a line of its own: " << o.err;
}

// Three reliability inputs a user trial found weakly reported: a failures file that is not there (no scenario, key or
// folder named), a spares text other than "auto" (the message named only "auto"), more spares than the job has nodes
// (accepted, while "auto" stops at the job's size).
TEST(RunCommand, BadSparesAndAMissingFailuresFileNameTheKey) {
  auto missing = trainsim({"run", kDefault, "--trials", "2", "--set", "reliability.failures=nope.json"});
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("/reliability/failures: \"nope.json\": cannot open: no such file (a relative path"),
            std::string::npos)
      << missing.err;
  auto text = trainsim({"run", kDefault, "--trials", "2", "--set", "reliability.spares=\"abc\""});
  EXPECT_EQ(text.code, kExitBadInput);
  EXPECT_NE(text.err.find("/reliability/spares: expected \"auto\" or a node count"), std::string::npos) << text.err;
  auto many = trainsim({"run", kDefault, "--trials", "2", "--set", "reliability.spares=200"});
  EXPECT_EQ(many.code, kExitBadInput);
  EXPECT_NE(many.err.find("200 spare nodes for a job of 128 nodes"), std::string::npos) << many.err;
  EXPECT_EQ(trainsim({"run", kDefault, "--trials", "2", "--set", "reliability.spares=128"}).code, kExitOk);
}

// A user trial: a 10-minute job MTBF over a 200-year window with ten million trials (all within the documented
// ranges) ran for weeks, silently; a window past 200 years passed validate and step, then run blamed "/work/window".
TEST(RunCommand, AHopelessAmountOfWorkAndAWindowPastTheRangeAreRefusedUpFront) {
  support::TempDir dir;
  const std::string storm = dir.write("storm.json", R"({"schema": "trainsim.scenario/1", "name": "storm",
    "model": "llama3-8b", "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 16},
    "parallel": {"tp": 1, "pp": 1, "cp": 2, "zero_stage": 1, "micro_batch": 1, "global_batch": 64},
    "training": {"seq_len": 8192, "duration": "10400 w"},
    "reliability": {"failures": {"components": [{"name": "x", "scope": "job", "mtbf": "10 min", "effect": "crash",
                                                 "repair": "0 h"}]},
                    "restart": "1 s", "detection": {"crash": "1 s"}, "trials": 10000000},
    "expect": {"goodput.p50": {"min": 0.5}}})");
  for (const char* cmd : {"run", "check"}) {
    const auto o = trainsim({cmd, storm});
    EXPECT_EQ(o.code, kExitBadInput) << cmd << o.err;
    EXPECT_NE(o.err.find("storm.json: /reliability/trials: 10000000 trials of about 5e+06 interruptions each"),
              std::string::npos)
        << cmd << o.err;
    EXPECT_NE(o.err.find("give 2000 trials or fewer"), std::string::npos) << o.err;
  }
  const auto given = trainsim({"run", storm, "--trials", "3000"});
  EXPECT_EQ(given.code, kExitBadInput);
  EXPECT_NE(given.err.find("--trials: 3000 trials"), std::string::npos) << given.err;
  // Shards: each is one command; the advice is for the whole run (a review found the shard's count in it).
  const auto sharded = trainsim({"run", storm, "--trials", "16000", "--shard-index", "0", "--shard-count", "4", "--out",
                                 dir.path().string() + "/s0.jsonl"});
  EXPECT_EQ(sharded.code, kExitBadInput);
  EXPECT_NE(sharded.err.find("16000 trials over 4 shards"), std::string::npos) << sharded.err;
  EXPECT_NE(sharded.err.find("give 8000 trials or fewer"), std::string::npos) << sharded.err;
  // scale's sizes share the bound: 1,500 trials fit one size (7.5e9), not two (a review: each size was checked alone).
  const auto scaled = trainsim({"scale", storm, "--gpus", "16,32", "--trials", "1500", "--progress", "never"});
  EXPECT_EQ(scaled.code, kExitBadInput);
  EXPECT_NE(scaled.err.find("the 2 sizes' trials simulate about 1.5e+10 interruptions in all"), std::string::npos)
      << scaled.err;
  const auto far = trainsim({"validate", storm, "--set", "training.duration=\"10500 w\""});
  EXPECT_EQ(far.code, kExitBadInput);
  EXPECT_NE(far.err.find("/training/duration: 73500 days is beyond the simulator's range of 200 years (73050 days)"),
            std::string::npos)
      << far.err;
  // Tokens past the range: a readable day count (1e300 tokens printed a 300-digit number).
  const auto many = trainsim({"run", kDefault, "--set", "training.tokens=\"1e300\""});
  EXPECT_EQ(many.code, kExitBadInput);
  EXPECT_NE(many.err.find("/training/tokens: takes "), std::string::npos) << many.err;
  EXPECT_NE(many.err.find("e+2"), std::string::npos) << many.err;
  EXPECT_LT(many.err.size(), 600u) << many.err;
}

// The run level's settings as the run used them, defaults included, in the run JSON's resolved scenario and the
// report's effective configuration (a user trial found restart, swap, detection and repair times printed nowhere).
TEST(RunCommand, TheResolvedScenarioNamesTheRunLevelSettingsAsUsed) {
  support::TempDir dir;
  const auto report = (dir.path() / "r").string();
  auto o = trainsim(
      {"run", kDefault, "--trials", "4", "--set", "reliability.restart=\"20 min\"", "--out", report, "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto rel = nlohmann::json::parse(o.out).at("resolved_scenario").at("reliability");
  EXPECT_EQ(rel.at("restart_s").get<double>(), 1200.0);
  EXPECT_EQ(rel.at("node_swap_s").get<double>(), 180.0);
  EXPECT_EQ(rel.at("detection_s").at("crash").get<double>(), 120.0);
  EXPECT_EQ(rel.at("spares_from").get<std::string>(), "auto");
  EXPECT_EQ(rel.at("on_spares_exhausted").get<std::string>(), "shrink");
  EXPECT_EQ(rel.at("repair_h").at("faulty_gpu").get<double>(), 24.0);
  // The checkpoint settings and storage rates (trial 43: none of them were shown).
  EXPECT_EQ(rel.at("checkpoint").at("interval").get<std::string>(), "auto (Daly)");
  EXPECT_TRUE(rel.at("checkpoint").at("async").get<bool>());
  EXPECT_EQ(rel.at("checkpoint").at("write_from").get<std::string>(), "bytes and bandwidth");
  EXPECT_NEAR(rel.at("checkpoint").at("write_bandwidth_gb_s").get<double>(), 111.0, 0.1);
  EXPECT_EQ(rel.at("checkpoint").at("snapshot_bandwidth_gb_s").get<double>(), 25.0);
  // The cost's p10 beside its p50 and p90, as the time to train has it: the same price per wall day.
  const auto j = nlohmann::json::parse(o.out);
  const auto& cost = j.at("cost_usd");
  const auto& days = j.at("time_to_train_days");
  EXPECT_LE(cost.at("p10").get<double>(), cost.at("p50").get<double>());
  EXPECT_NEAR(cost.at("p10").get<double>() / days.at("p10").get<double>(),
              cost.at("p50").get<double>() / days.at("p50").get<double>(), 1e-6 * cost.at("p50").get<double>());
  std::ifstream in(report + "/report.html");
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("&quot;restart_s&quot;: 1200"), std::string::npos) << "the effective configuration";
  EXPECT_NE(html.str().find("&quot;write_bandwidth_gb_s&quot;: 111."), std::string::npos) << "checkpoint rates";
  EXPECT_NE(html.str().find("p10 $"), std::string::npos) << "the cost card's p10";
}

TEST(RunCommand, ImpossibleRunIsReportedAsNeverFinishing) {
  auto o = trainsim(
      {"run", kDefault, "--trials", "4", "--set",
       R"(reliability.failures={"components":[{"name":"flaky","scope":"job","mtbf":"20 s","effect":"crash"}]})"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("NEVER FINISHED  4 of 4 trials"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("time to train   p50 never"), std::string::npos) << o.out;
  // A fixed window that stalls is paid for to its end (a user trial: it was costed for the 1.4 days before the stall
  // was called), with the days after the stall on a waterfall line of their own, not charged to the phase or the
  // cause that came last (a review). Stalled by crashes, and while running (stragglers slow the job, never stop it).
  support::TempDir dir;
  const std::string head = R"({"schema": "trainsim.scenario/1", "name": "w",
    "model": "llama3-8b", "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 16},
    "parallel": {"tp": 1, "pp": 1, "cp": 2, "zero_stage": 1, "micro_batch": 1, "global_batch": 64},
    "training": {"seq_len": 8192, "duration": "365 d"}, "reliability": {"trials": 2, )";
  const std::string crash =
      R"("failures": {"components": [{"name": "x", "scope": "job", "mtbf": "1 s", "effect": "crash"}]}}})";
  const std::string slow = R"("failures": {"components": [{"name": "x", "scope": "job", "mtbf": "1 s",
      "effect": "straggler"}]}, "detection": {"straggler": "30 d"}, "checkpoint": {"interval": "300 d"}}})";
  for (const std::string& tail : {crash, slow}) {
    auto w = trainsim({"run", dir.write("w.json", head + tail), "--json"});
    ASSERT_EQ(w.code, kExitOk) << w.err;
    const auto j = nlohmann::json::parse(w.out);
    ASSERT_GT(j["never_finished"]["trials"].get<int>(), 0) << w.out.substr(0, 300);
    const double burn = j["cost_usd"]["burn_per_hour"].get<double>();
    EXPECT_NEAR(j["cost_usd"]["mean"].get<double>(), burn * 24 * 365, burn * 24) << tail;
    bool stalled_line = false;
    for (const auto& item : j["cost_usd"]["waterfall"])
      stalled_line = stalled_line || item["label"] == "stalled until the window's end";
    EXPECT_TRUE(stalled_line) << j["cost_usd"]["waterfall"].dump();
    // The trial's own accounting stops where it stalls (the crash flood: no durable checkpoint between interruptions;
    // the straggler flood, counted only when drained since trial 48: the event cap after about 73 days), not at the
    // window's end.
    EXPECT_LT(j["time_accounting_days"]["wall"].get<double>(), 100.0)
        << "the trial's own accounting stops at the stall: " << j["time_accounting_days"];
  }
}

TEST(RunCommand, AnOutDirectoryThatCannotBeCreatedIsBadInput) {
  const support::TempDir dir;
  const std::string inside_a_file = dir.write("file", "x") + "/report";
  auto o = trainsim({"run", kDefault, "--trials", "2", "--out", inside_a_file});
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find("error: " + inside_a_file + ": cannot create the report directory"), std::string::npos) << o.err;
}

TEST(RunCommand, BadTrialCountIsAUsageError) {
  EXPECT_EQ(trainsim({"run", kDefault, "--trials", "0"}).code, kExitBadInput);
}

/// The run JSON's value at a dotted path of the checkpoint or time-to-train objects.
double number_at(const std::string& json, const std::string& object, const std::string& key) {
  const auto j = nlohmann::json::parse(json);
  return j.at(object).at(key).get<double>();
}

TEST(RunCommand, AGivenIntervalIsComparedWithDalysOptimumAndTheClosedFormMatchesTheSimulation) {
  // The default scenario (70B on 1,024 H100, asynchronous checkpoints blocking 0.21 s, job MTBF 28.9 h): Daly's
  // optimum is 3.5 min. Checkpointing every 3 h instead loses half an interval of work per interruption; Daly's closed
  // form puts the expected wall time 5.2% above the optimum's, and the Monte Carlo's mean time to train agrees within
  // a percentage point. Under "auto" the interval is the optimum and the summary prints no optimum line.
  auto fixed =
      trainsim({"run", kDefault, "--trials", "200", "--json", "--set", R"(reliability.checkpoint.interval="3 h")"});
  auto daly = trainsim({"run", kDefault, "--trials", "200", "--json"});
  ASSERT_EQ(fixed.code, kExitOk) << fixed.err;
  ASSERT_EQ(daly.code, kExitOk) << daly.err;
  const double closed = number_at(fixed.out, "checkpoint", "wall_vs_optimum");
  const double simulated =
      number_at(fixed.out, "time_to_train_days", "mean") / number_at(daly.out, "time_to_train_days", "mean") - 1;
  EXPECT_GT(closed, 0.03);
  EXPECT_NEAR(closed, simulated, 0.01) << "closed form " << closed << ", simulated " << simulated;
  EXPECT_NEAR(number_at(fixed.out, "checkpoint", "optimum_interval_s"), number_at(daly.out, "checkpoint", "interval_s"),
              0.05 * number_at(daly.out, "checkpoint", "interval_s"));
  EXPECT_NEAR(number_at(daly.out, "checkpoint", "wall_vs_optimum"), 0.0, 0.002);
  auto text = trainsim({"run", kDefault, "--trials", "20", "--set", R"(reliability.checkpoint.interval="3 h")"});
  EXPECT_NE(text.out.find("  optimum       3.5 min (Daly 2006"), std::string::npos) << text.out;
  EXPECT_EQ(trainsim({"run", kDefault, "--trials", "20"}).out.find("  optimum  "), std::string::npos);
}

TEST(RunCommand, TheReportRecordsTheTrialsAndSeedItRan) {
  // --trials and --seed are the run's: the report's effective configuration (and so its hash) says so, as its
  // provenance and result.json do.
  const support::TempDir dir;
  const std::string out = (dir.path() / "r").string();
  ASSERT_EQ(trainsim({"run", kDefault, "--trials", "7", "--seed", "9", "--out", out, "-q"}).code, kExitOk);
  std::ifstream f(out + "/report.html");
  std::stringstream html;
  html << f.rdbuf();
  const std::string page = html.str();
  const auto config = page.substr(page.find("id=\"effective-config\""));
  EXPECT_NE(config.find("&quot;trials&quot;: 7"), std::string::npos) << config.substr(0, 2000);
  EXPECT_NE(config.find("&quot;seed&quot;: 9"), std::string::npos) << config.substr(0, 2000);
  EXPECT_NE(page.find("7 trials"), std::string::npos);
}

TEST(RunCommand, TheReportsHashesChangeWithEveryKeyAndNameTheOverrides) {
  // Found by a user trial: checkpoint, restart, deadline and budget settings that moved p50 by days and flipped the
  // recommendation left the effective configuration's hash unchanged, and the --set overrides were recorded nowhere.
  const support::TempDir dir;
  auto hash_of = [&](const std::string& name, const std::vector<std::string>& sets) {
    std::vector<std::string> args = {"run", kDefault, "--trials", "3", "--out", (dir.path() / name).string(), "-q"};
    for (const auto& set : sets) {
      args.push_back("--set");
      args.push_back(set);
    }
    EXPECT_EQ(trainsim(args).code, kExitOk);
    std::ifstream f(dir.path() / name / "summary.md");
    std::stringstream md;
    md << f.rdbuf();
    const std::string text = md.str();
    const auto at = text.find("effective configuration");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  const std::string plain = hash_of("plain", {});
  ASSERT_FALSE(plain.empty());
  EXPECT_NE(hash_of("interval", {R"(reliability.checkpoint.interval="1 h")"}), plain);
  EXPECT_NE(hash_of("deadline", {R"(cost.deadline="103 d")"}), plain);
  EXPECT_EQ(hash_of("again", {}), plain) << "the same inputs, the same hash";
  std::ifstream f(dir.path() / "interval" / "report.html");
  std::stringstream html;
  html << f.rdbuf();
  EXPECT_NE(html.str().find(R"(reliability.checkpoint.interval=\&quot;1 h\&quot;)"), std::string::npos);
  EXPECT_NE(html.str().find("document_sha256"), std::string::npos);
}

TEST(RunCommand, TheCauseTableSumsToTheRun) {
  // Eight causes are listed by name, the rest in one row, so that the column adds up to the run's interruptions.
  const auto o = trainsim({"run", kDefault, "--trials", "20", "--set", "training.tokens=\"60T\""});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find(" other causes "), std::string::npos) << o.out;
}

TEST(RunCommand, TheRiskLinesNameTheDeadlineAndBudgetTheyAreAbout) {
  // The default scenario sets cost.deadline "200 d" and cost.budget "12M USD": a probability says of what.
  const auto o = trainsim({"run", kDefault, "--trials", "20"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("chance of missing it (200.0 d, cost.deadline)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("chance of exceeding it (12.00M USD, cost.budget)"), std::string::npos) << o.out;
}

TEST(RunCommand, ADeadlineOrBudgetPastTheHorizonIsJudgedOnFinishedTrials) {
  // A user trial: a job failing every 5 minutes with 5-minute synchronous writes, 1B tokens (failure-free 0.02 d), was
  // cut off at 100 x that (1.95 d) and its unfinished trials counted as missing a 10-day deadline and a 1M USD budget
  // (6.5% each), where every trial finishes within 0.1 d of progress per day. The horizon now reaches past both.
  support::TempDir dir;
  const auto path = dir.write("never.json", R"({"schema": "trainsim.scenario/1", "name": "never",
    "model": "llama3-8b", "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 64, "gpus_per_node": 8},
    "parallel": {"tp": 2, "pp": 1, "dp": 32, "zero_stage": 1, "sequence_parallel": true, "micro_batch": 1,
                 "global_batch": 128},
    "training": {"seq_len": 8192, "tokens": "1B", "dtype": "bf16"},
    "reliability": {"failures": {"components": [{"name": "jobfail", "scope": "job", "mtbf": "5 min",
                                                 "effect": "crash", "repair": "0 h"}]},
                    "checkpoint": {"interval": "auto", "write": "5 min", "async": false}, "restart": "10 min"},
    "cost": {"gpu_hour": "2 USD", "deadline": "10 d", "budget": "1M USD"}})");
  const Outcome o = trainsim({"run", path, "--trials", "200", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j.at("never_finished").at("trials").get<int>(), 0) << o.out.substr(0, 2000);
  EXPECT_DOUBLE_EQ(j.at("p_deadline_miss").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j.at("p_budget_overrun").get<double>(), 0.0);
}

TEST(RunCommand, AnIntervalInStepsCheckpointsEveryThatManySteps) {
  // "1000 steps" (a launch script's --save-interval): the interval is 1,000 healthy steps, whatever their length.
  auto o = trainsim(
      {"run", kDefault, "--trials", "20", "--json", "--set", R"(reliability.checkpoint.interval="1000 steps")"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_EQ(number_at(o.out, "checkpoint", "interval_steps"), 1000.0);
  const auto j = nlohmann::json::parse(o.out);
  const double step_s = j.at("step").at("step_time_s").get<double>();
  EXPECT_NEAR(number_at(o.out, "checkpoint", "interval_s"), 1000 * step_s, 1e-6 * 1000 * step_s);
  auto text = trainsim({"run", kDefault, "--trials", "20", "--set", R"(reliability.checkpoint.interval="1 step")"});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("(fixed, 1 step)"), std::string::npos) << text.out;
  // Zero steps, a count with another unit, a count beyond a billion: bad input naming the key.
  for (const char* bad : {R"("0 steps")", R"("1000 stepz")", R"("99999999999 steps")", R"(1000)"}) {
    auto r =
        trainsim({"run", kDefault, "--trials", "2", "--set", std::string("reliability.checkpoint.interval=") + bad});
    EXPECT_EQ(r.code, kExitBadInput) << bad;
    EXPECT_NE(r.err.find("interval"), std::string::npos) << bad << ": " << r.err;
  }
}

// An interval longer than the run takes no checkpoint: said, and Daly's closed form (periodic checkpoints in an
// unbounded run), which gave "1.613e+210% longer" for 1000 days, is not applied (null in the JSON). A tester's trial.
TEST(RunCommand, AnIntervalLongerThanTheRunTakesNoCheckpointAndSaysSo) {
  for (const char* interval :
       {"reliability.checkpoint.interval=1000 d", "reliability.checkpoint.interval=1000000000 steps"}) {
    auto o = trainsim({"run", kDefault, "--trials", "2", "--set", interval});
    ASSERT_EQ(o.code, kExitOk) << o.err;
    EXPECT_NE(o.out.find("  no checkpoint the interval is longer than the run's"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("% longer"), std::string::npos) << o.out;
    auto j = trainsim({"run", kDefault, "--trials", "2", "--set", interval, "--json"});
    EXPECT_TRUE(nlohmann::json::parse(j.out).at("checkpoint").at("wall_vs_optimum").is_null()) << interval;
  }
  auto given = trainsim({"run", kDefault, "--trials", "2", "--set", "reliability.checkpoint.interval=2 h"});
  EXPECT_EQ(given.out.find("no checkpoint"), std::string::npos) << given.out;
  EXPECT_NE(given.out.find("  optimum "), std::string::npos) << given.out;
}

// The summary says when a setting it was given has no effect (a metamorphic tester's findings, 2026-12-07): a
// GPU-to-host snapshot slower than the durable write leaves the write blocking (snapshot_bandwidth then changes
// nothing), and an asynchronous interval shorter than one write is raised to it. Both used to be silent.
TEST(RunCommand, ASnapshotSlowerThanTheWriteAndARaisedIntervalAreSaid) {
  auto slow =
      trainsim({"run", kDefault, "--trials", "2", "--set", "reliability.checkpoint.snapshot_bandwidth=0.2 GB/s"});
  ASSERT_EQ(slow.code, kExitOk) << slow.err;
  EXPECT_NE(slow.out.find("= the durable write, shorter than a GPU-to-host snapshot of"), std::string::npos)
      << slow.out;
  auto fast = trainsim({"run", kDefault, "--trials", "2"});
  ASSERT_EQ(fast.code, kExitOk) << fast.err;
  EXPECT_NE(fast.out.find("= a GPU-to-host snapshot of"), std::string::npos) << fast.out;
  EXPECT_EQ(fast.out.find("  raised "), std::string::npos) << fast.out;
  auto raised = trainsim({"run", kDefault, "--trials", "2", "--set", "reliability.checkpoint.interval=1 min", "--set",
                          "reliability.checkpoint.write=120 s"});
  ASSERT_EQ(raised.code, kExitOk) << raised.err;
  EXPECT_NE(raised.out.find("  raised        from the given 6 steps to one durable write"), std::string::npos)
      << raised.out;
}

}  // namespace
}  // namespace sim::cli
