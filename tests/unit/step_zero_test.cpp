// tests/unit/step_zero_test.cpp: ZeRO stages 2 and 3 in a step, and FSDP's backward prefetch.
#include "tests/support/step.hpp"

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

namespace sim::execution {
namespace {

using base::Time;
using support::load_step;
using support::run_step;

/// ZeRO-2 reduce-scatters every micro-batch's gradients (a GPU keeps only its shard of them); ZeRO-3 also all-gathers
/// each unit's weights before its forward and its backward in every micro-batch, prefetched one unit ahead, and
/// needs no all-gather after the optimizer (Rajbhandari et al. 2020, Sec. 5.3 and 7.2.2; FSDP, Zhao et al. 2023).
TEST(ZeroStages, Zero2ReducesEveryMicroBatchAndZero3GathersWeightsInEveryPass) {
  auto load = [](int zero, const char* nic) {
    return load_step("scenarios/examples/llama3-8b-64-h100.json",
                     {{"parallel.zero_stage", std::to_string(zero)},
                      {"cluster.network.nic_bandwidth", std::string("\"") + nic + "\""}});
  };
  // A slow network (25 Gbit/s per GPU): a micro-batch's gradient reduction takes longer than its forward and
  // backward, so ZeRO-2's per-micro-batch reductions queue up.
  const auto z1 = load(1, "25 Gbit/s"), z2 = load(2, "25 Gbit/s"), z3 = load(3, "25 Gbit/s");
  const int m = z2.plan.micro_batches();
  ASSERT_GT(m, 1);
  EXPECT_FALSE(z1.plan.dp_every_micro_batch);
  EXPECT_TRUE(z2.plan.dp_every_micro_batch);
  Time d, fb;
  for (const auto& b : z2.plan.stage(0, 0).buckets)
    d += b.duration;
  fb = z2.plan.stage(0, 0).forward.total() + z2.plan.stage(0, 0).backward.total();
  ASSERT_GT(d, fb) << "the premise: the network cannot keep up";
  // ZeRO-2's backward also runs beside its reductions, on the SMs they leave (ZeRO-1 reduces beside the last
  // micro-batch only, which is not counted): the one difference between the two plans' passes.
  const Time slowed = z2.plan.stage(0, 0).backward.total() - z1.plan.stage(0, 0).backward.total();
  EXPECT_GT(slowed, Time::zero());
  EXPECT_EQ(slowed, z2.plan.stage(0, 0).backward.total(SegKind::Compute) -
                        z1.plan.stage(0, 0).backward.total(SegKind::Compute));
  for (auto f : {Fidelity::Analytic, Fidelity::Replica}) {
    const auto r1 = run_step(z1, f), r2 = run_step(z2, f), r3 = run_step(z3, f);
    const double backlog = (m - 1) * (d - fb).seconds() + m * slowed.seconds();
    EXPECT_NEAR((r2.step_time - r1.step_time).seconds() / backlog, 1.0, 0.02)
        << to_string(f) << ": ZeRO-2 adds the backlog of " << m - 1 << " micro-batches' reductions";
    EXPECT_GT(r3.step_time, r2.step_time) << to_string(f) << ": ZeRO-3's exposed weight gathers";
    for (const auto* r : {&r1, &r2, &r3})
      EXPECT_EQ(r->breakdown.sum(), r->step_time) << to_string(f);
  }
  EXPECT_NEAR(
      run_step(z2, Fidelity::Analytic).step_time.seconds() / run_step(z2, Fidelity::Replica).step_time.seconds(), 1.0,
      0.01);
  // ZeRO-3: gathers on the compute stream of every pass, none after the optimizer.
  const auto& st = z3.plan.stage(0, 0);
  EXPECT_GT(st.forward.total(SegKind::Dp), Time::zero());
  EXPECT_GT(st.backward.total(SegKind::Dp), Time::zero());
  // Split backwards (zero-bubble): B gathers the weights, W needs none but makes the gradients, whose reduce-scatter
  // runs beside the next unit's W; on this slow network part of it is exposed there.
  EXPECT_GT(st.backward_weight.total(SegKind::Dp), Time::zero());
  for (const auto& seg : st.backward_weight.segments)
    if (seg.kind == SegKind::Dp) {
      EXPECT_EQ(z3.plan.labels[seg.label], "zero-3 grad reduce-scatter");
    }
  for (const auto& seg : st.backward_input.segments)
    if (seg.kind == SegKind::Dp) {
      EXPECT_EQ(z3.plan.labels[seg.label], "zero-3 param all-gather");
    }
  EXPECT_EQ(st.param_gather, Time::zero());
  EXPECT_GT(z1.plan.stage(0, 0).param_gather, Time::zero());

  // A fast network (the profile's 400 Gbit/s): each reduction hides behind the next micro-batch's compute, which
  // it slows by the SMs it takes (every micro-batch's backward).
  const auto f1 = load(1, "400 Gbit/s"), f2 = load(2, "400 Gbit/s");
  const Time beside = f2.plan.stage(0, 0).backward.total() - f1.plan.stage(0, 0).backward.total();
  EXPECT_GT(beside, Time::zero());
  const Time extra = run_step(f2, Fidelity::Replica).step_time - run_step(f1, Fidelity::Replica).step_time;
  EXPECT_LE(extra, Time{f2.plan.micro_batches() * beside.ns}) << "at most every micro-batch's slowed compute";
  EXPECT_NEAR(extra.seconds() / (f2.plan.micro_batches() * beside.seconds()), 1.0, 0.05);
}

/// FSDP's backward prefetch (torch/distributed/fsdp/api.py, BackwardPrefetch): with BACKWARD_POST a unit's backward
/// gather starts after the previous unit's gradient computation, beside that unit's reduce-scatter, so the backward
/// waits for every gather; BACKWARD_PRE (the default) hides it under the previous unit's compute.
TEST(ZeroStages, BackwardPrefetchPostExposesEachUnitsBackwardGather) {
  auto load = [](const char* prefetch) {
    return load_step(
        "scenarios/examples/llama3-8b-64-h100.json",
        {{"parallel.zero_stage", "3"}, {"parallel.backward_prefetch", std::string("\"") + prefetch + "\""}});
  };
  const auto pre = load("pre"), post = load("post"), none = load("none");
  const auto& b_pre = pre.plan.stage(0, 0).backward;
  const auto& b_post = post.plan.stage(0, 0).backward;
  EXPECT_EQ(pre.plan.stage(0, 0).forward.total(), post.plan.stage(0, 0).forward.total()) << "the forward is alike";
  EXPECT_GT(b_post.total(SegKind::Dp), b_pre.total(SegKind::Dp));
  // Each of the stage's layers but the first waits for its whole gather, which shares the links with a
  // reduce-scatter: between one and two gathers' time each.
  const int layers = post.plan.stage(0, 0).layers;
  ASSERT_GT(layers, 1);
  const double added = (b_post.total(SegKind::Dp) - b_pre.total(SegKind::Dp)).seconds();
  const auto first_gather = b_post.segments.front();
  ASSERT_EQ(first_gather.kind, SegKind::Dp) << "the pass starts with its first unit's gather";
  EXPECT_GT(added, 0.5 * (layers - 1) * first_gather.duration.seconds() / 2);
  EXPECT_EQ(none.plan.stage(0, 0).backward.total(), b_post.total()) << "none: timed as post";
  for (auto f : {Fidelity::Analytic, Fidelity::Replica}) {
    const auto r_pre = run_step(pre, f), r_post = run_step(post, f);
    EXPECT_GT(r_post.step_time, r_pre.step_time) << to_string(f);
    EXPECT_GT(r_post.breakdown.dp_exposed, r_pre.breakdown.dp_exposed) << to_string(f);
    EXPECT_EQ(r_post.breakdown.sum(), r_post.step_time) << to_string(f);
  }
}

TEST(ZeroStages, BackwardPrefetchIsRefusedWithoutZero3) {
  // The error of loading the example with these overrides ("" when it loads).
  auto error = [](const char* zero, const char* prefetch) -> std::string {
    try {
      load_step("scenarios/examples/llama3-8b-64-h100.json",
                {{"parallel.zero_stage", zero}, {"parallel.backward_prefetch", prefetch}});
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  const std::string zero2 = error("2", "\"post\"");
  EXPECT_NE(zero2.find("backward_prefetch"), std::string::npos) << "ZeRO-2 was accepted: " << zero2;
  EXPECT_NE(zero2.find("zero_stage"), std::string::npos) << zero2;
  const std::string unknown = error("3", "\"early\"");
  EXPECT_NE(unknown.find("backward_prefetch"), std::string::npos) << "an unknown value was accepted: " << unknown;
  EXPECT_NE(unknown.find("post"), std::string::npos) << "lists what is accepted: " << unknown;
  EXPECT_EQ(error("3", "\"none\""), "");
}

/// DeepSpeed's ZeRO-3 before its PR #1188 (June 2021) synchronised the device before every parameter all-gather
/// (parallel.zero3_overlap false: nothing hidden under the compute) and moved its weights at a rate of its own, far
/// below NCCL's (parallel.zero3_engine_gbs).
TEST(ZeroStages, AnEngineWithoutOverlapExposesEveryGatherAtItsRate) {
  auto load = [](std::vector<scenario::Override> extra) {
    extra.push_back({"parallel.zero_stage", "3"});
    return load_step("scenarios/examples/llama3-8b-64-h100.json", extra);
  };
  const auto overlapped = load({}), blocking = load({{"parallel.zero3_overlap", "false"}}),
             engine = load({{"parallel.zero3_overlap", "false"}, {"parallel.zero3_engine_gbs", "20"}});
  const auto &o = overlapped.plan.stage(0, 0), &b = blocking.plan.stage(0, 0), &e = engine.plan.stage(0, 0);
  // Overlapped, only the first unit's gather of the forward is exposed; blocking, every unit's is, and none slows
  // the compute beside it.
  EXPECT_GT(b.forward.total(SegKind::Dp).seconds(), 4 * o.forward.total(SegKind::Dp).seconds());
  EXPECT_LT(b.forward.total(SegKind::Compute), o.forward.total(SegKind::Compute));
  // At 20 GB/s the forward gathers the stage's 16-bit weights once: their bytes over the rate.
  ASSERT_GT(e.params_local, 0);
  EXPECT_NEAR(e.forward.total(SegKind::Dp).seconds() / (2 * e.params_local / 20e9), 1.0, 0.01);
  // The backward gathers them again and reduce-scatters the gradients (fp32 main grads: 4 bytes a parameter), each
  // once: the first unit carries no reduce-scatter, the last one's blocks inline (no bucket left to overlap).
  EXPECT_NEAR(e.backward.total(SegKind::Dp).seconds() / ((2 + 4) * e.params_local / 20e9), 1.0, 0.01);
  EXPECT_TRUE(e.buckets.empty());
  for (auto f : {Fidelity::Analytic, Fidelity::Replica}) {
    const auto ro = run_step(overlapped, f), rb = run_step(blocking, f), re = run_step(engine, f);
    EXPECT_GT(rb.step_time, ro.step_time) << to_string(f);
    EXPECT_GT(re.step_time, rb.step_time) << to_string(f);
    for (const auto* r : {&ro, &rb, &re})
      EXPECT_EQ(r->breakdown.sum(), r->step_time) << to_string(f);
  }
}

/// What the engine's rate charges: nothing where no gather runs (hybrid sharding over groups of one), and a gather
/// issued after the previous unit's compute (backward_prefetch "post") never ahead of one issued before it.
TEST(ZeroStages, TheEngineRateChargesOnlyWhatRunsAndKeepsPrefetchOrder) {
  auto load = [](std::vector<scenario::Override> extra) {
    extra.push_back({"parallel.zero_stage", "3"});
    extra.push_back({"parallel.zero3_engine_gbs", "20"});
    return load_step("scenarios/examples/llama3-8b-64-h100.json", extra);
  };
  const auto one = load({{"parallel.dp_shard", "1"}});
  EXPECT_EQ(one.plan.stage(0, 0).forward.total(SegKind::Dp), Time::zero()) << "a shard group of one gathers nothing";
  const auto pre = load({}), post = load({{"parallel.backward_prefetch", "\"post\""}});
  for (auto f : {Fidelity::Analytic, Fidelity::Replica})
    EXPECT_GE(run_step(post, f).step_time, run_step(pre, f).step_time) << to_string(f);
}

/// Blocking gathers and reduce-scatters, with the rate bounding them, in the split backwards of ZB-H1 and DualPipeV
/// (B gathers, W reduce-scatters; each pass's last reduce-scatter with its first W) and in an MoE whose experts have
/// no expert-data-parallel group to gather over (ep x expert_tp = all 32 GPUs).
TEST(ZeroStages, TheEngineChargesEverySplitBackwardAndOnlyTheCollectivesThatRun) {
  for (const char* schedule : {"zb-h1", "dualpipev"}) {
    const auto z = load_step("scenarios/examples/llama3-8b-64-h100.json",
                             {{"parallel.zero_stage", "3"},
                              {"parallel.pp", "2"},
                              {"parallel.schedule", std::string("\"") + schedule + "\""},
                              {"parallel.vpp", std::string(schedule) == "dualpipev" ? "2" : "1"},
                              {"parallel.zero3_overlap", "false"},
                              {"parallel.zero3_engine_gbs", "20"}});
    for (int stage = 0; stage < z.plan.layout.pp * z.plan.layout.vpp; ++stage) {
      const auto& st = *z.plan.stages[static_cast<std::size_t>(stage)];
      const double expected = (2 + 4) * st.params_local / 20e9;  // the weights gathered, fp32 gradients reduced
      const double split = (st.backward_input.total(SegKind::Dp) + st.backward_weight.total(SegKind::Dp)).seconds();
      EXPECT_NEAR(split / expected, 1.0, 0.01) << schedule << " stage " << stage;
      EXPECT_NEAR(st.backward.total(SegKind::Dp).seconds() / expected, 1.0, 0.01) << schedule << " stage " << stage;
      EXPECT_TRUE(st.buckets.empty()) << schedule;
    }
  }
  // Hybrid sharding (4 copies of 8): the cross-copy all-reduce of each GPU's gradient shard is bounded too.
  const auto hsdp = load_step("scenarios/examples/llama3-8b-64-h100.json", {{"parallel.zero_stage", "3"},
                                                                            {"parallel.dp_shard", "8"},
                                                                            {"parallel.zero3_overlap", "false"},
                                                                            {"parallel.zero3_engine_gbs", "20"}});
  const auto& h = hsdp.plan.stage(0, 0);
  EXPECT_NEAR(h.backward.total(SegKind::Dp).seconds() / ((2 + 4 + 4.0 / 8) * h.params_local / 20e9), 1.0, 0.01);
  const auto moe = load_step("scenarios/ci/mixtral-8x7b-32-h100-ep.json", {{"parallel.zero_stage", "3"},
                                                                           {"parallel.tp", "4"},
                                                                           {"parallel.ep", "8"},
                                                                           {"parallel.expert_tp", "4"},
                                                                           {"parallel.zero3_overlap", "false"},
                                                                           {"parallel.zero3_engine_gbs", "20"}});
  const auto& st = moe.plan.stage(0, 0);
  // The routed experts are most of a GPU's parameters; only the rest is gathered.
  EXPECT_LT(st.forward.total(SegKind::Dp).seconds(), 0.5 * 2 * st.params_local / 20e9);
  EXPECT_GT(st.forward.total(SegKind::Dp), Time::zero());
}

TEST(ZeroStages, TheEngineKeysAreRefusedWithoutZero3) {
  for (const char* key : {"parallel.zero3_overlap", "parallel.zero3_engine_gbs"}) {
    const std::string value = std::string(key) == "parallel.zero3_overlap" ? "false" : "25";
    try {
      load_step("scenarios/examples/llama3-8b-64-h100.json", {{"parallel.zero_stage", "2"}, {key, value}});
      ADD_FAILURE() << key << " was accepted with zero_stage 2";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(key).substr(9)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("zero_stage"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(load_step("scenarios/examples/llama3-8b-64-h100.json",
                            {{"parallel.zero_stage", "3"}, {"parallel.zero3_engine_gbs", "25"}}));
}

}  // namespace
}  // namespace sim::execution
