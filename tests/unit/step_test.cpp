// tests/unit/step_test.cpp: the step simulator: fidelities agree, the breakdown adds up, slow GPUs stretch it.
// The three fidelities agree on symmetric inputs (ZB-H1 and interleaved data-parallel queues included), the
// breakdown describes the busiest stage, lockstep peers change nothing, and the MTP module runs on the last stage.
#include "tests/support/step.hpp"

#include "sim/parallel/memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace sim::execution {
namespace {

using base::Time;
using support::load_step;
using support::run_step;

class FidelitiesAgree : public ::testing::TestWithParam<const char*> {};

TEST_P(FidelitiesAgree, WithinTwoPercentOnSymmetricInputs) {
  const auto s = load_step(GetParam());
  const auto analytic = run_step(s, Fidelity::Analytic);
  const auto replica = run_step(s, Fidelity::Replica);
  const double a = analytic.step_time.seconds(), r = replica.step_time.seconds();
  EXPECT_NEAR(a / r, 1.0, 0.02) << GetParam() << ": analytic " << a << " s, replica " << r << " s";
  if (s.plan.gpus <= 4096) {
    const auto full = run_step(s, Fidelity::Full);
    EXPECT_NEAR(full.step_time.seconds() / r, 1.0, 0.02)
        << GetParam() << ": full " << full.step_time.seconds() << " s, replica " << r << " s";
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, FidelitiesAgree,
                         ::testing::Values("scenarios/default.json", "scenarios/examples/gpt3-175b-1024-a100.json",
                                           "scenarios/examples/llama3-8b-64-h100.json",
                                           "scenarios/examples/mixtral-8x7b-256-h100.json",
                                           "scenarios/examples/llama3-405b-16384-h100.json"));

/// The closed form follows the replay where the data-parallel stream's timing depends on the pipeline order: under
/// interleaving the last chunk's final gradient pass comes p passes of each other chunk before the end (Megatron-LM's
/// groups of p micro-batches per chunk), so its buckets reduce earlier; with ZeRO-2 every pass's buckets queue on
/// the stream, faster in the cool-down (backwards alone) than in the steady state. The closed form had put the chunks'
/// last passes back to back and counted only the steady state's backlog: the Llama 3 405B example (ZeRO-2, 8 chunks
/// per rank) came out 21% fast, a 2048-GB200 interleaved run 17% slow (a random sweep of scenarios found both).
TEST(FidelitiesAgree, InterleavedAndZero2DataParallelQueues) {
  const std::vector<std::vector<scenario::Override>> cases = {
      {{"parallel.vpp", "5"}, {"parallel.schedule", "\"interleaved\""}},
      {{"parallel.vpp", "5"}, {"parallel.schedule", "\"interleaved\""}, {"parallel.zero_stage", "2"}},
      {{"parallel.zero_stage", "2"}},
      {{"hardware", "\"gb200-nvl72\""},
       {"cluster.gpus", "2048"},
       {"cluster.gpus_per_node", "4"},
       {"model", "\"llama2-70b\""},
       {"parallel.pp", "8"},
       {"parallel.vpp", "2"},
       {"parallel.dp", "32"},
       {"parallel.schedule", "\"interleaved\""},
       {"parallel.zero_stage", "0"},
       {"parallel.global_batch", "256"},
       {"training.seq_len", "2048"}},
  };
  for (const auto& overrides : cases) {
    const auto s = load_step("scenarios/default.json", overrides);
    const double a = run_step(s, Fidelity::Analytic).step_time.seconds();
    const double r = run_step(s, Fidelity::Replica).step_time.seconds();
    EXPECT_NEAR(a / r, 1.0, 0.02) << overrides.front().key << "=" << overrides.front().value << " (" << overrides.size()
                                  << " overrides): analytic " << a << " s, replica " << r << " s";
  }
}

/// ZB-H1 replayed: its bubble is (p - 1)(F + B - W) against 1F1B's (p - 1)(F + B + W) (Qi et al. 2024), in the
/// replay as in the closed form. Its W order once deferred the first stage's weight gradients instead of the last's:
/// the replay then gave ZB-H1 exactly 1F1B's step (the saved bubble reappearing as pipeline waits) while the closed
/// form gave the gain. With ZeRO-3, a W pass's gradients are reduce-scattered beside the next unit's W.
TEST(ZeroBubbleH1, ReplayAndClosedFormAgreeAndTheBubbleShrinks) {
  const std::vector<scenario::Override> zb{{"parallel.schedule", "\"zb-h1\""}};
  for (const char* file : {"scenarios/default.json", "scenarios/examples/gpt3-175b-1024-a100.json"}) {
    auto overrides = zb;
    if (std::string(file).find("gpt3") != std::string::npos) overrides.push_back({"parallel.vpp", "1"});
    const auto s = load_step(file, overrides);
    auto base = overrides;
    base.front().value = "\"1f1b\"";
    const auto one = run_step(load_step(file, base), Fidelity::Replica);
    const auto a = run_step(s, Fidelity::Analytic), r = run_step(s, Fidelity::Replica);
    EXPECT_NEAR(a.step_time.seconds() / r.step_time.seconds(), 1.0, 0.02) << file;
    EXPECT_LT(r.breakdown.pp_exposed.seconds(), 0.01 * r.step_time.seconds()) << file << ": no waits for the B's";
    EXPECT_LT(r.breakdown.pp_bubble.seconds(), 0.6 * one.breakdown.pp_bubble.seconds()) << file;
    EXPECT_LT(r.step_time, one.step_time) << file;
  }
  // Mixtral 8x7B, ZeRO-3 with PP 4 and CP 4 over 1024 H100s (found by a random sweep of scenarios: the replay was
  // 32% faster than the closed form, its W passes reducing nothing).
  std::vector<scenario::Override> z3 = {{"parallel.zero_stage", "3"},
                                        {"parallel.pp", "4"},
                                        {"parallel.cp", "4"},
                                        {"parallel.tp", "1"},
                                        {"parallel.sequence_parallel", "false"},
                                        {"parallel.ep", "2"},
                                        {"parallel.dp", "64"},
                                        {"parallel.vpp", "1"},
                                        {"parallel.global_batch", "2048"},
                                        {"parallel.recompute", "\"full\""},
                                        {"cluster.gpus", "1024"},
                                        {"parallel.schedule", "\"zb-h1\""}};
  const auto s = load_step("scenarios/examples/mixtral-8x7b-256-h100.json", z3);
  const auto a = run_step(s, Fidelity::Analytic), r = run_step(s, Fidelity::Replica);
  EXPECT_NEAR(a.step_time.seconds() / r.step_time.seconds(), 1.0, 0.05);
  z3.back().value = "\"1f1b\"";
  EXPECT_LT(r.step_time,
            run_step(load_step("scenarios/examples/mixtral-8x7b-256-h100.json", z3), Fidelity::Replica).step_time);
}

TEST(StepBreakdown, PartsSumToTheStepTime) {
  const auto s = load_step("scenarios/default.json");
  for (auto f : {Fidelity::Analytic, Fidelity::Replica}) {
    const auto r = run_step(s, f);
    EXPECT_EQ(r.breakdown.sum(), r.step_time) << to_string(f);
    EXPECT_GT(r.breakdown.compute, r.breakdown.tp_exposed);
  }
}

TEST(StepBreakdown, BubbleMatchesTheOneFOneBFormulaWithoutCommunication) {
  // 1F1B idle time on the first stage is (p - 1)(F + B) for uniform stages (Narayanan et al. SC21, Sec. 2.2).
  auto s = load_step("scenarios/examples/gpt3-175b-1024-a100.json",
                     {{"parallel.vpp", "1"}, {"parallel.schedule", "\"1f1b\""}});
  const auto r = run_step(s, Fidelity::Replica);
  const auto& st = s.plan.stage(0, 1);  // a middle stage: no embedding or logits
  const double fb = (st.forward.total() + st.backward.total()).seconds();
  EXPECT_NEAR(r.breakdown.pp_bubble.seconds() / ((s.plan.pp() - 1) * fb), 1.0, 0.1);
}

TEST(FullFidelity, OneSlowGpuStretchesTheStep) {
  const auto s = load_step("scenarios/examples/llama3-8b-64-h100.json");
  StepOptions healthy{Fidelity::Full, {}, false};
  StepOptions slow = healthy;
  slow.slowdown.assign(64, 1.0);
  slow.slowdown[17] = 1.5;
  const auto a = simulate_step(s.plan, healthy);
  const auto b = simulate_step(s.plan, slow);
  EXPECT_GT(b.step_time.seconds(), 1.3 * a.step_time.seconds())
      << "a synchronous job runs at its slowest GPU's pace: " << a.step_time.seconds() << " -> "
      << b.step_time.seconds();
}

TEST(FullFidelity, ProgressReportsRiseAndChangeNothing) {
  // The replay in slices of simulated time (for a progress bar and Ctrl-C) gives the same step, to the nanosecond
  // and the event.
  const auto s = load_step("scenarios/examples/llama3-8b-64-h100.json");
  StepOptions plain{Fidelity::Full, {}, false};
  StepOptions reported = plain;
  std::vector<double> shares;
  reported.progress = [&](double share) { shares.push_back(share); };
  const auto a = simulate_step(s.plan, plain);
  const auto b = simulate_step(s.plan, reported);
  EXPECT_EQ(a.step_time.ns, b.step_time.ns);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.breakdown.compute.ns, b.breakdown.compute.ns);
  ASSERT_GE(shares.size(), 40u) << "about 50 slices, the last ones past the estimate not reported";
  EXPECT_TRUE(std::is_sorted(shares.begin(), shares.end()));
  EXPECT_LE(shares.back(), 0.99);
}

TEST(StepResult, MfuUsesModelFlopsAndHfuCountsRecomputation) {
  const auto s = load_step("scenarios/examples/gpt3-175b-1024-a100.json", {{"parallel.recompute", "\"full\""}});
  const auto r = run_step(s, Fidelity::Analytic);
  EXPECT_NEAR(r.hfu / r.mfu, 4.0 / 3.0, 0.02) << "full recomputation adds one forward: 96/72 FLOPs";
  const double flops = r.tflops_per_gpu * 1e12 * s.plan.gpus * r.step_time.seconds();
  EXPECT_NEAR(flops / s.plan.model_flops, 1.0, 1e-9);
}

TEST(Determinism, SameScenarioGivesTheSameResult) {
  const auto s = load_step("scenarios/default.json");
  const auto a = run_step(s, Fidelity::Replica);
  const auto b = run_step(s, Fidelity::Replica);
  EXPECT_EQ(to_json(a).dump(), to_json(b).dump());
}

/// Replica fidelity with lockstep peers (the planner's short list) must give the step time and breakdown of replaying
/// every tensor- and context-parallel peer, with tp x cp times fewer simulated GPUs.
TEST(LockstepPeers, SameStepAndBreakdownAsReplayingEveryPeer) {
  const std::vector<std::pair<const char*, std::vector<scenario::Override>>> cases = {
      {"scenarios/default.json", {}},
      {"scenarios/examples/gpt3-175b-1024-a100.json", {}},
      {"scenarios/examples/gpt3-175b-1024-a100.json", {{"parallel.vpp", "1"}, {"parallel.schedule", "\"zb-h1\""}}},
      {"scenarios/examples/llama3-8b-64-h100.json", {{"parallel.cp", "2"}, {"parallel.tp", "2"}}},
      {"scenarios/examples/mixtral-8x7b-256-h100.json", {}},
  };
  for (const auto& [file, overrides] : cases) {
    const auto s = load_step(file, overrides);
    StepOptions every{Fidelity::Replica, {}, false};
    StepOptions lockstep = every;
    lockstep.lockstep_peers = true;
    const auto a = simulate_step(s.plan, every);
    const auto b = simulate_step(s.plan, lockstep);
    const std::string what = std::string(file) + " tp " + std::to_string(s.plan.layout.tp) + " cp " +
                             std::to_string(s.plan.layout.cp) + " pp " + std::to_string(s.plan.pp());
    EXPECT_EQ(a.step_time, b.step_time) << what;
    auto same_counts = b;
    same_counts.events = a.events;
    same_counts.simulated_gpus = a.simulated_gpus;
    EXPECT_EQ(results::to_json(a).dump(), results::to_json(same_counts).dump())
        << what << ": the breakdown and every other figure are the same";
    EXPECT_EQ(a.critical_gpu, b.critical_gpu) << what;
    EXPECT_EQ(b.simulated_gpus, a.simulated_gpus / (s.plan.layout.tp * s.plan.layout.cp)) << what;
    EXPECT_LT(b.events, a.events) << what;
  }
}

TEST(StepBreakdown, AnUnevenPipelineIsDescribedByItsBusiestStage) {
  // Mixtral 8x7B on pp 4 with 2 layers on the first stage and 10 on the others: under 1F1B the first stage finishes
  // last but spends most of the step waiting for the others. The breakdown describes the busiest stage (the last:
  // 10 layers and the output layer), whose experts' all-to-alls and compute are what the step is made of; described
  // by the first stage it read 79% "PP exposed" (2026-12-04, before this rule).
  const auto s =
      load_step("scenarios/examples/mixtral-8x7b-256-h100.json", {{"parallel.layers_per_stage", "[2, 10, 10, 10]"}});
  const int m = s.plan.micro_batches();
  const StageWork& last = s.plan.stage(0, 3);
  for (auto f : {Fidelity::Analytic, Fidelity::Replica, Fidelity::Full}) {
    const auto r = run_step(s, f);
    const std::string what = to_string(f);
    EXPECT_EQ(r.breakdown.sum(), r.step_time) << what;
    EXPECT_EQ(r.breakdown.compute,
              Time{m * (last.forward.total(SegKind::Compute) + last.backward.total(SegKind::Compute)).ns})
        << what;
    EXPECT_EQ(r.breakdown.ep_exposed, Time{m * (last.forward.total(SegKind::Ep) + last.backward.total(SegKind::Ep)).ns})
        << what;
    EXPECT_LT(r.breakdown.pp_exposed.seconds(), 0.05 * r.step_time.seconds()) << what;
  }
}

TEST(StepModel, MultiTokenPredictionRunsItsModulesOnTheLastStage) {
  // DeepSeek-V3 on 256 GB200 (scenarios/validation), with and without its one MTP module ("Et|(tt|)*30mL" against
  // "...L"): the module's projection, transformer layer and shared output head run after the output layer on the
  // last virtual stage, which held the loss alone; every other stage is unchanged.
  const char* path = "scenarios/validation/deepseek_v3_256_gb200_mxfp8.json";
  const auto without = load_step(path);
  const auto with = load_step(path, {{"model.mtp_layers", "1"}, {"parallel.pipeline_layout", "\"Et|(tt|)*30mL\""}});
  const Time output = without.plan.stage(3, 7).forward.total();  // the loss-only stage: the output layer's forward
  const Time layer = without.plan.stage(1, 0).forward.total();   // a middle stage: two MoE layers
  const Time added = with.plan.stage(3, 7).forward.total() - output;
  EXPECT_GT(added, output + Time{layer.ns / 2}) << "a transformer layer and the head again, and the projection";
  EXPECT_LT(added.seconds(), 1.1 * (output + Time{layer.ns / 2}).seconds()) << "the projection is small";
  EXPECT_GT(with.plan.stage(3, 7).backward.total(), without.plan.stage(3, 7).backward.total());
  EXPECT_EQ(with.plan.stage(1, 0).forward.total(), layer);
  EXPECT_EQ(with.plan.stage(0, 0).backward.total(), without.plan.stage(0, 0).backward.total());
  EXPECT_GT(run_step(with, Fidelity::Replica).step_time, run_step(without, Fidelity::Replica).step_time);
}

TEST(StepModel, Fp16GradientsAreReducedAndHeldInTheSameDtype) {
  // Found by a user trial: fp16 timed its gradient reduction in 16 bits while memory counted 4 B fp32 main gradients.
  // Megatron-LM's fp16 default keeps and reduces them in fp16 (accumulate_allreduce_grads_in_fp32 false), as bf16 with
  // main_grads "bf16" does; main_grads "fp32" (--accumulate-allreduce-grads-in-fp32) is bf16's default in both.
  const char* path = "scenarios/default.json";
  auto both = [&](std::vector<scenario::Override> o) {
    o.emplace_back("parallel.overlap_grad_reduce", "false");  // the reduction's bytes show in the step time
    const auto s = load_step(path, o);
    const auto r = run_step(s, Fidelity::Analytic);
    return std::pair{r.step_time, r.memory.grads};
  };
  const auto fp16 = both({{"training.dtype", "\"fp16\""}});
  EXPECT_EQ(fp16, both({{"training.main_grads", "\"bf16\""}}));
  const auto fp16_fp32 = both({{"training.dtype", "\"fp16\""}, {"training.main_grads", "\"fp32\""}});
  EXPECT_EQ(fp16_fp32, both({}));
  EXPECT_GT(fp16_fp32.first, fp16.first);
  EXPECT_NEAR(fp16_fp32.second, 2 * fp16.second, 1e-9);
}

TEST(StepModel, DroppedTokensAreNotCountedInMfuAndPaddingCountsInHfu) {
  // Found by a user trial: with training.moe_capacity_factor 0.5 (half the routed tokens dropped) Mixtral's MFU read
  // 52.5% against 31% for the same expert work at top-1. The routed experts' GEMMs per step, 3 passes x tokens x
  // 32 MoE layers x 2 FLOPs x top-2 x 3 gated matrices x 4096 x 14336, count for the kept tokens in the model FLOPs
  // and for what runs (padded to capacity: the factor's) in the hardware FLOPs.
  const char* path = "scenarios/examples/mixtral-8x7b-256-h100.json";
  const auto dropless = load_step(path);
  const double routed = 3.0 * dropless.plan.tokens * 32 * 2 * 2 * 3 * 4096.0 * 14336.0;
  const auto half = load_step(path, {{"training.moe_capacity_factor", "0.5"}});
  EXPECT_NEAR(half.plan.model_flops, dropless.plan.model_flops - 0.5 * routed, 1e-9 * routed);
  EXPECT_NEAR(half.plan.hardware_flops, dropless.plan.hardware_flops - 0.5 * routed, 1e-9 * routed);
  const auto padded =
      load_step(path, {{"training.moe_capacity_factor", "2"}, {"training.moe_pad_to_capacity", "true"}});
  EXPECT_EQ(padded.plan.model_flops, dropless.plan.model_flops) << "every routed token kept";
  EXPECT_NEAR(padded.plan.hardware_flops, dropless.plan.hardware_flops + routed, 1e-9 * routed) << "twice the work";
}

TEST(StepModel, RoutingImbalanceNeedsExpertParallelism) {
  // Found by a user trial: training.moe_imbalance (the busiest expert-parallel rank's tokens over the mean) slowed and
  // enlarged ep-1 layouts, where the one rank holds every expert and does tokens x top_k of expert work whatever the
  // router does; the planner then pruned them.
  const char* path = "scenarios/examples/mixtral-8x7b-256-h100.json";
  auto at = [&](const char* ep, const char* imbalance) {
    const auto s = load_step(path, {{"parallel.ep", ep}, {"training.moe_imbalance", imbalance}});
    const auto r = run_step(s, Fidelity::Analytic);
    const auto& sc = s.scenario;
    const auto m = parallel::peak_memory(sc.model, s.inputs.layout, sc.parallel, sc.training.seq_len, sc.memory);
    return std::pair{r.step_time, m.total};
  };
  EXPECT_EQ(at("1", "2"), at("1", "1"));
  EXPECT_GT(at("8", "2").first, at("8", "1").first);
  EXPECT_GT(at("8", "2").second, at("8", "1").second);
}

TEST(StepModel, HardwareFlopsCountTheRecomputedDenseLayersOfAnMoeModel) {
  // Found by a user trial: DeepSeek-V3 with recompute_modules ["mlp"] recomputed its three dense layers' MLPs (the
  // step was slower) while HFU stayed equal to MFU, the recompute being counted from an MoE layer (whose "mlp" is its
  // experts, not recomputed). Per token and dense layer the forward of a gated MLP: 3 GEMMs x 2 x 7168 x 18432.
  const char* path = "scenarios/validation/deepseek_v3_2048_h800_dualpipev.json";
  const auto s = load_step(path, {{"parallel.recompute_modules", "[\"mlp\"]"}});
  EXPECT_NEAR(s.plan.hardware_flops - s.plan.model_flops, s.plan.tokens * 3 * 3 * 2 * 7168.0 * 18432.0,
              1e-6 * s.plan.model_flops);
}

}  // namespace
}  // namespace sim::execution
