// The planner (issue 6): search space, pruning with counted reasons, exhaustive optimality on a tiny model, thread
// independence, cancellation, the Pareto front, Megatron flags and a property test over random scenarios (the
// command line: plan_command_test.cpp).
#include "sim/base/rng.hpp"
#include "sim/cli/app.hpp"
#include "sim/execution/step_sim.hpp"
#include "sim/importers/importers.hpp"
#include "sim/parallel/megatron_flags.hpp"
#include "sim/planner/planner.hpp"
#include "sim/scenario/plan_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tiny_plan_scenario.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

namespace sim::planner {
namespace {

struct Loaded {
  support::TempDir dir;
  scenario::Scenario s;
  explicit Loaded(const std::string& text, const std::vector<scenario::Override>& overrides = {})
      : s(scenario::load_scenario(dir.write("s.json", text), overrides)) {}
};

PlanResult plan_without_run(const scenario::Scenario& s, PlanOptions opt = {}) {
  return plan(scenario::plan_problem(s, opt, /*with_run_level=*/false), opt);
}

std::int64_t sum_infeasible(const PlanResult& r) {
  std::int64_t n = 0;
  for (const auto& [rule, count] : r.infeasible)
    n += count;
  return n;
}

TEST(PlanSpace, FixedFieldsStayFixedAndOnlyFreeOnesVary) {
  // Everything fixed but tp: the space is tp over the divisors of the 8-GPU NVLink domain, nothing else.
  Loaded l(tiny_scenario(R"({"pp": 1, "cp": 1, "ep": 1, "vpp": 1, "sequence_parallel": false, "zero_stage": 0,
                             "distributed_optimizer": false, "recompute": "none", "micro_batch": 1,
                             "global_batch": 64, "schedule": "1f1b"})"));
  const auto p = scenario::plan_problem(l.s, {}, false);
  EXPECT_TRUE(p.fixed.pp && p.fixed.micro_batch && p.fixed.recompute && !p.fixed.tp && !p.fixed.dp);
  const auto configs = enumerate(p, 8);
  ASSERT_EQ(configs.size(), 4u);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(configs[i].tp, std::vector<int>({1, 2, 4, 8})[i]);
    EXPECT_EQ(configs[i].pp, 1);
    EXPECT_EQ(configs[i].micro_batch, 1);
    EXPECT_EQ(configs[i].recompute, parallel::Recompute::None);
  }
  // tp = 8 splits 4 heads unevenly: exactly one point pruned, by heads-tp; the other three evaluated.
  const auto r = plan_without_run(l.s);
  EXPECT_EQ(r.evaluated, 4);
  EXPECT_EQ(r.feasible, 3);
  ASSERT_EQ(r.infeasible.size(), 1u);
  EXPECT_EQ(r.infeasible[0].first, "heads-tp");
  EXPECT_EQ(r.infeasible[0].second, 1);
  for (const auto& c : r.candidates)
    EXPECT_NE(c.layout.tp, 8);
}

TEST(PlanSpace, SchedulesFollowVirtualStagesAndShardingFollowsThePipeline) {
  Loaded l(tiny_scenario(R"({"global_batch": 64})"));
  const auto p = scenario::plan_problem(l.s, {}, false);
  for (const auto& c : enumerate(p, 8)) {
    if (c.vpp > 2) {
      EXPECT_EQ(c.schedule, parallel::Schedule::Interleaved);
    }
    if (c.vpp == 2) {
      EXPECT_EQ(c.schedule, parallel::Schedule::Interleaved) << "a dense model: DualPipe's V is tried for MoE only";
    }
    if (c.vpp == 1) {
      EXPECT_NE(c.schedule, parallel::Schedule::Interleaved);
    }
    if (c.pp == 1) {
      EXPECT_EQ(c.schedule, parallel::Schedule::OneFOneB);
    }
    if (c.zero_stage == 3) {
      EXPECT_EQ(c.pp, 1) << "ZeRO-3 is searched without pipeline parallelism only (the scenario's: ZeRO-0)";
    }
    if (c.tp == 1) {
      EXPECT_FALSE(c.sequence_parallel);
    }
    EXPECT_FALSE(c.dp.has_value()) << "dp is derived";
  }
}

// ZeRO-2 with a pipeline (Llama 3 405B's layout) is searched whatever the scenario's own stage, so that a freed stage's
// answer does not depend on where the search started (trial 45: it was searched only from a ZeRO-2 scenario).
TEST(PlanSpace, ZeroTwoWithAPipelineIsSearchedFromAnyStartingStage) {
  std::set<std::pair<int, int>> seen[2];
  for (int start : {0, 1}) {
    Loaded l(tiny_scenario(R"({"global_batch": 64, "zero_stage": )" + std::to_string(start) + "}"));
    planner::PlanOptions opt;
    opt.free = {"zero_stage"};
    for (const auto& c : enumerate(scenario::plan_problem(l.s, opt, false), 8))
      seen[start].insert({c.zero_stage, c.pp});
  }
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_TRUE(seen[0].contains({2, 2})) << "ZeRO-2 with PP 2";
  EXPECT_FALSE(seen[0].contains({3, 2})) << "ZeRO-3 without a pipeline only";
}

// A freed stage keeps the scenario's own among the candidates: the 405B example (ZeRO-2 with PP 16, as Llama 3's FSDP
// ran) with --free zero_stage searched levels 0-1 only and answered "infeasible" beside the layout it had just shown
// to fit (a user trial).
TEST(PlanSpace, AFreedZeroStageKeepsTheScenariosOwn) {
  const auto s =
      scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-405b-16384-h100.json");
  ASSERT_EQ(s.parallel.zero_stage, 2);
  ASSERT_GT(s.parallel.pp, 1);
  planner::PlanOptions opt;
  opt.free = {"zero_stage"};
  const auto p = scenario::plan_problem(s, opt, false);
  bool own = false;
  for (const auto& c : enumerate(p, 8))
    own = own || (c.zero_stage == 2 && c.pp == s.parallel.pp);
  EXPECT_TRUE(own);
}

// The scenario's own micro-batch is tried beyond the search's cap of 16 (a user trial: 32 fitted, was faster, and was
// never tried, nor said to be left out).
TEST(PlanSpace, TheScenariosOwnMicroBatchIsTriedBeyondTheCap) {
  Loaded l(tiny_scenario(R"({"global_batch": 64, "micro_batch": 32})"));
  planner::PlanOptions opt;
  opt.free = {"micro_batch"};
  const auto p = scenario::plan_problem(l.s, opt, false);
  bool own = false;
  for (const auto& c : enumerate(p, 8))
    own = own || c.micro_batch == 32;
  EXPECT_TRUE(own);
}

// DualPipeV is searched with expert parallelism only, but a scenario that runs it at ep 1 keeps that layout when ep
// is freed (a user trial: it fit, ranked about fifth, and was never generated).
TEST(PlanSpace, TheScenariosOwnDualPipeVAtEpOneIsKept) {
  const auto s =
      scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/mixtral-8x7b-32-h100-ep.json",
                              {{"parallel.schedule", "\"dualpipev\""}, {"parallel.vpp", "2"}, {"parallel.ep", "1"}});
  planner::PlanOptions opt;
  opt.free = {"ep"};
  const auto p = scenario::plan_problem(s, opt, false);
  bool own = false;
  for (const auto& c : enumerate(p, 8))
    own = own || (c.schedule == parallel::Schedule::DualPipeV && c.ep == 1);
  EXPECT_TRUE(own);
}

