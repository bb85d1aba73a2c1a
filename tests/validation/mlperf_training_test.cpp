// tests/validation/mlperf_training_test.cpp: an out-of-sample check on MLPerf Training step times
// (tests/validation/mlperf_training.json: 18 submissions of GPT-3 175B and Llama 3.1 405B pre-training on H100, H200,
// B200 and GB200, each with its repository, commit, log and config, and the scenario written from the config). Not in
// the development set and not fitted: nothing here feeds trainsim-validation-fit. Written and run once (2026-12-07, a
// user trial's rows), then left as it came out; the bounds hold today's errors so that a change that moves them is
// seen, and docs/validation.md ("Out of sample: MLPerf Training") gives the table.
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <variant>

namespace {

using nlohmann::json;

TEST(OutOfSample, MlperfTrainingRowsAsPublished) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/mlperf_training.json");
  const json file = json::parse(in);
  const auto& rows = file.at("rows");
  ASSERT_EQ(rows.size(), 18u);
  double sum_abs = 0;
  std::map<std::string, std::pair<double, int>> by_gpu;  // sum of |error|, rows
  std::printf("%-26s %-7s %10s %10s %8s\n", "row", "GPU", "published", "trainsim", "error");
  for (const auto& r : rows) {
    const std::string id = r.at("id");
    const auto s = sim::scenario::load_scenario_text(r.at("scenario").dump(), id);
    auto setup = sim::scenario::step_setup(s);
    ASSERT_TRUE(std::holds_alternative<sim::execution::StepInputs>(setup)) << id << " is infeasible";
    const auto& inputs = std::get<sim::execution::StepInputs>(setup);
    const auto memory = sim::scenario::memory_gib(s, inputs.layout);
    EXPECT_LE(memory.total, memory.capacity) << id << ": a layout that ran must fit";
    sim::execution::StepOptions o;
    o.fidelity = sim::execution::Fidelity::Replica;
    const double predicted =
        sim::execution::simulate_step(sim::execution::build_step_plan(inputs), o).step_time.seconds();
    const double published = r.at("published_step_s");
    const double err = predicted / published - 1;
    const std::string gpu = r.at("gpu");
    std::printf("%-26s %-7s %9.3fs %9.3fs %+7.1f%%\n", id.c_str(), gpu.c_str(), published, predicted, 100 * err);
    sum_abs += std::fabs(err);
    by_gpu[gpu].first += std::fabs(err);
    ++by_gpu[gpu].second;
    // Measured 2026-12-07: every row within 13.3% (GB200's 405B rows 10-13% fast, B200's GPT-3 preview 10% slow).
    EXPECT_LT(std::fabs(err), 0.15) << id;
  }
  for (const auto& [gpu, v] : by_gpu)
    std::printf("  %-7s %2d rows, mean |error| %.1f%%\n", gpu.c_str(), v.second, 100 * v.first / v.second);
  const double mape = sum_abs / static_cast<double>(rows.size());
  std::printf("MLPerf Training, %zu rows: MAPE %.1f%%\n", rows.size(), 100 * mape);
  // Measured 2026-12-07: 5.2% over the 18 rows (4.8% over the 17 without v5.1's NVFP4 run).
  EXPECT_LT(mape, 0.06);
}

}  // namespace
