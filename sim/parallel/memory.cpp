// sim/parallel/memory.cpp: per-GPU memory: parameters, ZeRO sharding, activations by schedule, buffers.
#include "sim/parallel/memory.hpp"

#include "sim/base/assert.hpp"
#include "sim/workload/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sim::parallel {
namespace {

using workload::Activation;
using workload::ModelSpec;

constexpr double kBf16 = 2;  // bytes per bf16 element
constexpr double kFp32 = 4;
constexpr double kMask = 1;  // a dropout mask element (Korthikanti et al. 2022 count 1 byte)

/// Key/value heads one tensor-parallel rank holds: a share of them, or one whole head when tp exceeds kv_heads
/// (Megatron-Core replicates query groups then; resolve_layout's kv-heads-tp rule guarantees one of the two).
int kv_heads_per_rank(const ModelSpec& m, int tp) {
  return m.kv_heads % tp == 0 ? m.kv_heads / tp : 1;
}

/// Activation bytes of one MLP block's inner tensors for `tokens` tokens of inner size f on one TP rank:
/// GELU stores its input and output (Korthikanti: 2 x 2sbf/t = 16sbh/t for f = 4h); SwiGLU stores the gate and up
/// projections it multiplies (2 x 2sbf/t) and their product, the down projection's input (2sbf/t).
double mlp_inner_bytes(const ModelSpec& m, double tokens, double f, double t) {
  const double per_matrix = kBf16 * tokens * f / t;
  return m.activation == Activation::SwiGlu ? 3 * per_matrix : 2 * per_matrix;
}

/// Activation bytes of the attention scores of one layer on one rank (Korthikanti Sec. 4.1): softmax output
/// 2as^2b, its dropout mask as^2b and the dropout output 2as^2b, divided by t; with context parallelism the local
/// queries (s/cp) meet every key (s). Fused attention keeps only the fp32 log-sum-exp per query row and head
/// (FlashAttention-2, Dao 2023) and regenerates dropout from the RNG state (Dao et al. 2022, Sec. 3.1).
double score_bytes(const ModelSpec& m, const ActivationShape& a) {
  const double heads = static_cast<double>(m.heads) / a.tp;
  const double b = a.micro_batch;
  const double s_q = static_cast<double>(a.seq_len) / a.cp;
  if (a.flash_attention) return kFp32 * heads * s_q * b;
  const double s_k = a.seq_len;
  const double per_element = kBf16 + (a.dropout ? kMask + kBf16 : 0.0);
  return per_element * heads * s_q * s_k * b;
}

/// Bytes of one MoE block's tensors beyond its input (Megatron-Core token dispatch with top-k routing).
double moe_bytes(const ModelSpec& m, const ActivationShape& a, double sigma) {
  const auto& e = *m.moe;
  const double s = static_cast<double>(a.seq_len) / a.cp;
  const double b = a.micro_batch;
  const double h = m.hidden;
  const double t = a.tp;
  const double routed = s * b * e.top_k;             // token copies one rank's experts process, with balanced routing
  double bytes = kFp32 * s * b * e.experts * sigma;  // router probabilities (fp32: assumption)
  bytes += 2 * kBf16 * routed * h;                   // dispatched expert inputs and expert outputs
  bytes += mlp_inner_bytes(m, routed, e.ffn_hidden, t);                    // routed experts' inner activations
  bytes += mlp_inner_bytes(m, s * b, e.ffn_hidden, t) * e.shared_experts;  // shared experts see every token
  return bytes;
}

/// Stored activations of one layer with no recomputation (the sum of every tensor listed in memory.hpp).
double full_layer_bytes(const ModelSpec& m, const ActivationShape& a) {
  const double s = static_cast<double>(a.seq_len) / a.cp;
  const double b = a.micro_batch;
  const double h = m.hidden;
  const double t = a.tp;
  // Korthikanti Sec. 4.2.2: sequence parallelism shards the tensors outside the TP regions (norm inputs, block
  // inputs, dropout masks) over t; without it every TP rank stores them whole.
  const double sigma = a.sequence_parallel ? 1.0 / t : 1.0;
  const double sbh = s * b * h;
  const double kv = static_cast<double>(kv_heads_per_rank(m, a.tp)) * m.head_dim();
  const double mask = a.dropout ? kMask : 0.0;

  // Attention block (Korthikanti: 11sbh + 5as^2b).
  double bytes = kBf16 * sbh * sigma;  // input norm's input
  bytes += kBf16 * sbh * sigma;        // QKV projection's input
  bytes += kBf16 * sbh / t;            // Q
  bytes += 2 * kBf16 * s * b * kv;     // K and V (GQA: kv_heads * head_dim wide)
  bytes += score_bytes(m, a);          // scores / softmax, or the fused kernel's statistics
  bytes += kBf16 * sbh / t;            // attention output: the output projection's input
  bytes += mask * sbh * sigma;         // attention-block dropout mask
  // MLP block (Korthikanti: 19sbh for GELU with f = 4h).
  bytes += kBf16 * sbh * sigma;  // post-attention norm's input
  if (m.moe) {
    bytes += kBf16 * sbh * sigma;  // router / shared-expert input (the norm's output)
    bytes += moe_bytes(m, a, sigma);
  } else {
    bytes += kBf16 * sbh * sigma;  // first MLP projection's input
    bytes += mlp_inner_bytes(m, s * b, m.ffn_hidden, t);
  }
  bytes += mask * sbh * sigma;  // MLP dropout mask
  return bytes;
}

/// Parameters of one transformer layer on one GPU.
ParamsPerGpu layer_params(const ModelSpec& model, const Layout& layout) {
  const auto counts = workload::count_params(model);
  const double t = layout.tp;
  const double h = model.hidden;
  // Attention: Q and O split over t; K and V split over t, or one replicated head per rank (GQA with t > kv_heads).
  // Biases travel with their matrices (the row-parallel output bias, h values, is replicated in Megatron; ignored).
  const double kv_width = static_cast<double>(model.kv_heads) * model.head_dim();
  const double kv_part = 2 * h * kv_width + (model.bias ? 2 * kv_width : 0.0);
  const double kv_share = static_cast<double>(kv_heads_per_rank(model, layout.tp)) / model.kv_heads;
  const double attention = (counts.attention_per_layer - kv_part) / t + kv_part * kv_share;

  ParamsPerGpu p;
  p.dense = attention + counts.norms_per_layer + counts.router_per_layer;  // norms and the router are replicated
  if (model.moe) {
    // Routed experts: experts / ep per rank, each split over t; shared experts are dense, split over t only.
    const double expert = counts.mlp_per_layer / (model.moe->experts + model.moe->shared_experts);
    p.expert = expert * (static_cast<double>(model.moe->experts) / layout.ep) / t;
    p.dense += expert * model.moe->shared_experts / t;
  } else {
    p.dense += counts.mlp_per_layer / t;
  }
  return p;
}

/// Rounds a byte estimate up to whole bytes.
base::Bytes whole_bytes(double bytes) {
  SIM_ASSERT(std::isfinite(bytes) && bytes >= 0 && bytes < 9.0e18, "memory estimate out of range");
  return base::Bytes{static_cast<std::int64_t>(std::ceil(bytes))};
}

/// Forward-order chunk of the k-th forward on a rank, Megatron-LM's get_model_chunk_id: groups of pp micro-batches
/// per chunk.
int forward_chunk(int k, int pp, int vpp) {
  return k % (pp * vpp) / pp;
}

}  // namespace

