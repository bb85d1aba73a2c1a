// sim/parallel/memory.cpp: per-GPU memory: parameters, ZeRO sharding, activations by schedule, buffers. What one
// layer stores is in activation_bytes.cpp; how many micro-batches a schedule holds at its peak, the pipeline-order
// half of the activation count, in micro_batches_held.cpp.
#include "sim/parallel/memory.hpp"

#include "sim/parallel/activation_bytes.hpp"

#include "sim/base/assert.hpp"
#include "sim/workload/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sim::parallel {
namespace {

using workload::Activation;
using workload::ModelSpec;
using namespace activation_bytes;  // element sizes, kv_heads_per_rank, gradient_working_bytes

constexpr double kFp8Copies = 2;  // an FP8 weight and its FP8 transpose (memory.hpp, MemoryOptions)

/// Parameters of one transformer layer on one GPU (an MoE layer when `moe_layer` and the model has experts).
ParamsPerGpu layer_params(const ModelSpec& model, const Layout& layout, bool moe_layer) {
  const auto counts = workload::count_params(model);
  const double t = layout.tp;
  const double h = model.hidden;
  double attention = 0;
  if (model.mla) {
    // Megatron-Core MLA: the down projections to the latents (and the RoPE key) and the latents' norms are
    // replicated on every TP rank; the up projections split over heads and the output projection over its input.
    const auto& a = *model.mla;
    const double norm = model.norm == workload::Norm::LayerNorm ? 2.0 : 1.0;
    const double down = (a.q_lora_rank > 0 ? h * a.q_lora_rank + norm * a.q_lora_rank : 0.0) +
                        h * (a.kv_lora_rank + a.qk_rope_head_dim) + norm * a.kv_lora_rank;
    attention = down + (counts.attention_per_layer - down) / t;
  } else {
    // Attention: Q, K, V and O split over t (tp divides the kv heads: resolve_layout's kv-heads-tp; MLA's one head
    // per rank is the max(1, ...) of kv_heads_per_rank). Biases travel with their matrices (the row-parallel output
    // bias, h values, is replicated in Megatron; ignored).
    const double kv_width = static_cast<double>(model.kv_heads) * model.head_dim();
    const double kv_part = 2 * h * kv_width + (model.qkv_bias ? 2 * kv_width : 0.0);
    const double kv_share = static_cast<double>(kv_heads_per_rank(model, layout.tp)) / model.kv_heads;
    attention = (counts.attention_per_layer - kv_part) / t + kv_part * kv_share;
  }

  ParamsPerGpu p;
  p.dense = attention + counts.norms_per_layer;  // norms are replicated
  if (model.moe && moe_layer) {
    // Routed experts: experts / ep per rank, each split over t; shared experts are dense, split over t only; the
    // router is replicated.
    const double expert = (counts.mlp_per_layer - counts.shared_mlp_per_layer) / model.moe->experts;
    const double etp = layout.expert_tp > 0 ? layout.expert_tp : layout.tp;  // Megatron-Core expert TP
    p.expert = expert * (static_cast<double>(model.moe->experts) / layout.ep) / etp;
    p.dense += counts.shared_mlp_per_layer / t + counts.router_per_layer;
  } else {
    p.dense += counts.dense_mlp_per_layer / t;
  }
  return p;
}

/// Layout::first_layer of every virtual stage, in one pass.
std::vector<int> first_layers(const Layout& layout) {
  std::vector<int> first(layout.layers_per_stage.size());
  int sum = 0;
  for (std::size_t v = 0; v < first.size(); ++v) {
    first[v] = sum;
    sum += layout.layers_per_stage[v];
  }
  return first;
}

/// The layers of virtual stage `stage` in the stacking order, for the per-layer kinds (MoE or dense); `first`:
/// first_layers(layout).
template <class F>
void for_stage_layers(const Layout& layout, const std::vector<int>& first_layer, int stage, F&& f) {
  const int first = first_layer[static_cast<std::size_t>(stage)];
  for (int l = first; l < first + layout.layers_per_stage[static_cast<std::size_t>(stage)]; ++l)
    f(l);
}

/// Rounds a byte estimate up to whole bytes.
base::Bytes whole_bytes(double bytes) {
  SIM_ASSERT(std::isfinite(bytes) && bytes >= 0 && bytes < 9.0e18, "memory estimate out of range");
  return base::Bytes{static_cast<std::int64_t>(std::ceil(bytes))};
}

/// Activations pipeline rank `rank` stores at its peak: every layer of every chunk times the micro-batches it holds,
/// by the recomputation Megatron-LM runs (--recompute-granularity, -method, -num-layers, -modules), plus the working
/// set of what is being recomputed:
///  - none: every tensor; selective: all but the modules' tensors, plus one layer's recomputed tensors;
///  - full, uniform, N layers: each chunk's layers in groups of N, only each group's input stored
///    (megatron/core/transformer/transformer_block.py, _checkpointed_forward), plus one group's full activations;
///  - full, block, N layers: the first N layers of each chunk store their input only, the rest everything, plus one
///    layer's full activations.
/// Per layer kind (dense 0, MoE 1): what a layer stores with no recomputation, with only its input, and with the
/// configuration's recomputation. The same on every pipeline rank.
struct KindBytes {
  double full[2] = {0, 0};
  double input[2] = {0, 0};
  double stored[2] = {0, 0};
};

KindBytes kind_bytes(const ModelSpec& model, const ParallelConfig& config, ActivationShape shape) {
  KindBytes k;
  for (int kind = 0; kind < 2; ++kind) {
    shape.moe_layer = kind == 1;
    shape.recompute = Recompute::None;
    k.full[kind] = layer_activation_bytes(model, shape);
    shape.recompute = Recompute::Full;
    k.input[kind] = layer_activation_bytes(model, shape);
    shape.recompute = config.recompute == Recompute::Full ? Recompute::None : config.recompute;
    k.stored[kind] = layer_activation_bytes(model, shape);
  }
  return k;
}

double stored_activations(const ModelSpec& model, const Layout& layout, const ParallelConfig& config,
                          const KindBytes& bytes, const std::vector<int>& first_layer, const std::vector<int>& held,
                          int rank) {
  const double(&full)[2] = bytes.full;
  const double(&input)[2] = bytes.input;
  const double(&stored)[2] = bytes.stored;
  const bool full_rc = config.recompute == Recompute::Full;
  const bool block = config.recompute_method == RecomputeMethod::Block;
  const int n = config.recompute_num_layers;
  double total = 0, working = 0;
  const int last_stage = layout.stages() - 1;
  for (int c = 0; c < layout.vpp; ++c) {
    const int stage = layout.stage(c, rank);
    double chunk = 0;
    int position = 0;  // index of the layer within its chunk
    auto add_layer = [&](int kind) {
      if (!full_rc) {
        chunk += stored[kind];
        working = std::max(working, full[kind] - stored[kind]);
      } else if (block) {
        const bool recomputed = position < n;
        chunk += recomputed ? input[kind] : full[kind];
        if (recomputed) working = std::max(working, full[kind] - input[kind]);
      } else {
        if (position % n == 0) chunk += input[kind];  // a group's input
        working = std::max(
            working, std::min(n, layout.layers_per_stage[static_cast<std::size_t>(stage)]) * full[kind] - input[kind]);
      }
      ++position;
    };
    for_stage_layers(layout, first_layer, stage, [&](int l) { add_layer(model.is_moe_layer(l) ? 1 : 0); });
    // Multi-token prediction modules run after the last layer, on the last virtual stage.
    if (stage == last_stage)
      for (int k = 0; k < model.mtp_layers; ++k)
        add_layer(model.moe ? 1 : 0);
    total += static_cast<double>(held[static_cast<std::size_t>(c)]) * chunk;
  }
  return total + working;
}

}  // namespace

