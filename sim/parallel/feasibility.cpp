// sim/parallel/feasibility.cpp: the divisibility and compatibility rules of a parallel layout.
#include "sim/parallel/feasibility.hpp"

#include "sim/base/assert.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

namespace sim::parallel {
namespace {

constexpr std::array kRules{
    LayoutRule{"world-size-divisibility",
               "without an explicit dp, tp*pp*cp must divide the cluster's GPUs (dp = gpus / (tp*pp*cp))"},
    LayoutRule{"world-size-product", "with an explicit dp, tp*pp*dp*cp must equal the cluster's GPUs"},
    LayoutRule{"heads-tp", "attention heads must split evenly over tensor-parallel ranks (Megatron-LM)"},
    LayoutRule{"kv-heads-tp",
               "key/value heads (query groups) must split evenly over tensor-parallel ranks (Megatron-Core; "
               "multi-latent attention has none)"},
    LayoutRule{"ffn-tp", "the MLP's inner size must split evenly over tensor-parallel ranks"},
    LayoutRule{"expert-ffn-tp", "each expert's inner size must split evenly over tensor-parallel ranks"},
    LayoutRule{"tp-nvlink-domain",
               "tp must divide the NVLink domain or be a multiple of it, so TP groups never straddle domains unevenly"},
    LayoutRule{"seq-exceeds-positions", "a model with learned positions cannot train beyond its max_seq_len"},
    LayoutRule{"seq-cp",
               "with context parallelism seq_len must divide into 2*cp chunks (load-balanced ring attention)"},
    LayoutRule{"seq-sp-tp",
               "sequence parallelism splits each context-parallel rank's tokens over tp: they must divide"},
    LayoutRule{"global-batch-divisibility", "global_batch must be a whole number of micro_batch*dp"},
    LayoutRule{"dp-shard", "dp_shard (hybrid sharding) must divide dp into whole sharding groups"},
    LayoutRule{"layer-passes",
               "micro-batches per replica times the model's layers (the layer passes one step replays) must not "
               "exceed 262144"},
    LayoutRule{"micro-batches-pp",
               "interleaved 1F1B, ZB-H1 and DualPipeV need at least one micro-batch per pipeline stage"},
    LayoutRule{"interleaved-micro-batches",
               "the interleaved schedule needs micro-batches divisible by pp (Megatron-LM's groups of pp)"},
    LayoutRule{"vpp-needs-pp", "virtual pipeline stages (vpp > 1) need a pipeline (pp > 1)"},
    LayoutRule{"vpp-needs-interleaved", "vpp > 1 runs only under the interleaved schedule (or dualpipev, vpp = 2)"},
    LayoutRule{"layers-stages",
               "without layers_per_stage, layers must divide evenly over pp*vpp virtual stages (Megatron-LM)"},
    LayoutRule{"layers-per-stage-count", "layers_per_stage needs exactly pp*vpp entries"},
    LayoutRule{"pipeline-split-accounting",
               "with account_for_embedding/loss_in_pipeline_split, layers plus the embedding and loss counted as "
               "layers must divide evenly over pp*vpp virtual stages (Megatron-LM)"},
    LayoutRule{
        "first-last-stage-layers",
        "first/last_stage_layers must divide over vpp chunks, leave layers for the other ranks, and the rest must "
        "divide evenly over them (Megatron-Core --decoder-first/last-pipeline-num-layers)"},
    LayoutRule{"layers-per-stage-sum", "layers_per_stage must sum to the model's layers"},
    LayoutRule{"empty-stage",
               "a middle virtual stage of layers_per_stage with no layer is infeasible (the first and the last hold "
               "the embedding and the output layer; a pipeline_layout may leave any stage empty)"},
    LayoutRule{"pipeline-layout-mtp", "a pipeline_layout's MTP layers ('m') must be the model's mtp_layers"},
    LayoutRule{"ep-dense-model", "expert parallelism (ep > 1) needs a mixture-of-experts model"},
    LayoutRule{"experts-ep", "experts must split evenly over expert-parallel ranks"},
    LayoutRule{"ep-dp-cp",
               "ep * expert_tp must divide tp*dp*cp (ep must divide dp*cp when expert_tp = tp): experts are sharded "
               "across data-parallel (and, with MoE parallel folding, tensor-parallel) ranks (Megatron-Core)"},
    LayoutRule{"expert-tp", "expert_tp must divide tp (Megatron-Core's expert tensor parallelism folds into tp)"},
    LayoutRule{"moe-tp-needs-sp", "a model with experts under tensor parallelism needs sequence parallelism"},
    LayoutRule{"ep-overlap-needs-ep",
               "ep_comm_overlap overlaps expert-parallel all-to-alls: it needs ep > 1 (Megatron-Core)"},
    LayoutRule{"ep-overlap-schedule",
               "ep_comm_overlap pairs steady-state forwards and backwards: with pp > 1 it needs the interleaved "
               "schedule (vpp > 1) or dualpipev, and 1F1B only with pp = 1 (Megatron-Core)"},
    LayoutRule{"dualpipev-shape",
               "dualpipev folds the model into 2 x pp stages in a V and needs pp >= 2, vpp = 2 and at least 2 x pp "
               "micro-batches "
               "(deepseek-ai/DualPipe)"},
    LayoutRule{"ep-overlap-recompute", "ep_comm_overlap cannot run with full recomputation (Megatron-Core)"},
    LayoutRule{"recompute-num-layers",
               "recompute_num_layers counts layers of one virtual stage: at most as many as the largest holds"},
    LayoutRule{"recompute-op-dense",
               "recompute \"op\" (PyTorch per-operator checkpointing, TorchTitan's policy) is modelled for dense "
               "blocks with multi-head or grouped-query attention, not for experts or MLA"},
};

std::string str(long long v) {
  return std::to_string(v);
}

class RuleChecker {
 public:
  void fail(const char* rule, std::string reason) { found_.push_back({rule, std::move(reason)}); }
  std::vector<Infeasible> take() { return std::move(found_); }
  bool empty() const { return found_.empty(); }

