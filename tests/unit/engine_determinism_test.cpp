// tests/unit/engine_determinism_test.cpp: observers see every event; a seeded workload gives the same trace hash.
#include "tests/unit/engine_test_support.hpp"
#include "sim/engine/observer.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/base/units.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace sim::engine::tests {
namespace {

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

}  // namespace
}  // namespace sim::engine::tests
