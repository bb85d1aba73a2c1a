// sim/execution/tp_overlap.hpp: tensor-parallel communication overlapped with the GEMM beside it (Megatron-LM
// --tp-comm-overlap, Transformer Engine's userbuffers).
//
// Transformer Engine splits a sequence-parallel linear layer's collective and its GEMM into chunks and runs them on two
// streams (TransformerEngine transformer_engine/pytorch/csrc/comm_gemm_overlap.h; the per-layer methods are those of
// NVIDIA NeMo's performance recipes, nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py at commit
// 0594a700a7d4c17384982e4be3847f8ef2865f67, which every H100 config sets alike):
//   - ring exchange for the all-gathers (forward qkv_fprop, fc1_fprop; backward proj_dgrad, fc2_dgrad): the GEMM runs
//   as
//     tp row chunks, chunk i on the shard that arrived at step i, while the next shard moves point to point;
//   - pipeline for the forward reduce-scatters (proj_fprop, fc2_fprop): the GEMM in num_splits = 4 row chunks on the
//     SMs left by the communication kernel (set_sm_margin, 8-32 SMs in those configs), each chunk's reduce-scatter
//     under the next chunk's GEMM, the last one exposed;
//   - bulk for the backward reduce-scatters of the input gradient (qkv_dgrad, fc1_dgrad): the whole collective beside
//     the weight-gradient GEMM of the same layer (equal in FLOPs to its input-gradient GEMM).
// PyTorch's async TP (torch/_inductor/fx_passes/micro_pipeline_tp.py: fuse_all_gather_matmul and
// fuse_matmul_reduce_scatter over symmetric memory; TorchTitan's enable_async_tensor_parallel) decomposes the same
// pairs into per-rank chunks, but fuses a reduce-scatter only when its input is one matmul's output with no other user.
// TorchTitan's Llama keeps wq, wk, wv and w1, w3 as separate linears, so in the backward the input gradient that the
// sequence-parallel reduce-scatter scatters is a sum of two or three matmuls: those two reduce-scatters per layer stay
// exposed, while the forward pairs and the backward all-gathers (of the output projection's and MLP down's output
// gradient, fused with their input-gradient GEMMs) overlap as above.
// Each function returns the time the pair takes beyond the GEMM alone: what the collective still exposes, plus what the
// chunking and the SM margin cost the GEMM. Durations come from the same kernel and collective models as everything
// else; nothing here is fitted.
#pragma once
#include "sim/base/units.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/workload/layer_costs.hpp"

#include <cstddef>
#include <functional>
#include <optional>

namespace sim::execution {

/// SMs the pipelined reduce-scatter's communication kernel takes from the GEMM (Transformer Engine's default num_sm
/// for the pipeline method; NeMo's H100 configs use 8-32).
inline constexpr int kTpOverlapCommSms = 16;
/// Row chunks of the pipelined reduce-scatter (num_splits in every NeMo config).
inline constexpr int kTpOverlapSplits = 4;

/// Ring exchange: `chunk` = the GEMM on 1/tp of its rows, `comm` = the all-gather alone, `gemm` = the whole GEMM.
/// Pair = chunk + (tp-1) x max(chunk, comm / (tp-1)).
base::Time ring_exchange_extra(base::Time gemm, base::Time chunk, base::Time comm, int tp);

/// Pipeline: `chunk` = the GEMM on 1/splits of its rows with all SMs (stretched here by sms / (sms - comm_sms)).
/// Pair = c + (splits-1) x max(c, comm / splits) + comm / splits, with c the stretched chunk.
base::Time pipeline_extra(base::Time gemm, base::Time chunk, base::Time comm, int sms, int comm_sms = kTpOverlapCommSms,
                          int splits = kTpOverlapSplits);

/// Bulk: the collective runs beside a GEMM of duration `gemm`; pair = max(gemm, comm).
base::Time bulk_extra(base::Time gemm, base::Time comm);

/// What the sequence-parallel collective at pass.segments[i] (its time alone: `comm`) costs beyond its GEMM partner
/// with --tp-comm-overlap; nullopt when it has none. Partners: an all-gather overlaps the linear it feeds (forward:
/// QKV, MLP up; backward: the input gradients of the output projection and MLP down, whose output gradient it gathers),
/// a forward reduce-scatter the linear it follows (output projection, MLP down), a backward reduce-scatter the weight
/// gradient of the linear whose input gradient it scatters (QKV, MLP up; timed as its input-gradient GEMM, equal in
/// FLOPs). A context-parallel key/value exchange between a collective and its partner is skipped. Only Transformer
/// Engine's linear layers overlap: MLA projections, MoE experts and routers, the embedding and the output layer find no
/// partner and keep their collectives exposed. `kernel_time` times a (chunked) GEMM. With PyTorch's async TP
/// (`method` AsyncTp) a backward reduce-scatter has no partner (above).
std::optional<base::Time> tp_overlap_exposed(const workload::PassWork& pass, std::size_t i, bool backward,
                                             base::Time comm, int tp, int sms,
                                             const std::function<base::Time(const workload::Kernel&)>& kernel_time,
                                             parallel::TpOverlapMethod method = parallel::TpOverlapMethod::Userbuffers);

}  // namespace sim::execution
