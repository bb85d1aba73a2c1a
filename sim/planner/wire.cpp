// sim/planner/wire.cpp: the wire form of plan shards and farmed tasks: exact (integers, shortest round-trip doubles,
// non-finite values as text), so that a merged or farmed search gives the single-process result byte for byte.
#include "sim/planner/search.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <variant>

namespace sim::planner {
namespace detail {
namespace {

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
  r.required("step_ns", ns, base::Range::at_least(1));
  s.step_time = base::Time{ns};
  read_wire_double(r, "tokens_per_s", s.tokens_per_s);
  read_wire_double(r, "tflops_per_gpu", s.tflops_per_gpu);
  read_wire_double(r, "mfu", s.mfu);
  read_wire_double(r, "hfu", s.hfu);
  // What a simulated step satisfies (found by a user trial: an MFU of 7.5 and a memory total of 1 GiB merged).
  for (const auto& [key, v] : {std::pair{"mfu", s.mfu}, std::pair{"hfu", s.hfu}})
    if (!(v >= 0 && v <= 1)) r.error(key, "is not a fraction of the peak: a damaged or edited shard");
  for (const auto& [key, v] :
       {std::pair{"tokens_per_s", s.tokens_per_s}, std::pair{"tflops_per_gpu", s.tflops_per_gpu}})
    if (!(v >= 0)) r.error(key, "is negative: a damaged or edited shard");
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
    const auto& g = s.memory;
    const double parts = g.params + g.grads + g.optimizer + g.activations + g.buffers;
    if (!(std::abs(g.total - parts) <= 1e-6 * std::max(1.0, parts)) || !(parts >= 0))
      m->error("total", "is not the sum of its parts: a damaged or edited shard");
    m->finish();
  }
  r.required("fits", s.fits);
  r.required("simulated_gpus", s.simulated_gpus, base::Range::at_least(0));
  r.required("events", s.events, base::Range::at_least(0));
  r.required("critical_gpu", s.critical_gpu, base::Range::at_least(0));
  r.finish();
  return s;
}

}  // namespace

results::Json run_wire(const RunEstimate& r) {
  results::Json j = results::Json::object();
  j["trials"] = r.trials;
  j["time_to_train_mean_days"] = wire_double(r.time_to_train_mean_days);
  j["time_to_train_p90_days"] = wire_double(r.time_to_train_p90_days);
  j["cost_mean_usd"] = wire_double(r.cost_mean_usd);
  j["cost_p90_usd"] = wire_double(r.cost_p90_usd);
  j["goodput_mean"] = wire_double(r.goodput_mean);
  if (r.tokens > 0) j["tokens"] = wire_double(r.tokens);
  if (r.p_deadline_miss) j["p_deadline_miss"] = *r.p_deadline_miss;
  if (r.p_budget_overrun) j["p_budget_overrun"] = *r.p_budget_overrun;
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
  if (r.has("tokens")) read_wire_double(r, "tokens", e.tokens);
  if (!(e.tokens >= 0)) r.error("tokens", "is negative: a damaged or edited shard");
  for (const auto& [key, v] : {std::pair{"time_to_train_mean_days", e.time_to_train_mean_days},
                               std::pair{"time_to_train_p90_days", e.time_to_train_p90_days},
                               std::pair{"cost_mean_usd", e.cost_mean_usd}, std::pair{"cost_p90_usd", e.cost_p90_usd}})
    if (!(v >= 0)) r.error(key, "is negative: a damaged or edited shard");
  if (!(e.goodput_mean >= 0 && e.goodput_mean <= 1))
    r.error("goodput_mean", "is not a fraction: a damaged or edited shard");
  for (auto [key, slot] :
       {std::pair{"p_deadline_miss", &e.p_deadline_miss}, std::pair{"p_budget_overrun", &e.p_budget_overrun}}) {
    double p = 0;
    if (r.optional(key, p, base::Range::between(0.0, 1.0))) *slot = p;
  }
  r.finish();
  return e;
}

std::string search_digest(const std::vector<Size>& sizes, const std::vector<Point>& points) {
  // A fingerprint against a mismatched merge, not against forgery, computed on every plan (a single-process plan is
  // one shard): FNV-1a's xor-multiply step per 64-bit field (Fowler, Noll and Vo; offset basis and prime of the
  // 64-bit variant), then SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014) to spread the last fields.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](long long v) {
    h ^= static_cast<std::uint64_t>(v);
    h *= 0x100000001b3ULL;
  };
  mix(static_cast<long long>(points.size()));
  for (const Point& p : points) {
    const ParallelConfig& c = p.config;
    for (long long v :
         {static_cast<long long>(sizes[static_cast<std::size_t>(p.size)].gpus), static_cast<long long>(c.tp),
          static_cast<long long>(c.pp), static_cast<long long>(c.vpp), static_cast<long long>(c.cp),
          static_cast<long long>(c.ep), static_cast<long long>(c.dp ? *c.dp : -1), static_cast<long long>(c.schedule),
          static_cast<long long>(c.sequence_parallel), static_cast<long long>(c.zero_stage),
          static_cast<long long>(c.distributed_optimizer), static_cast<long long>(c.recompute),
          static_cast<long long>(c.micro_batch), static_cast<long long>(c.global_batch),
          static_cast<long long>(c.account_for_embedding), static_cast<long long>(c.account_for_loss)})
      mix(v);
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
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

}  // namespace detail

results::Json to_json(const PlanShard& shard) {
  using results::Json;
  Json j = Json::object();
  j["index"] = shard.index;
  j["count"] = shard.count;
  j["run_level"] = shard.run_level;
  j["search"] = shard.search;
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
    cands.push_back(detail::candidate_wire(c));
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
  std::vector<detail::Size> sizes;
  std::vector<detail::Point> points;
  detail::enumerate_points(problem, false, sizes, points);
  if (r.required("search", shard.search) && shard.search != detail::search_digest(sizes, points)) {
    r.error("search", "this shard sliced another search than this scenario and these options give (" +
                          std::to_string(points.size()) +
                          " points here): written by another trainsim build or with other plan options; "
                          "rerun the shards with this build");
    r.finish();
    return shard;  // its point indices name other configurations
  }
  for (auto& c : r.object_array("candidates", true))
    shard.candidates.push_back(detail::read_candidate_wire(c, problem, sizes, points));
  r.finish();
  return shard;
}

}  // namespace sim::planner