bool default_flash_attention(const ModelSpec& model) {
  return model.position_embedding == workload::PositionEmbedding::Rope;
}

bool default_dropout(const ModelSpec& model) {
  return model.position_embedding == workload::PositionEmbedding::Learned;
}

double layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape) {
  SIM_ASSERT(shape.seq_len > 0 && shape.micro_batch > 0 && shape.tp > 0 && shape.cp > 0, "activation shape sizes");
  switch (shape.recompute) {
    case Recompute::Full: {
      // Korthikanti Table 2: only the layer input survives, 2sbh (sharded over t with sequence parallelism).
      const double sigma = shape.sequence_parallel ? 1.0 / shape.tp : 1.0;
      return kBf16 * static_cast<double>(shape.seq_len) / shape.cp * shape.micro_batch * model.hidden * sigma;
    }
    case Recompute::Selective:
      // Korthikanti Sec. 5: recompute the core attention (QK^T, softmax, dropout, attention over V): the 5as/h term
      // (or the fused kernel's statistics) is not stored.
      return full_layer_bytes(model, shape) - score_bytes(model, shape);
    case Recompute::None:
      return full_layer_bytes(model, shape);
  }
  return full_layer_bytes(model, shape);
}

ParamsPerGpu params_per_gpu(const ModelSpec& model, const Layout& layout, int pipeline_rank) {
  SIM_ASSERT(pipeline_rank >= 0 && pipeline_rank < layout.pp, "pipeline rank out of range");
  const auto counts = workload::count_params(model);
  const ParamsPerGpu layer = layer_params(model, layout);
  const double h = model.hidden;
  const int layers = layout.layers_on_rank(pipeline_rank);
  ParamsPerGpu p;
  p.dense = layer.dense * layers;
  p.expert = layer.expert * layers;
  const double vocab_shard = static_cast<double>(padded_vocab(model.vocab, layout.tp)) * h / layout.tp;
  if (pipeline_rank == 0) p.dense += vocab_shard + counts.position;  // word embedding; positions are replicated
  if (pipeline_rank == layout.pp - 1) {
    p.dense += counts.final_norm;
    // Untied: the output layer. Tied with pp > 1: Megatron-LM keeps a copy of the word embedding on the last stage
    // and all-reduces its gradient with the first stage's (the embedding group).
    if (!model.tied_embeddings || layout.pp > 1) p.dense += vocab_shard;
  }
  return p;
}

