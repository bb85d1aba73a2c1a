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

// Writes events[0, n) to out[rank], where rank counts the entries later than the event among the first kWidth
// (entries past n are padding that is never later): a loop of fixed length, unrolled, with no branch to mispredict.
template <std::size_t kWidth, typename Later>
void rank_latest_first(const Event* events, std::size_t n, const Later& later, Event* out) {
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rank = 0;
    for (std::size_t j = 0; j < kWidth; ++j)
      rank += later(j, i);
    out[rank] = events[i];
  }
}

// Sorts out[0, n) latest first. Events copied latest-pushed first from a bucket (or sub-range) in sequence order are
// sorted already where they share a time and a priority (thousands of lockstepped GPUs finishing together): the check
// costs one pass.
void sort_latest_first(Event* out, std::size_t n) {
  const auto latest_first = [](const Event& a, const Event& b) { return earlier(b, a); };
  if (!std::is_sorted(out, out + n, latest_first)) std::sort(out, out + n, latest_first);
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

// The first two lines of a chunk: the link and the first three events, all a small bucket holds.
void EventQueue::prefetch_head(const Chunk* chunk) {
#if defined(__GNUC__) || defined(__clang__)
  if (chunk == nullptr) return;
  __builtin_prefetch(chunk);
  __builtin_prefetch(reinterpret_cast<const char*>(chunk) + kCacheLine);
#else
  (void)chunk;
#endif
}

void EventQueue::clear() {
  front_.clear();
  segments_.clear();
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
  chunk->ahead = nullptr;
  if (list.tail == nullptr) {
    list.head = chunk;
  } else {
    list.tail->next = chunk;
    if (list.before_tail != nullptr) list.before_tail->ahead = chunk;
  }
  list.before_tail = list.tail;
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
    list.head->ahead = nullptr;
  }
  list.before_tail = nullptr;
  list.tail = list.head;
  list.tail_fill = 0;
  list.size = 0;
}

