// Validation of the planner (issue 6) on Megatron-LM SC21 Table 1: given only the model, the GPU count and the global
// batch of each row, the planner's best configuration must be predicted at least as fast as the published
// configuration (within 3%), both at replica fidelity. Prints the comparison.
#include "sim/base/json_reader.hpp"
#include "sim/planner/planner.hpp"
#include "sim/scenario/plan_setup.hpp"
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace {

struct Row {
  std::string id;
  std::string scenario;
  double published_s = 0;
};

/// The SC21 Table 1 rows of tests/validation/published_runs.json.
std::vector<Row> sc21_rows() {
  const auto doc =
      sim::base::JsonDocument::parse_file(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/published_runs.json");
  sim::base::Diagnostics diag(doc.origin());
  auto root = doc.root(diag);
  root.accept("description");
  root.accept("tolerance");
  std::vector<Row> out;
  for (auto& r : root.object_array("runs", true)) {
    Row row;
    r.required("id", row.id);
    r.required("scenario", row.scenario);
    r.required("published_step_time_s", row.published_s, sim::base::Range::positive());
    for (const char* k : {"how", "source", "measured"})
      r.accept(k);
    r.finish();
    if (row.id.starts_with("megatron_sc21_t1_")) out.push_back(row);
  }
  root.finish();
  diag.throw_if_any();
  return out;
}

std::string short_config(const sim::planner::Candidate& c) {
  const auto& L = c.layout;
  char buf[160];
  std::snprintf(buf, sizeof buf, "tp%d pp%d vpp%d cp%d dp%d mb%d %s %s%s", L.tp, L.pp, L.vpp, L.cp, L.dp, L.micro_batch,
                sim::parallel::to_string(c.parallel.recompute), sim::parallel::to_string(c.parallel.schedule),
                c.parallel.sequence_parallel ? " sp" : "");
  return buf;
}

TEST(PlannerValidation, Sc21BestIsAtLeastAsFastAsThePublishedConfiguration) {
  const auto rows = sc21_rows();
  ASSERT_EQ(rows.size(), 10u);
  std::printf("%-34s %5s %10s %10s %10s %7s  %s\n", "SC21 Table 1 row", "GPUs", "published", "pub.conf", "planned",
              "ratio", "planned configuration (replica fidelity; seconds per iteration)");
  for (const auto& row : rows) {
    // The published configuration, predicted.
    const auto published = support::load_step(row.scenario);
    const double predicted = support::run_step(published, sim::execution::Fidelity::Replica).step_time.seconds();
    // The planner, given only the model, the GPUs and the global batch: the scenario's parallel section replaced.
    const auto s = sim::scenario::load_scenario(
        std::string(TRAINSIM_SOURCE_DIR) + "/" + row.scenario,
        {{"parallel", "{\"global_batch\": " + std::to_string(published.scenario.parallel.global_batch) + "}"}});
    ASSERT_EQ(s.parallel_fixed, std::vector<std::string>{"global_batch"});
    sim::planner::PlanOptions opt;
    opt.threads = 0;  // every core: the result does not depend on it
    const auto r = sim::planner::plan(sim::scenario::plan_problem(s, opt, /*with_run_level=*/false), opt);
    ASSERT_FALSE(r.candidates.empty()) << row.id;
    const auto& best = r.candidates.front();
    const double planned = best.step.step_time.seconds();
    std::printf("%-34s %5d %10.2f %10.2f %10.2f %7.3f  %s\n", row.id.c_str(), best.gpus, row.published_s, predicted,
                planned, planned / predicted, short_config(best).c_str());
    EXPECT_LE(planned, 1.03 * predicted) << row.id << ": the planner's best " << short_config(best) << " predicts "
                                         << planned << " s; the published configuration " << predicted << " s";
    EXPECT_EQ(best.gpus, published.scenario.cluster.gpus);
  }
}

}  // namespace
