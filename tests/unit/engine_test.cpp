// tests/unit/engine_test.cpp: the engine's contract: event order, stop conditions, deadlock reports.
// Also components scheduling their own events and callbacks, and cancelling them by generation.
#include "tests/unit/engine_test_support.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/base/assert.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sim::engine::tests {
namespace {

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

}  // namespace
}  // namespace sim::engine::tests
