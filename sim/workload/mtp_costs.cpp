// sim/workload/mtp_costs.cpp: the work of a multi-token-prediction module beyond its transformer layer.
#include "sim/workload/layer_costs.hpp"

namespace sim::workload {

LayerWork mtp_projection_work(const ModelSpec& m, const LayerShape& s) {
  const double tokens = static_cast<double>(s.micro_batch) * s.seq_len / s.cp;
  const double h = m.hidden;
  // The projection M_k: [RMSNorm(h); RMSNorm(Emb(t_{i+k}))] (2h) -> h, column-parallel over tp (Megatron-Core's
  // MultiTokenPredictionLayer eh_proj), with its FP8 cast under an FP8 recipe.
  LayerWork w = linear_work(s, tokens, h / s.tp, 2 * h);
  // Before it: the shifted tokens' embedding lookup (read and write h), two RMSNorms and the concatenation (each a
  // read and a write of 16-bit activations): 2 + 2 x 4 + 8 = 18 bytes per token and hidden unit; the backward moves
  // twice that.
  Segment pre;
  pre.label = "mtp_norms";
  pre.kernels.push_back(Kernel{KernelKind::Memory, "mtp_norms", 0, 0, 0, 1, 0, 18.0 * tokens * h});
  w.forward.segments.insert(w.forward.segments.begin(), pre);
  pre.kernels.front().bytes *= 2;
  w.backward_input.segments.push_back(pre);
  return w;
}

}  // namespace sim::workload