 private:
  std::vector<Infeasible> found_;
};

/// Sizes of the world: derives dp or checks the one given. Returns 0 when dp cannot be known.
int resolve_dp(const ClusterShape& cluster, const ParallelConfig& c, RuleChecker& rules) {
  const long long model_parallel = static_cast<long long>(c.tp) * c.pp * c.cp;
  const std::string product = str(c.tp) + "*" + str(c.pp) + "*" + str(c.cp);
  if (!c.dp) {
    if (cluster.gpus % model_parallel == 0) return static_cast<int>(cluster.gpus / model_parallel);
    rules.fail("world-size-divisibility", "gpus = " + str(cluster.gpus) + " is not divisible by tp*pp*cp = " + product +
                                              " = " + str(model_parallel));
    return 0;
  }
  const long long world = model_parallel * *c.dp;
  if (world == cluster.gpus) return *c.dp;
  rules.fail("world-size-product", "tp*pp*dp*cp = " + str(c.tp) + "*" + str(c.pp) + "*" + str(*c.dp) + "*" + str(c.cp) +
                                       " = " + str(world) + " but the cluster has " + str(cluster.gpus) + " GPUs");
  return 0;
}

/// Attention, MLP and expert shapes against tensor parallelism and the NVLink domain.
void check_tensor_parallel(const workload::ModelSpec& m, const ClusterShape& cluster, const ParallelConfig& c,
                           RuleChecker& rules) {
  const int tp = c.tp;
  if (m.heads % tp != 0) rules.fail("heads-tp", "heads = " + str(m.heads) + " is not divisible by tp = " + str(tp));
  // Megatron-Core's TransformerConfig raises "num_query_groups (N) must be a multiple of tensor_model_parallel_size"
  // (megatron/core/transformer/transformer_config.py); it does not replicate query groups over the TP ranks, and
  // TorchTitan's attention divides its KV heads by tp too. A user trial found TP 4 recommended for a model with 2
  // KV heads, and TP 16 stepped for Llama 3 8B's 8. MLA's keys and values come per head from its latent.
  if (!m.mla && m.kv_heads % tp != 0)
    rules.fail("kv-heads-tp", "kv_heads = " + str(m.kv_heads) + " is not divisible by tp = " + str(tp) +
                                  " (Megatron-Core needs the query groups to split evenly over tensor parallelism)");
  // A MoE model's MLP is its experts (count_params ignores the dense ffn_hidden then), so only the experts count.
  if (!m.moe && m.ffn_hidden % tp != 0)
    rules.fail("ffn-tp", "ffn_hidden = " + str(m.ffn_hidden) + " is not divisible by tp = " + str(tp));
  const int etp = c.expert_tp_or_tp();
  if (m.moe && m.moe->ffn_hidden % etp != 0)
    rules.fail("expert-ffn-tp", "moe.ffn_hidden = " + str(m.moe->ffn_hidden) + " is not divisible by " +
                                    (c.expert_tp > 0 ? "expert_tp = " : "tp = ") + str(etp));
  if (c.expert_tp > 0 && tp % c.expert_tp != 0)
    rules.fail("expert-tp", "expert_tp = " + str(c.expert_tp) + " does not divide tp = " + str(tp));
  const int domain = cluster.nvlink_domain;
  if (domain % tp != 0 && tp % domain != 0)
    rules.fail("tp-nvlink-domain", "tp = " + str(tp) + " neither divides the NVLink domain of " + str(domain) +
                                       " GPUs nor is a multiple of it (TP groups would straddle domains unevenly)");
}

/// Sequence length against positions, context parallelism and sequence parallelism.
void check_sequence(const workload::ModelSpec& m, const ParallelConfig& c, int seq_len, RuleChecker& rules) {
  if (m.position_embedding == workload::PositionEmbedding::Learned && seq_len > m.max_seq_len)
    rules.fail("seq-exceeds-positions", "seq_len = " + str(seq_len) + " exceeds the " + str(m.max_seq_len) +
                                            " learned position embeddings of " + m.name);
  // Load-balanced ring attention (Megatron-Core / TransformerEngine context parallelism) cuts each sequence into
  // 2*cp chunks and gives rank i chunks i and 2cp-1-i, so that causal-attention work is equal on every rank.
  if (c.cp > 1 && seq_len % (2 * c.cp) != 0)
    rules.fail("seq-cp", "seq_len = " + str(seq_len) + " is not divisible by 2*cp = " + str(2 * c.cp) +
                             " (load-balanced ring attention cuts the sequence into 2*cp chunks)");
  // Sequence parallelism scatters the [s/cp, b, h] activations along s over the TP group; Megatron-Core asserts
  // "First dimension of the tensor should be divisible by tensor parallel size" (tensor_parallel/mappings.py).
  if (c.sequence_parallel && c.tp > 1 && seq_len % c.cp == 0 && (seq_len / c.cp) % c.tp != 0)
    rules.fail("seq-sp-tp", "sequence parallelism splits the " + str(seq_len / c.cp) +
                                " tokens of each context-parallel rank over tp = " + str(c.tp) + "; " +
                                str(seq_len / c.cp) + " is not divisible by " + str(c.tp));
}

/// Batch against data parallelism and the pipeline schedule. Returns the micro-batches per replica (0 if unknown).
int check_batch(const workload::ModelSpec& model, const ParallelConfig& c, int dp, RuleChecker& rules) {
  if (dp == 0) return 0;
  const long long per_step = static_cast<long long>(c.micro_batch) * dp;
  if (c.global_batch % per_step != 0) {
    rules.fail("global-batch-divisibility", "global_batch = " + str(c.global_batch) +
                                                " is not divisible by micro_batch*dp = " + str(c.micro_batch) + "*" +
                                                str(dp) + " = " + str(per_step));
    return 0;
  }
  const int m = static_cast<int>(c.global_batch / per_step);
  // The step level replays every layer of every micro-batch of a replica (m * layers forward and backward passes, each
  // with its tensor-parallel collectives), so its time and memory grow with m: a global batch of 1e9 sequences took
  // minutes and GiBs for one step. Published runs replay at most 117,600 layer passes (shared/validation: Megatron
  // SC21 Table 2, 529.6B on 560 GPUs, 1120 micro-batches of 105 layers); the bound is 2.2 times that (replica
  // fidelity: about 1.2 s for Llama 3 8B at tp 2, 4 s for a 1T-parameter model at tp 8, pp 64).
  const long long passes = static_cast<long long>(m) * model.layers;
  if (passes > kMaxLayerPasses) {
    const long long largest = kMaxLayerPasses / model.layers * per_step;
    rules.fail("layer-passes", "global_batch = " + str(c.global_batch) + " gives " + str(m) +
                                   " micro-batches per replica, " + str(passes) + " passes of the model's " +
                                   str(model.layers) + " layers; at most " + str(kMaxLayerPasses) + " are simulated: " +
                                   (largest > 0 ? "global_batch <= " + str(largest) + " here, or a larger micro_batch"
                                                : std::string("the model has too many layers")));
  }
  // 1F1B keeps one micro-batch per stage in flight; with fewer micro-batches than stages the steady state never
  // starts and most stages idle, as in GPipe. Megatron-LM runs non-interleaved 1F1B so (forward_backward_pipelining_
  // without_interleaving: num_warmup_microbatches = min(pp - rank - 1, num_microbatches)), and so does trainsim's
  // schedule, its bubble merely large. Its interleaved schedule requires groups of pp micro-batches (below), and ZB-H1
  // (Qi et al. 2024, Sec. 3) and DualPipeV assume m >= p: infeasible for those.
  const bool needs_one_per_stage = c.schedule != Schedule::GPipe && c.schedule != Schedule::OneFOneB;
  if (c.pp > 1 && needs_one_per_stage && m < c.pp)
    rules.fail("micro-batches-pp", str(m) + " micro-batches per replica are fewer than pp = " + str(c.pp) +
                                       " stages (" + to_string(c.schedule) +
                                       " needs at least one micro-batch per stage)");
  // Megatron-LM, forward_backward_pipelining_with_interleaving: "number of microbatches is not divisible by
  // pipeline-model-parallel-size when using interleaved schedule".
  if (c.schedule == Schedule::Interleaved && c.pp > 1 && m % c.pp != 0)
    rules.fail("interleaved-micro-batches", "the interleaved schedule needs micro-batches per replica (" + str(m) +
                                                ") divisible by pp = " + str(c.pp) + " (Megatron-LM)");
  // DualPipeV (deepseek-ai/DualPipe, dualpipev.py, step()): "num_chunks >= num_ranks * 2", and a pipeline to fold.
  if (c.schedule == Schedule::DualPipeV && (c.pp < 2 || c.vpp != 2 || m < 2 * c.pp))
    rules.fail("dualpipev-shape",
               "dualpipev needs pp >= 2, vpp = 2 and at least 2 x pp micro-batches per replica; "
               "here pp = " +
                   str(c.pp) + ", vpp = " + str(c.vpp) + ", " + str(m) + " micro-batches");
  return m;
}

/// Layers over pp * vpp virtual stages. Returns the split (empty when infeasible).
std::vector<int> check_stages(const workload::ModelSpec& m, const ParallelConfig& c, RuleChecker& rules) {
  if (c.vpp > 1 && c.pp == 1)
    rules.fail("vpp-needs-pp",
               "vpp = " + str(c.vpp) + " virtual stages need pp > 1 (there is no pipeline to interleave)");
  if (c.vpp > 1 && c.schedule != Schedule::Interleaved && c.schedule != Schedule::DualPipeV)
    rules.fail("vpp-needs-interleaved",
               "vpp = " + str(c.vpp) + " virtual stages need the interleaved schedule, not " + to_string(c.schedule));
  const int stages = c.pp * c.vpp;
  const std::string stages_text = str(c.pp) + "*" + str(c.vpp) + " = " + str(stages);
  const bool megatron_split =
      c.account_for_embedding || c.account_for_loss || c.first_stage_layers > 0 || c.last_stage_layers > 0;
  if (c.layers_per_stage.empty() && !megatron_split) {
    if (m.layers % stages != 0) {
      rules.fail(
          "layers-stages",
          "layers = " + str(m.layers) + " is not divisible by pp*vpp = " + stages_text +
              "; give parallel.layers_per_stage, first/last_stage_layers or account_for_*_in_pipeline_split for an "
              "uneven split");
      return {};
    }
    return std::vector<int>(static_cast<std::size_t>(stages), m.layers / stages);
  }
  if (c.layers_per_stage.empty() && (c.account_for_embedding || c.account_for_loss)) {
    if (c.first_stage_layers > 0 || c.last_stage_layers > 0) {
      rules.fail("first-last-stage-layers",
                 "first/last_stage_layers cannot be combined with "
                 "account_for_*_in_pipeline_split (Megatron-LM refuses both at once)");
      return {};
    }
    const int counted = m.layers + (c.account_for_embedding ? 1 : 0) + (c.account_for_loss ? 1 : 0);
    // A first / last virtual stage may end up with the embedding or the loss alone (no transformer layer), as in
    // NVIDIA's 30-layer Llama 3.1 405B proxy at PP4 VPP8 (30 + 2 = 32 virtual stages of one).
    if (counted % stages != 0) {
      rules.fail("pipeline-split-accounting",
                 "layers + embedding + loss = " + str(counted) + " is not divisible by pp*vpp = " + stages_text);
      return {};
    }
    std::vector<int> split(static_cast<std::size_t>(stages), counted / stages);
    if (c.account_for_embedding) --split.front();
    if (c.account_for_loss) --split.back();
    return split;
  }
  if (c.layers_per_stage.empty() && (c.first_stage_layers > 0 || c.last_stage_layers > 0)) {
    const int fixed_ranks = (c.first_stage_layers > 0 ? 1 : 0) + (c.last_stage_layers > 0 ? 1 : 0);
    const int rest = m.layers - c.first_stage_layers - c.last_stage_layers;
    const int other_stages = (c.pp - fixed_ranks) * c.vpp;
    std::string why;
    if (c.first_stage_layers % c.vpp != 0 || c.last_stage_layers % c.vpp != 0)
      why = "first/last_stage_layers (" + str(c.first_stage_layers) + ", " + str(c.last_stage_layers) +
            ") must divide over vpp = " + str(c.vpp) + " chunks";
    else if (c.pp < fixed_ranks || (c.pp == fixed_ranks && rest != 0) || rest < 0)
      why = "first/last_stage_layers leave " + str(rest) + " layers for " + str(c.pp - fixed_ranks) + " other ranks";
    else if (other_stages > 0 && (rest % other_stages != 0 || rest == 0))
      why = "the other " + str(rest) + " layers do not divide evenly over " + str(other_stages) + " virtual stages";
    if (!why.empty()) {
      rules.fail("first-last-stage-layers", why);
      return {};
    }
    std::vector<int> split(static_cast<std::size_t>(stages), other_stages > 0 ? rest / other_stages : 0);
    for (int chunk = 0; chunk < c.vpp; ++chunk) {
      if (c.first_stage_layers > 0) split[static_cast<std::size_t>(chunk * c.pp)] = c.first_stage_layers / c.vpp;
      if (c.last_stage_layers > 0)
        split[static_cast<std::size_t>(chunk * c.pp + c.pp - 1)] = c.last_stage_layers / c.vpp;
    }
    for (int l : split)
      if (l <= 0) {
        rules.fail("empty-stage", "the first/last_stage_layers split leaves a virtual stage with no layer");
        return {};
      }
    return split;
  }
  const auto& split = c.layers_per_stage;
  bool ok = true;
  if (static_cast<long long>(split.size()) != stages) {
    rules.fail("layers-per-stage-count", "layers_per_stage has " + str(static_cast<long long>(split.size())) +
                                             " entries but pp*vpp = " + stages_text);
    ok = false;
  }
  const long long sum = std::accumulate(split.begin(), split.end(), 0LL);
  const bool layout = c.from_layout;
  if (sum != m.layers) {
    rules.fail("layers-per-stage-sum", (layout ? "pipeline_layout has " + str(sum) + " transformer layers 't'"
                                               : "layers_per_stage sums to " + str(sum)) +
                                           " but " + m.name + " has " + str(m.layers) + " layers");
    ok = false;
  }
  if (layout && c.layout_mtp != m.mtp_layers) {
    rules.fail("pipeline-layout-mtp", "pipeline_layout has " + str(c.layout_mtp) + " MTP layers 'm' but " + m.name +
                                          " has " + str(m.mtp_layers) + " (Megatron-LM: they must match)");
    ok = false;
  }
  // The first virtual stage holds the embedding and the last the output layer, so either may hold no transformer
  // layer (Megatron-LM's "E|..." and "...|L" layouts); a layout may leave any stage empty, as Megatron-LM's does.
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (split[i] > 0 || layout || i == 0 || i + 1 == split.size()) continue;
    rules.fail("empty-stage", "virtual stage " + str(static_cast<long long>(i)) +
                                  " of layers_per_stage has no layer (only the first and the last stage, which hold "
                                  "the embedding and the output layer, may have none)");
    ok = false;
  }
  if (!ok) return {};
  return split;
}

/// Experts against expert parallelism, data parallelism and sequence parallelism.
void check_experts(const workload::ModelSpec& m, const ParallelConfig& c, int dp, RuleChecker& rules) {
  // Megatron-Core's MoELayer.forward raises in training with TP and no sequence parallelism, whatever ep ("performance
  // may degrade if MoE and tensor parallelism are enabled without also enabling sequence parallelism"); its token
  // dispatcher takes each rank's sequence shard.
  if (m.moe && c.ep == 1 && c.tp > 1 && !c.sequence_parallel)
    rules.fail("moe-tp-needs-sp", "tp = " + str(c.tp) +
                                      " needs sequence_parallel for a model with experts (Megatron-Core's MoE layer "
                                      "requires it with TP)");
  if (c.ep == 1) return;
  if (!m.moe) {
    rules.fail("ep-dense-model",
               "ep = " + str(c.ep) + " but " + m.name + " is a dense model (it has no experts to distribute)");
    return;
  }
  if (m.moe->experts % c.ep != 0)
    rules.fail("experts-ep", "experts = " + str(m.moe->experts) + " is not divisible by ep = " + str(c.ep));
  // Megatron-Core builds expert-parallel groups inside the data-parallel-with-context group of size dp*cp, or with
  // MoE parallel folding (expert_tp < tp) inside tp*dp*cp: ep * expert_tp ranks hold one copy of the experts.
  const long long expert_world = static_cast<long long>(c.tp) * dp * c.cp;
  const long long expert_group = static_cast<long long>(c.ep) * c.expert_tp_or_tp();
  if (dp > 0 && c.expert_tp_or_tp() == c.tp && (static_cast<long long>(dp) * c.cp) % c.ep != 0)
    rules.fail("ep-dp-cp", "ep = " + str(c.ep) + " does not divide dp*cp = " + str(dp) + "*" + str(c.cp) + " = " +
                               str(static_cast<long long>(dp) * c.cp) +
                               " (experts are sharded across data-parallel ranks)");
  else if (dp > 0 && expert_world % expert_group != 0)
    rules.fail("ep-dp-cp", "ep * expert_tp = " + str(expert_group) +
                               " does not divide tp*dp*cp = " + str(expert_world) + " (MoE parallel folding)");
  // Megatron-Core ModelParallelConfig: "When using expert parallelism and tensor parallelism, sequence parallelism
  // must be used".
  if (c.tp > 1 && !c.sequence_parallel)
    rules.fail("moe-tp-needs-sp", "tp = " + str(c.tp) + " with ep = " + str(c.ep) +
                                      " needs sequence_parallel (Megatron-Core requires it for MoE with TP and EP)");
}

/// Megatron-Core's TransformerConfig asserts for --overlap-moe-expert-parallel-comm
/// (megatron/core/transformer/transformer_config.py at d2c5e8b4): expert parallelism, a virtual pipeline when
/// pp > 1, no full recomputation.
void check_ep_overlap(const ParallelConfig& c, RuleChecker& rules) {
  if (c.ep < 2) rules.fail("ep-overlap-needs-ep", "ep_comm_overlap is set but ep = " + str(c.ep));
  const bool ok = c.schedule == Schedule::Interleaved || c.schedule == Schedule::DualPipeV ||
                  (c.schedule == Schedule::OneFOneB && c.pp == 1);
  if (!ok)
    rules.fail("ep-overlap-schedule", std::string("ep_comm_overlap with schedule \"") + to_string(c.schedule) +
                                          "\" and pp = " + str(c.pp) +
                                          " (Megatron-Core pairs forwards and backwards under interleaving, vpp > 1, "
                                          "or with one pipeline stage)");
  if (c.recompute == Recompute::Full)
    rules.fail("ep-overlap-recompute",
               "ep_comm_overlap with recompute \"full\" (Megatron-Core: \"disable full "
               "recomputation when enabling overlap_moe_expert_parallel_comm\")");
}

}  // namespace

