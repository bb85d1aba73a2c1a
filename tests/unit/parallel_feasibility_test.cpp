// tests/unit/parallel_feasibility_test.cpp: every layout rule, exercised through resolve_layout with its id and reason.
#include "sim/parallel/feasibility.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace sim::parallel {

void PrintTo(const Infeasible& i, std::ostream* os) {
  *os << "{" << i.rule << ": " << i.reason << "}";
}

namespace {

using workload::ModelSpec;

constexpr ClusterShape kHgx1024{.gpus = 1024, .gpus_per_node = 8, .nvlink_domain = 8};

ModelSpec model(const std::string& name) {
  return scenario::load_model(name);
}

/// A small dense model whose attention and MLP sizes a test can set freely.
ModelSpec toy(int heads, int kv_heads, int ffn_hidden) {
  ModelSpec m;
  m.name = "toy";
  m.layers = 32;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.hidden = heads * 128;
  m.ffn_hidden = ffn_hidden;
  m.vocab = 32000;
  m.activation = workload::Activation::SwiGlu;
  m.position_embedding = workload::PositionEmbedding::Rope;
  m.max_seq_len = 8192;
  return m;
}

/// Llama 3 70B's published-style layout on 1024 H100s: tp 8, pp 4, dp 32 (derived), SP, 1F1B.
ParallelConfig tp8_pp4() {
  ParallelConfig c;
  c.tp = 8;
  c.pp = 4;
  c.sequence_parallel = true;
  c.micro_batch = 1;
  c.global_batch = 1024;
  return c;
}

std::vector<Infeasible> problems(const ModelSpec& m, const ClusterShape& cluster, const ParallelConfig& c,
                                 int seq_len) {
  auto r = resolve_layout(m, cluster, c, seq_len);
  if (auto* v = std::get_if<std::vector<Infeasible>>(&r)) return *v;
  return {};
}

Layout layout_of(const ModelSpec& m, const ClusterShape& cluster, const ParallelConfig& c, int seq_len) {
  auto r = resolve_layout(m, cluster, c, seq_len);
  if (auto* v = std::get_if<std::vector<Infeasible>>(&r)) {
    ADD_FAILURE() << "expected a feasible layout, got " << v->size() << " problems, first: " << v->front().reason;
    return {};
  }
  return std::get<Layout>(r);
}

using Problems = std::vector<Infeasible>;

TEST(ResolveLayout, DerivesDpMicroBatchesAndAnEvenSplit) {
  const Layout l = layout_of(model("llama3-70b"), kHgx1024, tp8_pp4(), 8192);
  EXPECT_EQ(l.dp, 32) << "dp = gpus / (tp*pp*cp) = 1024 / 32";
  EXPECT_EQ(l.micro_batches, 32) << "global_batch / (micro_batch * dp) = 1024 / 32";
  EXPECT_EQ(l.layers_per_stage, std::vector<int>(4, 20)) << "80 layers evenly over 4 stages";
  EXPECT_EQ(l.gpus(), 1024);
}

TEST(ResolveLayout, AcceptsAGivenDpThatAgrees) {
  auto c = tp8_pp4();
  c.dp = 32;
  EXPECT_EQ(layout_of(model("llama3-70b"), kHgx1024, c, 8192).dp, 32);
}

TEST(ResolveLayout, KeepsAnExplicitUnevenSplitInVirtualStageOrder) {
  // Llama 3 405B: 126 layers on 16 stages, one layer fewer on the first and the last (Llama Team 2024, Sec. 3.3.2).
  auto c = tp8_pp4();
  c.pp = 16;
  c.global_batch = 2048;
  c.layers_per_stage = std::vector<int>(16, 8);
  c.layers_per_stage.front() = 7;
  c.layers_per_stage.back() = 7;
  const Layout l = layout_of(model("llama3-405b"), {8192, 8, 8}, c, 8192);
  EXPECT_EQ(l.dp, 64);
  EXPECT_EQ(l.layers_on_rank(0), 7);
  EXPECT_EQ(l.layers_on_rank(7), 8);
  EXPECT_EQ(l.layers_on_rank(15), 7);
}

TEST(ResolveLayout, InterleavedChunkCOfRankRIsVirtualStageCTimesPpPlusR) {
  auto c = tp8_pp4();
  c.vpp = 2;
  c.schedule = Schedule::Interleaved;
  c.layers_per_stage = {9, 10, 10, 11, 11, 10, 10, 9};  // stages 0..7: rank r holds stages r and 4 + r
  const Layout l = layout_of(model("llama3-70b"), kHgx1024, c, 8192);
  EXPECT_EQ(l.stage(1, 2), 6);
  EXPECT_EQ(l.layers_on_rank(0), 9 + 11);
  EXPECT_EQ(l.layers_on_rank(3), 11 + 9);
}

TEST(ResolveLayout, KeyValueHeadsAreNeverReplicatedOverTensorParallelism) {
  // Megatron-Core refuses tp 16 for Llama 3 70B's 8 KV heads (TransformerConfig); trainsim replicated them (a user
  // trial). TP across the NVLink domain alone (16 on 8-GPU domains) is slow but allowed: 16 KV heads at tp 16.
  auto c = tp8_pp4();
  c.tp = 16;
  c.global_batch = 512;
  auto m = model("llama3-70b");
  ASSERT_EQ(problems(m, kHgx1024, c, 8192).size(), 1u);
  EXPECT_EQ(problems(m, kHgx1024, c, 8192).front().rule, "kv-heads-tp");
  m.kv_heads = 16;
  EXPECT_EQ(problems(m, kHgx1024, c, 8192), Problems{});
}

TEST(ResolveLayout, SequenceParallelAtTp1IsANoOpNotAnError) {
  auto c = tp8_pp4();
  c.tp = 1;
  c.pp = 8;
  c.global_batch = 1024;
  EXPECT_EQ(problems(model("llama3-8b"), kHgx1024, c, 8192), Problems{});
}

TEST(ResolveLayout, ReportsEveryViolatedRuleAtOnce) {
  auto c = tp8_pp4();
  c.tp = 3;
  const auto found = problems(model("llama3-70b"), kHgx1024, c, 8192);
  std::set<std::string> ids;
  for (const auto& p : found)
    ids.insert(p.rule);
  EXPECT_EQ(ids, (std::set<std::string>{"world-size-divisibility", "heads-tp", "kv-heads-tp", "ffn-tp",
                                        "tp-nvlink-domain", "seq-sp-tp"}))
      << "tp = 3 breaks the world size, every head and MLP split, the NVLink domain and the 8192-token SP split";
}

TEST(LayoutRules, AreAtLeastTwelveUniqueKebabCaseIds) {
  std::set<std::string> ids;
  for (const auto& r : layout_rules()) {
    const std::string id = r.id;
    EXPECT_TRUE(std::all_of(id.begin(), id.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || ch == '-' || (ch >= '0' && ch <= '9');
    })) << id;
    EXPECT_FALSE(std::string(r.description).empty()) << id;
    EXPECT_TRUE(ids.insert(id).second) << "duplicate rule id " << id;
  }
  EXPECT_GE(ids.size(), 12u);
}

