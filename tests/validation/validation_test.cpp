// Validation: predicted step times against every published A100 measurement in tests/validation/published_runs.json
// (Narayanan et al. SC21 Table 1; Korthikanti et al. 2022 Table 5). DESIGN.md's bar: each within 10%.
#include "sim/base/json_reader.hpp"
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace {

struct Published {
  std::string id;
  std::string scenario;
  double step_time_s = 0;
};

std::vector<Published> published(double& tolerance) {
  const auto doc =
      sim::base::JsonDocument::parse_file(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/published_runs.json");
  sim::base::Diagnostics diag(doc.origin());
  auto root = doc.root(diag);
  std::string ignored;
  root.optional("description", ignored);
  root.required("tolerance", tolerance);
  std::vector<Published> out;
  for (auto& r : root.object_array("runs", true)) {
    Published p;
    r.required("id", p.id);
    r.required("scenario", p.scenario);
    r.required("published_step_time_s", p.step_time_s, sim::base::Range::positive());
    for (const char* k : {"how", "source", "measured"})
      r.accept(k);
    r.finish();
    out.push_back(p);
  }
  diag.throw_if_any();
  return out;
}

TEST(Validation, PublishedA100StepTimesWithinTolerance) {
  double tolerance = 0;
  const auto runs = published(tolerance);
  ASSERT_EQ(runs.size(), 18u);
  double sum = 0, worst = 0;
  std::printf("%-40s %11s %11s %8s\n", "run", "published s", "predicted s", "error");
  for (const auto& p : runs) {
    const auto s = support::load_step(p.scenario);
    const auto r = support::run_step(s, sim::execution::Fidelity::Replica);
    const double predicted = r.step_time.seconds();
    const double err = predicted / p.step_time_s - 1.0;
    sum += std::fabs(err);
    worst = std::max(worst, std::fabs(err));
    std::printf("%-40s %11.2f %11.2f %+7.1f%%\n", p.id.c_str(), p.step_time_s, predicted, 100 * err);
    EXPECT_LE(std::fabs(err), tolerance) << p.id << ": published " << p.step_time_s << " s, predicted " << predicted;
  }
  std::printf("mean |error| %.1f%%, max |error| %.1f%% over %zu runs\n", 100 * sum / static_cast<double>(runs.size()),
              100 * worst, runs.size());
}

}  // namespace
