// tests/unit/placement_test.cpp: rank placement: locality of the default order, group structure, expert groups.
#include "sim/parallel/placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace sim::parallel {
namespace {

Layout layout(int tp, int cp, int dp, int pp, int ep = 1, int expert_tp = 0) {
  Layout l;
  l.tp = tp;
  l.cp = cp;
  l.dp = dp;
  l.pp = pp;
  l.ep = ep;
  l.expert_tp = expert_tp;
  l.layers_per_stage = std::vector<int>(static_cast<std::size_t>(pp), 1);
  return l;
}

constexpr int kGpusPerNode = 8;

TEST(Placement, DefaultOrderKeepsTpGroupsInsideANodeOfEight) {
  for (const Layout& l : {layout(8, 1, 4, 4), layout(4, 2, 4, 2), layout(2, 1, 8, 4)}) {
    const Placement p(l, "tp-cp-dp-pp");
    for (int g = 0; g < p.gpus(); ++g)
      for (int member : p.group(Dim::Tp, g))
        EXPECT_EQ(member / kGpusPerNode, g / kGpusPerNode) << "tp = " << l.tp << ": GPU " << member << " and " << g;
  }
}

TEST(Placement, DefaultOrderPutsTpAndCpTogetherInANodeWhenTheyFit) {
  const Placement p(layout(4, 2, 4, 2), "tp-cp-dp-pp");
  for (int g = 0; g < p.gpus(); ++g)
    for (int member : p.group(Dim::Cp, g))
      EXPECT_EQ(member / kGpusPerNode, g / kGpusPerNode);
}

TEST(Placement, DataParallelWithContextGroupsSpanDpAndCp) {
  // TP4 CP2 DP4 PP2, default order: GPU ids are tp + 4 (cp + 2 (dp + 4 pp)). The gradient group of GPU 1
  // (Megatron-Core's data-parallel group with context parallelism) is every cp and dp at tp 1, pp 0: 8 GPUs, 4 apart.
  const Placement p(layout(4, 2, 4, 2), "tp-cp-dp-pp");
  EXPECT_EQ(p.size(Dim::DpCp), 8);
  EXPECT_EQ(p.group_count(Dim::DpCp), 64 / 8);
  EXPECT_EQ(p.group(Dim::DpCp, 1), (std::vector<int>{1, 5, 9, 13, 17, 21, 25, 29}));
  const auto g = p.group(Dim::DpCp, 33);  // pp 1
  EXPECT_EQ(g.front(), 33);
  EXPECT_EQ(g.size(), 8U);
  for (int member : g) {
    EXPECT_EQ(p.coord(member).tp, 1);
    EXPECT_EQ(p.coord(member).pp, 1);
  }
}

TEST(Placement, PipelineNeighboursAreTpCpDpApart) {
  const Layout l = layout(8, 2, 4, 4);
  const Placement p(l, "tp-cp-dp-pp");
  const int stride = l.tp * l.cp * l.dp;
  for (int g = 0; g < p.gpus(); ++g) {
    const Coord c = p.coord(g);
    if (c.pp + 1 == l.pp) continue;
    EXPECT_EQ(p.gpu(c.tp, c.cp, c.dp, c.pp + 1) - g, stride) << "GPU " << g;
  }
}

/// aligned_with(d, block): whether blocks of `block` consecutive GPUs (NVLink domains) split every group of d alike.
/// Checked against the groups themselves: where it says so, every group spans as many blocks as GPU 0's.
TEST(Placement, AlignedWithMeansEveryGroupSpansTheBlocksAlike) {
  auto spans = [](const std::vector<int>& g, int block) {
    std::set<int> b;
    for (const int gpu : g)
      b.insert(gpu / block);
    return b.size();
  };
  for (const Layout& l :
       {layout(8, 1, 16, 2), layout(4, 4, 8, 2), layout(2, 1, 32, 2, 8), layout(2, 2, 16, 2, 8, 1), layout(4, 1, 8, 4)})
    for (const int block : {8, 64, 72})
      for (const Dim d : {Dim::Tp, Dim::Cp, Dim::Ep, Dim::Etp, Dim::DpCp}) {
        const Placement p(l, "tp-cp-dp-pp");
        bool alike = true;
        const auto first = spans(p.group(d, 0), block);
        for (int gpu = 0; gpu < p.gpus(); ++gpu)
          alike = alike && spans(p.group(d, gpu), block) == first;
        if (p.aligned_with(d, block)) {
          EXPECT_TRUE(alike) << to_string(d) << " block " << block;
        }
        // On 8-GPU domains these power-of-two layouts are always aligned: the planner scans nothing.
        if (block == 8) {
          EXPECT_TRUE(p.aligned_with(d, block)) << to_string(d);
        }
      }
  // TP 2, EP 8 without folding: an EP group spans 16 GPUs, and 72-GPU domains split some (GPUs 64-78) and not others.
  const Placement p(layout(2, 1, 32, 2, 8), "tp-cp-dp-pp");
  EXPECT_FALSE(p.aligned_with(Dim::Ep, 72));
  EXPECT_TRUE(p.aligned_with(Dim::Ep, 64));
  EXPECT_TRUE(p.aligned_with(Dim::Tp, 72));
}

TEST(Placement, CoordinatesRoundTrip) {
  const Placement p(layout(2, 3, 4, 5), "dp-tp-pp-cp");
  for (int g = 0; g < p.gpus(); ++g)
    EXPECT_EQ(p.gpu(p.coord(g)), g);
  EXPECT_EQ(p.gpus(), 2 * 3 * 4 * 5);
}

TEST(Placement, OrderIsInnermostFirst) {
  const Placement p(layout(2, 1, 2, 4), "pp-tp-cp-dp");
  EXPECT_EQ(p.gpu(0, 0, 0, 1), 1) << "pp innermost: pipeline neighbours are adjacent";
  EXPECT_EQ(p.gpu(1, 0, 0, 0), 4) << "tp next: stride pp = 4";
  EXPECT_EQ(p.gpu(0, 0, 1, 0), 8) << "dp outermost: stride pp*tp*cp = 8";
}

TEST(Placement, EveryGpuIsInExactlyOneGroupPerDimension) {
  for (const Layout& l : {layout(2, 2, 4, 3, /*ep=*/4), layout(4, 2, 2, 3, /*ep=*/8, /*expert_tp=*/1),
                          layout(4, 1, 4, 2, /*ep=*/4, /*expert_tp=*/2)})
    for (const char* order : {"tp-cp-dp-pp", "tp-dp-cp-pp", "pp-dp-cp-tp"}) {
      const Placement p(l, order);
      for (Dim d : {Dim::Tp, Dim::Cp, Dim::Dp, Dim::Pp, Dim::Ep, Dim::Etp, Dim::Edp}) {
        std::set<std::vector<int>> groups;
        std::map<int, int> seen;  // GPU -> number of distinct groups containing it
        for (int g = 0; g < p.gpus(); ++g) {
          auto members = p.group(d, g);
          EXPECT_EQ(static_cast<int>(members.size()), p.size(d)) << order << " " << to_string(d);
          EXPECT_EQ(std::set<int>(members.begin(), members.end()).size(), members.size()) << "distinct members";
          EXPECT_EQ(std::count(members.begin(), members.end(), g), 1) << "a group contains its own GPU";
          std::sort(members.begin(), members.end());
          if (groups.insert(members).second)
            for (int m : members)
              ++seen[m];
        }
        EXPECT_EQ(static_cast<int>(groups.size()), p.group_count(d)) << order << " " << to_string(d);
        EXPECT_EQ(static_cast<int>(seen.size()), p.gpus());
        for (auto [gpu, count] : seen)
          EXPECT_EQ(count, 1) << order << " " << to_string(d) << ": GPU " << gpu;
      }
    }
}

TEST(Placement, ExpertGroupsAreConsecutiveDataParallelWithContextRanks) {
  // tp 2, cp 2, dp 4, ep 4: j = cp + 2 dp counts the GPUs of one TP slot in placement order; an EP group is 4
  // consecutive j, i.e. GPUs 0, 2, 4, 6 for TP rank 0 (Megatron-Core's expert layout: ep inside dp*cp).
  const Placement p(layout(2, 2, 4, 1, /*ep=*/4), "tp-cp-dp-pp");
  EXPECT_EQ(p.group(Dim::Ep, 0), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(p.group(Dim::Ep, 9), (std::vector<int>{9, 11, 13, 15}));
  EXPECT_EQ(p.ep_rank(4), 2);
  EXPECT_EQ(p.group_count(Dim::Ep), 16 / 4);
}

TEST(Placement, MoeParallelFoldingPutsExpertGroupsAcrossTensorParallelRanks) {
  // Megatron-MoE-ModelZoo's Qwen3-235B layout on H100: TP2, EP8, expert_tp 1 ("intra-node EP"). The expert mesh reads
  // a pipeline slot's GPUs i = tp + 2 j as etp + 1 * (ep + 8 * edp): an EP group is 8 consecutive GPUs, one node.
  const Placement folded(layout(2, 1, 16, 1, /*ep=*/8, /*expert_tp=*/1), "tp-cp-dp-pp");
  EXPECT_EQ(folded.group(Dim::Ep, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(folded.group(Dim::Ep, 13), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(folded.ep_rank(13), 5);
  EXPECT_EQ(folded.group(Dim::Etp, 13), (std::vector<int>{13})) << "expert_tp 1: each rank holds whole experts";
  for (int g = 0; g < folded.gpus(); ++g)
    for (int member : folded.group(Dim::Ep, g))
      EXPECT_EQ(member / kGpusPerNode, g / kGpusPerNode) << "EP 8 with folding stays in a node of 8";
  // Without folding (expert_tp = tp = 2) the same EP 8 takes every other GPU of two nodes.
  const Placement plain(layout(2, 1, 16, 1, /*ep=*/8), "tp-cp-dp-pp");
  EXPECT_EQ(plain.group(Dim::Ep, 0), (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(plain.group(Dim::Etp, 0), (std::vector<int>{0, 1})) << "expert_tp = tp: the TP group";
  // expert_tp 2 inside tp 4: an expert-TP group is half of a TP group; EP groups step over expert-TP groups.
  const Placement half(layout(4, 1, 4, 1, /*ep=*/4, /*expert_tp=*/2), "tp-cp-dp-pp");
  EXPECT_EQ(half.group(Dim::Etp, 6), (std::vector<int>{6, 7}));
  EXPECT_EQ(half.group(Dim::Ep, 1), (std::vector<int>{1, 3, 5, 7}));
}

TEST(Placement, ExpertDataParallelGroupsHoldTheSameExperts) {
  // Megatron-Core's expert data parallelism: the GPUs with the same etp and ep index, tp x dp x cp / (ep x expert_tp)
  // of them. TP2 EP4 over dp 16 (the CI Mixtral layout): an EP group is 4 consecutive data-parallel ranks of one TP
  // rank (one node), so the GPUs holding the same experts are one per node, 8 GPUs apart.
  const Placement p(layout(2, 1, 16, 1, /*ep=*/4), "tp-cp-dp-pp");
  EXPECT_EQ(p.size(Dim::Edp), 4);
  EXPECT_EQ(p.group(Dim::Edp, 0), (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(p.group(Dim::Edp, 3), (std::vector<int>{3, 11, 19, 27}));
  // ep x expert_tp = tp: the whole data-parallel group holds the same experts.
  const Placement whole(layout(8, 1, 4, 1, /*ep=*/2, /*expert_tp=*/4), "tp-cp-dp-pp");
  EXPECT_EQ(whole.group(Dim::Edp, 5), whole.group(Dim::DpCp, 5));
  // Folding with tp not dividing ep x expert_tp (TP8 EP4 expert_tp 1): a group reaches over two TP ranks.
  const Placement folded(layout(8, 1, 4, 1, /*ep=*/4, /*expert_tp=*/1), "tp-cp-dp-pp");
  EXPECT_EQ(folded.group(Dim::Edp, 0), (std::vector<int>{0, 4, 8, 12, 16, 20, 24, 28}));
}

TEST(Placement, GroupsAreOrderedByTheirDimensionIndex) {
  const Placement p(layout(4, 1, 2, 2), "tp-cp-dp-pp");
  EXPECT_EQ(p.group(Dim::Tp, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(p.group(Dim::Dp, 1), (std::vector<int>{1, 5}));
  EXPECT_EQ(p.group(Dim::Pp, 3), (std::vector<int>{3, 11}));
}

}  // namespace
}  // namespace sim::parallel
