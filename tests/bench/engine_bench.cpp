// tests/bench/engine_bench.cpp: event throughput of the queue and of the Simulator's dispatch path (hold model).
#include "sim/engine/event_queue.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/base/units.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

namespace sim::engine {
namespace {

using base::Time;

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

 private:
  std::uint64_t state_;
};

constexpr std::uint64_t kSeed = 42;
constexpr std::uint64_t kMeanIncrementNs = 1'000'000;  // uniform over [0, 2 ms): the classic hold model's shape

Time uniform_increment(SplitMix64& rng) {
  return Time{static_cast<std::int64_t>(rng.next() % (2 * kMeanIncrementNs))};
}

// Mostly short hops with rare very long ones (1 in 16 up to 1 s): stresses the rung layout. In steady state
// nearly every pending event is a long one, so the queue starts spread over a second.
Time bimodal_increment(SplitMix64& rng) {
  const std::uint64_t r = rng.next();
  if ((r & 15U) == 0) return Time{static_cast<std::int64_t>((r >> 4) % 1'000'000'000)};
  return Time{static_cast<std::int64_t>((r >> 4) % 1000)};
}
Time bimodal_start(SplitMix64& rng) {
  return Time{static_cast<std::int64_t>(rng.next() % 1'000'000'000)};
}

// The reference queue of the engine's unit tests (EventQueueAgainstReference): a binary heap of the same 32-byte
// events in the same (time, priority, sequence) order, behind EventQueue's push and pop.
class ReferenceQueue {
 public:
  void push(Time at, std::int32_t priority, ComponentId target, std::uint64_t arg) {
    heap_.push(Event{at, priority, target, seq_++, arg});
  }
  Event pop() {
    const Event e = heap_.top();
    heap_.pop();
    return e;
  }
  std::size_t size() const { return heap_.size(); }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return earlier(b, a); }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t seq_ = 0;
};

// The hold model (Jones, CACM 1986) on the bare queue: `pending` events; each pop is followed by one push at
// the popped time plus a random increment, so the queue size stays constant. Timing starts after a warm-up of
// two holds per pending event, past the initial transient (and the page faults of first touch).
template <Time (*kStart)(SplitMix64&), Time (*kIncrement)(SplitMix64&), class Queue = EventQueue>
void hold_model(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  SplitMix64 rng(kSeed);
  Queue queue;
  for (std::size_t i = 0; i < pending; ++i)
    queue.push(kStart(rng), 0, 0, i);
  const auto hold = [&queue, &rng] {
    const Event e = queue.pop();
    queue.push(e.at + kIncrement(rng), e.priority, e.target, e.arg);
  };
  for (std::size_t i = 0; i < 2 * pending; ++i)
    hold();
  for (auto _ : state)
    hold();
  benchmark::DoNotOptimize(queue.size());
  state.SetItemsProcessed(state.iterations());
  state.SetComplexityN(state.range(0));
}

// The acceptance target: >= 50 M events/s with 1,000,000 pending (DESIGN.md, quality bars; issue 20).
void BM_EngineHoldModel(benchmark::State& state) {
  hold_model<uniform_increment, uniform_increment>(state);
}
BENCHMARK(BM_EngineHoldModel)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Complexity(benchmark::o1);

// The same hold model on the reference binary heap: the ladder queue's speed-up is the ratio of the two.
void BM_EngineHoldModelReference(benchmark::State& state) {
  hold_model<uniform_increment, uniform_increment, ReferenceQueue>(state);
}
BENCHMARK(BM_EngineHoldModelReference)->Arg(1'000)->Arg(1'000'000);

void BM_EngineHoldModelBimodal(benchmark::State& state) {
  hold_model<bimodal_start, bimodal_increment>(state);
}
BENCHMARK(BM_EngineHoldModelBimodal)->Arg(1'000)->Arg(1'000'000);

// The same hold model through the Simulator: pop, clock, observer check, virtual handle(), and a component that
// schedules its successor on a random peer.
class Hopper final : public Component {
 public:
  Hopper(Simulator& sim, const std::vector<std::unique_ptr<Hopper>>& peers, SplitMix64& rng)
      : Component(sim, "hopper"), peers_(peers), rng_(rng) {}
  void handle(std::uint64_t arg) override {
    const std::uint64_t r = rng_.next();
    Hopper& peer = *peers_[r % peers_.size()];
    simulator().schedule_after(Time{static_cast<std::int64_t>((r >> 8) % (2 * kMeanIncrementNs))}, 0, peer, arg);
  }

 private:
  const std::vector<std::unique_ptr<Hopper>>& peers_;
  SplitMix64& rng_;
};

void BM_EngineSimulatorDispatch(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  constexpr std::size_t kComponents = 64;
  SplitMix64 rng(kSeed);
  Simulator sim;
  std::vector<std::unique_ptr<Hopper>> hoppers;
  for (std::size_t i = 0; i < kComponents; ++i)
    hoppers.push_back(std::make_unique<Hopper>(sim, hoppers, rng));
  for (std::size_t i = 0; i < pending; ++i)
    sim.schedule_at(uniform_increment(rng), 0, *hoppers[i % kComponents], i);
  sim.run({.max_events = 2 * pending});   // warm-up, as in hold_model
  constexpr std::uint64_t kBatch = 1000;  // events per run() call: amortises the run's setup
  std::uint64_t events = 0;
  for (auto _ : state)
    events += sim.run({.max_events = kBatch}).events;
  benchmark::DoNotOptimize(sim.now());
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
}
BENCHMARK(BM_EngineSimulatorDispatch)->Arg(1'000)->Arg(1'000'000);

// The cold path for comparison: schedule_fn callbacks, a std::function per event stored in the Simulator's slab
// (this one captures 16 bytes, which std::function keeps inline; a larger capture also costs a heap allocation).
void BM_EngineCallbackDispatch(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  SplitMix64 rng(kSeed);
  Simulator sim;
  struct Hop {
    Simulator* sim;
    SplitMix64* rng;
    void operator()() const { sim->schedule_fn_after(uniform_increment(*rng), *this); }
  };
  static_assert(sizeof(Hop) == 16);
  for (std::size_t i = 0; i < pending; ++i)
    sim.schedule_fn(uniform_increment(rng), Hop{&sim, &rng});
  sim.run({.max_events = 2 * pending});
  constexpr std::uint64_t kBatch = 1000;
  std::uint64_t events = 0;
  for (auto _ : state)
    events += sim.run({.max_events = kBatch}).events;
  benchmark::DoNotOptimize(sim.now());
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
}
BENCHMARK(BM_EngineCallbackDispatch)->Arg(1'000)->Arg(1'000'000);

}  // namespace
}  // namespace sim::engine
