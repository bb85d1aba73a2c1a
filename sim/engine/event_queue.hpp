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
///   - top: far-future events, appended unsorted;
///   - rungs: when the nearer structure runs dry, top is spread into at most kMaxBuckets time buckets of a
///     power-of-two width, rung 0 reaching kReach - 1 spans past top's latest event (later pushes land there, not
///     in top); a bucket too crowded for the front (over kSegmentMax) is spread again into a finer rung (radix-sort
///     style: few write streams per pass keep the scatter in cache);
///   - the front: the nearest bucket, counting-sorted into sub-ranges in one array when crowded (lay_out_segments),
///     each sub-range (or a small bucket) sorted by the full (time, priority, sequence) key when reached and popped
///     from its back, plus a binary heap `near` for events pushed into the front's time range later (a zero delay,
///     say).
/// Time ranges are disjoint and increasing from the front to the rungs to top, so the order is exact whatever the
/// distribution of times: events at the current time, skewed increments and huge gaps cost speed, never order.
/// Top and buckets are lists of fixed-size chunks from a pool that only grows: past its high-water mark the
/// queue allocates nothing, and memory freed by one bucket is reused warm by the next. Buckets are only ever
/// appended to, in push order, so the events of a bucket are in sequence order: the front's sort relies on it.
/// Not thread-safe; a Simulator (and its queue) belongs to one thread.
class EventQueue {
 public:
  EventQueue() = default;
  ~EventQueue() = default;
  EventQueue(const EventQueue&) = delete;  // lists point into the pool
  EventQueue& operator=(const EventQueue&) = delete;

  /// Adds an event; its sequence number is the count of events pushed before it (since construction or clear()).
  /// `at` must be below Time::max(), which stands for "never".
  void push(base::Time at, std::int32_t priority, ComponentId target, std::uint64_t arg) {
    SIM_ASSERT(at.ns != std::numeric_limits<std::int64_t>::max(), "Time::max() means never and cannot be scheduled");
    route(Event{at, priority, target, next_seq_++, arg});
    ++size_;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  /// The earliest event. Precondition: !empty(). Not const: it may lay out the next bucket.
  const Event& top() {
    if (front_.empty() && (!segments_.empty() || near_.empty())) refill();
    if (near_.empty() || (!front_.empty() && earlier(front_.back(), near_.front()))) return front_.back();
    return near_.front();
  }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    if (front_.empty() && (!segments_.empty() || near_.empty())) refill();
    --size_;
    if (near_.empty() || (!front_.empty() && earlier(front_.back(), near_.front()))) {
      const Event e = front_.back();
      front_.pop_back();
      return e;
    }
    std::pop_heap(near_.begin(), near_.end(), Later{});
    const Event e = near_.back();
    near_.pop_back();
    return e;
  }

  /// The event `ahead` places behind the earliest in the sorted front, if the front holds that many (a later push
  /// may still come before it): a hint for prefetching, never for order.
  const Event* ahead_in_front(std::size_t ahead) const {
    return ahead < front_.size() ? &front_[front_.size() - 1 - ahead] : nullptr;
  }

  /// Number of events pushed so far: the sequence number the next push will get.
  std::uint64_t next_seq() const { return next_seq_; }

  /// Drops every pending event and restarts sequence numbers at 0; keeps the memory for reuse.
  void clear();

  /// Bytes held by the chunk pool, which grows to the high-water mark of pending events and never shrinks.
  std::size_t pool_bytes() const { return blocks_.size() * kBlockChunks * sizeof(Chunk); }

  static constexpr std::size_t kMaxBuckets = 1024;    // per rung: the scatter's write frontier stays in cache
  static constexpr std::size_t kEventsPerBucket = 4;  // mean occupancy a rung aims at, within kMaxBuckets
  static constexpr std::size_t kSpawnThreshold = 48;  // a bucket larger than this is laid out in sub-ranges or spread
  static constexpr std::uint64_t kReach = 2;          // rung 0 spans this many times top's spread of times
  static constexpr int kMaxRungs = 8;                 // deeper than this, a crowded bucket is simply sorted
  // A crowded bucket up to this size is laid out in sub-ranges in the front (256 KiB) rather than a finer rung.
  static constexpr std::size_t kSegmentMax = 8192;
  static_assert(kMaxBuckets <= 65536, "a sub-range index is 16 bits");
  // Front buckets up to this size are sorted by branch-free rank counting; larger ones by std::sort.
  static constexpr std::size_t kRankSortMax = 12;
  static_assert(kRankSortMax <= 16, "the packed sort key keeps the index in 4 bits");
  static constexpr std::uint32_t kChunkEvents = 31;  // with the 32-byte header, a chunk is 1 KiB
  static_assert(kRankSortMax < kChunkEvents, "a front bucket small enough to rank fits in its head chunk");
  static constexpr std::size_t kBlockChunks = 256;  // chunks allocated at once when the pool runs dry
  static constexpr std::size_t kCacheLine = 64;

 private:
  // Cache-line aligned, the link first: following a list reads the line that holds its first events, and no
  // event straddles two lines.
  struct alignas(kCacheLine) Chunk {
    Chunk* next = nullptr;
    Chunk* ahead = nullptr;  // the chunk after next, a prefetch hint for list walks (may be stale, never followed)
    std::array<std::byte, sizeof(Event) - 2 * sizeof(Chunk*)> unused{};
    std::array<Event, kChunkEvents> events;
  };
  static_assert(sizeof(Chunk) == 1024, "a chunk is 16 cache lines");

