// parallel.moe_dispatch_dtype "fp8": DeepSeek-V3's low-precision MoE communication (arXiv:2412.19437 Sec. 3.3.4):
// the tokens cast to FP8 before the dispatch, the output gradients before the combine's backward; the combine and
// the dispatch's backward stay 16-bit. DeepEP's FP8 dispatch carries one fp32 scale per 128 channels.
#include "sim/base/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/layer_costs.hpp"
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace sim {
namespace {

const std::string kMixtral = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/mixtral-8x7b-32-h100-ep.json";

base::Time step_time(const std::vector<scenario::Override>& overrides) {
  const auto s = support::load_step("scenarios/ci/mixtral-8x7b-32-h100-ep.json", overrides);
  return support::run_step(s, execution::Fidelity::Replica).step_time;
}

std::string error_of(const std::vector<scenario::Override>& o) {
  try {
    (void)scenario::load_scenario(kMixtral, o);
  } catch (const base::ConfigError& e) {
    return std::string(e.what());
  }
  return std::string();
}

/// Payload per element of each expert-parallel all-to-all of one layer, by label, forward and backward.
std::map<std::string, double> all_to_all_bytes_per_element(bool fp8_dispatch) {
  const auto m = scenario::load_model("mixtral-8x7b");
  workload::LayerShape s;
  s.ep = 8;
  s.seq_len = 4096;
  s.fp8 = workload::Fp8Scaling::Delayed;
  s.moe_dispatch_fp8 = fp8_dispatch;
  const auto w = workload::layer_work(m, s, workload::RecomputeMode::None);
  // Balanced routing: the rank receives top_k copies of each of its tokens, h wide.
  const double elements = 4096.0 * m.moe->top_k * m.hidden;
  std::map<std::string, double> out;
  for (const auto* pass : {&w.forward, &w.backward_input})
    for (const auto& seg : pass->segments)
      if (seg.is_comm && seg.comm == workload::CommKind::EpAllToAll) out[seg.label] = seg.comm_bytes / elements;
  return out;
}

TEST(MoeDispatchFp8, DispatchAndTheCombinesBackwardMoveFp8WithTheirScalesTheRestSixteenBits) {
  const auto bf16 = all_to_all_bytes_per_element(false);
  for (const char* label : {"dispatch", "combine", "dispatch_bwd", "combine_bwd"}) {
    ASSERT_TRUE(bf16.count(label)) << label;
    EXPECT_DOUBLE_EQ(bf16.at(label), 2.0) << label;
  }
  const auto fp8 = all_to_all_bytes_per_element(true);
  EXPECT_DOUBLE_EQ(fp8.at("dispatch"), 1.0 + 4.0 / 128) << "one FP8 byte and a 1 x 128 tile's fp32 scale";
  EXPECT_DOUBLE_EQ(fp8.at("combine_bwd"), 1.0 + 4.0 / 128) << "the output gradients reach the experts in FP8";
  EXPECT_DOUBLE_EQ(fp8.at("combine"), 2.0);
  EXPECT_DOUBLE_EQ(fp8.at("dispatch_bwd"), 2.0);
}

TEST(MoeDispatchFp8, TheSenderCastsItsTokensOnceAndTheExpertsTakeFp8) {
  const auto m = scenario::load_model("mixtral-8x7b");
  workload::LayerShape s;
  s.ep = 8;
  s.seq_len = 4096;
  s.fp8 = workload::Fp8Scaling::Delayed;
  auto casts = [&](bool fp8_dispatch) {
    s.moe_dispatch_fp8 = fp8_dispatch;
    std::map<std::string, double> bytes;
    bool up_fp8 = false;
    for (const auto& seg : workload::layer_work(m, s, workload::RecomputeMode::None).forward.segments)
      for (const auto& k : seg.kernels) {
        if (k.fp8_cast) bytes[seg.label + "/" + k.name] += k.bytes;
        if (std::string(k.name) == "expert_up") up_fp8 = k.fp8;
      }
    EXPECT_TRUE(up_fp8) << "the experts' GEMMs run in FP8 either way";
    return bytes;
  };
  const auto bf16 = casts(false), fp8 = casts(true);
  const double tokens = 4096, h = m.hidden, routed = tokens * m.moe->top_k;
  // Without it the experts cast the routed copies they receive (read 16 bits, write FP8 and its transpose), beside
  // the down projection's input cast, which FP8 dispatch leaves as it is.
  const double down_cast = routed * m.moe->ffn_hidden * 4.0;
  EXPECT_DOUBLE_EQ(bf16.at("mlp/fp8_cast"), routed * h * 4.0 + down_cast);
  EXPECT_EQ(bf16.count("router/moe_dispatch_cast"), 0u);
  // With it the sender casts its own tokens (read 16, write 8); the experts only transpose what they receive.
  EXPECT_DOUBLE_EQ(fp8.at("router/moe_dispatch_cast"), tokens * h * 3.0);
  EXPECT_DOUBLE_EQ(fp8.at("mlp/fp8_transpose"), routed * h * 2.0);
  EXPECT_DOUBLE_EQ(fp8.at("mlp/fp8_cast"), down_cast);
}

TEST(MoeDispatchFp8, ThePermutationAndSortMoveFp8ForwardAndSixteenBitGradientsBackward) {
  const auto m = scenario::load_model("mixtral-8x7b");
  workload::LayerShape s;
  s.seq_len = 4096;
  s.fp8 = workload::Fp8Scaling::Delayed;
  auto bytes = [&](int ep, bool fp8_dispatch) {
    s.ep = ep;
    s.moe_dispatch_fp8 = fp8_dispatch;
    const auto w = workload::layer_work(m, s, workload::RecomputeMode::None);
    std::map<std::string, double> out;
    for (const auto* pass : {&w.forward, &w.backward_input})
      for (const auto& seg : pass->segments)
        for (const auto& k : seg.kernels)
          out[std::string(pass == &w.forward ? "fwd/" : "bwd/") + k.name] += k.bytes;
    return out;
  };
  const auto bf16 = bytes(4, false), fp8 = bytes(4, true);  // Mixtral's 8 experts over 4 ranks: sorted by expert
  const double tokens = 4096, h = m.hidden, routed = tokens * m.moe->top_k;
  for (const char* k : {"moe_permute", "moe_sort_chunks"}) {
    const double elements = std::string(k) == "moe_permute" ? (tokens + routed) * h : 2 * routed * h;
    EXPECT_DOUBLE_EQ(bf16.at(std::string("fwd/") + k), elements * 2.0) << k;
    EXPECT_DOUBLE_EQ(fp8.at(std::string("fwd/") + k), elements * (1.0 + 4.0 / 128)) << k;
    EXPECT_DOUBLE_EQ(fp8.at(std::string("bwd/") + k), bf16.at(std::string("bwd/") + k)) << k << ": 16-bit gradients";
  }
  EXPECT_DOUBLE_EQ(fp8.at("fwd/moe_unsort_chunks"), bf16.at("fwd/moe_unsort_chunks")) << "the experts' output";
}

TEST(MoeDispatchFp8, AStepWithExpertParallelismIsFaster) {
  const auto bf16 = step_time({{"training.dtype", "\"fp8\""}});
  const auto fp8 = step_time({{"training.dtype", "\"fp8\""}, {"parallel.moe_dispatch_dtype", "\"fp8\""}});
  EXPECT_LT(fp8, bf16);
  // Without expert parallelism there is no dispatch: nothing moves.
  const std::vector<scenario::Override> no_ep = {{"training.dtype", "\"fp8\""}, {"parallel.ep", "1"}};
  auto with_fp8 = no_ep;
  with_fp8.emplace_back("parallel.moe_dispatch_dtype", "\"fp8\"");
  EXPECT_EQ(step_time(with_fp8), step_time(no_ep));
}

TEST(MoeDispatchFp8, WithoutFp8TrainingOrWithAnotherValueItIsOneClearError) {
  const std::string bf16 = error_of({{"parallel.moe_dispatch_dtype", "\"fp8\""}});
  EXPECT_NE(bf16.find("/training/dtype"), std::string::npos) << bf16;
  EXPECT_NE(bf16.find("moe_dispatch_dtype"), std::string::npos) << "names the key that needs it: " << bf16;
  const std::string other = error_of({{"parallel.moe_dispatch_dtype", "\"fp4\""}});
  EXPECT_NE(other.find("/parallel/moe_dispatch_dtype"), std::string::npos) << other;
  EXPECT_NE(other.find("\"bf16\""), std::string::npos) << "lists what is accepted: " << other;
  EXPECT_EQ(error_of({{"training.dtype", "\"fp8\""}, {"parallel.moe_dispatch_dtype", "\"fp8\""}}), "");
  // A dense model has no dispatch.
  std::string dense;
  try {
    (void)scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/llama3-8b-16-h100.json",
                                  {{"training.dtype", "\"fp8\""}, {"parallel.moe_dispatch_dtype", "\"fp8\""}});
  } catch (const base::ConfigError& e) {
    dense = e.what();
  }
  EXPECT_NE(dense.find("/parallel/moe_dispatch_dtype"), std::string::npos) << dense;
  EXPECT_NE(dense.find("applies to models with experts"), std::string::npos) << dense;
}

}  // namespace
}  // namespace sim
