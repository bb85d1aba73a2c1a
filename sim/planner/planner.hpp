// sim/planner/planner.hpp: search over parallel strategies: enumerate, prune (rules, memory), evaluate (analytic for
// every point, replica for the short list, run level for the finalists), rank by time, cost or risk, Pareto front.
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/base/task_farm.hpp"
#include "sim/base/units.hpp"
#include "sim/execution/step_plan.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/parallel/feasibility.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/results/json.hpp"
#include "sim/results/step_result.hpp"
#include "sim/topology/topology.hpp"
#include "sim/workload/model_spec.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sim::planner {

enum class Objective {
  Time,  // healthy step time (replica fidelity)
  Cost,  // expected total cost of the run, failures included (run-level Monte Carlo)
  Risk,  // p90 time to train (run-level Monte Carlo)
};
const char* to_string(Objective o);

/// The parallel fields a scenario can fix; every field not fixed is searched. order is never searched, nor is a
/// layers_per_stage the scenario gives; where the scenario gives none and the layers divide over a pipeline neither
/// as they are nor with the embedding and loss counted, the search writes a balanced split (enumerate.cpp).
struct FixedFields {
  bool tp = false;
  bool pp = false;
  bool dp = false;
  bool cp = false;
  bool ep = false;
  bool vpp = false;
  bool sequence_parallel = false;
  bool zero_stage = false;
  bool distributed_optimizer = false;
  bool recompute = false;
  bool micro_batch = false;
  bool schedule = false;
  /// Fixed unless freed (`--free global_batch` or `all`): a scenario always gives its batch. Candidates are the
  /// scenario's batch times 1/8 ... 8 in powers of two, ranked by the time to the same target loss (McCandlish).
  bool global_batch = true;

  /// From the keys of a scenario's "parallel" object ("tp", "zero_stage", ...); other keys are ignored.
  static FixedFields from_keys(const std::vector<std::string>& keys);
  static FixedFields all();
  /// Unfixes the named fields ("all" unfixes every one). Returns the names that are not searchable fields.
  std::vector<std::string> unfix(const std::vector<std::string>& names);
  /// Names of the searchable fields, in the order the planner nests them.
  static std::vector<std::string> names();
  bool any() const;
};

/// The run-level outcome of one candidate: time to train and its cost, failures included.
struct RunEstimate {
  int trials = 0;
  double time_to_train_mean_days = 0;
  double time_to_train_p90_days = 0;
  double cost_mean_usd = 0;
  double cost_p90_usd = 0;
  double goodput_mean = 0;
  /// The tokens the run trains (whole steps of this candidate's global batch; another batch than the scenario's
  /// trains McCandlish's E(B) for the same loss); 0 for a fixed window (training.duration).
  double tokens = 0;
  /// The fractions of the trials that miss the scenario's deadline and exceed its budget; none where it sets none.
  std::optional<double> p_deadline_miss;
  std::optional<double> p_budget_overrun;
};

/// A deadline or budget missed in more trials than this is a risk, as the report judges a plan (at its p90).
inline constexpr double kConstraintRisk = 0.10;
/// How many of the scenario's deadline and budget a run misses at that risk (0 where it sets neither). plan ranks
/// candidates that miss fewer first, whatever the objective, and by the objective among those that miss as many.
int constraints_missed(const RunEstimate& r);
inline bool meets_constraints(const RunEstimate& r) {
  return constraints_missed(r) == 0;
}

/// What a RunEvaluator throws once it sees `stop`; plan() then propagates the exception that abandoned the plan.
struct Abandoned {};

/// Simulates the whole run of a candidate (its parallel configuration, dp resolved, its step plan and healthy replica
/// step) with `trials` Monte Carlo trials. Called concurrently from worker threads: it must be thread-safe and
/// deterministic (fixed seed), and it must not start threads of its own that depend on the machine (results must not
/// depend on the thread count). `stop` is set when the plan is being abandoned (Ctrl-C heard by PlanOptions::progress):
/// a long evaluation looks at it and stops by throwing (a user trial: plan went on for two minutes after SIGINT).
using RunEvaluator =
    std::function<RunEstimate(const parallel::ParallelConfig& parallel, const execution::StepPlan& plan,
                              const results::StepResult& step, int trials, const std::atomic<bool>& stop)>;

