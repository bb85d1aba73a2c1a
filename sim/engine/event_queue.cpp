// sim/engine/event_queue.cpp: the ladder queue's cold path: laying out rungs and refilling the front heap.
#include "sim/engine/event_queue.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

namespace sim::engine {

void EventQueue::clear() {
  front_.clear();
  for (Rung& r : rungs_) {
    for (std::size_t k = 0; k < r.count; ++k) r.buckets[k].clear();
    r.count = 0;
    r.cur = 0;
  }
  depth_ = 0;
  top_.clear();
  scratch_.clear();
  front_end_ = std::numeric_limits<std::int64_t>::min();
  size_ = 0;
  next_seq_ = 0;
}

void EventQueue::refill() {
  SIM_ASSERT(size_ > 0, "refill of an empty event queue");
  while (front_.empty()) {
    if (depth_ == 0) {
      SIM_ASSERT(!top_.empty(), "events counted but none stored");
      const auto [lo, hi] = std::minmax_element(top_.begin(), top_.end(),
                                                [](const Event& a, const Event& b) { return a.at.ns < b.at.ns; });
      const std::int64_t lo_ns = lo->at.ns;
      const std::int64_t hi_ns = hi->at.ns;
      if (top_.size() <= kSpawnThreshold || lo_ns == hi_ns) {
        take_into_front(top_, hi_ns + 1);
      } else {
        open_rung(top_, lo_ns, hi_ns);
      }
      continue;
    }
    Rung& r = rungs_[static_cast<std::size_t>(depth_ - 1)];
    while (r.cur < r.count && r.buckets[r.cur].empty()) ++r.cur;
    if (r.cur == r.count) {  // rung consumed: the next rung up (or top) starts where it ended
      front_end_ = r.end;
      r.count = 0;
      r.cur = 0;
      --depth_;
      continue;
    }
    std::vector<Event>& bucket = r.buckets[r.cur];
    if (bucket.size() > kSpawnThreshold && depth_ < kMaxRungs) {
      const auto [lo, hi] = std::minmax_element(bucket.begin(), bucket.end(),
                                                [](const Event& a, const Event& b) { return a.at.ns < b.at.ns; });
      const std::int64_t lo_ns = lo->at.ns;
      const std::int64_t hi_ns = hi->at.ns;
      if (lo_ns < hi_ns) {
        // The finer rung covers [lo, hi]; r keeps bucket `cur` open for later events in (hi, bucket end).
        scratch_.swap(bucket);
        open_rung(scratch_, lo_ns, hi_ns);
        continue;
      }
    }
    const std::uint64_t next_offset = static_cast<std::uint64_t>(r.cur + 1) << r.shift;
    const bool last = r.cur + 1 == r.count;
    const std::int64_t bucket_end =
        last ? r.end : std::min(r.end, static_cast<std::int64_t>(static_cast<std::uint64_t>(r.start) + next_offset));
    ++r.cur;
    take_into_front(bucket, bucket_end);
  }
}

void EventQueue::take_into_front(std::vector<Event>& from, std::int64_t end) {
  front_.swap(from);  // front_ is empty here: `from` inherits its capacity
  std::make_heap(front_.begin(), front_.end(), Later{});
  front_end_ = end;
}

void EventQueue::open_rung(std::vector<Event>& from, std::int64_t lo, std::int64_t hi) {
  SIM_ASSERT(depth_ < kMaxRungs && lo < hi, "rung layout out of range");
  Rung& r = rungs_[static_cast<std::size_t>(depth_++)];
  // Smallest power-of-two width giving at most `target` buckets over [lo, hi].
  const std::uint64_t last_offset = offset(hi, lo);
  const std::uint64_t target = std::clamp<std::uint64_t>(from.size() / kEventsPerBucket, 2, kMaxBuckets);
  int shift = 0;
  while ((last_offset >> shift) >= target) ++shift;
  r.start = lo;
  r.end = hi + 1;
  r.shift = shift;
  r.count = static_cast<std::size_t>(last_offset >> shift) + 1;
  r.cur = 0;
  if (r.buckets.size() < r.count) r.buckets.resize(r.count);
  for (const Event& e : from) r.buckets[offset(e.at.ns, lo) >> shift].push_back(e);
  from.clear();
  front_end_ = lo;  // front_ is empty; later events before lo go there
}

}  // namespace sim::engine
