// tests/validation/sc21_zero3_test.cpp: why SC21 Table 2's ZeRO-3 step times stop falling with the GPU count (issue
// 17, item 3). Explained, not predicted: the six rows stay misses in docs/validation.md, converted as NCCL-bound,
// overlapped ZeRO-3 (trainsim's default); this test shows what they become with the two properties DeepSpeed's own
// PR #1188 (June 2021) gives its ZeRO-3 engine of that time, and why that is not counted as a prediction.
//
// The published times are flat (175B: 66.75 s at 768 and at 1,536 A100s) because each GPU gathers the whole model
// twice and reduce-scatters its gradients once per iteration (3 x 2P bytes, Rajbhandari et al. 2020, Sec. 7.2.2)
// whatever the GPU count, at a rate that was the bound; only the compute shrinks. PR #1188 says the engine's gathers
// did not overlap ("the async version is not async at all, because each all_gather calls torch.cuda.synchronize()":
// parallel.zero3_overlap false), and its 5.1B BERT on one 8-A100 node took about 470 ms per ZeRO-3 forward where
// ZeRO-2 took about 60 ms (issue #1174 says about 480 ms): 410 ms for 10.24 GB of 16-bit weights, 25 GB/s
// (parallel.zero3_engine_gbs) if that time is per byte. The same author's issue #1069 reports a fixed cost of about
// 0.5 ms per all_gather however small, which over the BERT's ~1,000 tensors is the same 410 ms: one measurement cannot
// tell a per-byte rate from a per-call cost, and only the per-byte reading makes SC21's times flat (per call, 175B's
// ~1,150 tensors cost ~1.4 s a step). Choosing it because it fits these rows would be fitting them, so the converter
// does not set these keys, and a user who runs such an engine sets them knowingly.
#include "tests/validation/evaluate.hpp"
#include "tests/validation/published_records.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

/// 25 GB/s: PR #1188's BERT (64 layers, hidden 2560, FFN 10240, vocabulary 32,003, 512 positions: per layer four
/// h x h projections and two h x f matrices with biases and two norms, plus the embeddings) gathered once in the
/// 410 ms a ZeRO-3 forward took beyond ZeRO-2's, read as a per-byte rate.
double deepspeed_2021_zero3_gbs() {
  const double h = 2560, f = 10240, layers = 64, vocab = 32003;
  const double params = layers * (4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h) + (vocab + 512 + 2) * h;
  return std::round(2 * params / (0.470 - 0.060) / 1e8) / 10;
}

TEST(Sc21Zero3, TheRateIsReadFromDeepSpeedsOwnMeasurement) {
  EXPECT_NEAR(deepspeed_2021_zero3_gbs(), 25.0, 0.05);
}

struct Row {
  std::string id;
  double published_s = 0, engine_s = 0, nccl_s = 0;
};

/// Each ZeRO-3 row as the converter writes it (NCCL-bound, overlapped), and with the engine's two keys and 16-bit
/// gradients (DeepSpeed's fp16 ZeRO-3 of 2021 reduced its gradients in fp16).
std::vector<Row> zero3_rows() {
  std::vector<Row> rows;
  for (const auto& text : validation::published_record_texts(validation::shared_validation_dir())) {
    const auto j = nlohmann::json::parse(text);
    if (j.value("id", std::string()).rfind("megatron_sc21_t2_zero3_", 0) != 0) continue;
    const validation::Record nccl = validation::convert_record(text);
    validation::Record engine = nccl;
    auto sc = nlohmann::json::parse(engine.scenario);
    sc["parallel"]["zero3_overlap"] = false;
    sc["parallel"]["zero3_engine_gbs"] = deepspeed_2021_zero3_gbs();
    sc["training"]["main_grads"] = "bf16";
    engine.scenario = sc.dump();
    const auto a = validation::evaluate(engine), b = validation::evaluate(nccl);
    EXPECT_TRUE(a.predicted && b.predicted) << nccl.id << ": " << a.miss << b.miss;
    rows.push_back({nccl.id, nccl.reference_step_s, a.predicted_step_s, b.predicted_step_s});
  }
  return rows;
}

TEST(Sc21Zero3, TheEngineOfTheirTimeExplainsTheFlatTimes) {
  const auto rows = zero3_rows();
  ASSERT_EQ(rows.size(), 6u) << "SC21 Table 2: 175B on 384/768/1536 and 530B on 640/1120/2240 A100s";
  std::map<std::string, double> engine, nccl;
  double abs_error = 0;
  for (const auto& r : rows) {
    std::printf("  %-40s published %7.2f s  engine %7.2f s (%+5.1f%%)  NCCL-bound %7.2f s (%+5.1f%%)\n", r.id.c_str(),
                r.published_s, r.engine_s, 100 * (r.engine_s / r.published_s - 1), r.nccl_s,
                100 * (r.nccl_s / r.published_s - 1));
    abs_error += std::fabs(r.engine_s / r.published_s - 1) / static_cast<double>(rows.size());
    EXPECT_NEAR(r.engine_s / r.published_s, 1.0, 0.25) << r.id;
    EXPECT_LT(r.nccl_s, 0.75 * r.published_s) << r.id << ": NCCL-bound overlapped ZeRO-3 is far faster";
    engine[r.id] = r.engine_s;
    nccl[r.id] = r.nccl_s;
  }
  std::printf("  mean |error| with the engine: %.1f%%\n", 100 * abs_error);
  // Doubling the GPUs halves each one's samples: NCCL-bound ZeRO-3 nearly halves the step; the published times do not
  // move (66.75 and 66.75 s; 179.9 and 183.7 s); with the engine the step falls by about a quarter.
  const std::pair<const char*, const char*> doublings[] = {
      {"megatron_sc21_t2_zero3_174.6B_768gpu", "megatron_sc21_t2_zero3_174.6B_1536gpu"},
      {"megatron_sc21_t2_zero3_529.6B_1120gpu", "megatron_sc21_t2_zero3_529.6B_2240gpu"}};
  for (const auto& [half, full] : doublings) {
    EXPECT_LT(engine[half] / engine[full], 1.35) << full;
    EXPECT_GT(nccl[half] / nccl[full], 1.6) << full;
  }
}

}  // namespace
