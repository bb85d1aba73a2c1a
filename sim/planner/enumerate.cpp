// sim/planner/enumerate.cpp: the search space: which values of every free parallel field the planner tries.
#include "sim/planner/planner.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace sim::planner {
namespace {

using parallel::ParallelConfig;
using parallel::Recompute;
using parallel::Schedule;

/// Context parallelism beyond 32 ranks is not tried: Llama 3 405B trained its 128K-token stage with cp = 16 (Llama
/// Team 2024, "The Llama 3 Herd of Models", Sec. 3.3.2), the largest published production value we know of; 32
/// leaves one doubling of headroom and keeps the space small.
constexpr int kMaxCp = 32;
/// Micro-batches of more than 16 sequences are not tried: Narayanan et al. (SC21, Sec. 5.6, Fig. 18) find the best
/// micro-batch between 1 and 8 for GPT models of 91B-175B; larger ones only add activation memory.
constexpr int kMaxMicroBatch = 16;

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

template <class T>
std::vector<T> one(T v) {
  return std::vector<T>{v};
}

/// Layers over `stages` virtual stages as evenly as they go with the embedding, the loss and each multi-token
/// prediction layer counted as a layer (Megatron-LM's accounting, generalised to counts that do not divide): each
/// stage takes (layers + 2 + mtp) / stages slots, the remainder one more each from the second stage on, the first
/// stage gives one slot to the embedding and the last one to the loss and one to each MTP layer. DeepSeek-V3's 61
/// layers and MTP layer over 32 stages: 1, 2 x 30, 0, NVIDIA's "Et|(tt|)*30mL". Empty when a middle stage would have
/// no layer or an end stage fewer than none.
std::vector<int> balanced_split(int layers, int stages, int mtp) {
  const int counted = layers + 2 + mtp, base = counted / stages, extra = counted % stages;
  std::vector<int> out(static_cast<std::size_t>(stages), base);
  for (int i = 0; i < extra; ++i)
    ++out[static_cast<std::size_t>(1 + i) % static_cast<std::size_t>(stages)];
  out.front() -= 1;
  out.back() -= 1 + mtp;
  if (stages > 2 && *std::min_element(out.begin() + 1, out.end() - 1) < 1) return {};
  if (out.front() < 0 || out.back() < 0) return {};
  return out;
}

}  // namespace

const char* to_string(Objective o) {
  switch (o) {
    case Objective::Time:
      return "time";
    case Objective::Cost:
      return "cost";
    case Objective::Risk:
      return "risk";
  }
  return "?";
}

namespace {

/// The searchable fields by their scenario key, in the order enumerate() nests them.
struct FieldEntry {
  const char* name;
  bool FixedFields::*member;
};
constexpr std::array<FieldEntry, 13> kFields{{
    {"tp", &FixedFields::tp},
    {"pp", &FixedFields::pp},
    {"dp", &FixedFields::dp},
    {"cp", &FixedFields::cp},
    {"ep", &FixedFields::ep},
    {"vpp", &FixedFields::vpp},
    {"sequence_parallel", &FixedFields::sequence_parallel},
    {"zero_stage", &FixedFields::zero_stage},
    {"distributed_optimizer", &FixedFields::distributed_optimizer},
    {"recompute", &FixedFields::recompute},
    {"micro_batch", &FixedFields::micro_batch},
    {"schedule", &FixedFields::schedule},
    {"global_batch", &FixedFields::global_batch},
}};

}  // namespace

std::vector<std::string> FixedFields::names() {
  std::vector<std::string> out;
  for (const auto& f : kFields)
    out.emplace_back(f.name);
  return out;
}

FixedFields FixedFields::from_keys(const std::vector<std::string>& keys) {
  FixedFields f;
  for (const auto& k : keys)
    for (const auto& e : kFields)
      if (k == e.name) f.*e.member = true;
  return f;
}

FixedFields FixedFields::all() {
  FixedFields f;
  for (const auto& e : kFields)
    f.*e.member = true;
  return f;
}

std::vector<std::string> FixedFields::unfix(const std::vector<std::string>& keys) {
  std::vector<std::string> unknown;
  for (const auto& k : keys) {
    bool known = k == "all";
    for (const auto& e : kFields) {
      if (k == "all" || k == e.name) {
        this->*e.member = false;
        known = true;
      }
    }
    if (!known) unknown.push_back(k);
  }
  return unknown;
}