// One test per rule: the configuration breaks exactly that rule, and the reason carries the numbers.

TEST(LayoutRule, WorldSizeDivisibility) {
  EXPECT_EQ(problems(model("llama3-70b"), {1000, 8, 8}, tp8_pp4(), 8192),
            (Problems{{"world-size-divisibility", "gpus = 1000 is not divisible by tp*pp*cp = 8*4*1 = 32"}}));
}

TEST(LayoutRule, WorldSizeProduct) {
  auto c = tp8_pp4();
  c.dp = 16;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"world-size-product", "tp*pp*dp*cp = 8*4*16*1 = 512 but the cluster has 1024 GPUs"}}));
}

TEST(LayoutRule, HeadsTp) {
  // 12 heads in 4 query groups: tp = 8 splits neither.
  EXPECT_EQ(problems(toy(12, 4, 4096), kHgx1024, tp8_pp4(), 8192),
            (Problems{{"heads-tp", "heads = 12 is not divisible by tp = 8"},
                      {"kv-heads-tp",
                       "kv_heads = 4 is not divisible by tp = 8 (Megatron-Core needs the query groups "
                       "to split evenly over tensor parallelism)"}}));
}

TEST(LayoutRule, KvHeadsTp) {
  auto c = tp8_pp4();
  c.tp = 4;
  c.global_batch = 2048;
  EXPECT_EQ(problems(toy(24, 6, 8192), kHgx1024, c, 8192),
            (Problems{{"kv-heads-tp",
                       "kv_heads = 6 is not divisible by tp = 4 (Megatron-Core needs the query groups to "
                       "split evenly over tensor parallelism)"}}));
}

