// sim/parallel/cp_exchange.cpp: the buffers context parallelism's key/value exchange holds in one layer's attention,
// by cp_comm_type, from the two implementations' code (memory.hpp, cp_exchange_bytes).
#include "sim/parallel/memory.hpp"

#include <algorithm>

namespace sim::parallel {

// q and kv are the elements of the local queries and of the keys (or values) as the attention call receives them;
// what is held beyond the attention of an unsplit sequence, at the peak of the pass that holds more:
// - all_gather, after PyTorch's context_parallel (torch/distributed/tensor/experimental/_attention.py at 0123248a,
//   _templated_ring_attention_backward with its defaults, rotate method all-gather and convert_to_f32): the backward
//   holds the whole sequence's keys and values in bf16 (cp x 2 x 2kv bytes), the fp32 gradient accumulators of the
//   local q, k and v (4 (q + 2kv)), the key/value gradients concatenated in fp32 to be sent on and the ones received
//   (2 x 4 x 2kv), and the bf16 concatenation of the local keys and values (2 x 2kv).
// - p2p, after Transformer Engine's ring (AttnFuncWithCPAndKVP2P in transformer_engine/pytorch/attention/
//   dot_product_attention/context_parallel.py at 015d2257): the forward keeps every step's received key/value chunk
//   (p2p_comm_buffers, cp x 2 x 2kv) and every step's partial output (out_per_step) until its final correction,
//   cp x 2q on the last CP rank, whose steps all attend to whole query chunks; the backward holds two buffers of
//   packed keys, values and their gradients (2 x 2 x 2 x 2kv) and dq (2q).
double cp_exchange_bytes(const workload::ModelSpec& model, const Layout& layout, CpCommType type, double tokens,
                         double kv_heads, double element_bytes) {
  if (layout.cp <= 1) return 0;
  const double elem = element_bytes;  // the 16-bit tensors above (bf16): 4 bytes in fp32 training
  constexpr double kFp32 = 4;
  // Keys, queries and their gradients at the query/key width; values and the outputs at the value width (MLA's
  // v_head_dim: DeepSeek-V2/V3's 128 beside 192).
  const double d = model.head_dim(), dv = model.value_head_dim();
  const double q = tokens * model.heads / layout.tp * d, out = tokens * model.heads / layout.tp * dv;
  const double kv = tokens * kv_heads * (d + dv);  // keys and values together
  const double cp = layout.cp;
  return type == CpCommType::AllGather ? elem * cp * kv + kFp32 * (q + kv) + 2 * kFp32 * kv + elem * kv
                                       : std::max(elem * cp * (kv + out), elem * (2 * 2 * kv + q));
}

}  // namespace sim::parallel
