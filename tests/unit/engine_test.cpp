// tests/unit/engine_test.cpp: the engine's contract: event order, stop conditions, deadlock reports, determinism.
#include "sim/engine/event_queue.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/base/assert.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

namespace sim::engine {
namespace {

using base::Time;
using namespace base::literals;  // NOLINT(google-build-using-namespace): unit literals only

// splitmix64 (Steele, Lea, Flood 2014): a tiny deterministic stream, local to this file on purpose.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

// A component that records (time, arg) of every event it receives.
class Recorder final : public Component {
 public:
  using Component::Component;
  void handle(std::uint64_t arg) override { seen.emplace_back(now(), arg); }
  std::vector<std::pair<Time, std::uint64_t>> seen;
};

std::vector<std::uint64_t> args_of(const Recorder& r) {
  std::vector<std::uint64_t> out;
  for (const auto& [at, arg] : r.seen)
    out.push_back(arg);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Order: time, then priority, then insertion sequence.

TEST(EventKey, OrdersByTimeThenPriorityThenSequence) {
  EXPECT_LT((EventKey{1_ns, 9, 9}), (EventKey{2_ns, 0, 0})) << "earlier time wins over everything else";
  EXPECT_LT((EventKey{5_ns, -1, 9}), (EventKey{5_ns, 0, 0})) << "at equal time, lower priority first";
  EXPECT_LT((EventKey{5_ns, 3, 1}), (EventKey{5_ns, 3, 2})) << "then insertion order";
  EXPECT_EQ((EventKey{5_ns, 3, 2}), (EventKey{5_ns, 3, 2}));
}

TEST(Simulator, DispatchesInTimeOrderWhateverTheSchedulingOrder) {
  Simulator sim;
  Recorder r(sim, "r");
  sim.schedule_at(30_ns, 0, r, 3);
  sim.schedule_at(10_ns, 0, r, 1);
  sim.schedule_at(20_ns, 0, r, 2);
  sim.run();
  EXPECT_EQ(args_of(r), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(r.seen.back().first, 30_ns) << "the clock shows each event's time during its dispatch";
}

TEST(Simulator, AtEqualTimeLowerPriorityRunsFirst) {
  Simulator sim;
  Recorder r(sim, "r");
  sim.schedule_at(10_ns, 5, r, 5);
  sim.schedule_at(10_ns, -2, r, 0);
  sim.schedule_at(10_ns, 1, r, 1);
  sim.run();
  EXPECT_EQ(args_of(r), (std::vector<std::uint64_t>{0, 1, 5}));
}

TEST(Simulator, AtEqualTimeAndPriorityRunsInSchedulingOrder) {
  Simulator sim;
  std::vector<std::uint64_t> order;
  for (std::uint64_t i = 0; i < 100; ++i)
    sim.schedule_fn(7_us, [&order, i] { order.push_back(i); });
  sim.run();
  ASSERT_EQ(order.size(), 100U);
  for (std::uint64_t i = 0; i < 100; ++i)
    EXPECT_EQ(order[i], i) << "insertion sequence is the final tie-break";
}

// Schedules follow-ups at the current time while being dispatched.
class Chainer final : public Component {
 public:
  Chainer(Simulator& sim, Recorder& log) : Component(sim, "chainer"), log_(log) {}
  void handle(std::uint64_t arg) override {
    if (arg != 0) return;
    simulator().schedule_at(now(), 0, log_, 100);   // same time, same priority: after everything already pending
    simulator().schedule_at(now(), -1, log_, 200);  // same time, lower priority: before pending priority-0 events
  }

 private:
  Recorder& log_;
};

TEST(Simulator, SameTimeEventsScheduledDuringDispatchKeepTheOrder) {
  Simulator sim;
  Recorder log(sim, "log");
  Chainer chainer(sim, log);
  sim.schedule_at(1_us, 0, chainer, 0);
  sim.schedule_at(1_us, 0, log, 1);
  sim.schedule_at(1_us, 0, log, 2);
  sim.schedule_at(2_us, -5, log, 3);
  sim.run();
  EXPECT_EQ(args_of(log), (std::vector<std::uint64_t>{200, 1, 2, 100, 3}));
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(log.seen[i].first, 1_us);
}

TEST(Simulator, SchedulingInThePastIsABug) {
  Simulator sim;
  Recorder r(sim, "r");
  sim.schedule_at(10_ns, 0, r, 0);
  sim.run();
  EXPECT_THROW(sim.schedule_at(9_ns, 0, r, 0), base::InternalError);
  EXPECT_THROW(sim.schedule_after(Time{-1}, 0, r, 0), base::InternalError);
  EXPECT_NO_THROW(sim.schedule_at(10_ns, 0, r, 0)) << "the current time is not the past";
}

TEST(Simulator, CallbacksRunInOrderAndTheirSlotsAreReused) {
  Simulator sim;
  std::vector<int> order;
  for (int round = 0; round < 3; ++round) {
    sim.schedule_fn_after(2_ns, [&order, round] { order.push_back(2 * round + 1); });
    sim.schedule_fn_after(1_ns, [&order, round] { order.push_back(2 * round); });
    sim.run();
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(sim.now(), 6_ns);
}

// ---------------------------------------------------------------------------------------------------------------
// Stop conditions.

// Reschedules itself every `period` forever: only a limit stops it.
class Ticker final : public Component {
 public:
  Ticker(Simulator& sim, Time period) : Component(sim, "ticker"), period_(period) {}
  void handle(std::uint64_t arg) override {
    ticks = arg + 1;
    schedule_after(period_, arg + 1);
  }
  std::uint64_t ticks = 0;

 private:
  Time period_;
};

TEST(Simulator, TimeLimitDispatchesEventsUpToAndIncludingTheLimitThenStopsTheClockThere) {
  Simulator sim;
  Ticker t(sim, 10_ns);
  sim.schedule_at(0_ns, 0, t, 0);
  RunResult r = sim.run_until(95_ns);
  EXPECT_EQ(r.reason, StopReason::TimeLimit);
  EXPECT_EQ(r.events, 10U) << "ticks at 0, 10, ..., 90";
  EXPECT_EQ(r.final_time, 95_ns);
  EXPECT_EQ(sim.now(), 95_ns);
  r = sim.run_until(100_ns);
  EXPECT_EQ(r.events, 1U) << "an event exactly at the limit is dispatched";
  EXPECT_EQ(sim.pending_events(), 1U);
}

TEST(Simulator, PredicateStopsTheRunAsSoonAsItHolds) {
  Simulator sim;
  Ticker t(sim, 1_us);
  sim.schedule_at(0_ns, 0, t, 0);
  const RunResult r = sim.run({.stop_when = [&t] { return t.ticks == 42; }});
  EXPECT_EQ(r.reason, StopReason::Predicate);
  EXPECT_EQ(r.events, 42U);
  EXPECT_EQ(r.final_time, 41_us);
  EXPECT_EQ(sim.run({.stop_when = [] { return true; }}).events, 0U) << "checked before the first event too";
}

TEST(Simulator, EventBudgetBoundsEachRun) {
  Simulator sim;
  Ticker t(sim, 1_ms);
  sim.schedule_at(0_ns, 0, t, 0);
  RunResult r = sim.run({.max_events = 1000});
  EXPECT_EQ(r.reason, StopReason::EventBudget);
  EXPECT_EQ(r.events, 1000U);
  r = sim.run({.max_events = 5});
  EXPECT_EQ(r.events, 5U) << "the budget counts this run only";
  EXPECT_EQ(sim.events_dispatched(), 1005U);
}

TEST(Simulator, EarliestLimitWins) {
  Simulator sim;
  Ticker t(sim, 1_s);
  sim.schedule_at(0_ns, 0, t, 0);
  EXPECT_EQ(sim.run({.until = 3_s, .max_events = 100}).reason, StopReason::TimeLimit);
  EXPECT_EQ(sim.run({.until = 100_s, .max_events = 2}).reason, StopReason::EventBudget);
}

TEST(Simulator, ATimeLimitBeyondTheLastEventEndsAsDrainedWithTheClockAtTheLastEvent) {
  Simulator sim;
  Recorder r(sim, "r");
  sim.schedule_at(5_us, 0, r, 0);
  const RunResult result = sim.run_until(1_s);
  EXPECT_EQ(result.reason, StopReason::Drained);
  EXPECT_EQ(result.final_time, 5_us) << "the clock only moves to a limit that stopped the run";
}

TEST(Simulator, ADrainedQueueWithNothingPendingIsAFinishedRun) {
  Simulator sim;
  Recorder r(sim, "r");
  sim.schedule_at(5_ns, 0, r, 0);
  const RunResult result = sim.run();
  EXPECT_EQ(result.reason, StopReason::Drained);
  EXPECT_FALSE(result.deadlocked());
  EXPECT_TRUE(result.waiting.empty());
  EXPECT_EQ(result.final_time, 5_ns);
}

// A collective that starts when its last participant arrives; it reports who it still waits for.
class Rendezvous final : public Component {
 public:
  Rendezvous(Simulator& sim, std::string name, std::uint64_t participants)
      : Component(sim, std::move(name)), expected_(participants) {}
  void handle(std::uint64_t /*rank*/) override { ++arrived_; }
  std::vector<std::string> pending_work() const override {
    if (arrived_ == 0 || arrived_ == expected_) return {};
    return {std::to_string(arrived_) + " of " + std::to_string(expected_) + " participants arrived"};
  }

 private:
  std::uint64_t expected_;
  std::uint64_t arrived_ = 0;
};

TEST(Simulator, ADrainedQueueWithPendingWorkIsADeadlockNamingTheWaiter) {
  Simulator sim;
  Rendezvous done(sim, "allreduce#1", 2);
  Rendezvous stuck(sim, "allreduce#2", 3);
  sim.schedule_at(1_us, 0, done, 0);
  sim.schedule_at(2_us, 0, done, 1);
  sim.schedule_at(3_us, 0, stuck, 0);
  sim.schedule_at(4_us, 0, stuck, 1);  // rank 2 never arrives
  const RunResult result = sim.run();
  EXPECT_EQ(result.reason, StopReason::Deadlock) << "a result value, not an exception and not a hang";
  ASSERT_EQ(result.waiting.size(), 1U);
  EXPECT_EQ(result.waiting[0].name, "allreduce#2");
  EXPECT_EQ(result.waiting[0].id, stuck.id());
  EXPECT_EQ(result.waiting[0].waiting_for, (std::vector<std::string>{"2 of 3 participants arrived"}));
  EXPECT_EQ(result.final_time, 4_us);
  const std::string text = describe(result);
  EXPECT_NE(text.find("allreduce#2"), std::string::npos) << text;
  EXPECT_NE(text.find("2 of 3 participants arrived"), std::string::npos) << text;
}

TEST(Simulator, RunIsNotReentrant) {
  Simulator sim;
  bool threw = false;
  sim.schedule_fn(1_ns, [&] {
    try {
      sim.run();
    } catch (const base::InternalError&) {
      threw = true;
    }
  });
  EXPECT_EQ(sim.run().reason, StopReason::Drained);
  EXPECT_TRUE(threw);
}

TEST(Simulator, AComponentThatDoesNotHandleEventsRejectsThemAsABug) {
  Simulator sim;
  class Silent final : public Component {
   public:
    using Component::Component;
  } silent(sim, "silent");
  sim.schedule_at(1_ns, 0, silent, 0);
  EXPECT_THROW(sim.run(), base::InternalError);
  EXPECT_NO_THROW(sim.run()) << "a failed run leaves the simulator usable";
}

TEST(Simulator, ComponentsGetStableIdsInRegistrationOrder) {
  Simulator sim;
  Recorder a(sim, "a");
  auto b = std::make_unique<Recorder>(sim, "b");
  const ComponentId b_id = b->id();
  Recorder c(sim, "c");
  EXPECT_LT(a.id(), b_id);
  EXPECT_LT(b_id, c.id());
  EXPECT_EQ(sim.component(a.id()), &a);
  b.reset();
  EXPECT_EQ(sim.component(b_id), nullptr) << "ids are never reused";
  EXPECT_EQ(sim.component(c.id())->name(), "c");
}

// A component in the style of sim/execution's streams: a FIFO of work items, one at a time, through the helpers.
class Stream final : public Component {
 public:
  Stream(Simulator& sim, Time per_item) : Component(sim, "stream"), per_item_(per_item) {}
  void submit(std::uint64_t item) {
    queue_.push_back(item);
    start_next();
  }
  void handle(std::uint64_t item) override {  // the hot path: completion of `item`
    done.emplace_back(now(), item);
    busy_ = false;
    start_next();
  }
  void pause_then_resume(Time pause) {  // the cold path: a callback
    paused_ = true;
    schedule_after(pause, [this] {
      paused_ = false;
      start_next();
    });
  }
  std::vector<std::string> pending_work() const override {
    if (queue_.empty()) return {};
    return {std::to_string(queue_.size()) + " items queued" + (paused_ ? " behind a pause" : "")};
  }
  std::vector<std::pair<Time, std::uint64_t>> done;

 private:
  void start_next() {
    if (busy_ || paused_ || queue_.empty()) return;
    busy_ = true;
    const std::uint64_t item = queue_.front();
    queue_.erase(queue_.begin());
    schedule_after(per_item_, item);
  }
  Time per_item_;
  std::vector<std::uint64_t> queue_;
  bool busy_ = false;
  bool paused_ = false;
};

TEST(Component, SchedulesItsOwnEventsAndCallbacksThroughItsHelpers) {
  Simulator sim;
  Stream stream(sim, 10_ns);
  stream.submit(1);
  stream.submit(2);
  sim.run_until(15_ns);
  stream.pause_then_resume(100_ns);  // item 2 completes at 20 ns; item 3 waits for the pause to end at 115 ns
  stream.submit(3);
  const RunResult result = sim.run();
  EXPECT_EQ(result.reason, StopReason::Drained);
  EXPECT_EQ(stream.done, (std::vector<std::pair<Time, std::uint64_t>>{{10_ns, 1}, {20_ns, 2}, {125_ns, 3}}));
}

TEST(Component, OnlyADrainedQueueIsExaminedForDeadlock) {
  Simulator sim;
  Stream stream(sim, 10_ns);
  stream.pause_then_resume(1_ms);
  stream.submit(7);
  RunResult result = sim.run_until(1_us);
  EXPECT_EQ(result.reason, StopReason::TimeLimit);
  EXPECT_TRUE(result.waiting.empty()) << "only a drained queue is examined for deadlock";
  result = sim.run();
  EXPECT_EQ(result.reason, StopReason::Drained) << "the pause ended and the item was served";
}

// A hang detector: each heartbeat re-arms the timeout; a stale timeout (older generation) is ignored. This is how
// components cancel events: the engine has no cancellation, the component checks a generation in `arg`.
class Watchdog final : public Component {
 public:
  Watchdog(Simulator& sim, Time timeout) : Component(sim, "watchdog"), timeout_(timeout) {}
  void heartbeat() { schedule_after(timeout_, ++generation_); }
  void handle(std::uint64_t generation) override {
    if (generation != generation_) return;  // superseded by a later heartbeat
    fired_at = now();
  }
  Time fired_at = Time::max();

 private:
  Time timeout_;
  std::uint64_t generation_ = 0;
};

TEST(Component, CancelsASupersededEventWithAGenerationCounter) {
  Simulator sim;
  Watchdog dog(sim, 10_s);
  dog.heartbeat();                                    // timeout at 10 s, superseded
  sim.schedule_fn(4_s, [&dog] { dog.heartbeat(); });  // timeout at 14 s, the live one
  sim.run();
  EXPECT_EQ(dog.fired_at, 14_s);
}

TEST(Component, AnEventForADestroyedComponentIsABug) {
  Simulator sim;
  auto doomed = std::make_unique<Recorder>(sim, "doomed");
  sim.schedule_at(1_ns, 0, *doomed, 0);
  doomed.reset();
  EXPECT_THROW(sim.run(), base::InternalError);
}

TEST(Component, MayOutliveItsSimulatorAndThenOnlyBeDestroyed) {
  auto sim = std::make_unique<Simulator>();
  Recorder survivor(*sim, "survivor");
  sim.reset();
  SUCCEED() << "destroying `survivor` after its simulator must not touch the simulator";
}

// ---------------------------------------------------------------------------------------------------------------
// Observers and determinism.

class Counter final : public Observer {
 public:
  void on_event(const EventKey& key, ComponentId target, std::uint64_t arg) override {
    keys.push_back(key);
    targets.push_back(target);
    args.push_back(arg);
  }
  std::vector<EventKey> keys;
  std::vector<ComponentId> targets;
  std::vector<std::uint64_t> args;
};

TEST(Simulator, ObserversSeeEveryEventBeforeItsDispatch) {
  Simulator sim;
  Recorder r(sim, "r");
  Counter counter;
  sim.add_observer(counter);
  sim.schedule_at(2_ns, 1, r, 20);
  sim.schedule_at(1_ns, 0, r, 10);
  sim.run();
  ASSERT_EQ(counter.keys.size(), 2U);
  EXPECT_EQ(counter.keys[0], (EventKey{1_ns, 0, 1}));
  EXPECT_EQ(counter.keys[1], (EventKey{2_ns, 1, 0}));
  EXPECT_EQ(counter.targets, (std::vector<ComponentId>{r.id(), r.id()}));
  EXPECT_EQ(counter.args, (std::vector<std::uint64_t>{10, 20}));
  sim.remove_observer(counter);
  sim.schedule_at(3_ns, 0, r, 30);
  sim.run();
  EXPECT_EQ(counter.keys.size(), 2U) << "a removed observer sees nothing";
}

// Checks, from inside on_event, that the clock already shows the event's time.
class ClockWatcher final : public Observer {
 public:
  explicit ClockWatcher(const Simulator& sim) : sim_(sim) {}
  void on_event(const EventKey& key, ComponentId /*target*/, std::uint64_t /*arg*/) override {
    mismatches += static_cast<int>(sim_.now() != key.at);
    ++seen;
  }
  int mismatches = 0;
  int seen = 0;

 private:
  const Simulator& sim_;
};

TEST(Simulator, ObserversSeeTheClockAlreadyAtTheEventTime) {
  Simulator sim;
  Recorder r(sim, "r");
  ClockWatcher watcher(sim);
  sim.add_observer(watcher);
  for (std::int64_t t : {3, 1, 4, 1, 5})
    sim.schedule_at(Time{t}, 0, r, 0);
  sim.run();
  EXPECT_EQ(watcher.seen, 5);
  EXPECT_EQ(watcher.mismatches, 0);
}

// Several components that ping each other with random delays, priorities and zero-delay hops.
class Pinger final : public Component {
 public:
  Pinger(Simulator& sim, std::vector<std::unique_ptr<Pinger>>& peers, std::uint64_t seed)
      : Component(sim, "pinger"), peers_(peers), rng_(seed) {}
  void handle(std::uint64_t hops_left) override {
    if (hops_left == 0) return;
    const std::uint64_t fanout = 1 + rng_.below(2);
    for (std::uint64_t i = 0; i < fanout && i < hops_left; ++i) {
      Pinger& peer = *peers_[rng_.below(peers_.size())];
      const Time delay{rng_.below(4) == 0 ? 0 : static_cast<std::int64_t>(rng_.below(1000))};
      const auto priority = static_cast<std::int32_t>(rng_.below(3));
      simulator().schedule_after(delay, priority, peer, hops_left - 1 - i);
    }
  }

 private:
  std::vector<std::unique_ptr<Pinger>>& peers_;
  SplitMix64 rng_;
};

struct TraceSummary {
  std::uint64_t hash;
  std::uint64_t events;
  Time end;
};

TraceSummary run_ping_workload(std::uint64_t seed) {
  Simulator sim;
  TraceHasher hasher;
  sim.add_observer(hasher);
  std::vector<std::unique_ptr<Pinger>> pingers;
  SplitMix64 seeds(seed);
  for (int i = 0; i < 16; ++i)
    pingers.push_back(std::make_unique<Pinger>(sim, pingers, seeds.next()));
  for (int i = 0; i < 16; ++i)
    sim.schedule_at(Time{static_cast<std::int64_t>(seeds.below(50))}, 0, *pingers[i], 12);
  const RunResult r = sim.run();
  EXPECT_EQ(r.reason, StopReason::Drained);
  EXPECT_EQ(hasher.events(), r.events);
  return {hasher.hash(), r.events, r.final_time};
}

TEST(Determinism, TheSameSeededWorkloadGivesTheSameTraceHash) {
  const TraceSummary first = run_ping_workload(42);
  const TraceSummary second = run_ping_workload(42);
  EXPECT_GT(first.events, 1000U) << "the workload is big enough to mean something";
  EXPECT_EQ(first.hash, second.hash);
  EXPECT_EQ(first.events, second.events);
  EXPECT_EQ(first.end, second.end);
}

TEST(Determinism, ADifferentSeedGivesADifferentTraceHash) {
  EXPECT_NE(run_ping_workload(42).hash, run_ping_workload(43).hash);
}

TEST(TraceHasher, DependsOnEveryFieldAndOnOrder) {
  const auto hash_of = [](const std::vector<std::pair<EventKey, std::uint64_t>>& events) {
    TraceHasher h;
    for (const auto& [key, arg] : events)
      h.on_event(key, 7, arg);
    return h.hash();
  };
  const EventKey a{1_ns, 0, 0};
  const EventKey b{2_ns, 0, 1};
  const std::uint64_t base = hash_of({{a, 1}, {b, 2}});
  EXPECT_NE(base, hash_of({{b, 2}, {a, 1}}));
  EXPECT_NE(base, hash_of({{a, 1}, {b, 3}}));
  EXPECT_NE(base, hash_of({{a, 1}, {EventKey{2_ns, 1, 1}, 2}}));
  EXPECT_NE(base, hash_of({{a, 1}, {EventKey{2_ns, 0, 2}, 2}}));
  EXPECT_EQ(base, hash_of({{a, 1}, {b, 2}}));
}

// ---------------------------------------------------------------------------------------------------------------
// The queue against a reference priority queue, over randomized operation sequences.

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
}  // namespace sim::engine
