// tests/unit/engine_event_queue_test.cpp: the event queue pops exactly a reference priority queue's order.
// Randomized operation sequences over several distributions of times, extreme times, and memory in steady state.
#include "tests/unit/engine_test_support.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/base/assert.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

namespace sim::engine::tests {
namespace {

struct RefLater {
  bool operator()(const Event& a, const Event& b) const { return earlier(b, a); }
};
using ReferenceQueue = std::priority_queue<Event, std::vector<Event>, RefLater>;

enum class Increments { Uniform, ZeroHeavy, Skewed, HugeGaps, Clustered };

std::int64_t draw_increment(SplitMix64& rng, Increments kind) {
  switch (kind) {
    case Increments::Uniform:
      return static_cast<std::int64_t>(rng.below(1000));
    case Increments::ZeroHeavy:
      return rng.below(2) == 0 ? 0 : static_cast<std::int64_t>(rng.below(4));
    case Increments::Skewed:  // mostly tiny, sometimes a million times larger
      return rng.below(100) == 0 ? static_cast<std::int64_t>(rng.below(1'000'000'000))
                                 : static_cast<std::int64_t>(rng.below(100));
    case Increments::HugeGaps:  // anything up to 2^60 ns (36 years), or nothing at all
      return rng.below(3) == 0 ? 0 : static_cast<std::int64_t>(rng.next() >> (4 + rng.below(60)));
    case Increments::Clustered:  // bursts at a few far-apart instants
      return static_cast<std::int64_t>(rng.below(4)) << (10 * rng.below(5));
  }
  return 0;
}

struct Ops {
  std::uint64_t seed;
  Increments kind;
  std::size_t initial;  // events pushed before the first pop
  std::size_t steps;    // then this many random steps
  bool monotone;        // pushes at or after the last popped time (as the Simulator does), or anywhere
};

void check_against_reference(const Ops& ops) {
  SplitMix64 rng(ops.seed);
  EventQueue queue;
  ReferenceQueue ref;
  std::uint64_t seq = 0;
  std::int64_t now = 0;
  const auto push = [&] {
    std::int64_t base_time = now;
    if (!ops.monotone) base_time -= static_cast<std::int64_t>(rng.below(2000));  // also before the last pop
    constexpr std::int64_t kLatest = std::int64_t{1} << 62;  // times saturate here instead of overflowing
    const Time at{base_time + std::min(draw_increment(rng, ops.kind), kLatest - base_time)};
    const auto priority = static_cast<std::int32_t>(rng.below(4)) - 1;
    const auto target = static_cast<ComponentId>(rng.below(8));
    const std::uint64_t arg = rng.next();
    queue.push(at, priority, target, arg);
    ref.push(Event{at, priority, target, seq++, arg});
  };
  const auto pop_and_compare = [&] {
    ASSERT_FALSE(queue.empty());
    const Event expected = ref.top();
    ref.pop();
    if (rng.below(4) == 0) {
      const Event& peeked = queue.top();
      ASSERT_EQ(peeked.key(), expected.key());
    }
    const Event got = queue.pop();
    ASSERT_EQ(got.key(), expected.key()) << "seed " << ops.seed;
    ASSERT_EQ(got.target, expected.target);
    ASSERT_EQ(got.arg, expected.arg);
    now = got.at.ns;
  };
  for (std::size_t i = 0; i < ops.initial; ++i)
    push();
  for (std::size_t step = 0; step < ops.steps; ++step) {
    const std::uint64_t dice = rng.below(10);
    if (dice < 4 || ref.empty()) {
      push();
    } else if (dice < 8) {
      pop_and_compare();
    } else {
      pop_and_compare();  // the hold model: one out, one in
      push();
    }
    ASSERT_EQ(queue.size(), ref.size());
    if (testing::Test::HasFatalFailure()) return;
  }
  while (!ref.empty()) {
    pop_and_compare();
    if (testing::Test::HasFatalFailure()) return;
  }
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.next_seq(), seq);
}

class EventQueueAgainstReference : public testing::TestWithParam<Increments> {};

TEST_P(EventQueueAgainstReference, PopsExactlyTheReferenceOrderFromSmallQueues) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed)
    check_against_reference({seed, GetParam(), 10, 3000, true});
}

TEST_P(EventQueueAgainstReference, PopsExactlyTheReferenceOrderFromLargeQueues) {
  for (std::uint64_t seed = 100; seed <= 102; ++seed)
    check_against_reference({seed, GetParam(), 50'000, 150'000, true});
}

TEST_P(EventQueueAgainstReference, PopsExactlyTheReferenceOrderWhenPushesGoBeforeTheLastPop) {
  for (std::uint64_t seed = 200; seed <= 204; ++seed)
    check_against_reference({seed, GetParam(), 5'000, 40'000, false});
}

std::string increments_name(const testing::TestParamInfo<Increments>& p) {
  switch (p.param) {
    case Increments::Uniform:
      return "Uniform";
    case Increments::ZeroHeavy:
      return "ZeroHeavy";
    case Increments::Skewed:
      return "Skewed";
    case Increments::HugeGaps:
      return "HugeGaps";
    case Increments::Clustered:
      return "Clustered";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Increments, EventQueueAgainstReference,
                         testing::Values(Increments::Uniform, Increments::ZeroHeavy, Increments::Skewed,
                                         Increments::HugeGaps, Increments::Clustered),
                         increments_name);

TEST(EventQueue, ManyEventsAtOneInstantComeOutByPriorityThenSequence) {
  EventQueue queue;
  for (std::uint64_t i = 0; i < 10'000; ++i)
    queue.push(5_ms, static_cast<std::int32_t>(i % 3), 0, i);
  std::vector<std::size_t> per_priority(3, 0);
  Event prev = queue.pop();
  ++per_priority[0];
  while (!queue.empty()) {
    const Event e = queue.pop();
    ASSERT_LT(prev.key(), e.key());
    ++per_priority[static_cast<std::size_t>(e.priority)];
    prev = e;
  }
  EXPECT_EQ(per_priority, (std::vector<std::size_t>{3334, 3333, 3333}));
}

TEST(EventQueue, KeepsExactOrderWhenGeometricGapsExhaustTheRungs) {
  // A dense cluster plus one event at every power of two: each rung peels off only a few exponents, so the
  // queue runs out of rungs and falls back to sorting a crowded bucket.
  EventQueue queue;
  ReferenceQueue ref;
  std::uint64_t seq = 0;
  const auto push = [&](std::int64_t t, std::int32_t priority) {
    queue.push(Time{t}, priority, 0, seq);
    ref.push(Event{Time{t}, priority, 0, seq, seq});
    ++seq;
  };
  for (int i = 0; i < 60; ++i)
    push(i % 2, i % 3);
  for (int k = 1; k < 63; ++k)
    push(std::int64_t{1} << k, 0);
  while (!ref.empty()) {
    const Event got = queue.pop();
    ASSERT_EQ(got.key(), ref.top().key());
    ref.pop();
  }
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueue, InSteadyStateReusesItsMemory) {
  EventQueue queue;
  SplitMix64 rng(7);
  for (std::uint64_t i = 0; i < 20'000; ++i)
    queue.push(Time{static_cast<std::int64_t>(rng.below(1'000'000))}, 0, 0, i);
  const auto hold = [&] {
    const Event e = queue.pop();
    queue.push(e.at + Time{static_cast<std::int64_t>(rng.below(1'000'000))}, 0, 0, e.arg);
  };
  for (int i = 0; i < 200'000; ++i)
    hold();
  const std::size_t warm = queue.pool_bytes();
  for (int i = 0; i < 1'000'000; ++i)
    hold();
  EXPECT_EQ(queue.pool_bytes(), warm) << "a hold model past its transient must not grow the pool";
  EXPECT_LT(warm, 4 * 20'000 * sizeof(Event)) << "the pool stays within a small factor of the pending events";
}

TEST(EventQueue, HandlesExtremeTimes) {
  EventQueue queue;
  const Time huge{Time::max().ns - 1};
  queue.push(huge, 0, 0, 3);
  queue.push(Time{-5}, 0, 0, 0);
  queue.push(0_ns, 0, 0, 1);
  queue.push(Time{huge.ns - (std::int64_t{1} << 62)}, 0, 0, 2);
  for (std::uint64_t i = 0; i < 4; ++i)
    EXPECT_EQ(queue.pop().arg, i);
  EXPECT_THROW(queue.push(Time::max(), 0, 0, 0), base::InternalError) << "Time::max() means never";
}

TEST(EventQueue, ClearEmptiesTheQueueAndRestartsSequences) {
  EventQueue queue;
  for (std::int64_t i = 0; i < 1000; ++i)
    queue.push(Time{i * 7919 % 1000}, 0, 0, 0);
  (void)queue.top();
  queue.clear();
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.next_seq(), 0U);
  queue.push(3_ns, 0, 0, 9);
  EXPECT_EQ(queue.pop().arg, 9U);
}

}  // namespace
}  // namespace sim::engine::tests