int Layout::layers_on_rank(int pipeline_rank) const {
  SIM_ASSERT(pipeline_rank >= 0 && pipeline_rank < pp, "pipeline rank out of range");
  int layers = 0;
  for (int chunk = 0; chunk < vpp; ++chunk)
    layers += layers_per_stage[static_cast<std::size_t>(stage(chunk, pipeline_rank))];
  return layers;
}

int Layout::first_layer(int stage) const {
  SIM_ASSERT(stage >= 0 && stage < stages(), "virtual stage out of range");
  int first = 0;
  for (int v = 0; v < stage; ++v)
    first += layers_per_stage[static_cast<std::size_t>(v)];
  return first;
}

std::span<const LayoutRule> layout_rules() {
  return kRules;
}

std::variant<Layout, std::vector<Infeasible>> resolve_layout(const workload::ModelSpec& model,
                                                             const ClusterShape& cluster, const ParallelConfig& config,
                                                             int seq_len) {
  SIM_ASSERT(config.tp > 0 && config.pp > 0 && config.cp > 0 && config.ep > 0 && config.vpp > 0 &&
                 config.micro_batch > 0 && config.global_batch > 0 && (!config.dp || *config.dp > 0),
             "parallel sizes are positive (ParallelConfig::parse guarantees it)");
  SIM_ASSERT(cluster.gpus > 0 && cluster.gpus_per_node > 0 && cluster.nvlink_domain > 0,
             "cluster sizes are positive (the scenario and profile parsers guarantee it)");
  SIM_ASSERT(model.layers > 0 && model.heads > 0 && model.kv_heads > 0 && model.ffn_hidden > 0 && seq_len > 0,
             "model sizes are positive (ModelSpec::parse guarantees it)");

  RuleChecker rules;
  const int dp = resolve_dp(cluster, config, rules);
  check_tensor_parallel(model, cluster, config, rules);
  check_sequence(model, config, seq_len, rules);
  const int micro_batches = check_batch(model, config, dp, rules);
  if (config.dp_shard > 0 && dp > 0 && dp % config.dp_shard != 0)
    rules.fail("dp-shard", "dp_shard = " + str(config.dp_shard) + " does not divide dp = " + str(dp) +
                               " into whole sharding groups");
  auto split = check_stages(model, config, rules);
  // Megatron-LM's --recompute-num-layers: layers per recomputed group (uniform) or recomputed per stage (block), of
  // one model chunk; more than a chunk holds was capped silently (a user trial: 1,000 on 20-layer stages ran as 20).
  if (config.recompute == Recompute::Full && config.recompute_num_layers > 1 && rules.empty()) {
    const int most = split.empty() ? model.layers / std::max(1, config.pp * config.vpp)
                                   : *std::max_element(split.begin(), split.end());
    if (config.recompute_num_layers > most)
      rules.fail("recompute-num-layers", "recompute_num_layers = " + str(config.recompute_num_layers) +
                                             " but the largest virtual stage holds " + str(most) + " layers");
  }
  check_experts(model, config, dp, rules);
  if (config.recompute == Recompute::Op && (model.moe || model.mla))
    rules.fail("recompute-op-dense",
               std::string("recompute \"op\" is modelled for dense attention blocks only; ") + model.name + " has " +
                   (model.moe ? "experts" : "multi-head latent attention") + ": use \"selective\" or \"full\"");
  if (config.ep_comm_overlap) check_ep_overlap(config, rules);
  // ZeRO-2/3 with pipeline parallelism is not a rule: DeepSpeed's pipeline engine refuses it, but FSDP runs it
  // (TorchTitan's FSDP2 + PP; Llama 3's 405B pre-training, Llama Team 2024 Sec. 3.3.2: FSDP sharding optimizer states
  // and gradients within 4D parallelism). The cost model reduce-scatters every micro-batch's gradients
  // (StepPlan::dp_every_micro_batch).
  if (!rules.empty()) return rules.take();

  Layout l;
  l.tp = config.tp;
  l.pp = config.pp;
  l.dp = dp;
  l.cp = config.cp;
  l.ep = config.ep;
  l.expert_tp = config.expert_tp;
  l.vpp = config.vpp;
  l.v_shape = config.schedule == Schedule::DualPipeV;
  l.micro_batch = config.micro_batch;
  l.micro_batches = micro_batches;
  l.layers_per_stage = std::move(split);
  return l;
}

int padded_vocab(int vocab, int tp) {
  SIM_ASSERT(vocab > 0 && tp > 0, "vocabulary and tp are positive");
  // megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding: multiple = make_vocab_size_divisible_by (128)
  // * tensor_model_parallel_size; the vocabulary is rounded up to it.
  const int multiple = 128 * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

}  // namespace sim::parallel