TEST(LayoutRule, FfnTp) {
  EXPECT_EQ(problems(toy(32, 8, 11001), kHgx1024, tp8_pp4(), 8192),
            (Problems{{"ffn-tp", "ffn_hidden = 11001 is not divisible by tp = 8"}}));
}

TEST(LayoutRule, ExpertFfnTp) {
  auto m = model("mixtral-8x7b");
  m.moe->ffn_hidden = 14340;
  EXPECT_EQ(problems(m, kHgx1024, tp8_pp4(), 8192),
            (Problems{{"expert-ffn-tp", "moe.ffn_hidden = 14340 is not divisible by tp = 8"}}));
}

TEST(LayoutRule, TpNvlinkDomain) {
  // GB200 NVL72: a domain of 72 GPUs; tp = 16 neither divides 72 nor is a multiple of it (Llama 3 70B with 16 KV
  // heads, so that only this rule fails).
  auto c = tp8_pp4();
  c.tp = 16;
  c.global_batch = 1152;
  auto m = model("llama3-70b");
  m.kv_heads = 16;
  EXPECT_EQ(problems(m, {1152, 4, 72}, c, 8192),
            (Problems{{"tp-nvlink-domain",
                       "tp = 16 neither divides the NVLink domain of 72 GPUs nor is a multiple "
                       "of it (TP groups would straddle domains unevenly)"}}));
}

TEST(LayoutRule, SeqExceedsPositions) {
  auto c = tp8_pp4();
  c.pp = 8;
  EXPECT_EQ(problems(model("gpt3-175b"), kHgx1024, c, 4096),
            (Problems{{"seq-exceeds-positions",
                       "seq_len = 4096 exceeds the 2048 learned position embeddings of "
                       "gpt3-175b"}}));
}

TEST(LayoutRule, SeqCp) {
  auto c = tp8_pp4();
  c.cp = 2;
  c.sequence_parallel = false;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8190),
            (Problems{{"seq-cp",
                       "seq_len = 8190 is not divisible by 2*cp = 4 (load-balanced ring attention cuts the "
                       "sequence into 2*cp chunks)"}}));
}

TEST(LayoutRule, SeqSpTp) {
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, tp8_pp4(), 8188),
            (Problems{{"seq-sp-tp",
                       "sequence parallelism splits the 8188 tokens of each context-parallel rank over "
                       "tp = 8; 8188 is not divisible by 8"}}));
}

TEST(LayoutRule, GlobalBatchDivisibility) {
  auto c = tp8_pp4();
  c.global_batch = 1000;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"global-batch-divisibility",
                       "global_batch = 1000 is not divisible by micro_batch*dp = 1*32 "
                       "= 32"}}));
}

TEST(LayoutRule, DpShard) {
  auto c = tp8_pp4();
  c.zero_stage = 1;
  c.dp_shard = 12;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"dp-shard", "dp_shard = 12 does not divide dp = 32 into whole sharding groups"}}));
  c.dp_shard = 8;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
}

