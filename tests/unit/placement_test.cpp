// tests/unit/placement_test.cpp: rank placement: locality of the default order, group structure, expert groups.
#include "sim/parallel/placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace sim::parallel {
namespace {

Layout layout(int tp, int cp, int dp, int pp, int ep = 1) {
  Layout l;
  l.tp = tp;
  l.cp = cp;
  l.dp = dp;
  l.pp = pp;
  l.ep = ep;
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
  const Layout l = layout(2, 2, 4, 3, /*ep=*/4);
  for (const char* order : {"tp-cp-dp-pp", "tp-dp-cp-pp", "pp-dp-cp-tp"}) {
    const Placement p(l, order);
    for (Dim d : {Dim::Tp, Dim::Cp, Dim::Dp, Dim::Pp, Dim::Ep}) {
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

TEST(Placement, GroupsAreOrderedByTheirDimensionIndex) {
  const Placement p(layout(4, 1, 2, 2), "tp-cp-dp-pp");
  EXPECT_EQ(p.group(Dim::Tp, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(p.group(Dim::Dp, 1), (std::vector<int>{1, 5}));
  EXPECT_EQ(p.group(Dim::Pp, 3), (std::vector<int>{3, 11}));
}

}  // namespace
}  // namespace sim::parallel