bool default_flash_attention(const ModelSpec& model) {
  return model.position_embedding == workload::PositionEmbedding::Rope;
}

bool default_dropout(const ModelSpec& model) {
  return model.position_embedding == workload::PositionEmbedding::Learned;
}

namespace {

/// What memory_per_gpu computes alike for every pipeline rank of one layout and configuration: peak_memory computes it
/// once for all of them.
struct RankInvariants {
  workload::ParamCounts counts;
  ParamsPerGpu moe_layer;
  ParamsPerGpu dense_layer;
  ActivationShape shape;
  KindBytes bytes;
  std::vector<int> first_layer;  // first_layers(layout)
};

RankInvariants rank_invariants(const ModelSpec& model, const Layout& layout, const ParallelConfig& config, int seq_len,
                               const MemoryOptions& options) {
  RankInvariants inv;
  inv.counts = workload::count_params(model);
  inv.moe_layer = layer_params(model, layout, true);
  inv.dense_layer = layer_params(model, layout, false);
  inv.first_layer = first_layers(layout);
  ActivationShape& shape = inv.shape;
  shape.seq_len = seq_len;
  shape.micro_batch = layout.micro_batch;
  shape.tp = layout.tp;
  shape.cp = layout.cp;
  shape.sequence_parallel = config.sequence_parallel && layout.tp > 1;  // a no-op at tp = 1, as in Megatron-LM
  shape.recompute = Recompute::None;
  shape.flash_attention = options.fused_attention;
  shape.dropout = options.hidden_dropout > 0;
  shape.attention_dropout = options.attention_dropout > 0;
  shape.recompute_modules = config.recompute_modules;
  shape.fp8_activations = options.fp8_activations;
  shape.expert_tp = layout.expert_tp;
  shape.moe_imbalance = options.moe_load(layout.ep);
  shape.sp_gathered_inputs = options.sp_gathered_inputs;
  shape.element_bytes = options.element_bytes;
  inv.bytes = kind_bytes(model, config, shape);
  return inv;
}

ParamsPerGpu params_on_rank(const ModelSpec& model, const Layout& layout, int pipeline_rank,
                            const RankInvariants& inv) {
  SIM_ASSERT(pipeline_rank >= 0 && pipeline_rank < layout.pp, "pipeline rank out of range");
  const auto& counts = inv.counts;
  const ParamsPerGpu& moe_layer = inv.moe_layer;
  const ParamsPerGpu& dense_layer = inv.dense_layer;
  const double h = model.hidden;
  ParamsPerGpu p;
  for (int c = 0; c < layout.vpp; ++c)
    for_stage_layers(layout, inv.first_layer, layout.stage(c, pipeline_rank), [&](int l) {
      const ParamsPerGpu& layer = model.is_moe_layer(l) ? moe_layer : dense_layer;
      p.dense += layer.dense;
      p.expert += layer.expert;
    });
  const double vocab_shard = static_cast<double>(padded_vocab(model.vocab, layout.tp)) * h / layout.tp;
  if (pipeline_rank == 0) p.dense += vocab_shard + counts.position;  // word embedding; positions are replicated
  if (pipeline_rank == layout.rank_of(layout.stages() - 1)) {        // the last stage's rank (DualPipeV: rank 0)
    p.dense += counts.final_norm;
    // Untied: the output layer. Tied, on another rank than the embedding: Megatron-LM keeps a copy of the word
    // embedding on the last stage and all-reduces its gradient with the first stage's (the embedding group); under
    // DualPipeV's V both are on rank 0, one tensor.
    if (!model.tied_embeddings || pipeline_rank != 0) p.dense += vocab_shard;
    // Multi-token prediction modules sit on the last stage (Megatron-Core): a layer, two norms and the 2h x h
    // projection each (split over t), sharing the stage's embedding copy and output head.
    const ParamsPerGpu& mtp = model.moe ? moe_layer : dense_layer;
    p.dense += model.mtp_layers * (mtp.dense + 2.0 * h * h / layout.tp + 3.0 * counts.final_norm);
    p.expert += model.mtp_layers * mtp.expert;
  }
  return p;
}

MemoryBreakdown memory_on_rank(const ModelSpec& model, const Layout& layout, const ParallelConfig& config, int seq_len,
                               int pipeline_rank, const MemoryOptions& options, const RankInvariants& inv);

}  // namespace

