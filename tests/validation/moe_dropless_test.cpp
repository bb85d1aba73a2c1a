// Dropless routing against forced balance (issue 17, MoE as it runs): the Megatron-MoE-ModelZoo publishes Qwen3-235B
// on 256 H100s at four sequence lengths twice, with --moe-router-force-load-balancing and without it (dropless
// routing; its model config loads a checkpoint when LOAD_PATH names one, --finetune --load, and the README does not
// say whether these runs did). trainsim cannot know a router's imbalance: training.moe_imbalance (the busiest
// expert-parallel rank's tokens over the mean) is the user's input, and its default (1) is the forced balance of the
// benchmark recipes. What this test checks is the mechanism: the imbalance slows the busiest rank's expert GEMMs and
// the all-to-all that waits on it, so the share of the step it costs falls as attention grows with the sequence. Were
// that share wrong, the imbalance each published pair implies would drift with the sequence length. One value
// explains all four pairs: the implied imbalances stay within 10% of each other (measured 2026-12-03: 1.50-1.56; a
// cost proportional to the whole step would imply 1.09-1.25). That value belongs to that router on that data; it is
// printed for users and is not a default: the validation table keeps the dropless rows at 1.
#include "tests/validation/evaluate.hpp"
#include "tests/validation/published_records.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

/// The dropless record's predicted step with training.moe_imbalance set to `imbalance` (analytic fidelity: the
/// bisection below simulates each run some twenty times).
double step_with_imbalance(const validation::Record& dropless, double imbalance) {
  validation::Record variant = dropless;
  auto scenario = nlohmann::json::parse(dropless.scenario);
  scenario["training"]["moe_imbalance"] = imbalance;
  variant.scenario = scenario.dump();
  const auto outcome = validation::Prepared(variant).predict(nullptr, sim::execution::Fidelity::Analytic);
  return outcome.predicted ? outcome.predicted_step_s : 0;
}

TEST(ModelZooDropless, OneImbalanceExplainsEverySequenceLength) {
  const auto records = validation::load_published_records(validation::shared_validation_dir());
  std::map<std::string, const validation::Record*> by_id;
  for (const auto& r : records)
    by_id[r.id] = &r;
  const std::string suffix = "_dropless";
  std::vector<double> implied;
  std::printf("%-58s %10s %10s %10s\n", "dropless run (against its forced-balance twin)", "published", "balanced",
              "implied");
  for (const auto& r : records) {
    if (r.id.size() <= suffix.size() || r.id.compare(r.id.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const auto twin = by_id.find(r.id.substr(0, r.id.size() - suffix.size()) + "_forced_balance");
    ASSERT_NE(twin, by_id.end()) << r.id << ": no forced-balance twin";
    // Published: the dropless step over the forced-balance step (both from the source's TFLOP/s, same FLOP count).
    const double published = r.reference_step_s / twin->second->reference_step_s;
    ASSERT_GT(published, 1.0) << r.id << ": dropless routing published faster than forced balance";
    const double balanced = step_with_imbalance(r, 1.0);
    ASSERT_GT(balanced, 0) << r.id << " is not predicted";
    // The imbalance at which trainsim's dropless/balanced ratio equals the published one (monotone: bisection).
    double lo = 1.0, hi = 4.0;
    ASSERT_GT(step_with_imbalance(r, hi) / balanced, published) << r.id << ": beyond an imbalance of 4";
    for (int i = 0; i < 16; ++i) {
      const double mid = 0.5 * (lo + hi);
      (step_with_imbalance(r, mid) / balanced < published ? lo : hi) = mid;
    }
    implied.push_back(0.5 * (lo + hi));
    std::printf("%-58s %10.3f %10.3f %10.3f\n", r.id.c_str(), published, balanced, implied.back());
  }
  ASSERT_EQ(implied.size(), 4u) << "the ModelZoo's long-context table: 16k, 32k, 64k and 128k";
  const auto [low, high] = std::minmax_element(implied.begin(), implied.end());
  std::printf("implied imbalance %.2f-%.2f\n", *low, *high);
  EXPECT_LE(*high / *low, 1.10) << "the imbalance cost does not follow the sequence length as published";
}

}  // namespace

namespace {

// Megatron-Core's batch-level EP overlap (parallel.ep_comm_overlap, sim/execution/ep_overlap.hpp) against the one
// published pair that differs by it alone: the ModelZoo's Qwen3-235B on 256 H100s, cfg1 (cross-node EP 32, DeepEP)
// and cfg2 (the same "+1F1B A2A overlap"). Published 19.7 s -> 17.6 s, the overlap saving 10.7% of the step.
// trainsim's two-stream replay of Megatron's launch order hides more (measured 2026-12-04: 19.03 s -> 15.43 s, 18.9%,
// with the SMs DeepEP's kernels take charged to the compute beside them): the model is an upper bound on what the
// overlap saves. The test holds the direction and the size of that gap.
TEST(ModelZooEpOverlap, TheModelledSavingBoundsThePublishedOne) {
  const auto records = validation::load_published_records(validation::shared_validation_dir());
  const validation::Record *off = nullptr, *on = nullptr;
  for (const auto& r : records) {
    if (r.id == "modelzoo_qwen3_235b_h100_256gpu_cfg1") off = &r;
    if (r.id == "modelzoo_qwen3_235b_h100_256gpu_cfg2") on = &r;
  }
  ASSERT_TRUE(off != nullptr && on != nullptr);
  ASSERT_EQ(nlohmann::json::parse(on->scenario)["parallel"].value("ep_comm_overlap", false), true)
      << "the converter reads the record's \"+1F1B A2A overlap\"";
  const auto a = validation::evaluate(*off), b = validation::evaluate(*on);
  ASSERT_TRUE(a.predicted && b.predicted) << a.miss << b.miss;
  const double published = 1 - on->reference_step_s / off->reference_step_s;
  const double model = 1 - b.predicted_step_s / a.predicted_step_s;
  std::printf("EP overlap saves %.1f%% of the step (published %.1f%%): %.3f s -> %.3f s (published %.1f -> %.1f)\n",
              100 * model, 100 * published, a.predicted_step_s, b.predicted_step_s, off->reference_step_s,
              on->reference_step_s);
  EXPECT_GT(model, published) << "an upper bound";
  EXPECT_LT(model, 2 * published) << "and within twice the published saving";
}

}  // namespace
