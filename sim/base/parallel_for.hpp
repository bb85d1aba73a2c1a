// sim/base/parallel_for.hpp: the one in-process parallel executor (the planner's search, the Monte Carlo trials):
// indices taken in chunks by a fixed set of threads, progress reported from the calling thread, the first exception
// stopping everything. Deterministic results are the caller's part: each index writes its own slot (or its worker's
// accumulator, merged in a fixed order). Across processes, work is shared by the task farm (task_farm.hpp).
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace sim::base {

/// Workers parallel_for starts for n indices in chunks of `chunk` on at most `threads` threads.
inline int worker_count(int n, int threads, int chunk) {
  return std::max(1, std::min(threads, (n + chunk - 1) / chunk));
}

/// Runs fn(i) for every i in [0, n) on `threads` workers that take indices in chunks, or fn(worker, i) when fn takes
/// two ints: worker in [0, worker_count(n, threads, chunk)) names the thread, for per-thread scratch state; or
/// fn(worker, i, stop) with the flag that is set when the work is being abandoned (an exception elsewhere, or from
/// `progress`: Ctrl-C), for an index that runs long enough to look at it. Only the
/// calling thread calls `progress` (about ten times a second, and once at the end). An exception from fn or from
/// progress stops every worker after its current index and propagates from here, on the calling thread. Results must
/// go to per-index slots: the order in which indices run is not deterministic, what each index computes is.
template <class Fn>
void parallel_for(int n, int threads, int chunk, const std::function<void(int, int)>& progress, Fn&& fn) {
  if (n <= 0) return;
  threads = worker_count(n, threads, chunk);
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable finished;
  int running = threads;
  auto worker = [&](int w) {
    try {
      while (!stop.load(std::memory_order_relaxed)) {
        const int begin = next.fetch_add(chunk, std::memory_order_relaxed);
        if (begin >= n) break;
        const int end = std::min(n, begin + chunk);
        for (int i = begin; i < end && !stop.load(std::memory_order_relaxed); ++i) {
          if constexpr (std::is_invocable_v<Fn&, int, int, const std::atomic<bool>&>) {
            fn(w, i, stop);
          } else if constexpr (std::is_invocable_v<Fn&, int, int>) {
            fn(w, i);
          } else {
            fn(i);
          }
        }
        done.fetch_add(end - begin, std::memory_order_relaxed);
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!error) error = std::current_exception();
      stop = true;
    }
    std::lock_guard lock(mutex);
    --running;
    finished.notify_all();
  };
  std::vector<std::jthread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  try {
    for (int t = 0; t < threads; ++t)
      pool.emplace_back(worker, t);
    std::unique_lock lock(mutex);
    while (running > 0) {
      finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; });
      if (running > 0 && progress) {
        lock.unlock();
        progress(done.load(std::memory_order_relaxed), n);
        lock.lock();
      }
    }
  } catch (...) {
    stop = true;
    pool.clear();  // joins
    throw;
  }
  pool.clear();
  if (error) std::rethrow_exception(error);
  if (progress) progress(n, n);
}

}  // namespace sim::base
