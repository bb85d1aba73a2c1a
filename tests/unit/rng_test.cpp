// Seeded RNG streams: reproducible, independent per name, and with the right moments.
#include "sim/base/rng.hpp"

#include <gtest/gtest.h>

namespace sim::base {
namespace {

TEST(Rng, SameSeedAndNameGiveTheSameSequence) {
  RngStreams a(42), b(42);
  Rng x = a.stream("failures.gpu", 7), y = b.stream("failures.gpu", 7);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(x.next(), y.next());
}

TEST(Rng, StreamsDifferByNameIndexAndSeed) {
  RngStreams s(42);
  EXPECT_NE(s.stream("a").next(), s.stream("b").next());
  EXPECT_NE(s.stream("a", 0).next(), s.stream("a", 1).next());
  EXPECT_NE(RngStreams(1).stream("a").next(), RngStreams(2).stream("a").next());
}

TEST(Rng, ExponentialAndUniformHaveTheirMeans) {
  Rng r = RngStreams(7).stream("moments");
  const int n = 200000;
  double sum_e = 0, sum_u = 0;
  for (int i = 0; i < n; ++i) {
    sum_e += r.exponential(3.0);
    sum_u += r.uniform();
  }
  EXPECT_NEAR(sum_e / n, 3.0, 0.03) << "mean of Exp(mean 3)";
  EXPECT_NEAR(sum_u / n, 0.5, 0.005);
}

TEST(Rng, WeibullMeanMatchesGammaFormula) {
  // E[X] = scale * Gamma(1 + 1/shape)
  Rng r = RngStreams(9).stream("weibull");
  const int n = 200000;
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += r.weibull(0.8, 2.0);
  EXPECT_NEAR(sum / n, 2.0 * std::tgamma(1.0 + 1.0 / 0.8), 0.03);
}

TEST(Rng, KnownValueIsStableAcrossPlatforms) {
  // Pinned: a change here changes every seeded result trainsim has ever printed.
  Rng r(0);
  EXPECT_EQ(r.next(), 0x99ec5f36cb75f2b4ULL);
}

}  // namespace
}  // namespace sim::base