TEST(PlanSpace, DualPipeVIsTriedBesideInterleavingForMoeWithExpertParallelism) {
  // Two chunks per rank are run round robin or in DualPipe's V, the latter where its paired passes hide the
  // all-to-alls: an MoE model with ep > 1.
  const auto s =
      scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/ci/mixtral-8x7b-32-h100-ep.json");
  PlanOptions opt;
  opt.free = {"pp", "vpp", "ep", "schedule"};
  const auto p = scenario::plan_problem(s, opt, false);
  int v = 0, interleaved_two = 0;
  for (const auto& c : enumerate(p, 32)) {
    if (c.schedule == parallel::Schedule::DualPipeV) {
      ++v;
      EXPECT_EQ(c.vpp, 2);
      EXPECT_GT(c.ep, 1);
    }
    if (c.schedule == parallel::Schedule::Interleaved && c.vpp == 2) ++interleaved_two;
  }
  EXPECT_GT(v, 0);
  EXPECT_GT(interleaved_two, v) << "the round robin is tried at every ep, the V only at ep > 1";
}

TEST(PlanSearch, TinyModelBestIsTheExhaustiveOptimumAndPureDataParallel) {
  // Exhaustive oracle: every enumerated point that is feasible and fits, simulated at replica fidelity here; the
  // planner (analytic screen, dominance, 5% short list) must find a configuration as fast as the best of them.
  Loaded l(tiny_scenario(R"({"global_batch": 8})"));
  PlanOptions opt;
  opt.threads = 2;
  const auto p = scenario::plan_problem(l.s, opt, false);
  const auto r = plan(p, opt);
  ASSERT_FALSE(r.candidates.empty());
  double best = std::numeric_limits<double>::infinity();
  int feasible = 0;
  const parallel::ClusterShape shape{8, 8, 8};
  for (const auto& c : enumerate(p, 8)) {
    auto resolved = parallel::resolve_layout(l.s.model, shape, c, p.seq_len);
    if (!std::holds_alternative<parallel::Layout>(resolved)) continue;
    const auto& layout = std::get<parallel::Layout>(resolved);
    if (!parallel::fits(parallel::peak_memory(l.s.model, layout, c, p.seq_len), l.s.hardware.gpu.hbm)) continue;
    ++feasible;
    execution::StepInputs in;
    in.model = &l.s.model;
    in.hardware = &l.s.hardware;
    in.parallel = c;
    in.layout = layout;
    in.seq_len = p.seq_len;
    in.topology = std::make_shared<const topology::Topology>([&] {
      auto t = p.topology;
      t.gpus = 8;
      return t;
    }());
    in.flash_attention = p.flash_attention;
    in.dropout = p.dropout;
    in.attention_dropout = p.attention_dropout;
    execution::StepOptions so;
    so.fidelity = execution::Fidelity::Replica;
    best = std::min(best, execution::simulate_step(execution::build_step_plan(in), so).step_time.seconds());
  }
  EXPECT_EQ(r.feasible, feasible);
  EXPECT_EQ(r.evaluated, r.feasible + sum_infeasible(r));
  EXPECT_DOUBLE_EQ(r.candidates.front().step.step_time.seconds(), best);
  // By hand: 4 tiny layers gain nothing from splitting the model (TP adds collectives to every layer, PP a bubble,
  // CP a key/value exchange), and with everything fitting recomputation only adds work: pure data parallelism.
  const auto& L = r.candidates.front().layout;
  EXPECT_EQ(L.tp, 1);
  EXPECT_EQ(L.pp, 1);
  EXPECT_EQ(L.cp, 1);
  EXPECT_EQ(L.dp, 8);
  EXPECT_EQ(r.candidates.front().parallel.recompute, parallel::Recompute::None);
  for (std::size_t i = 1; i < r.candidates.size(); ++i)
    EXPECT_LE(r.candidates[i - 1].step.step_time, r.candidates[i].step.step_time) << "best first";
}

