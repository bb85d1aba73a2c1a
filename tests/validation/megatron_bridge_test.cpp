// tests/validation/megatron_bridge_test.cpp: an out-of-sample check on the rows of NVIDIA Megatron-Bridge's 25.11
// performance summary that trainsim can express (tests/validation/megatron_bridge_25_11.json: the rows as published,
// their source, the settings the table leaves out and the rows left out, with why). Not in the development set and
// not fitted: nothing here feeds trainsim-validation-fit. Written and run once (2026-12-06, a user trial's rows checked
// against the source), then left as it came out; the bounds below hold today's errors so that a change that moves
// them is seen, and docs/validation.md ("Out of sample: Megatron-Bridge 25.11") gives the table and the misses.
#include "sim/execution/step_plan.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <variant>

namespace {

using nlohmann::json;

json rows_file() {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation/megatron_bridge_25_11.json");
  return json::parse(in);
}

/// A row as a scenario, with the settings the file's "conversion" names.
std::string scenario_of(const json& r) {
  const int tp = r.at("tp"), pp = r.at("pp"), vp = r.at("vp"), ep = r.at("ep");
  const std::string model = r.at("model"), hardware = r.at("hardware"), precision = r.at("precision");
  json par = {{"tp", tp},
              {"pp", pp},
              {"cp", r.at("cp")},
              {"ep", ep},
              {"micro_batch", r.at("mbs")},
              {"global_batch", r.at("gbs")}};
  if (vp > 1) {
    par["vpp"] = vp;
    par["schedule"] = "interleaved";
  }
  if (tp > 1) {
    par["sequence_parallel"] = true;
    par["tp_comm_overlap"] = true;
  }
  if (r.at("fsdp").get<int>() == 1) {
    par["zero_stage"] = 3;
  } else {
    par["distributed_optimizer"] = true;
    par["overlap_param_gather"] = true;
  }
  // The performance recipes' MoE dispatcher is DeepEP (HybridEP, its NVL72 counterpart, on GB200 / GB300): Megatron-
  // Bridge scripts/performance/configs/qwen3/workload_base_configs.py, BASE_QWEN3_235B_A22B_CONFIG.
  if (ep > 1) par["moe_dispatcher"] = "deepep";
  const int layers = model == "llama3-405b" ? 126 : model == "qwen3-235b-a22b" ? 94 : 0;
  if (layers > 0 && layers % (pp * vp) != 0 && (layers + 2) % (pp * vp) == 0) {
    par["account_for_embedding_in_pipeline_split"] = true;
    par["account_for_loss_in_pipeline_split"] = true;
  }
  json cluster = {{"gpus", r.at("gpus")}};
  // Power-of-two groups inside NVL72 domains: 64 of each 72 GPUs (as tests/validation/published_records.cpp does for
  // NVIDIA's GB200 / GB300 runs, after NVIDIA's GB200 write-up).
  if ((hardware == "gb200-nvl72" || hardware == "gb300-nvl72") && r.at("gpus").get<int>() > 64)
    cluster["nvlink_domain"] = 64;
  // The recipes reduce gradients in bf16: set_llama3_common_configs and the Qwen3 / DeepSeek common configs set
  // mixed_precision.grad_reduce_in_fp32 = False (Megatron-Bridge scripts/performance/configs/*/).
  json training = {{"seq_len", r.at("seq")}, {"main_grads", "bf16"}};
  if (precision == "BF16") {
    training["dtype"] = "bf16";
  } else {
    training["dtype"] = "fp8";
    training["fp8_recipe"] = precision == "FP8-MX" ? "mxfp8" : "tensorwise";
  }
  const json s = {{"schema", "trainsim.scenario/1"},
                  {"name", r.at("id")},
                  {"model", model},
                  {"hardware", hardware},
                  {"cluster", cluster},
                  {"parallel", par},
                  {"training", training}};
  return s.dump();
}

TEST(OutOfSample, MegatronBridge2511RowsAsPublished) {
  const json file = rows_file();
  const auto& rows = file.at("rows");
  ASSERT_EQ(rows.size(), 16u);
  double sum_abs = 0;
  int within15 = 0;
  std::printf("%-28s %10s %10s %8s\n", "row", "published", "trainsim", "error");
  for (const auto& r : rows) {
    const std::string id = r.at("id");
    const double published_s = r.at("gbs").get<double>() * r.at("seq").get<double>() /
                               (r.at("tokens_per_s_per_gpu").get<double>() * r.at("gpus").get<double>());
    const auto s = sim::scenario::load_scenario_text(scenario_of(r), id);
    auto setup = sim::scenario::step_setup(s);
    ASSERT_TRUE(std::holds_alternative<sim::execution::StepInputs>(setup)) << id << " is infeasible";
    const auto& in = std::get<sim::execution::StepInputs>(setup);
    const auto memory = sim::scenario::memory_gib(s, in.layout);
    EXPECT_LE(memory.total, memory.capacity) << id << ": a layout that ran must fit";
    sim::execution::StepOptions o;
    o.fidelity = sim::execution::Fidelity::Replica;
    const double predicted_s =
        sim::execution::simulate_step(sim::execution::build_step_plan(in), o).step_time.seconds();
    const double err = predicted_s / published_s - 1;
    std::printf("%-28s %9.3fs %9.3fs %+7.1f%%\n", id.c_str(), published_s, predicted_s, 100 * err);
    sum_abs += std::fabs(err);
    within15 += std::fabs(err) <= 0.15;
    // Measured 2026-12-06: every row within 17% but Qwen3-235B-A22B on 64 B200s (MXFP8), 43% fast (46% since DeepEP's
    // intranode deduplication, 2026-12-07): the table's 484 model TFLOP/s per GPU there is below the same model's 728
    // in BF16 on GB200s, for reasons the table does not give.
    EXPECT_LT(std::fabs(err), id == "b200_qwen3_235b_fp8mx" ? 0.50 : 0.17) << id;
  }
  const double mape = sum_abs / static_cast<double>(rows.size());
  std::printf("Megatron-Bridge 25.11, %zu rows: MAPE %.1f%%, %d within 15%%\n", rows.size(), 100 * mape, within15);
  // Measured 2026-12-06: MAPE 9.9%, 14 of 16 within 15%; 2026-12-07 (DeepEP's intranode deduplication): 10.1%, 14.
  EXPECT_LT(mape, 0.105);
  EXPECT_GE(within15, 14);
}

}  // namespace
