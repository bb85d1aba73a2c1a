// sim/engine/event_queue.cpp: the ladder queue's cold path: the chunk pool, rung layout and front refill.
#include "sim/engine/event_queue.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>

namespace sim::engine {
namespace {

// Ranks keys by counting, branch-free: rank[i] = the number of keys greater than keys[i] (all keys distinct).
template <std::size_t kMax, typename Later>
void rank_latest_first(std::vector<Event>& events, std::span<Event, kMax> scratch, Later later) {
  const std::size_t n = events.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rank = 0;
    for (std::size_t j = 0; j < n; ++j)
      rank += later(j, i);
    scratch[rank] = events[i];
  }
  for (std::size_t i = 0; i < n; ++i)
    events[i] = scratch[i];  // usually a handful: no memmove call
}

// Sorts latest first, so that the earliest event is popped from the back. Small sets (the common case) are sorted
// by rank counting: n^2 branch-free comparisons beat the mispredicted branches of a comparison sort on random
// keys. Within a bucket, events lie in sequence order (buckets are appended in push order), so the index stands
// in for the sequence number; with one priority and a narrow time span, time and index pack into one word.
void sort_latest_first(std::vector<Event>& events, std::span<Event, EventQueue::kRankSortMax> scratch) {
  constexpr std::size_t kMax = EventQueue::kRankSortMax;
  static_assert(kMax <= 16, "the packed key keeps the index in 4 bits");
  const std::size_t n = events.size();
  if (n > kMax) {
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return earlier(b, a); });
    return;
  }
  if (n <= 1) return;
  std::int64_t lo = events[0].at.ns;
  std::int64_t hi = lo;
  bool one_priority = true;
  for (std::size_t i = 1; i < n; ++i) {
    lo = std::min(lo, events[i].at.ns);
    hi = std::max(hi, events[i].at.ns);
    one_priority &= events[i].priority == events[0].priority;
  }
  const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (one_priority && span < (std::uint64_t{1} << 59)) {
    std::array<std::uint64_t, kMax> key;  // (time - lo, index)
    for (std::size_t i = 0; i < n; ++i)
      key[i] = ((static_cast<std::uint64_t>(events[i].at.ns) - static_cast<std::uint64_t>(lo)) << 4) | i;
    rank_latest_first(events, scratch, [&key](std::size_t j, std::size_t i) { return std::size_t{key[j] > key[i]}; });
    return;
  }
  std::array<std::uint64_t, kMax> time_key;      // time, made unsigned order-preserving
  std::array<std::uint64_t, kMax> priority_key;  // priority (unsigned-biased), then index
  for (std::size_t i = 0; i < n; ++i) {
    time_key[i] = static_cast<std::uint64_t>(events[i].at.ns) ^ (std::uint64_t{1} << 63);
    const auto biased = static_cast<std::uint32_t>(events[i].priority) ^ (std::uint32_t{1} << 31);
    priority_key[i] = (std::uint64_t{biased} << 32) | i;
  }
  rank_latest_first(events, scratch, [&time_key, &priority_key](std::size_t j, std::size_t i) {
    const auto time_later = std::size_t{time_key[j] > time_key[i]};
    const auto time_equal = std::size_t{time_key[j] == time_key[i]};
    const auto priority_later = std::size_t{priority_key[j] > priority_key[i]};
    return time_later | (time_equal & priority_later);  // bitwise: no branches
  });
}

}  // namespace

// Chunks of a list lie anywhere in the pool, so the hardware prefetcher cannot follow a list from one chunk to
// the next: while one chunk is processed, the next is fetched.
void EventQueue::prefetch(const Chunk* chunk) {
#if defined(__GNUC__) || defined(__clang__)
  if (chunk == nullptr) return;
  const char* bytes = reinterpret_cast<const char*>(chunk->events.data());
  for (std::size_t offset = 0; offset < sizeof(chunk->events); offset += kCacheLine)
    __builtin_prefetch(bytes + offset);
#else
  (void)chunk;  // a hint only: correctness never depends on it
#endif
}

void EventQueue::clear() {
  front_.clear();
  near_.clear();
  for (int d = 0; d < depth_; ++d) {
    Rung& r = rungs_[static_cast<std::size_t>(d)];
    for (std::size_t k = 0; k < r.count; ++k)
      release(r.buckets[k]);
    r.count = 0;
    r.cur = 0;
  }
  depth_ = 0;
  release(top_);
  top_lo_ = std::numeric_limits<std::int64_t>::max();
  top_hi_ = std::numeric_limits<std::int64_t>::min();
  front_end_ = std::numeric_limits<std::int64_t>::min();
  size_ = 0;
  next_seq_ = 0;
}

void EventQueue::add_chunk(EventList& list) {
  if (free_chunks_ == nullptr) {
    std::vector<Chunk>& block = blocks_.emplace_back(kBlockChunks);  // never resized: chunks stay put
    for (std::size_t i = 0; i + 1 < kBlockChunks; ++i)
      block[i].next = &block[i + 1];
    block.back().next = nullptr;
    free_chunks_ = block.data();
  }
  Chunk* chunk = free_chunks_;
  free_chunks_ = chunk->next;
  chunk->next = nullptr;
  if (list.tail == nullptr) {
    list.head = chunk;
  } else {
    list.tail->next = chunk;
  }
  list.tail = chunk;
  list.tail_fill = 0;
}