bool FixedFields::any() const {
  // The global batch is fixed by default (every scenario gives it): it counts only among the other fields' answer.
  return std::any_of(kFields.begin(), kFields.end() - 1, [this](const FieldEntry& e) { return this->*e.member; });
}

namespace {
void enumerate_batch(const PlanProblem& problem, int gpus, const ParallelConfig& base,
                     std::vector<ParallelConfig>& out);
}  // namespace

double steps_relative_to_scenario(const PlanProblem& problem, int global_batch) {
  const int b0 = problem.parallel.global_batch;
  if (global_batch == b0) return 1.0;
  const double bc = problem.critical_batch_tokens;
  if (bc <= 0) return static_cast<double>(b0) / global_batch;  // equal tokens
  const double seq = problem.seq_len;
  // S(B) / S(B0) = (1 + Bn/B) / (1 + Bn/B0) for the same target loss (McCandlish et al. 2018, Eq. 2.11).
  return (1.0 + bc / (global_batch * seq)) / (1.0 + bc / (b0 * seq));
}

std::vector<ParallelConfig> enumerate(const PlanProblem& problem, int gpus) {
  std::vector<ParallelConfig> out;
  // Global batches: the scenario's, or (freed) its halvings and doublings up to 8x either way, the steps teams
  // take when they retune a batch.
  std::vector<int> batches{problem.parallel.global_batch};
  const int b0 = problem.parallel.global_batch;
  if (!problem.fixed.global_batch) {
    batches.clear();
    for (int k = -3; k <= 3; ++k) {
      const long long b = k < 0 ? b0 >> -k : static_cast<long long>(b0) << k;
      if (b >= 1 && b <= (1LL << 30) && (k >= 0 || (b << -k) == b0)) batches.push_back(static_cast<int>(b));
    }
  }
  for (int gb : batches) {
    ParallelConfig base = problem.parallel;
    base.global_batch = gb;
    enumerate_batch(problem, gpus, base, out);
  }
  // Nothing tiles the cluster: keep the scenario's own configuration so that its broken rules explain the answer.
  if (out.empty()) {
    ParallelConfig c = problem.parallel;
    if (!problem.fixed.dp) c.dp.reset();
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

void enumerate_batch(const PlanProblem& problem, int gpus, const ParallelConfig& base,
                     std::vector<ParallelConfig>& out) {
  const auto& model = *problem.model;
  const FixedFields& f = problem.fixed;

  // Tensor parallelism within the NVLink domain (Narayanan et al. SC21, Sec. 3.3, Takeaway #1: "use tensor model
  // parallelism up to degree g when using g-GPU servers"); larger tp would cross the network every layer.
  std::vector<int> tps;
  if (f.tp) {
    tps = one(base.tp);
  } else {
    for (int d : divisors(problem.topology.nvlink_domain))
      if (d <= gpus) tps.push_back(d);
  }
  std::vector<int> cps;
  if (f.cp) {
    cps = one(base.cp);
  } else {
    for (int d : divisors(gpus))
      if (d <= kMaxCp || d == base.cp) cps.push_back(d);  // the scenario's own beyond the cap too
  }
  std::vector<int> pps;
  if (f.pp) {
    pps = one(base.pp);
  } else {
    for (int d : divisors(gpus))
      if (d <= model.layers) pps.push_back(d);
  }
  const bool sizes_fixed = f.tp && f.cp && f.pp;

  for (int tp : tps) {
    for (int cp : cps) {
      for (int pp : pps) {
        // dp is derived: with any of tp, cp, pp free, only sizes that tile the cluster are built (the others are not
        // points of the space); with all three fixed the point is kept so that its rule explains the empty answer.
        const long long mp = static_cast<long long>(tp) * cp * pp;
        int dp = 0;
        if (f.dp) {
          if (mp * *base.dp != gpus && !sizes_fixed) continue;
          dp = *base.dp;
        } else {
          if (gpus % mp != 0 && !sizes_fixed) continue;
          dp = static_cast<int>(gpus / std::max(1LL, mp));
        }

        // An uneven split where the layers do not divide over pp and the scenario gives no split of its own:
        // Megatron-LM's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split count the
        // embedding and the loss as a layer each, as Llama 3 405B split its 126 layers over 16 stages (Llama Team
        // 2024, "The Llama 3 Herd of Models", Sec. 3.3.2).
        const bool own_split = !base.layers_per_stage.empty() || base.account_for_embedding || base.account_for_loss ||
                               base.first_stage_layers > 0 || base.last_stage_layers > 0;
        const bool account = pp > 1 && !own_split && model.layers % pp != 0 && (model.layers + 2) % pp == 0;
        // Neither divides (DeepSeek-V3's 61 layers over any power of two): a balanced split of its own, written out
        // as layers_per_stage, where the search had pruned every pipeline (a user trial: NVIDIA's published PP 2-16
        // DeepSeek-V3 layouts all "layers-stages").
        const bool balanced = pp > 1 && !own_split && !account && model.layers % pp != 0;
        const int counted =
            model.layers + (account ? 2 : 0) + (base.account_for_embedding ? 1 : 0) + (base.account_for_loss ? 1 : 0);

        // Virtual stages: Megatron-LM needs the (counted) layers divisible by pp * vpp; an explicit
        // layers_per_stage fixes pp*vpp.
        std::vector<int> vpps;
        if (f.vpp) {
          vpps = one(base.vpp);
        } else if (pp == 1) {
          vpps = one(1);
        } else if (!base.layers_per_stage.empty()) {
          const int entries = static_cast<int>(base.layers_per_stage.size());
          vpps = one(entries % pp == 0 ? std::max(1, entries / pp) : 1);
        } else if (balanced) {
          // At least two slots a virtual stage (NVIDIA's DeepSeek-V3 layouts have two): the deeper splits of a model
          // whose layers divide over smaller pipelines (a 70B's 80 layers over 64 stages) took the default scenario's
          // full search from 3.4 to 4.6 s of CPU and never led it; with this bound 3.8 s (2026-12-06, the best ten
          // unchanged).
          for (int v : {1, 2, 4, 8})
            if (2 * pp * v <= model.layers + 2 + model.mtp_layers) vpps.push_back(v);
          if (vpps.empty()) vpps = one(1);  // no split: the point stays, pruned as layers-stages
        } else if (counted % pp != 0) {
          vpps = one(1);
        } else {
          vpps = divisors(counted / pp);
        }
        if (f.schedule && !f.vpp && base.schedule == Schedule::DualPipeV) {
          vpps = one(2);  // its V: two chunks per rank
        } else if (f.schedule && !f.vpp) {
          const bool interleaved = base.schedule == Schedule::Interleaved;
          std::erase_if(vpps, [&](int v) { return interleaved ? v == 1 : v > 1; });
          if (vpps.empty()) vpps = one(interleaved ? 2 : 1);
        }

        for (int vpp : vpps) {
          // A split of at least two slots a virtual stage; none (a stage of one slot, or of no layer) leaves the point
          // to be pruned as layers-stages, with its reason.
          const bool deep = 2 * pp * vpp > model.layers + 2 + model.mtp_layers;
          const std::vector<int> split =
              balanced && !deep ? balanced_split(model.layers, pp * vpp, model.mtp_layers) : std::vector<int>{};
          std::vector<Schedule> schedules;
          if (f.schedule)
            schedules = one(base.schedule);
          else if (vpp == 2 && model.moe && base.first_stage_layers == 0 && base.last_stage_layers == 0)
            // Two chunks per rank: round robin or DualPipe's V (whose first and last stages share rank 0, so a
            // per-rank first/last split does not apply: the scenario loader refuses that pair). The V is tried
            // where it is built to pay, MoE with expert parallelism (its pairs hide the all-to-alls; ep checked
            // below): its closed form plays every rank's program out, so a V point costs the screen about ten other
            // points (measured on the dense 70B search of BM_PlanAnalyticScreen70B1024: 9% more points, twice
            // the screen's time).
            schedules = {Schedule::Interleaved, Schedule::DualPipeV};
          else if (vpp > 1)
            schedules = one(Schedule::Interleaved);
          else if (pp == 1)
            schedules = one(Schedule::OneFOneB);  // no pipeline: every schedule is the same
          else
            schedules = {Schedule::OneFOneB, Schedule::ZeroBubbleH1, Schedule::GPipe};

          std::vector<int> eps;
          if (f.ep) {
            eps = one(base.ep);
          } else if (!model.moe) {
            eps = one(1);
          } else {
            // Experts are sharded over the data-parallel-with-context group (Megatron-Core): ep divides dp*cp.
            const int g = std::gcd(model.moe->experts, std::max(1, dp * cp));
            eps = divisors(g);
          }
          const std::vector<bool> sps = f.sequence_parallel ? one(base.sequence_parallel)
                                        : tp > 1            ? std::vector<bool>{true, false}
                                                            : one(false);

          // Optimizer sharding levels 0..3 (ZeRO stage; level 1 is Megatron's distributed optimizer), kept when the
          // fixed fields allow them. The step level times each: ZeRO-2 reduce-scatters the gradients after every
          // micro-batch's backward (DeepSpeed's stage 2), ZeRO-3 / FSDP gathers each unit's weights before its
          // forward and again before its backward and reduce-scatters its gradients (Rajbhandari et al. 2020,
          // Sec. 7.2). With the stage free, level 3 is tried without pipeline parallelism only: DeepSpeed refuses it
          // with its pipeline engine (deepspeed/runtime/pipe/engine.py), and FSDP under a pipeline keeps the gathered
          // weights across micro-batches (TorchTitan: no reshard after the forward). Level 2 with a pipeline is what
          // Llama 3 405B ran (Llama Team 2024, Sec. 3.3.2: FSDP sharding optimizer states and gradients, weights not
          // resharded after the forward, with PP 16), so it is searched whatever the scenario's own stage (trial 45:
          // it was searched only when it was the scenario's, so `--free zero_stage` answered by the starting point,
          // and missed an 8% faster 405B layout). The scenario's own stage is always among the candidates: `--free
          // zero_stage` on the 405B example searched levels 0-1 only and answered "no configuration is feasible"
          // beside the layout it had just shown to fit (a user trial).
          std::vector<std::pair<int, bool>> shardings;
          for (int level = 0; level <= 3; ++level) {
            const int zero = f.zero_stage ? base.zero_stage : level;
            const bool distopt = f.distributed_optimizer ? base.distributed_optimizer : level >= 1;
            if (std::max(zero, distopt ? 1 : 0) != level) continue;
            if (!f.zero_stage && level == 3 && pp > 1 && zero != base.zero_stage) continue;
            shardings.emplace_back(zero, distopt);
          }

          const std::vector<Recompute> recomputes =
              f.recompute ? one(base.recompute)
                          : std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full};
          std::vector<int> mbs;
          if (f.micro_batch) {
            mbs = one(base.micro_batch);
          } else if (dp > 0 && base.global_batch % dp == 0) {
            // The scenario's own micro-batch beyond the cap too (a user trial: micro-batch 32 fitted and was faster,
            // and plan never tried it).
            for (int d : divisors(base.global_batch / dp))
              if (d <= kMaxMicroBatch || d == base.micro_batch) mbs.push_back(d);
          } else {
            mbs = one(1);  // the batch does not divide: the rule says so
          }

          for (Schedule schedule : schedules)
            for (int ep : eps)
              if (schedule != Schedule::DualPipeV || ep > 1 || (schedule == base.schedule && ep == base.ep))
                for (bool sp : sps)
                  for (const auto& [zero, distopt] : shardings)
                    for (Recompute recompute : recomputes)
                      for (int mb : mbs) {
                        ParallelConfig c = base;
                        c.tp = tp;
                        c.pp = pp;
                        c.cp = cp;
                        if (!f.dp) c.dp.reset();  // derived by resolve_layout
                        c.vpp = vpp;
                        c.schedule = schedule;
                        c.ep = ep;
                        c.sequence_parallel = sp;
                        c.zero_stage = zero;
                        c.distributed_optimizer = distopt;
                        c.recompute = recompute;
                        c.micro_batch = mb;
                        if (account) c.account_for_embedding = c.account_for_loss = true;
                        if (balanced) c.layers_per_stage = split;
                        out.push_back(std::move(c));
                      }
        }
      }
    }
  }
}

}  // namespace

}  // namespace sim::planner
