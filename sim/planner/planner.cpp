// sim/planner/planner.cpp: the search: analytic fidelity for every feasible point, replica fidelity for the short
// list, the run level for the finalists; deterministic for any thread count.
#include "sim/planner/planner.hpp"

#include "sim/base/errors.hpp"
#include "sim/execution/step_sim.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <numeric>
#include <memory>
#include <mutex>
#include <thread>

namespace sim::planner {
namespace {

using parallel::ParallelConfig;

constexpr std::int16_t kFeasible = -1;
constexpr const char* kOutOfMemory = "out of memory";

/// Runs fn(i) for every i in [0, n) on `threads` workers that take indices in chunks. Only the calling thread calls
/// `progress` (about ten times a second, and once at the end). An exception from fn or from progress stops every
/// worker after its current index and propagates from here, on the calling thread. Results must go to per-index
/// slots: the order in which indices run is not deterministic, what each index computes is.
template <class Fn>
void parallel_for(int n, int threads, int chunk, const std::function<void(int, int)>& progress, Fn&& fn) {
  if (n <= 0) return;
  threads = std::max(1, std::min(threads, (n + chunk - 1) / chunk));
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable finished;
  int running = threads;
  auto worker = [&] {
    try {
      while (!stop.load(std::memory_order_relaxed)) {
        const int begin = next.fetch_add(chunk, std::memory_order_relaxed);
        if (begin >= n) break;
        const int end = std::min(n, begin + chunk);
        for (int i = begin; i < end && !stop.load(std::memory_order_relaxed); ++i)
          fn(i);
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
      pool.emplace_back(worker);
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

/// One cluster size of the search, with its topology (built once, shared by every plan of that size).
struct Size {
  int gpus = 0;
  parallel::ClusterShape shape;
  std::shared_ptr<const topology::Topology> topology;
};

struct Point {
  int size = 0;  // index into the sizes
  ParallelConfig config;
};

struct Score {
  std::int16_t reason = kFeasible;  // index into the reason names, or kFeasible
  std::int64_t analytic_ns = 0;
  std::int64_t memory = 0;  // bytes per GPU, worst pipeline stage
};

/// Points that differ only in schedule, sequence parallelism, optimizer sharding and recomputation share their
/// cluster size, tp, pp, vpp, cp, ep, micro-batch and global batch (hence dp and the number of micro-batches).
using GroupKey = std::array<int, 8>;
GroupKey group_key(const Point& p) {
  const auto& c = p.config;
  return {p.size, c.tp, c.pp, c.vpp, c.cp, c.ep, c.micro_batch, c.global_batch};
}

/// A rough count of the engine events of a replica-fidelity step (the GPUs of one replica times the passes they
/// run), to start the longest simulations first.
double replica_work(const parallel::Layout& l) {
  return static_cast<double>(l.tp) * l.cp * l.pp * l.vpp * l.micro_batches;
}

execution::StepInputs step_inputs(const PlanProblem& p, const ParallelConfig& c, const parallel::Layout& layout,
                                  const Size& size) {
  execution::StepInputs in;
  in.model = p.model;
  in.hardware = p.hardware;
  in.parallel = c;
  in.layout = layout;
  in.seq_len = p.seq_len;
  in.dtype = p.dtype;
  in.topology = size.topology;
  in.flash_attention = p.flash_attention;
  in.dropout = p.dropout;
  return in;
}

results::MemoryGib memory_gib(const parallel::MemoryBreakdown& m, base::Bytes capacity) {
  results::MemoryGib g;
  g.params = m.params.gib();
  g.grads = m.grads.gib();
  g.optimizer = m.optimizer.gib();
  g.activations = m.activations.gib();
  g.buffers = m.buffers.gib();
  g.total = m.total.gib();
  g.capacity = capacity.gib();
  return g;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

double finite_or_inf(double v) {
  return std::isfinite(v) ? v : kInf;
}

/// The objective's value of a finalist (smaller is better); +infinity when it has none.
double objective_value(const Candidate& c, Objective o) {
  switch (o) {
    case Objective::Time:
      return c.step.step_time.seconds() * c.relative_steps;  // the time to the same target
    case Objective::Cost:
      return c.run ? finite_or_inf(c.run->cost_mean_usd) : kInf;
    case Objective::Risk:
      return c.run ? finite_or_inf(c.run->time_to_train_p90_days) : kInf;
  }
  return kInf;
}

/// Best first: the objective, then the replica step time, then less memory, then the enumeration order.
bool better(const Candidate& a, const Candidate& b, Objective o) {
  const double va = objective_value(a, o), vb = objective_value(b, o);
  if (va != vb) return va < vb;
  if (a.step.step_time != b.step.step_time) return a.step.step_time < b.step.step_time;
  if (a.step.memory.total != b.step.memory.total) return a.step.memory.total < b.step.memory.total;
  return a.index < b.index;
}

}  // namespace

PlanResult plan(const PlanProblem& problem, const PlanOptions& options) {
  SIM_ASSERT(problem.model && problem.hardware && problem.seq_len > 0, "the composition root fills the problem");
  if (problem.gpus.empty()) throw base::ConfigError("--gpus", "", "no cluster size to plan for");
  if (options.objective != Objective::Time && !problem.run)
    throw base::ConfigError("--objective", "",
                            std::string("\"") + to_string(options.objective) +
                                "\" needs the run level (time to train and cost), which this problem does not have");
  const int threads =
      options.threads > 0 ? options.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const auto& model = *problem.model;
  const base::Bytes hbm = problem.hardware->gpu.hbm;

  PlanResult result;
  result.objective = options.objective;
  result.gpus = problem.gpus;
  std::sort(result.gpus.begin(), result.gpus.end());
  result.gpus.erase(std::unique(result.gpus.begin(), result.gpus.end()), result.gpus.end());

  std::vector<Size> sizes;
  std::vector<Point> points;
  for (int g : result.gpus) {
    Size s;
    s.gpus = g;
    topology::TopologyConfig tc = problem.topology;
    tc.gpus = g;
    s.shape = {g, tc.gpus_per_node, tc.nvlink_domain};
    s.topology = std::make_shared<const topology::Topology>(tc);  // throws ConfigError for a cluster it cannot build
    const int index = static_cast<int>(sizes.size());
    sizes.push_back(std::move(s));
    for (auto& c : enumerate(problem, g))
      points.push_back({index, std::move(c)});
  }

  std::vector<std::string> reasons;
  for (const auto& r : parallel::layout_rules())
    reasons.emplace_back(r.id);
  reasons.emplace_back(kOutOfMemory);
  const auto oom = static_cast<std::int16_t>(reasons.size() - 1);
  auto reason_index = [&](const std::string& rule) {
    const auto it = std::find(reasons.begin(), reasons.end(), rule);
    SIM_ASSERT(it != reasons.end() - 1 && it != reasons.end(), "resolve_layout reports only rules of layout_rules()");
    return static_cast<std::int16_t>(it - reasons.begin());
  };

  // Phase 1: every point through the rules, the memory model and the analytic step.
  const int n = static_cast<int>(points.size());
  std::vector<Score> scores(points.size());
  parallel_for(n, threads, 16, options.progress, [&](int i) {
    const Point& p = points[static_cast<std::size_t>(i)];
    Score& out = scores[static_cast<std::size_t>(i)];
    const Size& size = sizes[static_cast<std::size_t>(p.size)];
    auto resolved = parallel::resolve_layout(model, size.shape, p.config, problem.seq_len);
    if (const auto* bad = std::get_if<std::vector<parallel::Infeasible>>(&resolved)) {
      out.reason = reason_index(bad->front().rule);
      return;
    }
    const auto& layout = std::get<parallel::Layout>(resolved);
    const auto memory = parallel::peak_memory(model, layout, p.config, problem.seq_len, problem.memory);
    if (!parallel::fits(memory, hbm)) {
      out.reason = oom;
      return;
    }
    out.memory = memory.total.n;
    const auto plan = execution::build_step_plan(step_inputs(problem, p.config, layout, size));
    out.analytic_ns = execution::analytic_step(plan).step_time.ns;
  });

  result.evaluated = n;
  std::vector<std::int64_t> counts(reasons.size(), 0);
  std::vector<std::vector<int>> feasible(sizes.size());
  for (int i = 0; i < n; ++i) {
    const Score& s = scores[static_cast<std::size_t>(i)];
    if (s.reason == kFeasible)
      feasible[static_cast<std::size_t>(points[static_cast<std::size_t>(i)].size)].push_back(i);
    else
      ++counts[static_cast<std::size_t>(s.reason)];
  }
  for (std::size_t r = 0; r < reasons.size(); ++r)
    if (counts[r] > 0) result.infeasible.emplace_back(reasons[r], counts[r]);
  std::stable_sort(result.infeasible.begin(), result.infeasible.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& f : feasible)
    result.feasible += static_cast<std::int64_t>(f.size());

  // Dominated points leave the search: within a group (see GroupKey) a point slower and no smaller in memory than
  // another (or equal in both and later) can win no objective, since at one cluster size and one dp every objective
  // grows with the step time (the run level sees only the step time, the GPUs and dp).
  for (auto& f : feasible) {
    std::map<GroupKey, std::vector<int>> groups;
    for (int i : f)
      groups[group_key(points[static_cast<std::size_t>(i)])].push_back(i);
    std::vector<int> kept;
    for (const auto& [key, members] : groups) {
      std::vector<std::pair<double, double>> tm;
      for (int i : members)
        tm.emplace_back(static_cast<double>(scores[static_cast<std::size_t>(i)].analytic_ns),
                        static_cast<double>(scores[static_cast<std::size_t>(i)].memory));
      for (int k : pareto_front(tm))
        kept.push_back(members[static_cast<std::size_t>(k)]);
    }
    std::sort(kept.begin(), kept.end());
    result.dominated += static_cast<std::int64_t>(f.size() - kept.size());
    f = std::move(kept);
  }

  // Phase 2: the best shortlist_fraction of each size (at least shortlist_min) at replica fidelity.
  std::vector<int> shortlist;
  for (auto& f : feasible) {
    // By the analytic time to the target (the step time when the global batch is the scenario's).
    const auto to_target = [&](int i) {
      return static_cast<double>(scores[static_cast<std::size_t>(i)].analytic_ns) *
             steps_relative_to_scenario(problem, points[static_cast<std::size_t>(i)].config.global_batch);
    };
    std::sort(f.begin(), f.end(), [&](int a, int b) {
      const double ta = to_target(a), tb = to_target(b);
      return ta != tb ? ta < tb : a < b;
    });
    const auto want = std::max<std::size_t>(
        static_cast<std::size_t>(std::max(0, options.shortlist_min)),
        static_cast<std::size_t>(std::ceil(options.shortlist_fraction * static_cast<double>(f.size()))));
    shortlist.insert(shortlist.end(), f.begin(), f.begin() + static_cast<std::ptrdiff_t>(std::min(want, f.size())));
  }
  // Longest simulations first, so that no worker is left with a long one at the end; each result goes to its slot.
  std::vector<Candidate> replica(shortlist.size());
  std::vector<std::size_t> by_work(shortlist.size());
  {
    std::vector<double> work(shortlist.size());
    for (std::size_t j = 0; j < shortlist.size(); ++j) {
      const Point& p = points[static_cast<std::size_t>(shortlist[j])];
      const auto l =
          parallel::resolve_layout(model, sizes[static_cast<std::size_t>(p.size)].shape, p.config, problem.seq_len);
      work[j] = replica_work(std::get<parallel::Layout>(l));
    }
    std::iota(by_work.begin(), by_work.end(), std::size_t{0});
    std::stable_sort(by_work.begin(), by_work.end(), [&](std::size_t a, std::size_t b) { return work[a] > work[b]; });
  }
  parallel_for(static_cast<int>(shortlist.size()), threads, 1, options.progress, [&](int k) {
    const std::size_t j = by_work[static_cast<std::size_t>(k)];
    const int i = shortlist[j];
    const Point& p = points[static_cast<std::size_t>(i)];
    const Size& size = sizes[static_cast<std::size_t>(p.size)];
    Candidate& c = replica[j];
    c.layout = std::get<parallel::Layout>(parallel::resolve_layout(model, size.shape, p.config, problem.seq_len));
    c.parallel = p.config;
    c.parallel.dp = c.layout.dp;
    c.gpus = size.gpus;
    c.index = i;
    c.analytic_step_time = base::Time{scores[static_cast<std::size_t>(i)].analytic_ns};
    const auto plan = execution::build_step_plan(step_inputs(problem, c.parallel, c.layout, size));
    execution::StepOptions so;
    so.fidelity = execution::Fidelity::Replica;
    so.lockstep_peers = true;  // same step time and breakdown, tp x cp times fewer events
    c.step = execution::simulate_step(plan, so);
    c.step.memory =
        memory_gib(parallel::peak_memory(model, c.layout, c.parallel, problem.seq_len, problem.memory), hbm);
    c.step.fits = c.step.memory.total <= c.step.memory.capacity;
    c.megatron_flags = megatron_flags(c.parallel, c.layout, model.layers);
    c.relative_steps = steps_relative_to_scenario(problem, c.parallel.global_batch);
  });
  result.replica_evaluated = static_cast<std::int64_t>(replica.size());

  // Phase 3: the best run_candidates of each size (at least top_k) by replica step time through the run level.
  std::vector<Candidate> finalists;
  if (problem.run) {
    for (const Size& size : sizes) {
      std::vector<std::size_t> mine;
      for (std::size_t j = 0; j < replica.size(); ++j)
        if (replica[j].gpus == size.gpus) mine.push_back(j);
      std::sort(mine.begin(), mine.end(),
                [&](std::size_t a, std::size_t b) { return better(replica[a], replica[b], Objective::Time); });
      const auto want = static_cast<std::size_t>(std::max({1, options.run_candidates, options.top_k}));
      for (std::size_t k = 0; k < mine.size() && k < want; ++k)
        finalists.push_back(std::move(replica[mine[k]]));
    }
    parallel_for(static_cast<int>(finalists.size()), threads, 1, options.progress, [&](int j) {
      Candidate& c = finalists[static_cast<std::size_t>(j)];
      const Size& size = *std::find_if(sizes.begin(), sizes.end(), [&](const Size& s) { return s.gpus == c.gpus; });
      const auto plan = execution::build_step_plan(step_inputs(problem, c.parallel, c.layout, size));
      c.run = problem.run(plan, c.step, options.run_trials);
    });
    result.run_evaluated = static_cast<std::int64_t>(finalists.size());
  } else {
    finalists = std::move(replica);
  }

  std::sort(finalists.begin(), finalists.end(),
            [&](const Candidate& a, const Candidate& b) { return better(a, b, options.objective); });
  result.candidates = std::move(finalists);

  // Pareto front of time vs cost: expected time to train vs expected cost with the run level, else step time vs the
  // GPU-hours of one step (what a step costs at any price per GPU-hour).
  std::vector<std::pair<double, double>> xy;
  for (const auto& c : result.candidates) {
    if (c.run)
      xy.emplace_back(finite_or_inf(c.run->time_to_train_mean_days), finite_or_inf(c.run->cost_mean_usd));
    else
      xy.emplace_back(c.step.step_time.seconds(), c.step.step_time.seconds() * c.gpus / 3600.0);
  }
  for (int i : pareto_front(xy))
    if (std::isfinite(xy[static_cast<std::size_t>(i)].first) && std::isfinite(xy[static_cast<std::size_t>(i)].second))
      result.pareto.push_back(i);
  return result;
}

}  // namespace sim::planner