/// What to plan, in the step level's terms (the composition root fills it from a scenario: scenario/plan_setup).
struct PlanProblem {
  const workload::ModelSpec* model = nullptr;
  const hardware::HardwareProfile* hardware = nullptr;
  topology::TopologyConfig topology;  // the cluster; `gpus` is replaced by each size searched
  std::vector<int> gpus;              // cluster sizes to search (at least one)
  int seq_len = 0;
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  workload::Fp8Scaling fp8_scaling = workload::Fp8Scaling::Delayed;
  hardware::AttentionKernel attention_kernel = hardware::AttentionKernel::Fused;
  bool eager_kernels = false;   // training.kernels "eager" (StepInputs::eager_kernels)
  bool repeated_kv = false;     // training.attention_kv "repeated" (StepInputs::repeated_kv)
  bool sp_batch_first = false;  // training.sp_layout "batch_first" (StepInputs::sp_batch_first)
  /// Values of the fixed fields, and global_batch, order and layers_per_stage (the scenario's, never searched).
  parallel::ParallelConfig parallel;
  FixedFields fixed;
  bool flash_attention = true;
  bool dropout = false;  // hidden dropout
  bool attention_dropout = false;
  parallel::MemoryOptions memory;
  RunEvaluator run;  // empty: no run level (no time to train, no cost; only the time objective)
  /// McCandlish's critical batch in tokens (0: unknown). With it, candidates of another global batch are ranked by
  /// the time to the loss the scenario's own batch reaches: steps S(B) = S_min (1 + B_noise / B) (McCandlish et al.
  /// 2018, Eq. 2.11); without it, by the time to the same number of tokens.
  double critical_batch_tokens = 0;
};

/// Optimiser steps a global batch of `global_batch` sequences needs for the problem's target, relative to the
/// scenario's own batch (1 for that batch): S(B) / S(B_0) with McCandlish's S, or B_0 / B without a critical batch.
double steps_relative_to_scenario(const PlanProblem& problem, int global_batch);

/// A distributed search's farm (sim/base/task_farm.hpp): set by the MPI driver, tasks handed to ranks as they free up.
using TaskFarm = base::TaskFarm;

struct PlanOptions {
  Objective objective = Objective::Time;
  int top_k = 10;
  std::vector<int> gpus;  // cluster sizes; empty: the scenario's
  int threads = 0;        // 0: every core; results do not depend on it
  /// Called on the calling thread about ten times a second and at the end of each phase; it may throw to cancel
  /// (workers stop after their current point; the exception propagates out of plan()).
  std::function<void(int done, int total)> progress;
  /// Fields to search although the scenario fixes them ("all": every searchable field); used by plan_scenario.
  std::vector<std::string> free;
  /// The short list re-evaluated at replica fidelity: this fraction of the feasible points of each cluster size, at
  /// least shortlist_min of them.
  double shortlist_fraction = 0.05;
  int shortlist_min = 20;
  /// Run level: the best run_candidates of each cluster size by replica step time (at least top_k), each with
  /// run_trials Monte Carlo trials.
  int run_candidates = 20;
  int run_trials = 200;
  /// Empty: the replica and run-level phases run on this process's threads. Set: every process calls plan() with the
  /// same problem, screens alike, and the farm shares out the replica simulations and run-level evaluations.
  TaskFarm farm;
};

struct Candidate {
  parallel::ParallelConfig parallel;  // every field resolved (dp set)
  parallel::Layout layout;
  int gpus = 0;
  results::StepResult step;  // replica fidelity (memory and fit filled in)
  base::Time analytic_step_time;
  std::optional<RunEstimate> run;
  std::string megatron_flags;
  std::int64_t index = 0;  // position in the enumeration (the deterministic tie-break)
  /// Steps to the target relative to the scenario's batch (steps_relative_to_scenario); the time objective ranks by
  /// step time x this, the step time of the scenario's batch at equal progress.
  double relative_steps = 1.0;
};