TEST(LayoutRule, MicroBatchesPp) {
  // Fewer micro-batches than stages: Megatron-LM's non-interleaved 1F1B runs them (its warm-up is min(pp - rank - 1,
  // m) forwards), as GPipe does; ZB-H1 assumes m >= p.
  auto c = tp8_pp4();
  c.global_batch = 64;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
  c.schedule = Schedule::ZeroBubbleH1;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"micro-batches-pp",
                       "2 micro-batches per replica are fewer than pp = 4 stages (zb-h1 needs at "
                       "least one micro-batch per stage)"}}));
}

TEST(LayoutRule, LayerPasses) {
  auto c = tp8_pp4();
  c.global_batch = 104832;  // 3276 micro-batches of 80 layers = 262080 passes: the largest accepted
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
  c.global_batch = 104832 + 32;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"layer-passes",
                       "global_batch = 104864 gives 3277 micro-batches per replica, 262160 passes of the model's 80 "
                       "layers; at most 262144 are simulated: global_batch <= 104832 here, or a larger micro_batch"}}))
      << "a step replays every layer of every micro-batch: a huge global batch is refused, not simulated for minutes";
}

TEST(LayoutRule, MicroBatchesPpDoesNotBindGPipe) {
  auto c = tp8_pp4();
  c.global_batch = 64;
  c.schedule = Schedule::GPipe;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
}

TEST(LayoutRule, InterleavedMicroBatches) {
  auto c = tp8_pp4();
  c.vpp = 2;
  c.schedule = Schedule::Interleaved;
  c.global_batch = 192;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"interleaved-micro-batches",
                       "the interleaved schedule needs micro-batches per replica (6) "
                       "divisible by pp = 4 (Megatron-LM)"}}));
}

TEST(LayoutRule, DualpipevShape) {
  // dp 32: 1024 sequences are 32 micro-batches per replica, at least 2 x pp = 8; 128 are 4.
  auto c = tp8_pp4();
  c.vpp = 2;
  c.schedule = Schedule::DualPipeV;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
  const Layout l = layout_of(model("llama3-70b"), kHgx1024, c, 8192);
  EXPECT_TRUE(l.v_shape);
  EXPECT_EQ(l.stage(0, 1), 1);
  EXPECT_EQ(l.stage(1, 1), 6) << "rank 1 of 4 folds back at stage 2 x 4 - 1 - 1";
  for (int s = 0; s < l.stages(); ++s)
    EXPECT_EQ(l.stage(l.chunk_of(s), l.rank_of(s)), s);
  c.global_batch = 128;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"dualpipev-shape",
                       "dualpipev needs pp >= 2, vpp = 2 and at least 2 x pp micro-batches per replica; here pp = 4, "
                       "vpp = 2, 4 micro-batches"}}));
  // A configuration built in code without its two chunks (the scenario loader sets vpp 2 itself).
  c.global_batch = 1024;
  c.vpp = 1;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"dualpipev-shape",
                       "dualpipev needs pp >= 2, vpp = 2 and at least 2 x pp micro-batches per replica; here pp = 4, "
                       "vpp = 1, 32 micro-batches"}}));
}

TEST(LayoutRule, VppNeedsPp) {
  auto c = tp8_pp4();
  c.pp = 1;
  c.vpp = 2;
  c.schedule = Schedule::Interleaved;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"vpp-needs-pp", "vpp = 2 virtual stages need pp > 1 (there is no pipeline to interleave)"}}));
}

TEST(LayoutRule, VppNeedsInterleaved) {
  auto c = tp8_pp4();
  c.vpp = 2;
  c.schedule = Schedule::GPipe;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"vpp-needs-interleaved", "vpp = 2 virtual stages need the interleaved schedule, not gpipe"}}));
}

ParallelConfig llama405_pp16() {
  auto c = tp8_pp4();
  c.pp = 16;
  c.global_batch = 2048;
  return c;
}
constexpr ClusterShape kHgx8192{.gpus = 8192, .gpus_per_node = 8, .nvlink_domain = 8};

