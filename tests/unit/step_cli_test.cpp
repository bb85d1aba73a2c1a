// `trainsim step` end to end: the JSON contract, infeasible configurations named by rule with exit code 3, and a
// trace that opens as Trace Event Format JSON and shows the 1F1B pattern.
#include "sim/base/json_reader.hpp"
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <sstream>

namespace sim::cli {
namespace {

using support::trainsim;
using Outcome = support::CliOutcome;

const std::string& kDefault = support::kDefaultScenario;

TEST(StepCommand, JsonFollowsTheContract) {
  auto o = trainsim({"step", kDefault, "--json", "--fidelity", "analytic"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  auto doc = base::JsonDocument::parse_text(o.out, "stdout");
  base::Diagnostics diag("stdout");
  auto r = doc.root(diag);
  std::string schema;
  r.required("schema", schema);
  EXPECT_EQ(schema, "trainsim.step/1");
  double v = 0;
  for (const char* k : {"step_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "hfu"}) {
    EXPECT_TRUE(r.required(k, v, base::Range::positive())) << k;
  }
  auto b = r.required_object("breakdown_s");
  for (const char* k :
       {"compute", "tp_exposed", "pp_bubble", "pp_exposed", "dp_exposed", "cp_exposed", "ep_exposed", "optimizer"})
    EXPECT_TRUE(b->required(k, v, base::Range::at_least(0))) << k;
  auto m = r.required_object("memory_gib");
  for (const char* k : {"params", "grads", "optimizer", "activations", "total", "capacity"})
    EXPECT_TRUE(m->required(k, v, base::Range::positive())) << k;
  bool fits = false;
  EXPECT_TRUE(r.required("fits", fits));
  EXPECT_TRUE(fits);
  EXPECT_TRUE(diag.empty()) << diag.items().front().to_string();
}

// A scenario without dp (derived), so that each --set below breaks exactly the rule under test.
const char* kBase = R"({
  "schema": "trainsim.scenario/1", "name": "rules", "model": "llama3-70b", "hardware": "h100-sxm5-80gb",
  "cluster": { "gpus": 1024 },
  "parallel": { "tp": 8, "pp": 4, "sequence_parallel": true, "zero_stage": 1, "recompute": "selective",
                "micro_batch": 1, "global_batch": 1024 },
  "training": { "seq_len": 8192, "tokens": "15T" } })";

struct RuleCase {
  const char* rule;
  std::vector<std::string> sets;
};

class InfeasibleStep : public ::testing::TestWithParam<RuleCase> {};

TEST_P(InfeasibleStep, ExitsThreeNamingTheRule) {
  support::TempDir dir;
  std::vector<std::string> args{"step", dir.write("s.json", kBase)};
  for (const auto& s : GetParam().sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  auto o = trainsim(args);
  EXPECT_EQ(o.code, kExitInfeasible) << o.err;
  EXPECT_NE(o.err.find(std::string("[") + GetParam().rule + "]"), std::string::npos) << o.err;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, InfeasibleStep,
    ::testing::Values(RuleCase{"heads-tp", {"parallel.tp=3", "cluster.gpus=768"}},
                      RuleCase{"world-size-divisibility", {"parallel.pp=3"}},
                      RuleCase{"layers-stages",
                               {"parallel.pp=16", "parallel.global_batch=1024", "parallel.tp=8", "parallel.vpp=3",
                                "parallel.schedule=\"interleaved\""}},
                      RuleCase{"global-batch-divisibility", {"parallel.global_batch=1000"}},
                      RuleCase{"micro-batches-pp", {"parallel.micro_batch=16", "parallel.schedule=\"zb-h1\""}},
                      RuleCase{"layer-passes", {"parallel.global_batch=1000000000"}},
                      RuleCase{"layers-per-stage-sum", {"parallel.layers_per_stage=[20,20,20,19]"}},
                      RuleCase{"empty-stage", {"parallel.layers_per_stage=[40,40,0,0]"}},
                      RuleCase{"ep-dense-model", {"parallel.ep=2"}},
                      RuleCase{"seq-cp", {"parallel.cp=2", "training.seq_len=8190"}},
                      RuleCase{"pipeline-split-accounting", {"parallel.account_for_embedding_in_pipeline_split=true"}},
                      RuleCase{"vpp-needs-interleaved", {"parallel.vpp=2", "parallel.schedule=\"gpipe\""}},
                      RuleCase{
                          "experts-ep",
                          {"model=\"mixtral-8x7b\"", "parallel.ep=3", "cluster.gpus=3072", "training.seq_len=4096"}}),
    [](const auto& param_info) {
      std::string n = param_info.param.rule;
      for (auto& c : n)
        if (c == '-') c = '_';
      return n;
    });

TEST(InfeasibleStep, OutOfMemoryExitsThreeWithTheNumbers) {
  auto o = trainsim({"step", kDefault, "--set", "parallel.tp=1", "--set", "parallel.pp=1", "--set", "parallel.dp=1024",
                     "--fidelity", "analytic"});
  EXPECT_EQ(o.code, kExitInfeasible) << o.err;
  EXPECT_NE(o.out.find("DOES NOT FIT"), std::string::npos) << o.out;
}

/// The trace as (pid -> ordered compute-stream span names).
std::map<int, std::vector<std::string>> compute_spans(const std::string& path) {
  auto doc = base::JsonDocument::parse_file(path);
  base::Diagnostics diag(path);
  auto root = doc.root(diag);
  root.accept("displayTimeUnit");
  root.accept("otherData");
  std::map<int, std::vector<std::string>> out;
  for (auto& e : root.object_array("traceEvents", true)) {
    std::string ph, name, cat;
    int pid = -1, tid = -1;
    double ts = 0, dur = 0;
    e.required_enum("ph", ph, {"M", "X"});
    e.required("name", name);
    e.required("pid", pid, base::Range::at_least(0));
    if (ph == "M") {
      e.optional("tid", tid);
      e.required_object("args");
      e.finish();
      continue;
    }
    e.required("tid", tid, base::Range::between(0, 5));
    e.required("cat", cat);
    e.required("ts", ts, base::Range::at_least(0));
    e.required("dur", dur, base::Range::positive());
    e.finish();
    if (tid == 0) out[pid].push_back(name);
  }
  diag.throw_if_any();
  return out;
}

TEST(StepTrace, DefaultScenarioShowsOneFOneBOnFirstAndLastStage) {
  support::TempDir dir;
  const std::string path = (dir.path() / "trace.json").string();
  auto o = trainsim({"step", kDefault, "--trace", path});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto spans = compute_spans(path);
  // Default placement tp-cp-dp-pp: pipeline rank r starts at GPU r * tp * cp * dp = r * 256.
  ASSERT_TRUE(spans.contains(0) && spans.contains(768));
  const auto& first = spans.at(0);
  const auto& last = spans.at(768);
  const int p = 4, m = 32;
  ASSERT_EQ(first.size(), 2u * m);
  // First stage: p - 1 warm-up forwards, then 1F1B pairs, then p - 1 cool-down backwards.
  for (int i = 0; i < p - 1; ++i)
    EXPECT_EQ(first[static_cast<std::size_t>(i)], "F" + std::to_string(i));
  EXPECT_EQ(first[3], "F3");
  EXPECT_EQ(first[4], "B0");
  EXPECT_EQ(first[5], "F4");
  for (int i = 0; i < p - 1; ++i)
    EXPECT_EQ(first[first.size() - 1 - static_cast<std::size_t>(i)], "B" + std::to_string(m - 1 - i));
  // Last stage: no warm-up, strict alternation.
  for (int i = 0; i < m; ++i) {
    EXPECT_EQ(last[2 * static_cast<std::size_t>(i)], "F" + std::to_string(i));
    EXPECT_EQ(last[2 * static_cast<std::size_t>(i) + 1], "B" + std::to_string(i));
  }
}

TEST(StepCommand, AFullFidelityStepShowsItsProgress) {
  // It showed nothing for up to 11 s (131,072 GPUs); a user trial took it for a hang.
  const auto shown = trainsim({"step", kDefault, "--fidelity", "full", "--progress", "always"});
  ASSERT_EQ(shown.code, kExitOk) << shown.err;
  EXPECT_NE(shown.err.find("100/100 % of the step (estimated)"), std::string::npos) << shown.err;
  const auto quiet = trainsim({"step", kDefault, "--fidelity", "full", "--progress", "never"});
  EXPECT_EQ(quiet.err.find("% of the step"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.out, shown.out) << "the same step either way";
}

TEST(StepCommand, NamesALayerGroupThatCrossesAnNvlinkDomain) {
  // Mixtral on 128 GB200s, TP 2 EP 8 PP 4: 72-GPU domains filled one after another split pipeline rank 2's first EP
  // group (GPUs 64-78); 64 GPUs per domain keep every group inside one. Said on stderr; --quiet says nothing.
  const std::string moe = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/mixtral-8x7b-256-h100.json";
  const std::vector<std::string> gb200 = {"--set", "hardware=\"gb200-nvl72\"",
                                          "--set", "cluster.gpus=128",
                                          "--set", "cluster.gpus_per_node=4",
                                          "--set", "parallel.tp=2",
                                          "--set", "parallel.pp=4",
                                          "--set", "parallel.ep=8",
                                          "--set", "parallel.dp=16",
                                          "--set", "parallel.vpp=1",
                                          "--set", "parallel.global_batch=256",
                                          "--set", "training.moe_imbalance=1"};
  auto step = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"step", moe, "--fidelity", "analytic"};
    args.insert(args.end(), gb200.begin(), gb200.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return trainsim(args);
  };
  const auto across = step({});
  ASSERT_EQ(across.code, kExitOk) << across.err;
  EXPECT_NE(across.err.find("note: pipeline rank 2's expert-parallel group (GPUs 64-78) spans 2 NVLink domains of 72"),
            std::string::npos)
      << across.err;
  EXPECT_NE(across.err.find("cluster.nvlink_domain"), std::string::npos);
  const auto inside = step({"--set", "cluster.nvlink_domain=64"});
  ASSERT_EQ(inside.code, kExitOk) << inside.err;
  EXPECT_EQ(inside.err.find("NVLink domains"), std::string::npos) << inside.err;
  const auto quiet = step({"--quiet"});
  EXPECT_EQ(quiet.err.find("NVLink domains"), std::string::npos) << quiet.err;
}

TEST(StepCommand, SaysWhereADataParallelGroupLiesUnevenlyOverNvlinkDomains) {
  // Qwen3-32B on 256 GB200s, TP 8: 256 GPUs fill 72-GPU domains 72/72/72/40, so each data-parallel group of 32 lies
  // 9/9/9/5 and crosses the domains over 5 rails. With 64 GPUs of each domain, 8/8/8/8: no note, a faster step. On 288
  // GPUs (9 in each of 4 whole domains) or with --quiet: no note.
  auto step = [](const char* gpus, std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "step",  kDefault,
        "--set", "model=\"qwen3-32b\"",
        "--set", "hardware=\"gb200-nvl72\"",
        "--set", std::string("cluster.gpus=") + gpus,
        "--set", "cluster.gpus_per_node=4",
        "--set", "parallel.tp=8",
        "--set", "parallel.pp=1",
        "--set", std::string("parallel.dp=") + std::to_string(std::atoi(gpus) / 8),
        "--set", std::string("parallel.global_batch=") + std::to_string(std::atoi(gpus) / 4),
        "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return trainsim(args);
  };
  const auto uneven = step("256", {});
  ASSERT_EQ(uneven.code, kExitOk) << uneven.err;
  EXPECT_NE(uneven.err.find("note: pipeline rank 0's data-parallel group (32 GPUs) lies 9/9/9/5 over 4 NVLink domains "
                            "of 72 GPUs: NCCL's rings cross the domains over 5 rails"),
            std::string::npos)
      << uneven.err;
  EXPECT_NE(uneven.err.find("cluster.nvlink_domain 64 (the job taking 64 GPUs of each domain) spreads it evenly"),
            std::string::npos)
      << uneven.err;
  const auto even = step("256", {"--set", "cluster.nvlink_domain=64"});
  ASSERT_EQ(even.code, kExitOk) << even.err;
  EXPECT_EQ(even.err.find("data-parallel group"), std::string::npos) << even.err;
  auto step_time = [](const Outcome& o) {
    auto doc = base::JsonDocument::parse_text(o.out, "stdout");
    base::Diagnostics diag("stdout");
    double v = 0;
    doc.root(diag).required("step_time_s", v, base::Range::positive());
    return v;
  };
  EXPECT_LT(step_time(even), step_time(uneven));
  const auto whole = step("288", {});
  ASSERT_EQ(whole.code, kExitOk) << whole.err;
  EXPECT_EQ(whole.err.find("data-parallel group"), std::string::npos) << whole.err;
  EXPECT_EQ(step("256", {"--quiet"}).err.find("data-parallel group"), std::string::npos);
}

TEST(StepCommand, SaysNothingOfGroupsSpreadWiderThanANodeByTheirLayout) {
  // The Mixtral example on 8-GPU H100 nodes: TP 2 beside EP 8 puts each expert group on every second GPU of two nodes
  // (GPUs 0-14). Its all-to-alls cross the network wherever the job is placed; no cluster.nvlink_domain keeps them
  // inside a node, so the boundary note (and its advice) does not apply.
  const std::string moe = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/mixtral-8x7b-256-h100.json";
  const auto r = trainsim({"step", moe, "--fidelity", "analytic", "--set", "training.moe_imbalance=1"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err.find("NVLink domains"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cluster.nvlink_domain"), std::string::npos) << r.err;
}

TEST(StepCommand, SaysWhenAModelWithExpertsIsTimedWithBalancedRouting) {
  // The CI Mixtral scenario states no training.moe_imbalance: balanced routing, said on stderr (stdout's table and JSON
  // keep their contract); stated, or a dense model, or --quiet: no note.
  const std::string moe = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/mixtral-8x7b-32-h100-ep.json";
  const auto balanced = trainsim({"step", moe, "--fidelity", "analytic"});
  ASSERT_EQ(balanced.code, kExitOk) << balanced.err;
  EXPECT_NE(balanced.err.find("note: MoE routing is taken as balanced"), std::string::npos) << balanced.err;
  EXPECT_NE(balanced.err.find("training.moe_imbalance"), std::string::npos);
  const auto json = trainsim({"step", moe, "--fidelity", "analytic", "--json"});
  EXPECT_NE(json.err.find("note: MoE routing"), std::string::npos);
  EXPECT_EQ(json.out.find("note"), std::string::npos) << "stdout stays the JSON document";
  const auto stated = trainsim({"step", moe, "--fidelity", "analytic", "--set", "training.moe_imbalance=1.5"});
  ASSERT_EQ(stated.code, kExitOk) << stated.err;
  EXPECT_EQ(stated.err.find("MoE routing"), std::string::npos) << stated.err;
  const auto quiet = trainsim({"step", moe, "--fidelity", "analytic", "--quiet"});
  ASSERT_EQ(quiet.code, kExitOk) << quiet.err;
  EXPECT_EQ(quiet.err.find("MoE routing"), std::string::npos) << quiet.err;
  const auto dense = trainsim({"step", kDefault, "--fidelity", "analytic"});
  ASSERT_EQ(dense.code, kExitOk) << dense.err;
  EXPECT_EQ(dense.err.find("MoE routing"), std::string::npos) << dense.err;
}

}  // namespace
}  // namespace sim::cli
