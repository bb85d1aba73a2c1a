// sim/execution/cp_overlap.hpp: context parallelism's key/value ring overlapped with the attention it feeds.
//
// Megatron-Core's default context parallelism (cp_comm_type "p2p") is Transformer Engine's AttnFuncWithCPAndKVP2P
// (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py at 015d2257): a pass runs cp
// attention steps, and at step i it first waits for the key/value chunk step i needs, then posts the send/receive of
// the chunk step i + 1 needs, then runs step i's attention, so each of the cp - 1 transfers runs beside one step's
// attention kernel (the backward the same, with the key/value gradients travelling beside the keys and values). With
// the load balancing Megatron-Core applies to causal masks every step computes the same share, 1/cp, of the pass's
// attention: step 0 on the rank's own keys with the causal mask, the others unmasked (and faster per FLOP). The
// all-gather type keeps the whole exchange exposed. That is what Transformer Engine's AttnFuncWithCPAndKVAllGather does
// (it gathers before its steps); PyTorch's context_parallel (TorchTitan) launches its one all-gather before the first
// step's attention and waits for it at the second (torch/distributed/tensor/experimental/_attention.py,
// _AllGatherRotater), so up to 1/cp of the attention could hide it. Not modelled: the key does not say which
// implementation runs, and the conservative reading is kept.
#pragma once
#include "sim/base/units.hpp"
#include "sim/workload/layer_costs.hpp"

#include <cstddef>
#include <functional>

namespace sim::execution {

/// What the ring exchange at pass.segments[i] (all cp - 1 transfers, `comm` alone) leaves exposed beside the
/// attention kernels of the compute segment after it (timed by `kernel_time`): transfer i beside step i's attention,
///   exposed = max(0, c - A_0) + (cp - 2) x max(0, c - A_1),  c = comm / (cp - 1),
/// with A_0 the causal call on the rank's own keys and A_1 one of the cp - 1 unmasked calls (their total over
/// cp - 1); a pass timed as one call has cp equal steps, A_0 = A_1 = A / cp.
/// `comm` unchanged when there is no such segment or cp < 2.
base::Time cp_ring_exposed(const workload::PassWork& pass, std::size_t i, base::Time comm, int cp,
                           const std::function<base::Time(const workload::Kernel&)>& kernel_time);

}  // namespace sim::execution