std::vector<int> micro_batches_held(const Layout& layout, Schedule schedule, int pipeline_rank) {
  const int p = layout.pp;
  const int v = layout.vpp;
  const int m = layout.micro_batches;
  const int r = pipeline_rank;
  SIM_ASSERT(r >= 0 && r < p, "pipeline rank out of range");
  SIM_ASSERT(v == 1 || schedule == Schedule::Interleaved, "vpp > 1 only under the interleaved schedule");
  const int total = m * v;
  int warmup = 0;
  switch (schedule) {
    case Schedule::GPipe:
      warmup = total;
      break;
    case Schedule::OneFOneB:
    case Schedule::ZeroBubbleH1:
      warmup = std::min(p - r - 1, m);
      break;
    case Schedule::Interleaved:
      warmup = m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
      break;
  }

  auto chunk_layers = [&](int c) { return layout.layers_per_stage[static_cast<std::size_t>(layout.stage(c, r))]; };
  bool uniform = true;
  for (int c = 1; c < v; ++c)
    uniform = uniform && chunk_layers(c) == chunk_layers(0);
  if (uniform) {
    // Every forward adds and every backward frees the same layers, so the first peak is right after the warm-up and
    // one more forward (all forwards when the warm-up is all of them): forwards [0, f), no backward yet. Forward k
    // runs chunk (k mod pv) / p, so chunk c has p forwards in every full round of pv plus its share of the last.
    const int f = std::min(warmup + 1, total);
    std::vector<int> held(static_cast<std::size_t>(v));
    for (int c = 0; c < v; ++c)
      held[static_cast<std::size_t>(c)] = f / (p * v) * p + std::clamp(f % (p * v) - c * p, 0, p);
    return held;
  }

  // Chunks of different layers: replay the order by weight and find the first moment of the peak (forwards applied
  // so far), then replay again up to that moment for the per-chunk counts. Two passes without copies: copying the
  // counts at every new peak made this the planner's hottest function.
  auto replay = [&](auto&& on_forward, auto&& on_backward) {
    for (int k = 0; k < warmup; ++k)
      if (!on_forward(forward_chunk(k, p, v))) return;
    for (int k = 0; k < total - warmup; ++k) {  // steady state: one forward, one backward; the cool-down only frees
      if (!on_forward(forward_chunk(k + warmup, p, v))) return;
      if (!on_backward(v - 1 - forward_chunk(k, p, v))) return;  // backwards run the chunks in reverse order
    }
  };
  long long weight = 0, peak_weight = -1;
  std::int64_t forwards = 0, peak_forwards = 0;
  replay(
      [&](int c) {
        weight += chunk_layers(c);
        ++forwards;
        if (weight > peak_weight) {
          peak_weight = weight;
          peak_forwards = forwards;
        }
        return true;
      },
      [&](int c) {
        weight -= chunk_layers(c);
        return true;
      });
  std::vector<int> held(static_cast<std::size_t>(v), 0);
  std::int64_t seen = 0;
  replay(
      [&](int c) {
        if (seen == peak_forwards) return false;  // the peak is right after forward number peak_forwards
        ++seen;
        ++held[static_cast<std::size_t>(c)];
        return true;
      },
      [&](int c) {
        if (seen == peak_forwards) return false;  // this backward follows the peak
        SIM_ASSERT(held[static_cast<std::size_t>(c)] > 0, "backward of a chunk with nothing in flight");
        --held[static_cast<std::size_t>(c)];
        return true;
      });
  return held;
}