void EventQueue::refill() {
  SIM_ASSERT(size_ > 0, "refill of an empty event queue");
  if (!segments_.empty()) {  // the laid-out bucket's next sub-range: its events come before any in near_
    take_segment();
    return;
  }
  while (front_.empty() && near_.empty()) {
    if (depth_ == 0) {
      SIM_ASSERT(top_.size > 0, "events counted but none stored");
      const std::int64_t lo = top_lo_;
      const std::int64_t hi = top_hi_;
      top_lo_ = std::numeric_limits<std::int64_t>::max();
      top_hi_ = std::numeric_limits<std::int64_t>::min();
      if (top_.size <= kSpawnThreshold || lo == hi) {
        take_into_front(top_, lo, hi + 1);
      } else {
        // Rung 0 reaches past top's latest event by kReach - 1 spans: events pushed while it is consumed land in
        // it rather than in top, whose every event costs one more pass (hold-model increments reach a span ahead).
        const std::uint64_t span = offset(hi, lo);
        const bool room = span <= (std::uint64_t{1} << 60) && hi <= std::numeric_limits<std::int64_t>::max() - 2 -
                                                                        static_cast<std::int64_t>((kReach - 1) * span);
        open_rung(top_, lo, room ? hi + static_cast<std::int64_t>((kReach - 1) * span) : hi, room ? kReach : 1);
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
    const auto bucket_start =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(r.start) + (static_cast<std::uint64_t>(r.cur) << r.shift));
    const std::uint64_t next_offset = static_cast<std::uint64_t>(r.cur + 1) << r.shift;
    const bool last = r.cur + 1 == r.count;
    const std::int64_t bucket_end =
        last ? r.end : std::min(r.end, static_cast<std::int64_t>(static_cast<std::uint64_t>(r.start) + next_offset));
    if (bucket.size > kSpawnThreshold && bucket.size <= kSegmentMax) {
      ++r.cur;
      if (lay_out_segments(bucket, bucket_start, bucket_end)) {
        take_segment();
      } else {
        take_into_front(bucket, bucket_start, bucket_end);  // one time: sorted by priority and sequence
      }
      continue;
    }
    if (bucket.size > kSpawnThreshold && depth_ < kMaxRungs) {
      std::int64_t lo = std::numeric_limits<std::int64_t>::max();
      std::int64_t hi = std::numeric_limits<std::int64_t>::min();
      prefetch(bucket.head->next);
      for (const Chunk* c = bucket.head; c != nullptr; c = c->next) {
        prefetch_ahead(c);
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
    ++r.cur;
    if (r.cur < r.count) prefetch_head(r.buckets[r.cur].head);  // the next front, while this one is popped
    take_into_front(bucket, bucket_start, bucket_end);
  }
}

// Moves a bucket (or a small top) into front_, sorted latest first so that the earliest is popped from the back.
// `lo` bounds the list's times from below and `end` from above (exclusive).
void EventQueue::take_into_front(EventList& from, std::int64_t lo, std::int64_t end) {
  const std::size_t n = from.size;
  if (n > kRankSortMax) {
    // Copied latest-pushed first (a bucket is in sequence order), so that sort_latest_first often finds it sorted.
    Event* const out = front_.assign(n);  // front_ is empty here
    std::size_t i = n;
    prefetch(from.head->next);
    for (const Chunk* c = from.head; c != nullptr; c = c->next) {
      prefetch_ahead(c);
      const std::uint32_t fill = c == from.tail ? from.tail_fill : kChunkEvents;
      for (std::uint32_t k = 0; k < fill; ++k)
        out[--i] = c->events[k];
    }
    sort_latest_first(out, n);
  } else {
    rank_into_front(from.head->events.data(), n, lo, end);  // at most kRankSortMax < kChunkEvents: the head chunk
  }
  release(from);
  front_end_ = end;
}

// Sorts events[0, n), n <= kRankSortMax, in sequence order and within [lo, end), into front_; events[n,
// kRankSortMax) must be readable (stale values, never used).
//
// A front bucket holds a handful of events (about kEventsPerBucket). They are sorted by rank counting: each
// event's rank is the number of events later than it, n * kRankSortMax branch-free comparisons in loops of fixed
// length, which beats the mispredicted branches of a comparison sort on random keys. Buckets are only appended to,
// in push order, so a bucket's index order is its sequence order: the index stands in for the sequence number,
// and with one priority and a span below 2^59 ns, (time - lo, index) packs into one word.
void EventQueue::rank_into_front(const Event* events, std::size_t n, std::int64_t lo, std::int64_t end) {
  Event* const out = front_.assign(n);  // front_ is empty here
  const std::int32_t priority = events[0].priority;
  bool one_priority = true;
  for (std::size_t i = 1; i < n; ++i)
    one_priority &= events[i].priority == priority;
  // Zero padding never ranks above a real key. A loop of fixed length with a select: zero-filling the array first
  // compiles to a slow `rep stos`.
  std::array<std::uint64_t, kRankSortMax> key;  // NOLINT(cppcoreguidelines-pro-type-member-init): all set below
  for (std::size_t i = 0; i < kRankSortMax; ++i)
    key[i] = i < n ? (offset(events[i].at.ns, lo) << 4) | i : 0;
  if (one_priority && offset(end - 1, lo) < (std::uint64_t{1} << 59)) {
    const auto later = [&key](std::size_t j, std::size_t i) { return std::size_t{key[j] > key[i]}; };
    if (n <= kRankSortMax / 2) {
      rank_latest_first<kRankSortMax / 2>(events, n, later, out);
    } else {
      rank_latest_first<kRankSortMax>(events, n, later, out);
    }
    return;
  }
  std::array<std::uint64_t, kRankSortMax> time_key{};      // time - lo
  std::array<std::uint64_t, kRankSortMax> priority_key{};  // priority (unsigned-biased), then index
  for (std::size_t i = 0; i < n; ++i) {
    time_key[i] = offset(events[i].at.ns, lo);
    const auto biased = static_cast<std::uint32_t>(events[i].priority) ^ (std::uint32_t{1} << 31);
    priority_key[i] = (std::uint64_t{biased} << 32) | i;
  }
  const auto later = [&time_key, &priority_key](std::size_t j, std::size_t i) {
    const auto time_later = std::size_t{time_key[j] > time_key[i]};
    const auto time_equal = std::size_t{time_key[j] == time_key[i]};
    const auto priority_later = std::size_t{priority_key[j] > priority_key[i]};
    return time_later | (time_equal & priority_later);  // bitwise: no branches
  };
  if (n <= kRankSortMax / 2) {
    rank_latest_first<kRankSortMax / 2>(events, n, later, out);
  } else {
    rank_latest_first<kRankSortMax>(events, n, later, out);
  }
}

// Lays out a bucket of more than kSpawnThreshold events over [start, end) as the front's sub-ranges, instead of a
// finer rung: a counting sort by sub-range (the rung's power-of-two widths) into one array, earliest sub-range
// last, two passes over the bucket and no lists; each sub-range is sorted when popping reaches it. Returns false,
// laying out nothing, when every event has the same time (no sub-range would split them).
bool EventQueue::lay_out_segments(EventList& from, std::int64_t start, std::int64_t end) {
  const std::size_t n = from.size;
  const std::uint64_t last_offset = offset(end - 1, start);
  const std::uint64_t target = std::clamp<std::uint64_t>(n / kEventsPerBucket, 2, kMaxBuckets);
  int shift = 0;
  while ((last_offset >> shift) >= target)
    ++shift;
  const auto ranges = static_cast<std::size_t>(last_offset >> shift) + 1;
  std::array<std::uint32_t, kMaxBuckets>& count = segment_count_;
  std::fill_n(count.begin(), ranges, 0U);
  if (segment_of_.size() < n) segment_of_.resize(n);
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  std::size_t i = 0;
  prefetch(from.head->next);
  for (const Chunk* c = from.head; c != nullptr; c = c->next) {
    prefetch_ahead(c);
    const std::uint32_t fill = c == from.tail ? from.tail_fill : kChunkEvents;
    for (std::uint32_t k = 0; k < fill; ++k, ++i) {
      const std::int64_t at = c->events[k].at.ns;
      lo = std::min(lo, at);
      hi = std::max(hi, at);
      const auto range = static_cast<std::uint16_t>(offset(at, start) >> shift);
      segment_of_[i] = range;
      ++count[range];
    }
  }
  if (lo == hi) return false;
  // Sub-range k starts after every later sub-range's events; the stack of segments pops the earliest first.
  std::uint32_t position = 0;
  for (std::size_t k = ranges; k-- > 0;) {
    const std::uint32_t size = count[k];
    count[k] = position;  // now the next free slot of sub-range k
    if (size == 0) continue;
    const std::uint64_t k_start = static_cast<std::uint64_t>(start) + (std::uint64_t{k} << shift);
    const std::uint64_t k_end = k_start + (std::uint64_t{1} << shift);
    segments_.push_back(Segment{static_cast<std::int64_t>(k_start),
                                k + 1 == ranges ? end : std::min(end, static_cast<std::int64_t>(k_end)), position,
                                size});
    position += size;
  }
  if (segment_events_.size() < n + kRankSortMax) segment_events_.resize(n + kRankSortMax);
  i = 0;
  for (const Chunk* c = from.head; c != nullptr; c = c->next) {
    const std::uint32_t fill = c == from.tail ? from.tail_fill : kChunkEvents;
    for (std::uint32_t k = 0; k < fill; ++k, ++i)
      segment_events_[count[segment_of_[i]]++] = c->events[k];
  }
  release(from);
  front_end_ = end;
  return true;
}

// Sorts the earliest laid-out sub-range into the front. Its events are in sequence order (copied in push order).
void EventQueue::take_segment() {
  const Segment s = segments_.back();
  segments_.pop_back();
  const Event* events = segment_events_.data() + s.begin;
  if (s.size <= kRankSortMax) {
    rank_into_front(events, s.size, s.lo, s.end);  // segment_events_ has kRankSortMax slots past any segment
    return;
  }
  Event* const out = front_.assign(s.size);
  std::reverse_copy(events, events + s.size, out);
  sort_latest_first(out, s.size);
}

void EventQueue::open_rung(EventList& from, std::int64_t lo, std::int64_t hi, std::uint64_t reach) {
  SIM_ASSERT(depth_ < kMaxRungs && lo < hi, "rung layout out of range");
  Rung& r = rungs_[static_cast<std::size_t>(depth_++)];
  // Smallest power-of-two width giving at most `target` buckets over [lo, hi].
  const std::uint64_t last_offset = offset(hi, lo);
  const std::uint64_t target = std::clamp<std::uint64_t>(reach * from.size / kEventsPerBucket, 2, kMaxBuckets);
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
  prefetch(from.head->next);
  for (Chunk* c = from.head; c != nullptr;) {
    const bool last = c == from.tail;
    if (!last) prefetch_ahead(c);
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
  from.head->ahead = nullptr;
  from.before_tail = nullptr;
  from.tail = from.head;
  from.tail_fill = 0;
  from.size = 0;
  front_end_ = lo;  // the front is empty; later events before lo go there
}

}  // namespace sim::engine
