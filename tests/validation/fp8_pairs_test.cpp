// The FP8 speed-up over BF16 (issue 17's acceptance: within 10% of the published ratio for each model where both are
// published): every published FP8 run whose BF16 twin (same source, model, GPU count and layout) is published too,
// the published step-time ratio beside trainsim's. Prints every pair; the count within 10% may not fall.
#include "tests/validation/evaluate.hpp"
#include "tests/validation/published_records.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

TEST(PublishedRuns, Fp8SpeedUpOverBf16) {
  const auto records = validation::load_published_records(validation::shared_validation_dir());
  std::map<std::string, const validation::Record*> by_id;
  for (const auto& r : records)
    by_id[r.id] = &r;
  int pairs = 0, within = 0, predicted = 0;
  std::printf("%-52s %10s %10s %8s\n", "FP8 run (against its BF16 twin)", "published", "trainsim", "error");
  for (const auto& r : records) {
    const std::string twin = validation::bf16_twin_id(r.id);
    const auto found = by_id.find(twin);
    if (twin.empty() || found == by_id.end()) continue;
    ++pairs;
    const auto fp8 = validation::evaluate(r);
    const auto bf16 = validation::evaluate(*found->second);
    if (!fp8.predicted || !bf16.predicted) {
      std::printf("%-52s %10s %10s %8s  (%s)\n", r.id.c_str(), "-", "-", "miss",
                  (fp8.predicted ? bf16.miss : fp8.miss).c_str());
      continue;
    }
    ++predicted;
    const double published = found->second->reference_step_s / r.reference_step_s;
    const double model = bf16.predicted_step_s / fp8.predicted_step_s;
    const double err = model / published - 1;
    within += std::fabs(err) <= 0.10 ? 1 : 0;
    std::printf("%-52s %10.3f %10.3f %+7.1f%%\n", r.id.c_str(), published, model, 100 * err);
  }
  std::printf("%d pairs, %d predicted, %d within 10%% of the published speed-up\n", pairs, predicted, within);
  EXPECT_GE(pairs, 17) << "DGX Cloud's 8B, 70B and 405B at every GPU count, TorchTitan's and the ModelZoo's";
  // 24 once DGX Cloud's 405B BF16 row on 512 GPUs fitted (2026-12-03, second round); 23 since TorchTitan's async-TP
  // rows run PyTorch's async TP and Hopper's gemm_fp8 was refitted with them (0.601 -> 0.585; its 70B FP8 tensorwise
  // async pair went from within 10% to -10.8%, docs/validation.md); 24 again since Hopper's attention runs at the
  // GEMMs' training-loop fraction of its isolated rate (efficiency.gemm_isolated; gemm_fp8 0.585 -> 0.613); 23 since
  // 2026-12-06: the profiles' gemm_fp8 0.618 was stale (later model changes had moved the fit to 0.604 without a
  // refit; ctest validation_fit_is_current now catches that), and at the fitted 0.604 the same 70B tensorwise
  // async-TP pair is -10.3%. A change may not lower it.
  EXPECT_GE(within, 23) << "the count measured on 2026-12-06 with the fitted gemm_fp8";
}

}  // namespace
