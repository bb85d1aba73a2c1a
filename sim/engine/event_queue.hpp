// sim/engine/event_queue.hpp: pending events in exact (time, priority, sequence) order, amortised O(1) per event.
#pragma once
#include "sim/engine/event.hpp"
#include "sim/base/assert.hpp"
#include "sim/base/units.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace sim::engine {

/// A ladder queue (Tang, Goh and Thng, "Ladder Queue: An O(1) Priority Queue Structure for Large-Scale Discrete
/// Event Simulation", ACM TOMACS 15(3), 2005), adapted to integer time and an exact total order:
///   - `top`: far-future events, appended unsorted;
///   - rungs: when the nearer structure runs dry, `top` is spread into time buckets of a power-of-two width
///     (about kEventsPerBucket events each); a crowded bucket is spread again into a finer rung;
///   - `front`: a binary min-heap of the nearest bucket, ordered by the full (time, priority, sequence) key.
/// Time ranges are disjoint and increasing from front to rungs to top, so the order is exact whatever the
/// distribution of times: events at the current time, skewed increments and huge gaps cost speed, never order.
/// Buckets keep their capacity when emptied, so a queue in steady state allocates nothing.
class EventQueue {
 public:
  EventQueue() = default;

  /// Adds an event; its sequence number is the count of events pushed before it (since construction or clear()).
  /// `at` must be below Time::max(), which stands for "never".
  void push(base::Time at, std::int32_t priority, ComponentId target, std::uint64_t arg) {
    SIM_ASSERT(at.ns != std::numeric_limits<std::int64_t>::max(), "Time::max() means never and cannot be scheduled");
    route(Event{at, priority, target, next_seq_++, arg});
    ++size_;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  /// The earliest event. Precondition: !empty(). Not const: it may move the next bucket into the front heap.
  const Event& top() {
    if (front_.empty()) refill();
    return front_.front();
  }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    if (front_.empty()) refill();
    std::pop_heap(front_.begin(), front_.end(), Later{});
    const Event e = front_.back();
    front_.pop_back();
    --size_;
    return e;
  }

  /// Number of events pushed so far: the sequence number the next push will get.
  std::uint64_t next_seq() const { return next_seq_; }

  /// Drops every pending event and restarts sequence numbers at 0; keeps allocated capacity.
  void clear();

  static constexpr std::size_t kEventsPerBucket = 4;  // mean bucket occupancy a rung aims at when laid out
  static constexpr std::size_t kMaxBuckets = 1024;    // per rung: keeps the scatter's write frontier in cache
  static constexpr std::size_t kSpawnThreshold = 48;  // a bucket larger than this is spread into a finer rung
  static constexpr int kMaxRungs = 16;                // deeper than this, a crowded bucket is simply heap-ordered

 private:
  // One level of time buckets: bucket k holds events with at in [start + k*2^shift, start + (k+1)*2^shift) and
  // below `end`; buckets before `cur` have been consumed.
  struct Rung {
    std::int64_t start = 0;
    std::int64_t end = 0;  // exclusive; events at or after it belong to a shallower rung or to top
    int shift = 0;
    std::size_t count = 0;  // buckets in use
    std::size_t cur = 0;    // next bucket to consume
    std::vector<std::vector<Event>> buckets;
  };

  struct Later {  // std heaps keep the greatest in front: order them by "later" to keep the earliest there
    bool operator()(const Event& a, const Event& b) const { return earlier(b, a); }
  };

  void route(const Event& e) {
    if (e.at.ns < front_end_) {
      front_.push_back(e);
      std::push_heap(front_.begin(), front_.end(), Later{});
      return;
    }
    for (int d = depth_ - 1; d >= 0; --d) {
      Rung& r = rungs_[static_cast<std::size_t>(d)];
      if (e.at.ns >= r.end) continue;
      r.buckets[offset(e.at.ns, r.start) >> r.shift].push_back(e);
      return;
    }
    top_.push_back(e);
  }

  static std::uint64_t offset(std::int64_t at, std::int64_t start) {
    return static_cast<std::uint64_t>(at) - static_cast<std::uint64_t>(start);  // exact for at >= start
  }

  void refill();  // makes front_ non-empty; precondition: size_ > 0
  void open_rung(std::vector<Event>& from, std::int64_t lo, std::int64_t hi);  // spreads `from` over [lo, hi]
  void take_into_front(std::vector<Event>& from, std::int64_t end);

  std::vector<Event> front_;  // heap (by Later) of every event with at < front_end_
  std::int64_t front_end_ = std::numeric_limits<std::int64_t>::min();
  std::array<Rung, kMaxRungs> rungs_{};  // rungs_[0] is the coarsest; rungs_[depth_-1] the finest
  int depth_ = 0;
  std::vector<Event> top_;      // unsorted, every event at or after the end of rung 0 (or front_end_ if none)
  std::vector<Event> scratch_;  // a crowded bucket while it is spread into a finer rung
  std::size_t size_ = 0;
  std::uint64_t next_seq_ = 0;
};

}  // namespace sim::engine
