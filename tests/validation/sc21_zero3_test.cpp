// tests/validation/sc21_zero3_test.cpp: SC21 Table 2's ZeRO-3 rows (issue 17, item 3), predicted with DeepSpeed's
// ZeRO-3 engine of their time, whose two properties come from DeepSpeed's own PR #1188 (June 2021), not from these
// rows: its gathers did not overlap the compute ("the async version is not async at all, because each all_gather
// calls torch.cuda.synchronize()"), and they moved 25 GB/s per GPU (validation::deepspeed_2021_zero3_gbs). The
// converter sets parallel.zero3_overlap false and parallel.zero3_engine_gbs to that rate for these rows only: they
// are the dev set's only runs of that engine.
//
// Why the published times stop falling with the GPU count (175B: 66.75 s at 768 and at 1,536 A100s): each GPU
// gathers the whole model twice and reduce-scatters its gradients once per iteration (3 x 2P bytes, Rajbhandari et
// al. 2020, Sec. 7.2.2) whatever the GPU count, at a rate the framework, not the network, set; only the compute
// shrinks.
#include "tests/validation/evaluate.hpp"
#include "tests/validation/published_records.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

TEST(Sc21Zero3, TheEngineRateIsDeepSpeedsOwnMeasurement) {
  const double gbs = validation::deepspeed_2021_zero3_gbs();
  EXPECT_NEAR(gbs, 25.0, 0.05) << "2 x 5.12e9 bytes over 470 - 60 ms (PR #1188, issue #1174)";
  // The PR's backward (about 900 ms) gathers the weights and reduce-scatters the gradients once each: at this rate
  // 2 x 10.24 GB take 819 ms, leaving 81 ms of compute, where ZeRO-2's backward at twice its 60 ms forward is 120 ms.
  const double backward_traffic_s = 2 * 2 * 5.1185e9 / (gbs * 1e9);
  EXPECT_NEAR((0.900 - backward_traffic_s) / 0.120, 1.0, 0.4);
}

/// Each ZeRO-3 row as the converter writes it, and as it would be with NCCL's overlapped ZeRO-3 (the engine's two
/// keys removed).
struct Row {
  std::string id;
  double published_s = 0, engine_s = 0, nccl_s = 0;
};

std::vector<Row> zero3_rows() {
  std::vector<Row> rows;
  for (const auto& text : validation::published_record_texts(validation::shared_validation_dir())) {
    const auto j = nlohmann::json::parse(text);
    if (j.value("id", std::string()).rfind("megatron_sc21_t2_zero3_", 0) != 0) continue;
    const validation::Record engine = validation::convert_record(text);
    validation::Record nccl = engine;
    auto sc = nlohmann::json::parse(nccl.scenario);
    sc["parallel"].erase("zero3_overlap");
    sc["parallel"].erase("zero3_engine_gbs");
    nccl.scenario = sc.dump();
    const auto a = validation::evaluate(engine), b = validation::evaluate(nccl);
    EXPECT_TRUE(a.predicted && b.predicted) << engine.id << ": " << a.miss << b.miss;
    rows.push_back({engine.id, engine.reference_step_s, a.predicted_step_s, b.predicted_step_s});
  }
  return rows;
}

TEST(Sc21Zero3, PredictedWithTheEngineOfTheirTime) {
  const auto rows = zero3_rows();
  ASSERT_EQ(rows.size(), 6u) << "SC21 Table 2: 175B on 384/768/1536 and 530B on 640/1120/2240 A100s";
  std::map<std::string, double> engine, nccl;
  for (const auto& r : rows) {
    std::printf("  %-40s published %7.2f s  engine %7.2f s (%+5.1f%%)  overlapped NCCL %7.2f s (%+5.1f%%)\n",
                r.id.c_str(), r.published_s, r.engine_s, 100 * (r.engine_s / r.published_s - 1), r.nccl_s,
                100 * (r.nccl_s / r.published_s - 1));
    EXPECT_NEAR(r.engine_s / r.published_s, 1.0, 0.2) << r.id;
    EXPECT_LT(r.nccl_s, 0.75 * r.published_s) << r.id << ": NCCL-bound overlapped ZeRO-3 is far faster";
    engine[r.id] = r.engine_s;
    nccl[r.id] = r.nccl_s;
  }
  // Doubling the GPUs halves each one's samples: NCCL-bound ZeRO-3 would nearly halve the step; the published times
  // do not move (66.75 s and 66.75 s; 179.9 s and 183.7 s), and with the engine the step falls by at most a third.
  const std::pair<const char*, const char*> doublings[] = {
      {"megatron_sc21_t2_zero3_174.6B_768gpu", "megatron_sc21_t2_zero3_174.6B_1536gpu"},
      {"megatron_sc21_t2_zero3_529.6B_1120gpu", "megatron_sc21_t2_zero3_529.6B_2240gpu"}};
  for (const auto& [half, full] : doublings) {
    EXPECT_LT(engine[half] / engine[full], 1.35) << full;
    EXPECT_GT(nccl[half] / nccl[full], 1.6) << full;
  }
}

}  // namespace
