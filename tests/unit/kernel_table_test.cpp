// The kernel table (`trainsim step --kernels`, sim/execution/kernel_table.hpp): its rows are the step plan's own
// timings, so a stage's pass is the sum of its layers' rows; the CLI prints them and refuses what does not combine.
#include "sim/base/json_reader.hpp"
#include "sim/cli/app.hpp"
#include "sim/execution/kernel_table.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"
#include "tests/support/cli.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace sim {
namespace {

using execution::KernelRow;

base::Time exposed(const std::vector<KernelRow>& rows, const std::string& part, const std::string& pass) {
  base::Time t;
  for (const auto& r : rows)
    if (r.part == part && r.pass == pass) t += r.exposed;
  return t;
}

// The default scenario (Llama 3 70B, TP8 PP4, 80 layers: 20 a stage, no recomputation): pipeline stage 1 holds only
// transformer layers, so its forward is 20 x the layer's forward rows, and its backward 20 x (input + weight
// gradient rows); stage 0 adds the embedding.
TEST(KernelTable, AStagesPassesAreItsLayersRows) {
  const auto s = scenario::load_default_scenario();
  const auto inputs = std::get<execution::StepInputs>(scenario::step_setup(s));
  const auto plan = execution::build_step_plan(inputs);
  const auto rows = execution::kernel_table(inputs);
  ASSERT_EQ(plan.stages.size(), 4u);
  const auto& mid = *plan.stages[1];
  ASSERT_EQ(mid.layers, 20);
  EXPECT_EQ(mid.forward.total().ns, 20 * exposed(rows, "layer", "forward").ns);
  // Less the compute the gradient buckets' reductions slow (a stage's, not a layer's).
  base::Time beside;
  for (const auto& seg : mid.backward.segments)
    if (plan.labels[seg.label] == "compute beside a collective") beside += seg.duration;
  EXPECT_GT(beside, base::Time::zero()) << "data parallelism 32 reduces gradients beside the last backward";
  // The default recomputes selectively (core attention): its forward runs again before each layer's backward.
  EXPECT_GT(exposed(rows, "layer", "recompute"), base::Time::zero());
  EXPECT_EQ(
      (mid.backward.total() - beside).ns,
      20 * (exposed(rows, "layer", "recompute") + exposed(rows, "layer", "backward") + exposed(rows, "layer", "wgrad"))
               .ns);
  const auto& first = *plan.stages[0];
  EXPECT_EQ(first.forward.total().ns,
            20 * exposed(rows, "layer", "forward").ns + exposed(rows, "embedding", "forward").ns);

  // Every GEMM row carries its shape and 2mnk FLOPs; collectives their group.
  int gemms = 0, collectives = 0;
  for (const auto& r : rows) {
    if (r.kind == "gemm") {
      ++gemms;
      EXPECT_DOUBLE_EQ(r.flops, 2 * r.m * r.n * r.k * r.batch) << r.name;
      EXPECT_GT(r.time.ns, 0) << r.name;
    }
    if (r.group > 0) {
      ++collectives;
      EXPECT_EQ(r.group, 8) << r.name << ": the tensor-parallel group";
      EXPECT_GT(r.bytes, 0) << r.name;
    }
  }
  EXPECT_EQ(gemms, 4 * 3 + 3) << "QKV, output projection, MLP up and down, each forward, dgrad and wgrad; the logits";
  EXPECT_GT(collectives, 0);
}

TEST(KernelTable, ContextParallelRingIsExposedAsTheStepTimesIt) {
  // cp_comm_type "p2p" (the default) runs the key/value ring beside the attention it feeds: the table's exposed column
  // is what the step pays, so a stage's forward is still its layers' rows. A user trial found the ring all exposed
  // here while the step hid it (107 us per layer shown, 0 paid); "all_gather" keeps it exposed in both.
  for (const char* type : {"p2p", "all_gather"}) {
    const auto s =
        scenario::load_default_scenario({{"parallel.cp", "2"}, {"parallel.dp", "16"}, {"parallel.cp_comm_type", type}});
    const auto inputs = std::get<execution::StepInputs>(scenario::step_setup(s));
    const auto plan = execution::build_step_plan(inputs);
    const auto rows = execution::kernel_table(inputs);
    const auto& mid = *plan.stages[1];
    EXPECT_EQ(mid.forward.total().ns, mid.layers * exposed(rows, "layer", "forward").ns) << type;
    int ring = 0;
    for (const auto& r : rows)
      if (r.name == "cp_kv" && r.pass == std::string("forward")) {
        ++ring;
        EXPECT_GT(r.time, base::Time::zero());
        if (std::string(type) == "p2p")
          EXPECT_LT(r.exposed, r.time) << "hidden, at least in part, by the attention beside it";
        else
          EXPECT_EQ(r.exposed, r.time);
      }
    EXPECT_EQ(ring, 1) << type;
  }
}

// A vocabulary tp does not divide is padded as Megatron-LM pads it (a multiple of 128 x tp): GPT-3's 50,257 over TP 4
// is a logits GEMM of 12,672 columns per rank (it was 12,564.25, vocab / tp); one tp divides keeps its size.
TEST(KernelTable, TheLogitsRunOnMegatronsPaddedVocabularySlice) {
  for (const auto& [model, tp, dp, columns] :
       {std::tuple{"gpt3-175b", "4", "64", 12672.0}, std::tuple{"llama3-70b", "8", "32", 16032.0}}) {
    const auto s = scenario::load_default_scenario({{"model", std::string("\"") + model + "\""},
                                                    {"parallel.tp", tp},
                                                    {"parallel.pp", "4"},
                                                    {"parallel.dp", dp},
                                                    {"training.seq_len", "2048"}});
    const auto rows = execution::kernel_table(std::get<execution::StepInputs>(scenario::step_setup(s)));
    int logits = 0;
    for (const auto& r : rows)
      if (r.name == "logits" && r.pass == std::string("forward")) {
        ++logits;
        EXPECT_DOUBLE_EQ(r.n, columns) << model;
      }
    EXPECT_EQ(logits, 1) << model;
  }
}

TEST(KernelTable, CliPrintsTheTableOrItsJson) {
  auto text = support::trainsim({"step", support::kDefaultScenario, "--kernels"});
  ASSERT_EQ(text.code, cli::kExitOk) << text.err;
  EXPECT_NE(text.out.find("mlp_up"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("TFLOP/s"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("layer forward"), std::string::npos) << "the totals per part and pass: " << text.out;
  // An attention call's shape (queries x keys x head dimension x batch x heads): its rate depends on the length.
  EXPECT_NE(text.out.find("8192 x 8192 x 128 x8"), std::string::npos) << text.out;

  auto json = support::trainsim({"step", support::kDefaultScenario, "--kernels", "--json"});
  ASSERT_EQ(json.code, cli::kExitOk) << json.err;
  auto doc = base::JsonDocument::parse_text(json.out, "stdout");
  base::Diagnostics diag("stdout");
  auto root = doc.root(diag);
  std::string schema;
  root.required("schema", schema);
  EXPECT_EQ(schema, "trainsim.kernels/1");
  EXPECT_NE(json.out.find("\"exposed_s\""), std::string::npos);
  EXPECT_NE(json.out.find("\"kind\": \"attention\",\n      \"m\": 8192.0,"), std::string::npos) << json.out;

  auto both = support::trainsim({"step", support::kDefaultScenario, "--kernels", "--explain"});
  EXPECT_EQ(both.code, cli::kExitBadInput) << both.out;
  EXPECT_NE(both.err.find("--kernels"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace sim
