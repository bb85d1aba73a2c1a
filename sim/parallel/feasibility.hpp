// sim/parallel/feasibility.hpp: whether a parallel strategy can run a model on a cluster, and the layout it resolves
// to.
#pragma once
#include "sim/parallel/parallel_config.hpp"
#include "sim/workload/model_spec.hpp"

#include <span>
#include <string>
#include <variant>
#include <vector>

namespace sim::parallel {

/// One broken rule: `rule` is a stable kebab-case id (counted by the planner, matched by tests), `reason` a sentence
/// with the numbers: {"heads-tp", "heads = 64 is not divisible by tp = 3"}. Infeasible is a result, not an error.
struct Infeasible {
  std::string rule;
  std::string reason;
  bool operator==(const Infeasible&) const = default;
};

/// The cluster as far as feasibility cares: how many GPUs, how many per node, and how many share one NVLink domain
/// (8 on an HGX H100 board, 72 on a GB200 NVL72 rack).
struct ClusterShape {
  int gpus = 0;
  int gpus_per_node = 0;
  int nvlink_domain = 0;
};

/// A resolved, feasible parallel layout: every size is known and every divisibility rule holds.
struct Layout {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int expert_tp = 0;  // tensor parallelism of the experts; 0: tp (the configuration gave none)
  int vpp = 1;
  int micro_batch = 1;    // sequences per micro-batch
  int micro_batches = 1;  // per data-parallel replica per iteration: global_batch / (micro_batch * dp)
  /// Transformer layers per virtual stage, pp * vpp entries in virtual-stage (model) order: chunk c of pipeline rank
  /// r is virtual stage c * pp + r, as in Megatron-LM's interleaving (Narayanan et al. SC21, Sec. 2.2), or under
  /// DualPipeV's V the stage stage() says. Always filled: the even split when the configuration gives none.
  std::vector<int> layers_per_stage;

  int gpus() const { return tp * pp * dp * cp; }
  int stages() const { return pp * vpp; }
  /// DualPipeV's V (Schedule::DualPipeV): chunk 1 of rank r is virtual stage 2pp - 1 - r, so the first and the last
  /// stage share rank 0 and the last rank runs stages pp - 1 and pp back to back.
  bool v_shape = false;
  /// Virtual stage index of model chunk `chunk` on pipeline rank `pipeline_rank`.
  int stage(int chunk, int pipeline_rank) const {
    return v_shape && chunk == 1 ? 2 * pp - 1 - pipeline_rank : chunk * pp + pipeline_rank;
  }
  /// The pipeline rank and the chunk that run virtual stage `s` (the inverse of stage()).
  int rank_of(int s) const { return v_shape && s >= pp ? 2 * pp - 1 - s : s % pp; }
  int chunk_of(int s) const { return s / pp; }
  /// Layers held by one pipeline rank, summed over its vpp chunks.
  int layers_on_rank(int pipeline_rank) const;
  /// Index of the first transformer layer of virtual stage `stage` (layers stack in virtual-stage order).
  int first_layer(int stage) const;
};

/// Layer passes one step of a replica may replay: micro-batches per replica * the model's layers (rule
/// "layer-passes"; feasibility.cpp says where the figure comes from).
inline constexpr long long kMaxLayerPasses = 262144;

/// A rule of resolve_layout: its id and what it protects (for `trainsim describe` and for the tests).
struct LayoutRule {
  const char* id;
  const char* description;
};

/// Every rule resolve_layout checks, in the order it checks them.
std::span<const LayoutRule> layout_rules();

/// Resolves `config` for `model` on `cluster` at `seq_len` tokens per sequence: derives dp (gpus / (tp*pp*cp)) when
/// the configuration omits it, the number of micro-batches and the layers of every virtual stage. Returns every
/// violated rule (not just the first) so that a planner can count them and a user can fix them in one pass.
///
/// Choices documented here (each is a rule in layout_rules()):
///  - Layers must split evenly over pp * vpp virtual stages unless `layers_per_stage` is given, as Megatron-LM
///    requires (num_layers divisible by the pipeline size); an uneven split is always explicit, like Llama 3 405B's
///    126 layers on 16 stages (Llama Team 2024, Sec. 3.3.2: one layer fewer on the first and the last stage).
///  - Megatron-LM's other splits: account_for_embedding/loss_in_pipeline_split count the embedding and the loss as
///    one layer each, so (layers + those) must divide evenly over pp * vpp and the first / last virtual stage holds
///    one transformer layer fewer (megatron/core/transformer/transformer_block.py, get_num_layers_to_build);
///    first/last_stage_layers fix the first / last pipeline rank's layers (divided evenly over its vpp chunks) and
///    the other ranks split the rest evenly.
///  - The vocabulary is NOT a rule: it is padded to a multiple of 128 * tp as Megatron-LM does (see padded_vocab).
///  - Key/value heads split over tp (kv_heads % tp == 0): Megatron-Core's TransformerConfig refuses query groups
///    that do not ("num_query_groups must be a multiple of tensor_model_parallel_size"); MLA has none.
///  - Tensor parallelism over the network is allowed (Megatron-LM runs it, slowly); what is infeasible is a tp that
///    neither divides the NVLink domain nor is a multiple of it, so that TP groups straddle domains unevenly.
///  - sequence_parallel with tp = 1 is a no-op, not a rule: Megatron-LM silently turns it off ("disable sequence
///    parallelism when tp=1 to avoid change in numerics", megatron/training/arguments.py), and with t = 1 Korthikanti's
///    formulas with and without sequence parallelism coincide.
/// Preconditions (guaranteed by the parsers, checked with SIM_ASSERT): every size in `config`, `cluster` and `model`
/// is positive, and seq_len > 0.
std::variant<Layout, std::vector<Infeasible>> resolve_layout(const workload::ModelSpec& model,
                                                             const ClusterShape& cluster, const ParallelConfig& config,
                                                             int seq_len);

/// The vocabulary Megatron-LM actually allocates: rounded up to a multiple of make_vocab_size_divisible_by (128) * tp,
/// so that every tensor-parallel shard of the embedding and output layer is equal and GEMM-friendly
/// (megatron/training/tokenizer: _vocab_size_with_padding). GPT-3's 50,257 becomes 51,200 at tp = 8.
int padded_vocab(int vocab, int tp);

}  // namespace sim::parallel