struct PlanResult {
  std::int64_t evaluated = 0;  // points enumerated: feasible + the sum of the infeasible counts
  std::int64_t feasible = 0;   // evaluated at analytic fidelity
  /// Feasible points dropped because another point of the same sizes (tp, pp, vpp, cp, ep, micro-batch, GPUs) is at
  /// least as fast at analytic fidelity with no more memory per GPU.
  std::int64_t dominated = 0;
  std::int64_t replica_evaluated = 0;
  std::int64_t run_evaluated = 0;
  /// Rule id (parallel::resolve_layout's, or "out of memory") -> points it pruned, most first. A point that breaks
  /// several rules counts under the first one resolve_layout reports.
  std::vector<std::pair<std::string, std::int64_t>> infeasible;
  /// The finalists, best first: the run-evaluated candidates when the problem has a run evaluator, else the replica
  /// short list. Callers show the first top_k.
  std::vector<Candidate> candidates;
  /// Indices into candidates of the Pareto front of expected time to train vs expected cost (step time vs GPU-hours
  /// per step without a run level), fastest first.
  std::vector<int> pareto;
  Objective objective = Objective::Time;
  std::vector<int> gpus;  // cluster sizes searched
};

/// Runs the search. Throws base::ConfigError when the problem cannot be searched (no cluster size, a cluster the
/// topology cannot build, a cost or risk objective without a run evaluator). An empty candidate list is a result:
/// `infeasible` says why.
PlanResult plan(const PlanProblem& problem, const PlanOptions& options);

/// A slice of a search (one task of a job array, a CI matrix, ...): the screen, which every shard computes alike,
/// and the replica-fidelity simulations of every count-th entry of the short list (longest first, so shards get
/// similar work), with the run level for the best of them. merge_plan_shards() of all `count` shards gives the
/// result plan() gives, exactly: plan() is the merge of one shard.
struct PlanShard {
  int index = 0;
  int count = 1;
  bool run_level = false;  // the problem had a run evaluator
  std::string search;      // detail::search_digest of the search it sliced (its candidates are point indices)
  PlanResult summary;      // the screen's counts; no candidates
  /// This slice's short-list entries at replica fidelity, in short-list order; `run` set for the slice's best
  /// run_candidates per size (a superset of its share of the global finalists).
  std::vector<Candidate> candidates;
};

/// Shard `index` of `count` (0 <= index < count; else base::ConfigError).
PlanShard plan_shard(const PlanProblem& problem, const PlanOptions& options, int index, int count);
/// Combines shards of one search that tile it exactly once; base::ConfigError for a missing, repeated or foreign
/// shard (one of another scenario, version or options: it screened other points).
PlanResult merge_plan_shards(const PlanProblem& problem, const PlanOptions& options, std::vector<PlanShard> shards);
/// A shard's exact form (integers, shortest round-trip doubles, non-finite doubles as "inf"/"-inf"/"nan"); each
/// candidate is its point index plus what was simulated, so reading needs the problem, which re-derives the rest.
results::Json to_json(const PlanShard& shard);
/// Reads what to_json(PlanShard) wrote for `problem`; problems go to the reader's diagnostics.
PlanShard plan_shard_from_json(base::JsonReader& r, const PlanProblem& problem);

/// The configurations plan() considers for one cluster size, in its deterministic order.
std::vector<parallel::ParallelConfig> enumerate(const PlanProblem& problem, int gpus);

/// Megatron-LM command-line flags of a candidate: the parallel part of sim/parallel's megatron_args() on one line,
/// e.g. "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --sequence-parallel
/// --use-distributed-optimizer --recompute-granularity selective --micro-batch-size 1 --global-batch-size 1024".
std::string megatron_flags(const PlanProblem& problem, const parallel::ParallelConfig& c,
                           const parallel::Layout& layout);

/// Indices of the points not dominated in (x, y), both minimised, ordered by x then y; of equal points the first.
std::vector<int> pareto_front(const std::vector<std::pair<double, double>>& points);

/// The planner's screen: indices (ascending) of the points that no other point beats by more than `x_margin` (a
/// fraction) in x at no larger y; of equal points the first.
std::vector<int> pareto_front_within(const std::vector<std::pair<double, double>>& points, double x_margin);

/// The closed form's disagreement with the replay that the screen allows for: a point within 0.5% of a faster one at no
/// smaller memory is kept for the replica stage (the fidelities agree within 3% on most points, docs/validation.md, and
/// near-ties are where their order flips).
inline constexpr double kScreenMargin = 0.005;

/// The `trainsim plan --json` object (schema trainsim.plan/1): the first top_k candidates and the Pareto front.
results::Json to_json(const PlanResult& r, int top_k);

}  // namespace sim::planner
