// sim/workload/loss_costs.cpp: the bytes the loss moves per logit, by its implementation (layer_costs.hpp,
// CrossEntropy), for output_work's memory-bound cross_entropy kernels.
#include "sim/workload/layer_costs.hpp"

namespace sim::workload {

std::pair<double, double> cross_entropy_bytes(CrossEntropy loss, bool vocab_parallel, bool fp32_logits) {
  // fp32 training: the logits are fp32 already, so the copy to fp32 and the cast back move nothing (6 B each way).
  const double cast = fp32_logits ? 0.0 : 6.0;
  switch (loss) {
    case CrossEntropy::Unfused:
      // megatron/core/tensor_parallel/cross_entropy.py (VocabParallelCrossEntropy, at 00611e6e), per logit: the fp32
      // copy (2 B read, 4 written), the max (4 read), the in-place subtraction, exp and division (8 each: read and
      // write 4) and the sum (4 read): 38 B. Backward: the in-place multiply by the loss gradient (8) and the cast
      // back to 16 bits (4 read, 2 written): 14 B.
      return {32.0 + cast, 8.0 + cast};
    case CrossEntropy::Upcast:
      // PyTorch eager: the fp32 copy (6 B), log_softmax over a row too long to stay on chip (max, sum and output
      // passes: three 4 B reads and a 4 B write, 16 B); backward nll_loss's zeroed gradient (4 B written), the
      // log_softmax backward (a sum pass, then both inputs read and the gradient written: 16 B) and the cast back
      // (6 B). Under tensor parallelism it is PyTorch's loss_parallel on vocabulary-sharded logits
      // (torch/distributed/tensor/parallel/loss.py: _log_softmax writes x - max, its exp and the result, each a tensor:
      // 4 + 8 + 8 + 4 + 8 = 32 B after the copy; the fused backward zeroes the gradient, takes exp(x), adds and
      // multiplies: 4 + 8 + 12 + 8 = 32 B before the cast back).
      return vocab_parallel ? std::pair{32.0 + cast, 32.0 + cast} : std::pair{16.0 + cast, 20.0 + cast};
    case CrossEntropy::Fused:
      break;
  }
  // A fused loss: the fp32 logits written, then its max, sum and log-softmax passes; backward two passes.
  return {12.0, 8.0};
}

}  // namespace sim::workload