// Keeps the head chunk with the list, as a vector keeps its capacity: the many small buckets of a fine rung then
// never touch the pool.
void EventQueue::release(EventList& list) {
  if (list.head == nullptr) return;
  if (list.head != list.tail) {
    list.tail->next = free_chunks_;
    free_chunks_ = list.head->next;
    list.head->next = nullptr;
  }
  list.tail = list.head;
  list.tail_fill = 0;
  list.size = 0;
}

void EventQueue::refill() {
  SIM_ASSERT(size_ > 0, "refill of an empty event queue");
  while (front_.empty() && near_.empty()) {
    if (depth_ == 0) {
      SIM_ASSERT(top_.size > 0, "events counted but none stored");
      const std::int64_t lo = top_lo_;
      const std::int64_t hi = top_hi_;
      top_lo_ = std::numeric_limits<std::int64_t>::max();
      top_hi_ = std::numeric_limits<std::int64_t>::min();
      if (top_.size <= kSpawnThreshold || lo == hi) {
        take_into_front(top_, hi + 1);
      } else {
        open_rung(top_, lo, hi);
      }
      continue;
    }
    Rung& r = rungs_[static_cast<std::size_t>(depth_ - 1)];
    while (r.cur < r.count && r.buckets[r.cur].size == 0)
      ++r.cur;
    if (r.cur == r.count) {  // rung consumed: the next rung up (or top) starts where it ended
      front_end_ = r.end;
      r.count = 0;
      r.cur = 0;
      --depth_;
      continue;
    }
    EventList& bucket = r.buckets[r.cur];
    if (bucket.size > kSpawnThreshold && depth_ < kMaxRungs) {
      std::int64_t lo = std::numeric_limits<std::int64_t>::max();
      std::int64_t hi = std::numeric_limits<std::int64_t>::min();
      for (const Chunk* c = bucket.head; c != nullptr; c = c->next) {
        prefetch(c->next);
        const std::uint32_t n = c == bucket.tail ? bucket.tail_fill : kChunkEvents;
        for (std::uint32_t i = 0; i < n; ++i) {
          lo = std::min(lo, c->events[i].at.ns);
          hi = std::max(hi, c->events[i].at.ns);
        }
      }
      if (lo < hi) {
        // The finer rung covers [lo, hi]; r keeps bucket `cur` open for later events in (hi, bucket end).
        open_rung(bucket, lo, hi);
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

void EventQueue::take_into_front(EventList& from, std::int64_t end) {
  // front_ is empty here and keeps its capacity. Copying keeps push order, which sort_latest_first relies on.
  for (const Chunk* c = from.head; c != nullptr; c = c->next) {
    prefetch(c->next);
    const std::uint32_t n = c == from.tail ? from.tail_fill : kChunkEvents;
    for (std::uint32_t i = 0; i < n; ++i)
      front_.push_back(c->events[i]);  // usually a handful: no memmove call
  }
  release(from);
  sort_latest_first(front_, sort_scratch_);
  front_end_ = end;
}

void EventQueue::open_rung(EventList& from, std::int64_t lo, std::int64_t hi) {
  SIM_ASSERT(depth_ < kMaxRungs && lo < hi, "rung layout out of range");
  Rung& r = rungs_[static_cast<std::size_t>(depth_++)];
  // Smallest power-of-two width giving at most `target` buckets over [lo, hi].
  const std::uint64_t last_offset = offset(hi, lo);
  const std::uint64_t target = std::clamp<std::uint64_t>(from.size / kEventsPerBucket, 2, kMaxBuckets);
  int shift = 0;
  while ((last_offset >> shift) >= target)
    ++shift;
  r.start = lo;
  r.end = hi + 1;
  r.shift = shift;
  r.count = static_cast<std::size_t>(last_offset >> shift) + 1;
  r.cur = 0;
  if (r.buckets.size() < r.count) r.buckets.resize(r.count);
  // Scatter chunk by chunk; all but the head chunk go back to the pool as soon as they are read, to be reused warm.
  for (Chunk* c = from.head; c != nullptr;) {
    const bool last = c == from.tail;
    if (!last) prefetch(c->next);
    const std::uint32_t n = last ? from.tail_fill : kChunkEvents;
    for (std::uint32_t i = 0; i < n; ++i)
      append(r.buckets[offset(c->events[i].at.ns, lo) >> shift], c->events[i]);
    Chunk* next = last ? nullptr : c->next;
    if (c != from.head) {
      c->next = free_chunks_;
      free_chunks_ = c;
    }
    c = next;
  }
  from.head->next = nullptr;
  from.tail = from.head;
  from.tail_fill = 0;
  from.size = 0;
  front_end_ = lo;  // the front is empty; later events before lo go there
}

}  // namespace sim::engine
