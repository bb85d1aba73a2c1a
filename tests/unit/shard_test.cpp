// Sharded Monte Carlo (issue 9): slices of a run computed apart, written as JSON, read back and merged give the
// summary one process gives, byte for byte; gaps, overlaps and foreign shards are refused.
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/reliability/monte_carlo.hpp"
#include "sim/reliability/run_inputs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sim::reliability {
namespace {

hardware::FailureComponentSpec component(std::string name, hardware::FailureScope scope, double mtbf_h,
                                         hardware::FailureEffect effect, double repair_h) {
  hardware::FailureComponentSpec c;
  c.name = std::move(name);
  c.scope = scope;
  c.mtbf = base::Duration{mtbf_h * 3600.0};
  c.effect = effect;
  c.repair = base::Duration{repair_h * 3600.0};
  return c;
}

/// A 1,024-GPU job with crashes, hangs, silent corruption and stragglers, so every accumulator and both histograms
/// hold something.
RunInputs run() {
  RunInputs in;
  in.job = JobShape::make(1024, 8, 32);
  in.components = {
      component("gpu", hardware::FailureScope::Gpu, 24.0 * 365 * 50, hardware::FailureEffect::Crash, 4),
      component("node_hang", hardware::FailureScope::Node, 24.0 * 365 * 20, hardware::FailureEffect::Hang, 0),
      component("sdc", hardware::FailureScope::Gpu, 24.0 * 365 * 2000, hardware::FailureEffect::Sdc, 0),
      component("slow", hardware::FailureScope::Node, 24.0 * 365 * 30, hardware::FailureEffect::Straggler, 2),
  };
  in.spares = 2;
  in.total_steps = 100'000;
  in.step_time = [](const ClusterState& s) { return base::Time::from_seconds(5.0 * s.straggler_factor); };
  return in;
}

std::string roundtrip_merge(const RunInputs& in, const std::vector<std::pair<int, int>>& slices, int trials) {
  std::vector<RunPartial> parts;
  for (const auto& [first, count] : slices) {
    const std::string text = run_monte_carlo_slice(in, trials, first, count, 9, 1).to_json().dump(-1);
    auto doc = base::JsonDocument::parse_text(text, "shard");
    base::Diagnostics diag("shard");
    auto r = doc.root(diag);
    parts.push_back(RunPartial::from_json(r, in));
    diag.throw_if_any();
  }
  return results::to_json(summarise_partials(in, parts)).dump();
}

TEST(Shards, MergedSlicesEqualOneProcessByteForByte) {
  const RunInputs in = run();
  const std::string one = results::to_json(run_monte_carlo(in, 90, 9, 2)).dump();
  EXPECT_EQ(roundtrip_merge(in, {{0, 90}}, 90), one);
  EXPECT_EQ(roundtrip_merge(in, {{0, 30}, {30, 30}, {60, 30}}, 90), one);
  EXPECT_EQ(roundtrip_merge(in, {{61, 29}, {0, 7}, {7, 54}}, 90), one);  // any order, uneven slices
  EXPECT_NE(one.find("\"sample_trial\""), std::string::npos);
}

TEST(Shards, SlicesAppendedInTrialOrderEqualOneProcess) {
  const RunInputs in = run();
  const std::string one = results::to_json(run_monte_carlo(in, 90, 9, 2)).dump();
  RunPartial total = run_monte_carlo_slice(in, 90, 0, 7, 9, 1);
  for (const auto& [first, count] : std::vector<std::pair<int, int>>{{7, 40}, {47, 1}, {48, 42}})
    total.append(run_monte_carlo_slice(in, 90, first, count, 9, 1));
  EXPECT_EQ(total.first(), 0);
  EXPECT_EQ(total.count(), 90);
  std::vector<RunPartial> parts;
  parts.push_back(std::move(total));
  EXPECT_EQ(results::to_json(summarise_partials(in, parts)).dump(), one);

  RunPartial head = run_monte_carlo_slice(in, 90, 0, 10, 9, 1);
  EXPECT_THROW(head.append(run_monte_carlo_slice(in, 90, 11, 5, 9, 1)), base::ConfigError);   // a gap
  EXPECT_THROW(head.append(run_monte_carlo_slice(in, 90, 5, 10, 9, 1)), base::ConfigError);   // an overlap
  EXPECT_THROW(head.append(run_monte_carlo_slice(in, 90, 10, 5, 10, 1)), base::ConfigError);  // another seed
  EXPECT_EQ(head.count(), 10) << "a refused slice leaves the total as it was";
}

TEST(Shards, GapsOverlapsAndForeignShardsAreRefused) {
  const RunInputs in = run();
  std::vector<RunPartial> gap;
  gap.push_back(run_monte_carlo_slice(in, 20, 0, 10, 9, 1));
  gap.push_back(run_monte_carlo_slice(in, 20, 11, 9, 9, 1));
  EXPECT_THROW(summarise_partials(in, gap), base::ConfigError);
  std::vector<RunPartial> overlap;
  overlap.push_back(run_monte_carlo_slice(in, 20, 0, 12, 9, 1));
  overlap.push_back(run_monte_carlo_slice(in, 20, 10, 10, 9, 1));
  EXPECT_THROW(summarise_partials(in, overlap), base::ConfigError);
  std::vector<RunPartial> seeds;
  seeds.push_back(run_monte_carlo_slice(in, 20, 0, 10, 9, 1));
  seeds.push_back(run_monte_carlo_slice(in, 20, 10, 10, 10, 1));
  EXPECT_THROW(summarise_partials(in, seeds), base::ConfigError);
  std::vector<RunPartial> missing_tail;
  missing_tail.push_back(run_monte_carlo_slice(in, 20, 0, 10, 9, 1));
  EXPECT_THROW(summarise_partials(in, missing_tail), base::ConfigError);
  EXPECT_THROW(run_monte_carlo_slice(in, 20, 15, 10, 9, 1), base::ConfigError);

  // A shard of a run with other failure components.
  RunInputs other = run();
  other.components.pop_back();
  const std::string text = run_monte_carlo_slice(other, 20, 0, 20, 9, 1).to_json().dump(-1);
  auto doc = base::JsonDocument::parse_text(text, "shard");
  base::Diagnostics diag("shard");
  auto r = doc.root(diag);
  (void)RunPartial::from_json(r, in);
  EXPECT_THROW(diag.throw_if_any(), base::ConfigError);
}

}  // namespace
}  // namespace sim::reliability