TEST(PlanSearch, NothingFitsIsAnAnswerWithItsReasons) {
  // Llama 3 70B on one 8-GPU node: 70.6B parameters at 18 bytes each (no data parallelism to shard over) need
  // about 1.27 TB, 159 GB per GPU at best: every point that passes the rules is out of memory.
  Loaded l(R"({"schema": "trainsim.scenario/1", "name": "70b-on-8", "model": "llama3-70b",
    "hardware": "h100-sxm5-80gb", "cluster": {"gpus": 8}, "parallel": {"global_batch": 8},
    "training": {"seq_len": 8192, "tokens": "1T"}})");
  const auto r = plan_without_run(l.s);
  EXPECT_TRUE(r.candidates.empty());
  EXPECT_EQ(r.feasible, 0);
  EXPECT_GT(r.evaluated, 0);
  EXPECT_EQ(sum_infeasible(r), r.evaluated);
  ASSERT_FALSE(r.infeasible.empty());
  EXPECT_EQ(r.infeasible.front().first, "out of memory");
}

TEST(PlanSearch, ImpossibleFixedSizesExplainThemselves) {
  // tp*pp fixed at 3*1 on 8 GPUs: nothing tiles the cluster; the scenario's own point says why.
  Loaded l(tiny_scenario(R"({"tp": 3, "pp": 1, "cp": 1, "global_batch": 8})"));
  const auto r = plan_without_run(l.s);
  EXPECT_TRUE(r.candidates.empty());
  EXPECT_EQ(r.evaluated, sum_infeasible(r));
  bool divisibility = false;
  for (const auto& [rule, count] : r.infeasible)
    divisibility |= rule == "world-size-divisibility";
  EXPECT_TRUE(divisibility);
}

