// sim/workload/attention_calls.cpp: the fused attention kernel calls of one layer's pass, with context parallelism
// split into the causal call on the rank's own chunks and the unmasked calls on other ranks' keys.
#include "sim/workload/layer_parts.hpp"

#include <algorithm>
#include <utility>

namespace sim::workload::detail {

namespace {

/// Sliding-window layers of the model, and the keys one of them meets as attended_keys counts them. Causal: query i
/// sees min(i, w) keys, w - w^2 / 2s on average over the s queries (w <= s); written as twice that for the fused
/// kernels' causal halving. It was min(2w, s), which charged a window of half the sequence or more as no window (a
/// user trial: Gemma 2's 4096 at s = 8192 timed as global attention, a third more attention work).
std::pair<int, double> windowed_layers(const ModelSpec& m, const LayerShape& s) {
  int windowed = 0;
  for (int l = 0; l < m.layers; ++l)
    windowed += m.is_windowed_layer(l) ? 1 : 0;
  const double sl = s.seq_len, win = std::min<double>(m.sliding_window, sl);
  return {windowed, s.causal ? 2.0 * win - win * win / sl : win};
}

}  // namespace

/// Keys one query meets, averaged over the layers: the whole sequence, or for sliding-window layers (Mistral 7B,
/// Jiang et al. 2023, Sec. 2; Gemma 3's local layers) the window, which a fused kernel skips beyond. For causal
/// attention written as twice the mean keys a query meets, so that the causal halving of the fused kernels leaves
/// that mean (w - w^2 / 2s). The average puts every layer's share on each layer (exact for the whole stack; layers of
/// a stage are not told apart). Unfused attention materialises the s x s scores whatever the mask.
double attended_keys(const ModelSpec& m, const LayerShape& s) {
  if (m.sliding_window <= 0 || !s.flash_attention) return s.seq_len;
  const auto [windowed, keys] = windowed_layers(m, s);
  return (windowed * keys + (m.layers - windowed) * static_cast<double>(s.seq_len)) / m.layers;
}

double own_chunk_keys(const ModelSpec& m, const LayerShape& s) {
  const double local = static_cast<double>(s.seq_len) / s.cp;
  if (m.sliding_window <= 0 || !s.flash_attention) return local;
  const auto [windowed, keys] = windowed_layers(m, s);
  return (windowed * std::min(local, keys) + (m.layers - windowed) * local) / m.layers;
}

/// With context parallelism a rank holds chunks i and 2cp-1-i of 2cp (Megatron-LM's get_batch_on_this_cp_rank,
/// PyTorch's context_parallel): its own keys take one causal call (1/cp of a global layer's work; a sliding-window
/// layer's, up to all of it), the other cp-1 steps another rank's keys unmasked, one chunk against two.
std::vector<Kernel> flash_attention_calls(const LayerShape& s, const Dims& d, const char* name, double per_score,
                                          bool backward) {
  const double bh = d.b * d.q_heads;
  const double total = bh * d.s_local * d.s_kv * per_score * (s.causal ? 0.5 : 1.0);
  Kernel k{KernelKind::Attention, name, d.s_local, d.s_kv, d.d, bh, total, 0, true};
  k.backward = backward;
  k.causal = s.causal;
  if (s.cp <= 1 || !s.causal) return {k};
  Kernel diagonal = k, off = k;
  diagonal.n = d.s_local;
  diagonal.flops = std::min(total, bh * d.s_local * d.s_own * per_score * 0.5);
  if (total - diagonal.flops <= 1e-9 * total) return {diagonal};
  off.name = backward ? "flash_attn_bwd_cp" : "flash_attn_fwd_cp";
  off.n = d.s_local / 2;
  off.flops = total - diagonal.flops;
  off.batch = off.flops / (off.m * off.n * per_score);  // heads x micro-batch x the cp - 1 calls' blocks
  off.calls = s.cp - 1;
  off.causal = false;
  return {diagonal, off};
}

}  // namespace sim::workload::detail