  // An unordered list of events in chunks, appended at the tail. A full (or absent) tail chunk reads as
  // tail_fill == kChunkEvents, so an append tests one condition.
  struct EventList {
    Chunk* head = nullptr;
    Chunk* tail = nullptr;
    Chunk* before_tail = nullptr;  // whose `ahead` the next chunk becomes
    std::uint32_t tail_fill = kChunkEvents;
    std::size_t size = 0;
  };

  // One level of time buckets: bucket k holds events with at in [start + k*2^shift, start + (k+1)*2^shift) and
  // below `end`; buckets before `cur` have been consumed.
  struct Rung {
    std::int64_t start = 0;
    std::int64_t end = 0;  // exclusive; events at or after it belong to a shallower rung or to top
    int shift = 0;
    std::size_t count = 0;  // buckets in use
    std::size_t cur = 0;    // next bucket to consume
    std::vector<EventList> buckets;
  };

  // The sorted front: a stack whose storage only grows, so that laying out a bucket writes its events once
  // (a std::vector's resize would first zero them).
  class Front {
   public:
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    const Event& back() const { return slots_[size_ - 1]; }
    const Event& operator[](std::size_t i) const { return slots_[i]; }
    void pop_back() { --size_; }
    void clear() { size_ = 0; }
    // Makes room for n events and returns where to write them; their contents are unspecified until written.
    Event* assign(std::size_t n) {
      if (slots_.size() < n) slots_.resize(std::max(n, 2 * slots_.size()));
      size_ = n;
      return slots_.data();
    }

   private:
    std::vector<Event> slots_;
    std::size_t size_ = 0;
  };

  struct Later {  // std heaps keep the greatest in front: order them by "later" to keep the earliest there
    bool operator()(const Event& a, const Event& b) const { return earlier(b, a); }
  };

  void route(const Event& e) {
    if (e.at.ns < front_end_) {
      near_.push_back(e);
      std::push_heap(near_.begin(), near_.end(), Later{});
      return;
    }
    for (int d = depth_ - 1; d >= 0; --d) {
      Rung& r = rungs_[static_cast<std::size_t>(d)];
      if (e.at.ns >= r.end) continue;
      append(r.buckets[offset(e.at.ns, r.start) >> r.shift], e);
      return;
    }
    append(top_, e);
    top_lo_ = std::min(top_lo_, e.at.ns);
    top_hi_ = std::max(top_hi_, e.at.ns);
  }

  void append(EventList& list, const Event& e) {
    if (list.tail_fill == kChunkEvents) [[unlikely]]
      add_chunk(list);
    list.tail->events[list.tail_fill++] = e;
    ++list.size;
  }

  static std::uint64_t offset(std::int64_t at, std::int64_t start) {
    return static_cast<std::uint64_t>(at) - static_cast<std::uint64_t>(start);  // exact for at >= start
  }

  static void prefetch(const Chunk* chunk);
  // Called on each chunk of a list walk, the walk having prefetched the head's next: fetches two chunks ahead, so
  // that one DRAM latency is hidden behind two chunks of work rather than one.
  static void prefetch_ahead(const Chunk* chunk) { prefetch(chunk->ahead); }
  static void prefetch_head(const Chunk* chunk);
  void add_chunk(EventList& list);
  void release(EventList& list);  // returns the list's chunks to the pool and empties it
  void refill();                  // lays out the next non-empty bucket as the front; precondition: size_ > 0
  void open_rung(EventList& from, std::int64_t lo, std::int64_t hi,
                 std::uint64_t reach = 1);  // spreads `from` over [lo, hi]
  void take_into_front(EventList& from, std::int64_t lo, std::int64_t end);
  void rank_into_front(const Event* events, std::size_t n, std::int64_t lo, std::int64_t end);
  bool lay_out_segments(EventList& from, std::int64_t start, std::int64_t end);
  void take_segment();

  // The front: every event with at < front_end_ is in front_ (sorted latest first), in a laid-out sub-range not yet
  // sorted (segments_, all later than front_'s) or in near_ (a heap by Later).
  Front front_;
  std::vector<Event> near_;
  // A bucket laid out in sub-ranges (lay_out_segments): its events, counting-sorted latest sub-range first, and the
  // sub-ranges not yet sorted into front_, earliest at the back. All are before front_end_ and after front_.
  struct Segment {
    std::int64_t lo;  // the sub-range's time range [lo, end)
    std::int64_t end;
    std::uint32_t begin;  // its events: segment_events_[begin, begin + size)
    std::uint32_t size;
  };
  std::vector<Segment> segments_;
  std::vector<Event> segment_events_;      // grows only; kRankSortMax slots of slack past the last event
  std::vector<std::uint16_t> segment_of_;  // scratch: each bucket event's sub-range
  std::array<std::uint32_t, kMaxBuckets> segment_count_{};  // scratch: events, then next slot, per sub-range
  std::int64_t front_end_ = std::numeric_limits<std::int64_t>::min();
  std::array<Rung, kMaxRungs> rungs_{};  // rungs_[0] is the coarsest; rungs_[depth_-1] the finest
  int depth_ = 0;
  EventList top_;  // every event at or after the end of rung 0 (or front_end_ if no rung)
  std::int64_t top_lo_ = std::numeric_limits<std::int64_t>::max();  // earliest and latest time in top_
  std::int64_t top_hi_ = std::numeric_limits<std::int64_t>::min();
  Chunk* free_chunks_ = nullptr;            // intrusive free list through Chunk::next
  std::vector<std::vector<Chunk>> blocks_;  // the pool's storage, kBlockChunks per block; never shrinks
  std::size_t size_ = 0;
  std::uint64_t next_seq_ = 0;
};

}  // namespace sim::engine