TEST(PlanSearch, SameResultForAnyThreadCount) {
  Loaded l(tiny_scenario(R"({"global_batch": 16})", 16));
  PlanOptions one;
  one.threads = 1;
  one.gpus = {8, 16};
  PlanOptions three = one;
  three.threads = 3;
  const auto a = to_json(plan(scenario::plan_problem(l.s, one), one), 10).dump();
  const auto b = to_json(plan(scenario::plan_problem(l.s, three), three), 10).dump();
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("\"run\": {"), std::string::npos) << "the finalists went through the run level";
}

TEST(PlanSearch, ProgressCanCancelMidSearch) {
  // The default scenario with every field free takes about a second of analytic work: the first progress call
  // (after 100 ms) comes mid-phase and its exception must stop the workers and come out of plan().
  auto s = scenario::load_default_scenario();
  PlanOptions opt;
  opt.threads = 2;
  opt.free = {"all"};
  int first_done = -1, first_total = -1;
  opt.progress = [&](int done, int total) {
    first_done = done;
    first_total = total;
    throw std::runtime_error("cancelled");
  };
  EXPECT_THROW(plan(scenario::plan_problem(s, opt, false), opt), std::runtime_error);
  EXPECT_GE(first_total, 1000);
  EXPECT_LT(first_done, first_total);
}

TEST(PlanSearch, CostObjectiveNeedsTheRunLevel) {
  Loaded l(tiny_scenario(R"({"global_batch": 8})"));
  PlanOptions opt;
  opt.objective = Objective::Cost;
  EXPECT_THROW(plan(scenario::plan_problem(l.s, opt, false), opt), base::ConfigError);
}

TEST(PlanSearch, CostObjectiveRanksByExpectedCostAcrossClusterSizes) {
  Loaded l(tiny_scenario(R"({"global_batch": 16})", 16));
  PlanOptions opt;
  opt.objective = Objective::Cost;
  opt.gpus = {8, 16};
  opt.run_trials = 20;
  const auto r = scenario::plan_scenario(l.s, opt);
  ASSERT_GE(r.candidates.size(), 2u);
  bool sizes[2] = {false, false};
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    ASSERT_TRUE(r.candidates[i].run.has_value());
    sizes[r.candidates[i].gpus == 16] = true;
    if (i > 0) {
      EXPECT_LE(r.candidates[i - 1].run->cost_mean_usd, r.candidates[i].run->cost_mean_usd);
    }
  }
  EXPECT_TRUE(sizes[0] && sizes[1]) << "both cluster sizes reach the run level";
  // The Pareto front runs from the fastest to the cheapest: time up, cost down; the cheapest is rank 1.
  ASSERT_FALSE(r.pareto.empty());
  for (std::size_t k = 1; k < r.pareto.size(); ++k) {
    const auto& a = *r.candidates[static_cast<std::size_t>(r.pareto[k - 1])].run;
    const auto& b = *r.candidates[static_cast<std::size_t>(r.pareto[k])].run;
    EXPECT_LE(a.time_to_train_mean_days, b.time_to_train_mean_days);
    EXPECT_GT(a.cost_mean_usd, b.cost_mean_usd);
  }
  EXPECT_EQ(r.pareto.back(), 0);
}