MemoryBreakdown memory_per_gpu(const ModelSpec& model, const Layout& layout, const ParallelConfig& config, int seq_len,
                               int pipeline_rank, const MemoryOptions& options) {
  SIM_ASSERT(pipeline_rank >= 0 && pipeline_rank < layout.pp, "pipeline rank out of range");
  SIM_ASSERT(static_cast<int>(layout.layers_per_stage.size()) == layout.stages(), "a layout from resolve_layout");

  // Weights, gradients, optimizer states (see memory.hpp for the sources of 2 + 4 + 12).
  const ParamsPerGpu params = params_per_gpu(model, layout, pipeline_rank);
  const double dense_shards = static_cast<double>(layout.dp) * layout.cp;
  const double expert_shards = dense_shards / layout.ep;
  auto sharded = [&](double bytes_per_param, bool shard) {
    return bytes_per_param * (shard ? params.dense / dense_shards + params.expert / expert_shards : params.total());
  };
  MemoryBreakdown out;
  out.pipeline_rank = pipeline_rank;
  out.params = whole_bytes(sharded(kBf16, config.zero_stage >= 3));
  out.grads = whole_bytes(sharded(kFp32, config.zero_stage >= 2));
  out.optimizer = whole_bytes(sharded(3 * kFp32, config.zero_stage >= 1 || config.distributed_optimizer));

  // Activations: the layers of every micro-batch in flight at the rank's peak, plus the layer being recomputed.
  ActivationShape shape;
  shape.seq_len = seq_len;
  shape.micro_batch = layout.micro_batch;
  shape.tp = layout.tp;
  shape.cp = layout.cp;
  shape.sequence_parallel = config.sequence_parallel && layout.tp > 1;  // a no-op at tp = 1, as in Megatron-LM
  shape.recompute = config.recompute;
  shape.flash_attention = options.flash_attention.value_or(default_flash_attention(model));
  shape.dropout = options.dropout.value_or(default_dropout(model));
  const double per_layer = layer_activation_bytes(model, shape);
  const auto held = micro_batches_held(layout, config.schedule, pipeline_rank);
  double layer_micro_batches = 0;
  for (int c = 0; c < layout.vpp; ++c)
    layer_micro_batches += static_cast<double>(held[static_cast<std::size_t>(c)]) *
                           layout.layers_per_stage[static_cast<std::size_t>(layout.stage(c, pipeline_rank))];
  double activations = per_layer * layer_micro_batches;
  if (config.recompute != Recompute::None) {
    ActivationShape none = shape;
    none.recompute = Recompute::None;
    activations += layer_activation_bytes(model, none) - per_layer;  // one layer's recomputed working set
  }
  out.activations = whole_bytes(activations);

  // Buffers.
  const double s = static_cast<double>(seq_len) / layout.cp;
  const double b = layout.micro_batch;
  const double h = model.hidden;
  const double t = layout.tp;
  const double sigma = shape.sequence_parallel ? 1.0 / t : 1.0;
  const double sbh = s * b * h;
  double buffers = static_cast<double>(options.runtime_reserve.n);
  // Korthikanti Sec. 4.3, input embedding: its dropout mask, sbh (over t with SP), per micro-batch in flight.
  if (pipeline_rank == 0 && shape.dropout) buffers += kMask * sbh * sigma * held.front();
  // Korthikanti Sec. 4.3, output layer: the final norm's input and the output projection's input, 2 x 2sbh (over t
  // with SP), and the fp32 logits the cross-entropy keeps, 4sbV/t (vocabulary-parallel; Megatron's padded V).
  if (pipeline_rank == layout.pp - 1) {
    const double logits = kFp32 * s * b * padded_vocab(model.vocab, layout.tp) / t;
    buffers += (2 * kBf16 * sbh * sigma + logits) * held.back();
  }
  // ASSUMPTION: pipeline point-to-point receive buffers, one activation and one gradient tensor of 2sbh (over t with
  // SP, Megatron sends the sequence-parallel shard).
  if (layout.pp > 1) buffers += 2 * kBf16 * sbh * sigma;
  // ASSUMPTION: with sequence parallelism the all-gathered input of one TP block (2sbh) is live during its GEMM.
  if (shape.sequence_parallel) buffers += kBf16 * sbh;
  // ASSUMPTION: the MoE all-to-all holds the k dispatched copies of the tokens twice (send and receive).
  if (model.moe) buffers += 2 * kBf16 * s * b * model.moe->top_k * h;
  // ZeRO-3 (Rajbhandari et al. 2020, Sec. 5.3) all-gathers a layer's weights before use. ASSUMPTION: the layer in use
  // and one prefetched layer (DeepSpeed prefetches ahead) are whole in bf16 at any time.
  if (config.zero_stage >= 3) buffers += 2 * kBf16 * layer_params(model, layout).total();
  out.buffers = whole_bytes(buffers);
  out.total = out.params + out.grads + out.optimizer + out.activations + out.buffers;
  return out;
}

MemoryBreakdown peak_memory(const ModelSpec& model, const Layout& layout, const ParallelConfig& config, int seq_len,
                            const MemoryOptions& options) {
  MemoryBreakdown worst = memory_per_gpu(model, layout, config, seq_len, 0, options);
  for (int r = 1; r < layout.pp; ++r) {
    auto m = memory_per_gpu(model, layout, config, seq_len, r, options);
    if (m.total > worst.total) worst = m;
  }
  return worst;
}

bool fits(const MemoryBreakdown& memory, base::Bytes capacity) {
  return memory.total <= capacity;
}

}  // namespace sim::parallel