TEST(LayoutRule, LayersStages) {
  EXPECT_EQ(problems(model("llama3-405b"), kHgx8192, llama405_pp16(), 8192),
            (Problems{{"layers-stages",
                       "layers = 126 is not divisible by pp*vpp = 16*1 = 16; give parallel.layers_per_stage, "
                       "first/last_stage_layers or account_for_*_in_pipeline_split for an uneven split"}}));
}

TEST(LayoutRule, LayersPerStageCount) {
  auto c = llama405_pp16();
  c.layers_per_stage = std::vector<int>(15, 8);  // 6 + 13 x 8 + 16 = 126 layers, but 15 stages
  c.layers_per_stage.front() = 6;
  c.layers_per_stage.back() = 16;
  EXPECT_EQ(problems(model("llama3-405b"), kHgx8192, c, 8192),
            (Problems{{"layers-per-stage-count", "layers_per_stage has 15 entries but pp*vpp = 16*1 = 16"}}));
}

TEST(LayoutRule, LayersPerStageSum) {
  auto c = llama405_pp16();
  c.layers_per_stage = std::vector<int>(16, 8);
  c.layers_per_stage.front() = 7;
  c.layers_per_stage.back() = 6;
  EXPECT_EQ(problems(model("llama3-405b"), kHgx8192, c, 8192),
            (Problems{{"layers-per-stage-sum", "layers_per_stage sums to 125 but llama3-405b has 126 layers"}}));
}

TEST(LayoutRule, EmptyStage) {
  auto c = llama405_pp16();
  c.layers_per_stage = std::vector<int>(16, 8);  // 9 + 0 + 13 x 8 + 13 = 126
  c.layers_per_stage[0] = 9;
  c.layers_per_stage[1] = 0;
  c.layers_per_stage[15] = 13;
  EXPECT_EQ(problems(model("llama3-405b"), kHgx8192, c, 8192),
            (Problems{{"empty-stage",
                       "virtual stage 1 of layers_per_stage has no layer (only the first and the last stage, which "
                       "hold the embedding and the output layer, may have none)"}}));
  // The first (embedding) and the last (output layer) stage may hold no transformer layer, as Megatron-LM's "E|..."
  // and "...|L" layouts do.
  c.layers_per_stage[0] = 0;
  c.layers_per_stage[1] = 9;
  EXPECT_EQ(problems(model("llama3-405b"), kHgx8192, c, 8192), Problems{});
}

TEST(LayoutRule, PipelineLayoutMtp) {
  // DeepSeek-V3 (61 layers, one MTP layer) with the Megatron-MoE-ModelZoo's layout "Et|(tt|)*30mL" on PP 8 x VPP 4,
  // and the same layout without its 'm'.
  ParallelConfig c;
  c.pp = 8;
  c.vpp = 4;
  c.ep = 8;
  c.schedule = Schedule::Interleaved;
  c.global_batch = 256;
  c.from_layout = true;  // "Et|(tt|)*30L"
  c.layers_per_stage = std::vector<int>(32, 2);
  c.layers_per_stage.front() = 1;
  c.layers_per_stage.back() = 0;
  EXPECT_EQ(problems(model("deepseek-v3"), {256, 8, 8}, c, 4096),
            (Problems{{"pipeline-layout-mtp",
                       "pipeline_layout has 0 MTP layers 'm' but deepseek-v3 has 1 (Megatron-LM: they must match)"}}));
  c.layout_mtp = 1;
  EXPECT_EQ(problems(model("deepseek-v3"), {256, 8, 8}, c, 4096), Problems{});
}

TEST(LayoutRule, EpDenseModel) {
  auto c = tp8_pp4();
  c.ep = 2;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"ep-dense-model", "ep = 2 but llama3-70b is a dense model (it has no experts to distribute)"}}));
}