TEST(PlanPareto, KeepsOnlyUndominatedPointsFastestFirst) {
  // (time, cost): (4,1) and (2,3) and (1,5) trade off; (3,4) is beaten by (2,3); the repeated (2,3) keeps the first.
  const std::vector<std::pair<double, double>> pts{{1, 5}, {2, 3}, {3, 4}, {4, 1}, {2, 3}, {5, 1}};
  EXPECT_EQ(pareto_front(pts), (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(pareto_front({}).empty());
}

// The screen keeps a point within the margin of a faster one at more memory: the closed form and the replay may order
// them the other way (a user trial's MoE layouts: ZeRO-0 at 1.3650 s and 50.1 GiB beside the distributed optimizer at
// 1.3649 s and 31.1 GiB, analytic; ZeRO-0 was 0.7% faster at replica fidelity). Beyond the margin it is dropped.
TEST(PlanPareto, TheScreenKeepsNearTiesForTheReplay) {
  const std::vector<std::pair<double, double>> pts{{1.3649, 31.1}, {1.3650, 50.1}, {1.5, 60}, {1.3649, 31.1}};
  EXPECT_EQ(pareto_front(pts), (std::vector<int>{0}));
  EXPECT_EQ(pareto_front_within(pts, kScreenMargin), (std::vector<int>{0, 1})) << "the repeat of 0 goes, 1.5 s goes";
  EXPECT_EQ(pareto_front_within(pts, 0.0), (std::vector<int>{0}));
  EXPECT_TRUE(pareto_front_within({}, kScreenMargin).empty());
}

// A candidate's flags are the parallel part of sim/parallel's one Megatron-LM writer (the one `step --explain` uses),
// on one line, and read back by the importer to the same sharding and recomputation.
TEST(PlanFlags, MegatronCommandLine) {
  auto line = [](const parallel::ParallelConfig& c, const parallel::Layout& l) {
    workload::ModelSpec model;
    model.layers = 80;
    return parallel::megatron_parallel_line(parallel::megatron_args(c, l, model, 4096, hardware::Dtype::Bf16));
  };
  parallel::ParallelConfig c;
  c.tp = 8;
  c.pp = 4;
  c.vpp = 5;
  c.cp = 2;
  c.sequence_parallel = true;
  c.zero_stage = 1;
  c.distributed_optimizer = true;
  c.recompute = parallel::Recompute::Selective;
  c.micro_batch = 2;
  c.global_batch = 1024;
  parallel::Layout l;
  l.tp = 8;
  l.pp = 4;
  l.vpp = 5;
  l.cp = 2;
  l.dp = 16;
  l.micro_batch = 2;
  l.micro_batches = 32;
  l.layers_per_stage.assign(20, 4);
  EXPECT_EQ(line(c, l),
            "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --context-parallel-size 2 "
            "--num-layers-per-virtual-pipeline-stage 4 --sequence-parallel --use-distributed-optimizer "
            "--overlap-grad-reduce --recompute-granularity selective --micro-batch-size 2 --global-batch-size 1024");
  c.overlap_grad_reduce = false;  // Megatron-LM's default: no flag
  EXPECT_EQ(line(c, l).find("--overlap-grad-reduce"), std::string::npos) << line(c, l);
  c.overlap_grad_reduce = true;
  c.dp_shard = 4;  // hybrid sharding: 16 / 4 distributed optimizer instances
  EXPECT_NE(line(c, l).find("--overlap-grad-reduce --num-distributed-optimizer-instances 4"), std::string::npos)
      << line(c, l);
  c.dp_shard = 16;  // one copy: no flag
  EXPECT_EQ(line(c, l).find("--num-distributed-optimizer-instances"), std::string::npos) << line(c, l);
  c.dp_shard = 0;
  c.tp_comm_overlap = true;
  c.overlap_param_gather = true;
  EXPECT_NE(line(c, l).find("--sequence-parallel --tp-comm-overlap --use-distributed-optimizer --overlap-param-gather"),
            std::string::npos)
      << line(c, l);
  c.tp_comm_overlap = false;
  c.overlap_param_gather = false;
  c.recompute = parallel::Recompute::Full;
  c.zero_stage = 0;
  c.distributed_optimizer = false;
  c.sequence_parallel = false;
  l.vpp = 1;
  l.cp = 1;
  l.layers_per_stage.assign(4, 20);
  l.micro_batches = 64;
  EXPECT_EQ(line(c, l),
            "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --overlap-grad-reduce "
            "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --micro-batch-size 2 "
            "--global-batch-size 2048");
  // MoE parallel folding and DeepEP dispatch.
  c.recompute = parallel::Recompute::None;
  c.moe_dispatcher = parallel::MoeDispatcher::DeepEp;
  l.ep = 8;
  l.expert_tp = 1;
  EXPECT_EQ(line(c, l),
            "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --expert-model-parallel-size 8 "
            "--expert-tensor-parallel-size 1 --moe-token-dispatcher-type flex --moe-enable-deepep "
            "--overlap-grad-reduce --micro-batch-size 2 --global-batch-size 2048");
  // ZeRO-3: Megatron-FSDP's optim_grads_params, which the importer reads back as stage 3.
  c.moe_dispatcher = parallel::MoeDispatcher::AllToAll;
  l.ep = 1;
  l.expert_tp = 0;
  c.zero_stage = 3;
  const std::string zero3 = line(c, l);
  EXPECT_NE(zero3.find("--use-distributed-optimizer --use-megatron-fsdp --data-parallel-sharding-strategy "
                       "optim_grads_params"),
            std::string::npos)
      << zero3;
  const auto back =
      importers::import_megatron_text("torchrun --nproc_per_node=8 --nnodes 16 pretrain_gpt.py " + zero3 +
                                          " --num-layers 80 --hidden-size 8192 --num-attention-heads 64\n",
                                      "plan.sh");
  EXPECT_EQ(back.draft.integer("parallel.zero_stage"), 3);
}

TEST(PlanProperty, NeverReturnsAnInfeasibleConfigurationOnRandomScenarios) {
  base::Rng rng(20261130);  // the property test's own stream
  auto pick = [&](const std::vector<std::string>& v) {
    return v[static_cast<std::size_t>(rng.uniform() * static_cast<double>(v.size()))];
  };
  int with_candidates = 0;
  for (int trial = 0; trial < 14; ++trial) {
    const std::string model = pick({"llama3-8b", "mixtral-8x7b", "gpt3-175b", "llama2-70b"});
    const std::string hardware = pick({"h100-sxm5-80gb", "a100-sxm4-40gb", "b200-sxm-180gb"});
    const std::string gpus = pick({"8", "16", "32", "64"});
    const std::string batch = pick({"16", "32", "64", "128"});
    const std::string seq = pick({"2048", "4096"});
    std::vector<scenario::Override> sets{{"model", "\"" + model + "\""},
                                         {"hardware", "\"" + hardware + "\""},
                                         {"cluster.gpus", gpus},
                                         {"parallel", "{\"global_batch\": " + batch + "}"},
                                         {"training.seq_len", seq}};
    // A random subset of fields fixed at random values (possibly impossible ones).
    if (rng.uniform() < 0.4) sets.push_back({"parallel.tp", pick({"1", "2", "4", "8"})});
    if (rng.uniform() < 0.4) sets.push_back({"parallel.pp", pick({"1", "2", "4"})});
    if (rng.uniform() < 0.3) sets.push_back({"parallel.recompute", pick({"\"none\"", "\"selective\"", "\"full\""})});
    if (rng.uniform() < 0.3) sets.push_back({"parallel.micro_batch", pick({"1", "2", "4"})});
    if (rng.uniform() < 0.3) sets.push_back({"parallel.sequence_parallel", pick({"true", "false"})});
    if (rng.uniform() < 0.2) sets.push_back({"parallel.zero_stage", pick({"0", "1", "3"})});
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + model + " on " + gpus + " " + hardware + ", batch " + batch +
                 ", seq " + seq);
    const auto s = scenario::load_default_scenario(sets);
    PlanOptions opt;
    opt.threads = 2;
    const auto p = scenario::plan_problem(s, opt, false);
    const auto r = plan(p, opt);
    EXPECT_EQ(r.evaluated, r.feasible + sum_infeasible(r));
    with_candidates += !r.candidates.empty();
    for (const auto& c : r.candidates) {
      const parallel::ClusterShape shape{c.gpus, p.topology.gpus_per_node, p.topology.nvlink_domain};
      const auto resolved = parallel::resolve_layout(s.model, shape, c.parallel, s.training.seq_len);
      ASSERT_TRUE(std::holds_alternative<parallel::Layout>(resolved)) << c.megatron_flags;
      const auto mem =
          parallel::peak_memory(s.model, std::get<parallel::Layout>(resolved), c.parallel, s.training.seq_len);
      EXPECT_TRUE(parallel::fits(mem, s.hardware.gpu.hbm)) << c.megatron_flags << ": " << mem.total.gib() << " GiB";
      EXPECT_TRUE(c.step.fits);
      EXPECT_EQ(c.layout.gpus(), c.gpus);
      if (p.fixed.tp) {
        EXPECT_EQ(c.parallel.tp, s.parallel.tp);
      }
      if (p.fixed.pp) {
        EXPECT_EQ(c.parallel.pp, s.parallel.pp);
      }
      if (p.fixed.recompute) {
        EXPECT_EQ(c.parallel.recompute, s.parallel.recompute);
      }
      if (p.fixed.micro_batch) {
        EXPECT_EQ(c.parallel.micro_batch, s.parallel.micro_batch);
      }
      if (p.fixed.sequence_parallel) {
        EXPECT_EQ(c.parallel.sequence_parallel, s.parallel.sequence_parallel);
      }
      if (p.fixed.zero_stage) {
        EXPECT_EQ(c.parallel.zero_stage, s.parallel.zero_stage);
      }
    }
  }
  EXPECT_GE(with_candidates, 5) << "the property must be exercised on scenarios that have answers";
}

}  // namespace
}  // namespace sim::planner
