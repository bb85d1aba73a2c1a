// sim/planner/planner.cpp: the search: analytic fidelity for every feasible point, replica fidelity for the short
// list, the run level for the finalists; deterministic for any thread count.
#include "sim/planner/planner.hpp"

#include "sim/base/errors.hpp"
#include "sim/execution/step_plan_cache.hpp"
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
#include <type_traits>

namespace sim::planner {
namespace {

using parallel::ParallelConfig;

constexpr std::int16_t kFeasible = -1;
constexpr const char* kOutOfMemory = "out of memory";

/// Workers parallel_for starts for n indices in chunks of `chunk` on at most `threads` threads.
int worker_count(int n, int threads, int chunk) {
  return std::max(1, std::min(threads, (n + chunk - 1) / chunk));
}

/// Runs fn(i) for every i in [0, n) on `threads` workers that take indices in chunks, or fn(worker, i) when fn takes
/// two ints: worker in [0, worker_count(n, threads, chunk)) names the thread, for per-thread scratch state. Only the
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
          if constexpr (std::is_invocable_v<Fn&, int, int>) {
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
  in.fp8_scaling = p.fp8_scaling;
  in.attention_flash2 = p.attention_flash2;
  in.eager_kernels = p.eager_kernels;
  in.topology = size.topology;
  in.flash_attention = p.flash_attention;
  in.dropout = p.dropout;
  in.fp32_main_grads = p.memory.fp32_main_grads;
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

namespace {

/// Phase 1 and the short list: what every shard and every rank computes alike (deterministic and cheap next to the
/// replica phase), so that they agree on the points, their indices and the work to share.
struct Search {
  std::vector<Size> sizes;
  std::vector<Point> points;
  std::vector<Score> scores;
  PlanResult summary;                // the counts (evaluated, feasible, dominated, infeasible, replica_evaluated)
  std::vector<int> shortlist;        // point indices: per size, best analytic time to the target first
  std::vector<std::size_t> by_work;  // positions in shortlist, longest replica simulation first
};

void check_problem(const PlanProblem& problem, const PlanOptions& options) {
  SIM_ASSERT(problem.model && problem.hardware && problem.seq_len > 0, "the composition root fills the problem");
  if (problem.gpus.empty()) throw base::ConfigError("--gpus", "", "no cluster size to plan for");
  if (options.objective != Objective::Time && !problem.run)
    throw base::ConfigError("--objective", "",
                            std::string("\"") + to_string(options.objective) +
                                "\" needs the run level (time to train and cost), which this problem does not have");
}

int thread_count(const PlanOptions& options) {
  return options.threads > 0 ? options.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

std::vector<int> sorted_sizes(const PlanProblem& problem) {
  std::vector<int> gpus = problem.gpus;
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  return gpus;
}

/// The sizes (with their topology when `with_topology`) and every point of the search, in enumeration order.
void enumerate_points(const PlanProblem& problem, bool with_topology, std::vector<Size>& sizes,
                      std::vector<Point>& points) {
  for (int g : sorted_sizes(problem)) {
    Size s;
    s.gpus = g;
    topology::TopologyConfig tc = problem.topology;
    tc.gpus = g;
    s.shape = {g, tc.gpus_per_node, tc.nvlink_domain};
    if (with_topology)
      s.topology = std::make_shared<const topology::Topology>(tc);  // throws ConfigError for a cluster it cannot build
    const int index = static_cast<int>(sizes.size());
    sizes.push_back(std::move(s));
    for (auto& c : enumerate(problem, g))
      points.push_back({index, std::move(c)});
  }
}

Search screen(const PlanProblem& problem, const PlanOptions& options) {
  const auto& model = *problem.model;
  const base::Bytes hbm = problem.hardware->gpu.hbm;
  Search search;
  auto& sizes = search.sizes;
  auto& points = search.points;
  auto& scores = search.scores;
  PlanResult& result = search.summary;
  result.objective = options.objective;
  result.gpus = sorted_sizes(problem);
  enumerate_points(problem, true, sizes, points);

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
  scores.resize(points.size());
  constexpr int kChunk = 16;
  // One cache of layer timings per worker: points that share a layer shape and groups time their layers once.
  std::vector<execution::StepPlanCache> caches(
      static_cast<std::size_t>(worker_count(n, thread_count(options), kChunk)));
  parallel_for(n, thread_count(options), kChunk, options.progress, [&](int worker, int i) {
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
    const auto plan = execution::build_step_plan(step_inputs(problem, p.config, layout, size),
                                                 caches[static_cast<std::size_t>(worker)]);
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

  // The short list: the best shortlist_fraction of each size (at least shortlist_min), by the analytic time to the
  // target (the step time when the global batch is the scenario's).
  for (auto& f : feasible) {
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
    search.shortlist.insert(search.shortlist.end(), f.begin(),
                            f.begin() + static_cast<std::ptrdiff_t>(std::min(want, f.size())));
  }
  result.replica_evaluated = static_cast<std::int64_t>(search.shortlist.size());
  // Longest simulations first, so that no worker (or shard) is left with a long one at the end.
  std::vector<double> work(search.shortlist.size());
  for (std::size_t j = 0; j < search.shortlist.size(); ++j) {
    const Point& p = points[static_cast<std::size_t>(search.shortlist[j])];
    const auto l =
        parallel::resolve_layout(model, sizes[static_cast<std::size_t>(p.size)].shape, p.config, problem.seq_len);
    work[j] = replica_work(std::get<parallel::Layout>(l));
  }
  search.by_work.resize(search.shortlist.size());
  std::iota(search.by_work.begin(), search.by_work.end(), std::size_t{0});
  std::stable_sort(search.by_work.begin(), search.by_work.end(),
                   [&](std::size_t a, std::size_t b) { return work[a] > work[b]; });
  return search;
}

/// What a candidate is, from its point: the configuration, layout, GPUs, flags and relative steps (no simulation).
void describe(Candidate& c, const PlanProblem& problem, const std::vector<Size>& sizes,
              const std::vector<Point>& points, std::int64_t index) {
  const Point& p = points[static_cast<std::size_t>(index)];
  const Size& size = sizes[static_cast<std::size_t>(p.size)];
  c.layout =
      std::get<parallel::Layout>(parallel::resolve_layout(*problem.model, size.shape, p.config, problem.seq_len));
  c.parallel = p.config;
  c.parallel.dp = c.layout.dp;
  c.gpus = size.gpus;
  c.index = index;
  c.megatron_flags = megatron_flags(c.parallel, c.layout, problem.model->layers);
  c.relative_steps = steps_relative_to_scenario(problem, c.parallel.global_batch);
}

/// Phase 2 for one point of the short list: the replica-fidelity step and the memory of the worst stage.
Candidate replica_candidate(const Search& search, const PlanProblem& problem, int index) {
  Candidate c;
  describe(c, problem, search.sizes, search.points, index);
  const Size& size = search.sizes[static_cast<std::size_t>(search.points[static_cast<std::size_t>(index)].size)];
  c.analytic_step_time = base::Time{search.scores[static_cast<std::size_t>(index)].analytic_ns};
  const auto plan = execution::build_step_plan(step_inputs(problem, c.parallel, c.layout, size));
  execution::StepOptions so;
  so.fidelity = execution::Fidelity::Replica;
  so.lockstep_peers = true;  // same step time and breakdown, tp x cp times fewer events
  c.step = execution::simulate_step(plan, so);
  c.step.memory =
      memory_gib(parallel::peak_memory(*problem.model, c.layout, c.parallel, problem.seq_len, problem.memory),
                 problem.hardware->gpu.hbm);
  c.step.fits = c.step.memory.total <= c.step.memory.capacity;
  return c;
}

/// Phase 3 for one candidate: the run level on its step plan.
RunEstimate run_level(const Search& search, const PlanProblem& problem, const PlanOptions& options,
                      const Candidate& c) {
  const Size& size = search.sizes[static_cast<std::size_t>(search.points[static_cast<std::size_t>(c.index)].size)];
  const auto plan = execution::build_step_plan(step_inputs(problem, c.parallel, c.layout, size));
  return problem.run(plan, c.step, options.run_trials);
}

/// Positions in `cands` of the run level's finalists: the best run_candidates of each cluster size (at least top_k)
/// by replica step time. Of a subset of the short list, the best of the subset: the global best are among the
/// union of every shard's best.
std::vector<std::size_t> finalists(const std::vector<Candidate>& cands, const std::vector<int>& gpus,
                                   const PlanOptions& options) {
  std::vector<std::size_t> out;
  const auto want = static_cast<std::size_t>(std::max({1, options.run_candidates, options.top_k}));
  for (int g : gpus) {
    std::vector<std::size_t> mine;
    for (std::size_t j = 0; j < cands.size(); ++j)
      if (cands[j].gpus == g) mine.push_back(j);
    std::sort(mine.begin(), mine.end(),
              [&](std::size_t a, std::size_t b) { return better(cands[a], cands[b], Objective::Time); });
    for (std::size_t k = 0; k < mine.size() && k < want; ++k)
      out.push_back(mine[k]);
  }
  return out;
}

/// The result from the counts and the finalists: ranked by the objective, with the Pareto front of time vs cost.
PlanResult assemble(PlanResult summary, std::vector<Candidate> cands, const PlanOptions& options) {
  PlanResult result = std::move(summary);
  result.objective = options.objective;
  std::sort(cands.begin(), cands.end(),
            [&](const Candidate& a, const Candidate& b) { return better(a, b, options.objective); });
  result.candidates = std::move(cands);
  // Pareto front of time vs cost: expected time to train vs expected cost with the run level, else step time vs the
  // GPU-hours of one step (what a step costs at any price per GPU-hour).
  std::vector<std::pair<double, double>> xy;
  for (const auto& c : result.candidates) {
    if (c.run)
      xy.emplace_back(finite_or_inf(c.run->time_to_train_mean_days), finite_or_inf(c.run->cost_mean_usd));
    else
      xy.emplace_back(c.step.step_time.seconds(), c.step.step_time.seconds() * c.gpus / 3600.0);
  }
  result.pareto.clear();
  for (int i : pareto_front(xy))
    if (std::isfinite(xy[static_cast<std::size_t>(i)].first) && std::isfinite(xy[static_cast<std::size_t>(i)].second))
      result.pareto.push_back(i);
  return result;
}

// ---- the wire form of shards and farmed tasks: exact (integers, shortest round-trip doubles, non-finite as text) --

results::Json wire_double(double v) {
  if (std::isfinite(v)) return results::Json(v);
  return results::Json(std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

bool read_wire_double(base::JsonReader& r, std::string_view key, double& out) {
  if (r.kind(key) == base::JsonReader::Kind::String) {
    std::string text;
    r.required(key, text);
    if (text == "inf" || text == "-inf" || text == "nan") {
      out = text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                          : (text == "inf" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
      return true;
    }
    r.error(key, "\"" + text + "\" is not a number; accepted: a number, \"inf\", \"-inf\" or \"nan\"");
    return false;
  }
  return r.required(key, out);
}

constexpr const char* kBreakdownKeys[] = {"compute",    "tp_exposed", "pp_bubble", "pp_exposed", "dp_exposed",
                                          "cp_exposed", "ep_exposed", "optimizer", "data_stall"};
constexpr const char* kMemoryKeys[] = {"params", "grads", "optimizer", "activations", "buffers", "total", "capacity"};

std::array<base::Time*, 9> breakdown_fields(results::StepBreakdown& b) {
  return {&b.compute,    &b.tp_exposed, &b.pp_bubble, &b.pp_exposed, &b.dp_exposed,
          &b.cp_exposed, &b.ep_exposed, &b.optimizer, &b.data_stall};
}
std::array<double*, 7> memory_fields(results::MemoryGib& m) {
  return {&m.params, &m.grads, &m.optimizer, &m.activations, &m.buffers, &m.total, &m.capacity};
}

results::Json step_wire(results::StepResult s) {
  using results::Json;
  Json j = Json::object();
  j["fidelity"] = s.fidelity;
  j["step_ns"] = s.step_time.ns;
  j["tokens_per_s"] = wire_double(s.tokens_per_s);
  j["tflops_per_gpu"] = wire_double(s.tflops_per_gpu);
  j["mfu"] = wire_double(s.mfu);
  j["hfu"] = wire_double(s.hfu);
  Json& b = j["breakdown_ns"];
  const auto bf = breakdown_fields(s.breakdown);
  for (std::size_t k = 0; k < bf.size(); ++k)
    b[kBreakdownKeys[k]] = bf[k]->ns;
  Json& m = j["memory_gib"];
  const auto mf = memory_fields(s.memory);
  for (std::size_t k = 0; k < mf.size(); ++k)
    m[kMemoryKeys[k]] = wire_double(*mf[k]);
  j["fits"] = s.fits;
  j["simulated_gpus"] = s.simulated_gpus;
  j["events"] = s.events;
  j["critical_gpu"] = s.critical_gpu;
  return j;
}

results::StepResult read_step_wire(base::JsonReader& r) {
  results::StepResult s;
  r.required("fidelity", s.fidelity);
  std::int64_t ns = 0;
  r.required("step_ns", ns, base::Range::at_least(0));
  s.step_time = base::Time{ns};
  read_wire_double(r, "tokens_per_s", s.tokens_per_s);
  read_wire_double(r, "tflops_per_gpu", s.tflops_per_gpu);
  read_wire_double(r, "mfu", s.mfu);
  read_wire_double(r, "hfu", s.hfu);
  if (auto b = r.required_object("breakdown_ns")) {
    const auto bf = breakdown_fields(s.breakdown);
    for (std::size_t k = 0; k < bf.size(); ++k)
      b->required(kBreakdownKeys[k], bf[k]->ns, base::Range::at_least(0));
    b->finish();
  }
  if (auto m = r.required_object("memory_gib")) {
    const auto mf = memory_fields(s.memory);
    for (std::size_t k = 0; k < mf.size(); ++k)
      read_wire_double(*m, kMemoryKeys[k], *mf[k]);
    m->finish();
  }
  r.required("fits", s.fits);
  r.required("simulated_gpus", s.simulated_gpus, base::Range::at_least(0));
  r.required("events", s.events, base::Range::at_least(0));
  r.required("critical_gpu", s.critical_gpu, base::Range::at_least(0));
  r.finish();
  return s;
}

results::Json run_wire(const RunEstimate& r) {
  results::Json j = results::Json::object();
  j["trials"] = r.trials;
  j["time_to_train_mean_days"] = wire_double(r.time_to_train_mean_days);
  j["time_to_train_p90_days"] = wire_double(r.time_to_train_p90_days);
  j["cost_mean_usd"] = wire_double(r.cost_mean_usd);
  j["cost_p90_usd"] = wire_double(r.cost_p90_usd);
  j["goodput_mean"] = wire_double(r.goodput_mean);
  return j;
}

RunEstimate read_run_wire(base::JsonReader& r) {
  RunEstimate e;
  r.required("trials", e.trials, base::Range::at_least(0));
  read_wire_double(r, "time_to_train_mean_days", e.time_to_train_mean_days);
  read_wire_double(r, "time_to_train_p90_days", e.time_to_train_p90_days);
  read_wire_double(r, "cost_mean_usd", e.cost_mean_usd);
  read_wire_double(r, "cost_p90_usd", e.cost_p90_usd);
  read_wire_double(r, "goodput_mean", e.goodput_mean);
  r.finish();
  return e;
}

results::Json candidate_wire(const Candidate& c) {
  results::Json j = results::Json::object();
  j["point"] = c.index;
  j["analytic_ns"] = c.analytic_step_time.ns;
  j["step"] = step_wire(c.step);
  j["run"] = c.run ? run_wire(*c.run) : results::Json();
  return j;
}

/// A candidate from its wire form; what it is (configuration, layout, flags) comes from its point of the search.
Candidate read_candidate_wire(base::JsonReader& r, const PlanProblem& problem, const std::vector<Size>& sizes,
                              const std::vector<Point>& points) {
  Candidate c;
  std::int64_t index = -1;
  if (r.required("point", index, base::Range::at_least(0)) && index >= static_cast<std::int64_t>(points.size())) {
    r.error("point", "point " + std::to_string(index) + " does not exist: this search has " +
                         std::to_string(points.size()) + " points (another scenario or plan options?)");
    index = -1;
  }
  std::int64_t analytic = 0;
  r.required("analytic_ns", analytic, base::Range::at_least(0));
  c.analytic_step_time = base::Time{analytic};
  if (auto step = r.required_object("step")) c.step = read_step_wire(*step);
  if (r.kind("run") == base::JsonReader::Kind::Null) {
    r.accept("run");
  } else if (auto run = r.required_object("run")) {
    c.run = read_run_wire(*run);
  }
  r.finish();
  if (index >= 0) {
    const Point& p = points[static_cast<std::size_t>(index)];
    const Size& size = sizes[static_cast<std::size_t>(p.size)];
    if (!std::holds_alternative<parallel::Layout>(
            parallel::resolve_layout(*problem.model, size.shape, p.config, problem.seq_len)))
      r.error("point", "point " + std::to_string(index) + " is not feasible in this search (another scenario?)");
    else
      describe(c, problem, sizes, points, index);
  }
  return c;
}

}  // namespace

PlanResult plan(const PlanProblem& problem, const PlanOptions& options) {
  check_problem(problem, options);
  if (!options.farm) {
    std::vector<PlanShard> one;
    one.push_back(plan_shard(problem, options, 0, 1));
    return merge_plan_shards(problem, options, std::move(one));
  }
  // Distributed: every process screens alike; the farm shares the simulations out and gives every process every
  // result (the run level's finalists depend on all the replica results), so every process assembles the same plan.
  const Search search = screen(problem, options);
  auto parse = [&](const std::string& text, int task, auto&& read) {
    base::Diagnostics diag("farmed task " + std::to_string(task));
    const auto doc = base::JsonDocument::parse_text(text, diag.file());
    auto r = doc.root(diag);
    auto value = read(r);
    diag.throw_if_any();
    return value;
  };
  const int n = static_cast<int>(search.shortlist.size());
  const auto replica_texts = options.farm(n, [&](int k) {
    const int point = search.shortlist[search.by_work[static_cast<std::size_t>(k)]];
    return candidate_wire(replica_candidate(search, problem, point)).dump(-1);
  });
  SIM_ASSERT(static_cast<int>(replica_texts.size()) == n, "the farm returns one result per task");
  std::vector<Candidate> replica(search.shortlist.size());
  for (int k = 0; k < n; ++k)
    replica[search.by_work[static_cast<std::size_t>(k)]] =
        parse(replica_texts[static_cast<std::size_t>(k)], k,
              [&](base::JsonReader& r) { return read_candidate_wire(r, problem, search.sizes, search.points); });
  PlanResult summary = search.summary;
  std::vector<Candidate> out;
  if (problem.run) {
    const auto fin = finalists(replica, summary.gpus, options);
    const auto run_texts = options.farm(static_cast<int>(fin.size()), [&](int j) {
      return run_wire(run_level(search, problem, options, replica[fin[static_cast<std::size_t>(j)]])).dump(-1);
    });
    SIM_ASSERT(run_texts.size() == fin.size(), "the farm returns one result per task");
    for (std::size_t j = 0; j < fin.size(); ++j) {
      Candidate c = std::move(replica[fin[j]]);
      c.run = parse(run_texts[j], static_cast<int>(j), [](base::JsonReader& r) { return read_run_wire(r); });
      out.push_back(std::move(c));
    }
    summary.run_evaluated = static_cast<std::int64_t>(out.size());
  } else {
    out = std::move(replica);
  }
  return assemble(std::move(summary), std::move(out), options);
}

PlanShard plan_shard(const PlanProblem& problem, const PlanOptions& options, int index, int count) {
  check_problem(problem, options);
  if (count < 1 || index < 0 || index >= count)
    throw base::ConfigError("--shard-index", "",
                            "shard " + std::to_string(index) + " of " + std::to_string(count) +
                                " does not exist; accepted: 0 <= index < count, count >= 1");
  const Search search = screen(problem, options);
  const int threads = thread_count(options);
  PlanShard shard;
  shard.index = index;
  shard.count = count;
  shard.run_level = static_cast<bool>(problem.run);
  shard.summary = search.summary;

  // Phase 2: this shard's slice of the short list, every count-th entry of the longest-first order (balanced).
  std::vector<std::size_t> mine;
  for (std::size_t k = static_cast<std::size_t>(index); k < search.by_work.size(); k += static_cast<std::size_t>(count))
    mine.push_back(search.by_work[k]);
  std::vector<Candidate> replica(mine.size());
  parallel_for(static_cast<int>(mine.size()), threads, 1, options.progress, [&](int k) {
    replica[static_cast<std::size_t>(k)] =
        replica_candidate(search, problem, search.shortlist[mine[static_cast<std::size_t>(k)]]);
  });
  // In short-list order (per size, best analytic first), whatever the slicing.
  std::vector<std::size_t> order(mine.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return mine[a] < mine[b]; });
  for (std::size_t k : order)
    shard.candidates.push_back(std::move(replica[k]));

  // Phase 3: the run level for this slice's finalists, a superset of its share of the global finalists.
  if (problem.run) {
    const auto fin = finalists(shard.candidates, search.summary.gpus, options);
    parallel_for(static_cast<int>(fin.size()), threads, 1, options.progress, [&](int j) {
      Candidate& c = shard.candidates[fin[static_cast<std::size_t>(j)]];
      c.run = run_level(search, problem, options, c);
    });
  }
  return shard;
}

PlanResult merge_plan_shards(const PlanProblem& problem, const PlanOptions& options, std::vector<PlanShard> shards) {
  check_problem(problem, options);
  if (shards.empty()) throw base::ConfigError("merge", "", "no plan shard to merge");
  const int count = shards.front().count;
  std::vector<int> seen(static_cast<std::size_t>(std::max(count, 0)), 0);
  const auto counts = [](const PlanResult& r) {
    return std::tie(r.evaluated, r.feasible, r.dominated, r.replica_evaluated, r.infeasible, r.gpus);
  };
  std::size_t total = 0;
  for (const auto& s : shards) {
    const std::string which = "shard " + std::to_string(s.index) + " of " + std::to_string(s.count);
    if (s.count != count)
      throw base::ConfigError("merge", "", which + " is not one of " + std::to_string(count) + " shards");
    if (s.index < 0 || s.index >= count) throw base::ConfigError("merge", "", which + " does not exist");
    if (++seen[static_cast<std::size_t>(s.index)] > 1) throw base::ConfigError("merge", "", which + " appears twice");
    if (counts(s.summary) != counts(shards.front().summary) || s.run_level != shards.front().run_level)
      throw base::ConfigError("merge", "",
                              which + " searched other points than shard " + std::to_string(shards.front().index) +
                                  " (another scenario, trainsim version or plan options)");
    total += s.candidates.size();
  }
  for (int i = 0; i < count; ++i)
    if (seen[static_cast<std::size_t>(i)] == 0)
      throw base::ConfigError("merge", "",
                              "shard " + std::to_string(i) + " of " + std::to_string(count) + " is missing");
  if (static_cast<std::int64_t>(total) != shards.front().summary.replica_evaluated)
    throw base::ConfigError("merge", "",
                            "the shards hold " + std::to_string(total) + " candidates, the short list has " +
                                std::to_string(shards.front().summary.replica_evaluated));

  PlanResult summary = shards.front().summary;
  const bool with_run = shards.front().run_level;
  std::vector<Candidate> all;
  all.reserve(total);
  for (auto& s : shards)
    for (auto& c : s.candidates)
      all.push_back(std::move(c));
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.index < b.index; });
  std::vector<Candidate> out;
  if (with_run) {
    for (std::size_t j : finalists(all, summary.gpus, options)) {
      if (!all[j].run)
        throw base::ConfigError("merge", "",
                                "a finalist (point " + std::to_string(all[j].index) +
                                    ") has no run-level result: shards of different plan options?");
      out.push_back(std::move(all[j]));
    }
    summary.run_evaluated = static_cast<std::int64_t>(out.size());
  } else {
    out = std::move(all);
  }
  (void)problem;
  return assemble(std::move(summary), std::move(out), options);
}

results::Json to_json(const PlanShard& shard) {
  using results::Json;
  Json j = Json::object();
  j["index"] = shard.index;
  j["count"] = shard.count;
  j["run_level"] = shard.run_level;
  const PlanResult& s = shard.summary;
  Json& sum = j["summary"];
  sum["objective"] = to_string(s.objective);
  Json gpus = Json::array();
  for (int g : s.gpus)
    gpus.push_back(g);
  sum["gpus"] = std::move(gpus);
  sum["evaluated"] = s.evaluated;
  sum["feasible"] = s.feasible;
  sum["dominated"] = s.dominated;
  sum["replica_evaluated"] = s.replica_evaluated;
  Json inf = Json::array();
  for (const auto& [rule, n] : s.infeasible) {
    Json e = Json::object();
    e["rule"] = rule;
    e["count"] = n;
    inf.push_back(std::move(e));
  }
  sum["infeasible"] = std::move(inf);
  Json cands = Json::array();
  for (const auto& c : shard.candidates)
    cands.push_back(candidate_wire(c));
  j["candidates"] = std::move(cands);
  return j;
}

PlanShard plan_shard_from_json(base::JsonReader& r, const PlanProblem& problem) {
  PlanShard shard;
  r.required("index", shard.index, base::Range::at_least(0));
  r.required("count", shard.count, base::Range::at_least(1));
  r.required("run_level", shard.run_level);
  if (auto sum = r.required_object("summary")) {
    PlanResult& s = shard.summary;
    std::string objective;
    if (sum->required_enum("objective", objective, {"time", "cost", "risk"}))
      s.objective = objective == "time" ? Objective::Time : objective == "cost" ? Objective::Cost : Objective::Risk;
    sum->optional("gpus", s.gpus, base::Range::at_least(1));
    sum->required("evaluated", s.evaluated, base::Range::at_least(0));
    sum->required("feasible", s.feasible, base::Range::at_least(0));
    sum->required("dominated", s.dominated, base::Range::at_least(0));
    sum->required("replica_evaluated", s.replica_evaluated, base::Range::at_least(0));
    for (auto& e : sum->object_array("infeasible", true)) {
      std::string rule;
      std::int64_t n = 0;
      if (e.required("rule", rule) && e.required("count", n, base::Range::at_least(1)))
        s.infeasible.emplace_back(rule, n);
      e.finish();
    }
    sum->finish();
  }
  std::vector<Size> sizes;
  std::vector<Point> points;
  enumerate_points(problem, false, sizes, points);
  for (auto& c : r.object_array("candidates", true))
    shard.candidates.push_back(read_candidate_wire(c, problem, sizes, points));
  r.finish();
  return shard;
}

}  // namespace sim::planner
