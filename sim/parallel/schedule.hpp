// sim/parallel/schedule.hpp: pipeline schedules as the ordered list of operations each pipeline rank executes.
#pragma once
#include "sim/parallel/parallel_config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sim::parallel {

enum class OpKind : std::uint8_t {
  Forward,
  Backward,        // input and weight gradients together
  BackwardInput,   // zero-bubble: activation gradients only ("B")
  BackwardWeight,  // zero-bubble: weight gradients only ("W"), free to move into bubbles
};
const char* to_string(OpKind k);

/// One operation of a pipeline rank: a pass of one micro-batch through one model chunk (virtual stage).
struct PipeOp {
  OpKind kind = OpKind::Forward;
  std::int32_t micro_batch = 0;
  std::int32_t chunk = 0;  // 0..vpp-1; its virtual stage is Layout::stage(chunk, rank): chunk * pp + rank, or the V
  bool paired = false;     // runs beside the adjacent op of the other direction (pair_forward_backward)
  bool operator==(const PipeOp&) const = default;
};

/// The operations pipeline rank `rank` of `pp` executes, in order, for `micro_batches` micro-batches:
///  - GPipe (Huang et al. 2019): every forward, then every backward.
///  - 1F1B (Narayanan et al. SOSP 2019, PipeDream-Flush): min(pp - rank - 1, m) warm-up forwards, then alternate
///    one forward and one backward, then the remaining backwards.
///  - Interleaved 1F1B (Narayanan et al. SC21, Sec. 2.2): vpp chunks per rank; (pp - rank - 1) * 2 + (vpp - 1) * pp
///    warm-up forwards (every forward when micro_batches == pp, Megatron-LM's all_warmup_microbatches); chunk and
///    micro-batch of the k-th forward follow Megatron-LM's
///    forward_backward_pipelining_with_interleaving (groups of pp micro-batches per chunk).
///  - ZB-H1 (Qi et al. ICLR 2024, "Zero Bubble Pipeline Parallelism"): the 1F1B order with each backward split into
///    B (input gradients) and W (weight gradients); W of micro-batch j runs after B of micro-batch j + rank, the
///    rest at the end. Rank r delays its W passes by r micro-batches, its 1F1B warm-up deficit, so that every rank
///    holds p micro-batches in flight (Qi et al. Sec. 2.1) and the B passes run back up the pipeline at T_B per hop;
///    the deferred W passes fill the cool-down: bubble (p - 1)(T_F + T_B - T_W), a third of 1F1B's at equal passes.
///  - DualPipeV (DeepSeek-V3 report, arXiv:2412.19437, Sec. 3.2.1; its V form in deepseek-ai/DualPipe): two chunks
///    per rank, chunk 0 on virtual stage rank and chunk 1 on 2pp - 1 - rank; its forward/backward pairs come marked
///    `paired` (pair_forward_backward does not apply), the backwards at both ends split into B_in and a later W.
std::vector<PipeOp> pipeline_ops(Schedule schedule, int pp, int vpp, int micro_batches, int rank);

/// Megatron-Core's combined 1F1B step (--overlap-moe-expert-parallel-comm; megatron/core/pipeline_parallel/
/// combined_1f1b.py): in the steady state a forward and a backward of different micro-batches run as one step, their
/// MoE all-to-alls beside each other's compute. Marks each adjacent forward/backward of a program that do not depend on
/// each other (not the same micro-batch and chunk) as a pair, greedily from the start: the steady-state pairs of 1F1B
/// and interleaved 1F1B after their warm-up forwards, and with one pipeline stage every (backward j, forward j + 1),
/// the first forward and the last backward running alone. Returns the number of pairs.
int pair_forward_backward(std::vector<PipeOp>& ops);

/// Name and one-line description (with its bubble and source) of every schedule, for `trainsim describe schedules`.
struct ScheduleInfo {
  const char* name;
  const char* description;
};
std::vector<ScheduleInfo> describe_schedules();

}  // namespace sim::parallel