ParamsPerGpu params_per_gpu(const ModelSpec& model, const Layout& layout, int pipeline_rank) {
  RankInvariants inv;
  inv.counts = workload::count_params(model);
  inv.moe_layer = layer_params(model, layout, true);
  inv.dense_layer = layer_params(model, layout, false);
  inv.first_layer = first_layers(layout);
  return params_on_rank(model, layout, pipeline_rank, inv);
}

MemoryBreakdown memory_per_gpu(const ModelSpec& model, const Layout& layout, const ParallelConfig& config, int seq_len,
                               int pipeline_rank, const MemoryOptions& options) {
  SIM_ASSERT(pipeline_rank >= 0 && pipeline_rank < layout.pp, "pipeline rank out of range");
  return memory_on_rank(model, layout, config, seq_len, pipeline_rank, options,
                        rank_invariants(model, layout, config, seq_len, options));
}

namespace {

MemoryBreakdown memory_on_rank(const ModelSpec& model, const Layout& layout, const ParallelConfig& config, int seq_len,
                               int pipeline_rank, const MemoryOptions& options, const RankInvariants& inv) {
  SIM_ASSERT(static_cast<int>(layout.layers_per_stage.size()) == layout.stages(), "a layout from resolve_layout");

  // Weights, gradients, optimizer states (see memory.hpp for the sources of 2 + 4 + 12).
  const ParamsPerGpu params = params_on_rank(model, layout, pipeline_rank, inv);
  // ZeRO shards over every data-parallel rank, or over dp_shard of them (hybrid sharding), and the context-parallel
  // ones.
  const double dense_shards = static_cast<double>(config.dp_shard > 0 ? config.dp_shard : layout.dp) * layout.cp;
  // The expert-data-parallel group: tp*dp*cp ranks over ep * expert_tp copies (dp*cp/ep when expert_tp = tp).
  const double etp = layout.expert_tp > 0 ? layout.expert_tp : layout.tp;
  const double expert_shards = dense_shards * layout.tp / (static_cast<double>(layout.ep) * etp);
  auto sharded = [&](double bytes_per_param, bool shard) {
    return bytes_per_param * (shard ? params.dense / dense_shards + params.expert / expert_shards : params.total());
  };
  MemoryBreakdown out;
  out.pipeline_rank = pipeline_rank;
  const bool zero3 = config.zero_stage >= 3;
  const bool sharded_optimizer = config.zero_stage >= 1 || config.distributed_optimizer;
  // Where the master weights live (MemoryOptions::master_weights): fp32 parameters as the master give 4-byte weights
  // and an 8-byte optimizer where nothing else holds 16-bit weights (ZeRO-3's shards, or no sharding at all); no fp32
  // copy at all (pure 16-bit training) 2-byte weights and gradients and a 4-byte optimizer.
  using MW = MemoryOptions::MasterWeights;
  // fp32 / tf32 training (MemoryOptions::element_bytes 4): the fp32 parameters are the master however they are
  // sharded, with no 16-bit copy.
  const bool fp32_training = options.element_bytes > 2;
  const bool fp32_params = fp32_training || (options.master_weights == MW::Params && (zero3 || !sharded_optimizer));
  const bool pure_16bit = options.master_weights == MW::None && !fp32_training;
  double weights = sharded(fp32_params ? kFp32 : kBf16, zero3);
  // FP8 copies of the transformer layers' GEMM weights and their transposes (memory.hpp), of the layers this GPU
  // holds unsharded (with ZeRO-3 only the gathered units, counted with the buffers).
  if (options.fp8_weight_copies && !zero3) {
    double layer_weights = params.total();
    const double h = model.hidden;
    const double vocab_shard = static_cast<double>(padded_vocab(model.vocab, layout.tp)) * h / layout.tp;
    if (pipeline_rank == 0) layer_weights -= vocab_shard;
    if (pipeline_rank == layout.rank_of(layout.stages() - 1) && (!model.tied_embeddings || pipeline_rank != 0))
      layer_weights -= vocab_shard;
    weights += kFp8Copies * std::max(0.0, layer_weights);
  }
  out.params = whole_bytes(weights);
  // The gradients take the parameters' dtype where those are the master (fp32, or 16 bits in pure 16-bit training):
  // main_grads "bf16" is then the reduction's dtype only.
  const double grad_bytes = pure_16bit ? kBf16 : options.fp32_main_grads || fp32_params ? kFp32 : kBf16;
  out.grads = whole_bytes(sharded(grad_bytes, config.zero_stage >= 2));
  // Optimizer in the backward (MemoryOptions::optimizer_in_backward): each layer's sharded gradients are stepped and
  // freed as its reduce-scatter lands, so at most one layer's are held (the largest layer's share of the stage's).
  const bool own_grads = zero3 || (layout.dp * layout.cp == 1 && config.zero_stage == 0);  // final once made
  if (options.optimizer_in_backward && own_grads && layout.micro_batches == 1 && layout.pp == 1 && layout.ep == 1) {
    const int layers = std::max(1, layout.layers_per_stage.front());
    out.grads = whole_bytes(static_cast<double>(out.grads.n) / layers);
  }
  // The optimizer's own states: Adam's two moments beside fp32 parameters (Params unsharded or under ZeRO-3), 16-bit
  // moments in pure 16-bit training, else the separate master and the two moments in their dtypes
  // (MemoryOptions::main_params, exp_avg, exp_avg_sq).
  const double optimizer_bytes = pure_16bit    ? 2 * kBf16
                                 : fp32_params ? 2 * kFp32
                                               : MemoryOptions::bytes(options.main_params) +
                                                     MemoryOptions::bytes(options.exp_avg) +
                                                     MemoryOptions::bytes(options.exp_avg_sq);
  out.optimizer = whole_bytes(sharded(optimizer_bytes, sharded_optimizer));

  // Activations: the layers of every micro-batch in flight at the rank's peak, plus the layers being recomputed.
  const ActivationShape& shape = inv.shape;
  const auto held = micro_batches_held(layout, config.schedule, pipeline_rank);
  double gradients = 0;  // the larger of a dense and an MoE layer's, for models that mix them
  for (int kind = 0; kind < (model.moe ? 2 : 1); ++kind) {
    ActivationShape k = shape;
    k.moe_layer = model.moe && kind == 1;
    gradients = std::max(gradients, gradient_working_bytes(model, k));
  }
  const double activations =
      stored_activations(model, layout, config, inv.bytes, inv.first_layer, held, pipeline_rank) + gradients;
  out.activations = whole_bytes(activations);

  // Buffers.
  const double s = static_cast<double>(seq_len) / layout.cp;
  const double b = layout.micro_batch;
  const double h = model.hidden;
  const double t = layout.tp;
  const double sigma = shape.sequence_parallel ? 1.0 / t : 1.0;
  const double sbh = s * b * h;
  const double e = options.element_bytes;  // a 16-bit tensor's element: 4 bytes in fp32 training
  double buffers = static_cast<double>(options.runtime_reserve.n);
  // Korthikanti Sec. 4.3, input embedding: its dropout mask, sbh (over t with SP), per micro-batch in flight.
  if (pipeline_rank == 0 && shape.dropout) buffers += kMask * sbh * sigma * held.front();
  // Korthikanti Sec. 4.3, output layer: the final norm's input and the output projection's input, 2 x 2sbh (over t
  // with SP), and what the cross-entropy holds per logit (vocabulary-parallel; Megatron's padded V): the fp32
  // softmax, 4sbV/t, or with PyTorch's cross_entropy on upcast logits 12sbV/t (MemoryOptions::upcast_cross_entropy()).
  // The fused loss's peak holds one micro-batch's logits twice more briefly: Megatron-Core's fused cross entropy
  // casts the bf16 logits, which its caller still holds, to an fp32 copy it turns into the softmax in place
  // (megatron/core/fusions/fused_cross_entropy.py, calculate_logits_max: `vocab_parallel_logits.float()`), and its
  // backward hands the fp32 gradient it computes in place on the softmax to autograd, which casts it to the logits'
  // bf16: 2sbV/t beside the stored softmax, once (upcast's 12 B already counts its peak).
  // Upcast under tensor parallelism is PyTorch's loss_parallel (DTensor, vocabulary-sharded logits), whose backward
  // fuses nll_loss's and log_softmax's as `(grad_input + torch.exp(x)) * grad_output` on a zeroed grad_input
  // (torch/distributed/tensor/parallel/loss.py, _nll_loss_and_log_softmax_backward): the saved log-softmax x, the
  // zeros, exp(x) and their sum are live at once, 16 B per logit (its forward peaks at 14: the bf16 logits, their fp32
  // copy, x - max and its exp).
  double loss = 0;  // the output layer's and the loss's share
  const int last_stage = layout.stages() - 1;
  if (pipeline_rank == layout.rank_of(last_stage)) {
    const double upcast_logit = (layout.tp > 1 ? 4 : 3) * kFp32;
    const double per_logit = options.upcast_cross_entropy() ? upcast_logit : kFp32;
    const double logit_count = s * b * padded_vocab(model.vocab, layout.tp) / t;
    const int in_flight = held[static_cast<std::size_t>(layout.chunk_of(last_stage))];
    // Under ZB-H1 the last rank's other micro-batches in flight wait only for their deferred W pass (Qi et al. 2023),
    // which needs the output projection's input and the logits' gradient, 2sbh + 2sbV/t; the softmax is freed by the
    // B pass, so one micro-batch at a time holds the loss's buffers.
    const int loss_live = config.schedule == Schedule::ZeroBubbleH1 ? std::min(in_flight, 1) : in_flight;
    const double w_pending = e * sbh * sigma + e * logit_count;
    loss = ((2 * e * sbh * sigma + per_logit * logit_count) * loss_live + w_pending * (in_flight - loss_live)) *
           (1 + model.mtp_layers);  // + MTP heads
    // The caller's 16-bit logits beside the fused loss's fp32 copy; fp32 logits are cast in place (.float() is a
    // no-op on them), so fp32 training holds no second copy (a review).
    if (!options.upcast_cross_entropy() && e < kFp32) loss += e * logit_count;
  }
  // Plus context parallelism's key/value exchange (cp_exchange.cpp), never live beside the loss's logits: the larger.
  const double kv_heads =
      options.repeated_kv || model.mla.has_value() ? model.heads / t : kv_heads_per_rank(model, layout.tp);
  buffers += std::max(loss, cp_exchange_bytes(model, layout, config.cp_comm_type, s * b, kv_heads, e));
  // ASSUMPTION: pipeline point-to-point receive buffers, one activation and one gradient tensor of 2sbh (over t with
  // SP, Megatron sends the sequence-parallel shard). With PyTorch's pipelining runtime (MemoryOptions), per chunk of
  // this rank: a forward receive buffer per micro-batch beyond the in-flight ones (those are the first layer's saved
  // input, counted with the activations) on every stage but the first, and on every stage but the last a gradient
  // receive buffer per micro-batch plus the output each in-flight micro-batch keeps until its backward.
  if (layout.pp > 1 && options.pipeline_buffers_per_micro_batch) {
    const int stages = layout.pp * layout.vpp;
    const double m = layout.micro_batches;
    double tensors = 0;
    for (int c = 0; c < layout.vpp; ++c) {
      const int stage = layout.stage(c, pipeline_rank);
      const double in_flight = held[static_cast<std::size_t>(c)];
      if (stage > 0) tensors += std::max(0.0, m - in_flight);
      if (stage < stages - 1) tensors += m + in_flight;
    }
    buffers += tensors * e * sbh * sigma;
  } else if (layout.pp > 1) {
    buffers += 2 * e * sbh * sigma;
  }
  // ASSUMPTION: with sequence parallelism the all-gathered input of one TP block (2sbh) is live during its GEMM.
  if (shape.sequence_parallel) buffers += e * sbh;
  // ASSUMPTION: the MoE all-to-all holds the k dispatched copies of the tokens twice (send and receive).
  if (model.moe) buffers += 2 * e * s * b * model.moe->top_k * h;
  // ZeRO-3 (Rajbhandari et al. 2020, Sec. 5.3) / FSDP all-gather a unit's weights before use: options.zero3_units
  // layers (the one in use and the prefetched next, by default) are whole in bf16 at any time, with their FP8 copies.
  if (zero3) {
    const double unit = std::max(inv.moe_layer.total(), inv.dense_layer.total());
    double gathered = options.zero3_units * unit;
    if (options.zero3_live_params > 0) gathered = std::min(gathered, options.zero3_live_params);
    buffers += gathered * (e + (options.fp8_weight_copies ? kFp8Copies : 0.0));
  }
  out.buffers = whole_bytes(buffers);
  out.total = out.params + out.grads + out.optimizer + out.activations + out.buffers;
  return out;
}

}  // namespace

MemoryBreakdown peak_memory(const ModelSpec& model, const Layout& layout, const ParallelConfig& config, int seq_len,
                            const MemoryOptions& options) {
  const RankInvariants inv = rank_invariants(model, layout, config, seq_len, options);
  MemoryBreakdown worst = memory_on_rank(model, layout, config, seq_len, 0, options, inv);
  for (int r = 1; r < layout.pp; ++r) {
    auto m = memory_on_rank(model, layout, config, seq_len, r, options, inv);
    if (m.total > worst.total) worst = m;
  }
  return worst;
}

bool fits(const MemoryBreakdown& memory, base::Bytes capacity) {
  return memory.total <= capacity;
}

}  // namespace sim::parallel