ParallelConfig mixtral_tp2() {
  ParallelConfig c;
  c.tp = 2;
  c.sequence_parallel = true;
  c.global_batch = 48;
  return c;
}

TEST(LayoutRule, ExpertsEp) {
  auto c = mixtral_tp2();
  c.ep = 3;  // dp = 24 is divisible by 3, the 8 experts are not
  EXPECT_EQ(problems(model("mixtral-8x7b"), {48, 8, 8}, c, 4096),
            (Problems{{"experts-ep", "experts = 8 is not divisible by ep = 3"}}));
}

TEST(LayoutRule, EpDpCp) {
  auto c = mixtral_tp2();
  c.tp = 8;
  c.ep = 8;
  c.global_batch = 32;
  EXPECT_EQ(problems(model("mixtral-8x7b"), {32, 8, 8}, c, 4096),
            (Problems{{"ep-dp-cp",
                       "ep = 8 does not divide dp*cp = 4*1 = 4 (experts are sharded across data-parallel "
                       "ranks)"}}));
}

TEST(LayoutRule, MoeTpNeedsSp) {
  auto c = mixtral_tp2();
  c.ep = 2;
  c.sequence_parallel = false;
  EXPECT_EQ(problems(model("mixtral-8x7b"), {16, 8, 8}, c, 4096),
            (Problems{{"moe-tp-needs-sp",
                       "tp = 2 with ep = 2 needs sequence_parallel (Megatron-Core requires it for "
                       "MoE with TP and EP)"}}));
  // Without expert parallelism too: Megatron-Core's MoE layer raises in training with TP and no sequence
  // parallelism (a review: the expert-TP gather then charged tp copies of tokens every rank holds).
  c.ep = 1;
  EXPECT_EQ(problems(model("mixtral-8x7b"), {16, 8, 8}, c, 4096),
            (Problems{{"moe-tp-needs-sp",
                       "tp = 2 needs sequence_parallel for a model with experts (Megatron-Core's MoE layer requires "
                       "it with TP)"}}));
}

// Megatron-Core's asserts for --overlap-moe-expert-parallel-comm (transformer_config.py at d2c5e8b4).
TEST(LayoutRule, EpOverlapNeedsEp) {
  auto c = mixtral_tp2();
  c.ep_comm_overlap = true;
  EXPECT_EQ(problems(model("mixtral-8x7b"), {48, 8, 8}, c, 4096),
            (Problems{{"ep-overlap-needs-ep", "ep_comm_overlap is set but ep = 1"}}));
}

TEST(LayoutRule, EpOverlapSchedule) {
  auto c = mixtral_tp2();
  c.ep = 2;
  c.pp = 2;
  c.ep_comm_overlap = true;
  EXPECT_EQ(problems(model("mixtral-8x7b"), {48, 8, 8}, c, 4096),
            (Problems{{"ep-overlap-schedule",
                       "ep_comm_overlap with schedule \"1f1b\" and pp = 2 (Megatron-Core pairs forwards and backwards "
                       "under interleaving, vpp > 1, or with one pipeline stage)"}}));
  c.vpp = 2;
  c.schedule = Schedule::Interleaved;
  EXPECT_EQ(problems(model("mixtral-8x7b"), {48, 8, 8}, c, 4096), Problems{});
  c.schedule = Schedule::DualPipeV;  // pairs by design
  EXPECT_EQ(problems(model("mixtral-8x7b"), {48, 8, 8}, c, 4096), Problems{});
}

TEST(LayoutRule, EpOverlapRecompute) {
  auto c = mixtral_tp2();
  c.ep = 2;
  c.ep_comm_overlap = true;
  c.recompute = Recompute::Full;
  EXPECT_EQ(problems(model("mixtral-8x7b"), {48, 8, 8}, c, 4096),
            (Problems{{"ep-overlap-recompute",
                       "ep_comm_overlap with recompute \"full\" (Megatron-Core: \"disable full recomputation when "
                       "enabling overlap_moe_expert_parallel_comm\")"}}));
}

TEST(LayoutRule, ShardedGradientsAndWeightsWorkWithPipelines) {
  // FSDP with pipeline parallelism (TorchTitan; Llama 3 405B, Llama Team 2024 Sec. 3.3.2) is not a broken rule.
  auto c = tp8_pp4();
  for (int stage : {2, 3}) {
    c.zero_stage = stage;
    EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
  }
}

TEST(LayoutRule, ExpertTp) {
  auto c = tp8_pp4();
  c.ep = 2;
  c.expert_tp = 16;
  EXPECT_EQ(problems(model("mixtral-8x7b"), kHgx1024, c, 4096),
            (Problems{{"expert-tp", "expert_tp = 16 does not divide tp = 8"}}));
}

TEST(LayoutRule, RecomputeOpDense) {
  auto c = tp8_pp4();
  c.recompute = Recompute::Op;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
  c.ep = 2;
  EXPECT_EQ(problems(model("mixtral-8x7b"), kHgx1024, c, 4096),
            (Problems{{"recompute-op-dense",
                       "recompute \"op\" is modelled for dense attention blocks only; "
                       "mixtral-8x7b has experts: use \"selective\" or \"full\""}}));
}

TEST(LayoutRule, PipelineSplitAccounting) {
  auto c = tp8_pp4();
  c.account_for_embedding = true;  // 80 + 1 layers over 4 stages
  EXPECT_EQ(
      problems(model("llama3-70b"), kHgx1024, c, 8192),
      (Problems{{"pipeline-split-accounting", "layers + embedding + loss = 81 is not divisible by pp*vpp = 4*1 = 4"}}));
}

TEST(LayoutRule, FirstLastStageLayers) {
  auto c = tp8_pp4();
  c.first_stage_layers = 18;  // 62 layers left for 3 stages
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192),
            (Problems{{"first-last-stage-layers", "the other 62 layers do not divide evenly over 3 virtual stages"}}));
}

TEST(LayoutRule, ZeroStage1AndTheDistributedOptimizerWorkWithPipelines) {
  auto c = tp8_pp4();
  c.zero_stage = 1;
  c.distributed_optimizer = true;
  EXPECT_EQ(problems(model("llama3-70b"), kHgx1024, c, 8192), Problems{});
}

TEST(LayoutRule, EveryRuleHasATestAbove) {
  // The ids exercised by the LayoutRule tests of this file; a new rule without a test fails here.
  const std::set<std::string> tested{"world-size-divisibility",
                                     "world-size-product",
                                     "recompute-op-dense",
                                     "ep-overlap-needs-ep",
                                     "pipeline-layout-mtp",
                                     "ep-overlap-schedule",
                                     "ep-overlap-recompute",
                                     "heads-tp",
                                     "kv-heads-tp",
                                     "ffn-tp",
                                     "expert-ffn-tp",
                                     "tp-nvlink-domain",
                                     "seq-exceeds-positions",
                                     "seq-cp",
                                     "seq-sp-tp",
                                     "global-batch-divisibility",
                                     "dp-shard",
                                     "micro-batches-pp",
                                     "layer-passes",
                                     "interleaved-micro-batches",
                                     "vpp-needs-pp",
                                     "vpp-needs-interleaved",
                                     "dualpipev-shape",
                                     "layers-stages",
                                     "layers-per-stage-count",
                                     "layers-per-stage-sum",
                                     "empty-stage",
                                     "ep-dense-model",
                                     "experts-ep",
                                     "ep-dp-cp",
                                     "moe-tp-needs-sp",
                                     "recompute-num-layers",  // KeyScope.RecomputeNumLayers..., trial_scope_test.cpp
                                     "pipeline-split-accounting",
                                     "expert-tp",
                                     "first-last-stage-layers"};
  std::set<std::string> listed;
  for (const auto& r : layout_rules())
    listed.insert(r.id);
  EXPECT_EQ(listed, tested);
}

}  // namespace
}  // namespace sim::parallel
