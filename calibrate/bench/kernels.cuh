// calibrate/bench/kernels.cuh: host launchers of the benchmark kernels (compiled by nvcc in kernels.cu, called from
// C++ compiled by the host compiler).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace calibrate::bench {

/// Row length of the softmax kernel: one attention score row of a 4096-token sequence, in bf16.
inline constexpr std::size_t kSoftmaxCols = 4096;

/// STREAM copy b = a over `bytes` (a multiple of 16): moves 2 x bytes (McCalpin, "Memory Bandwidth and Machine
/// Balance in Current High Performance Computers", IEEE TCCA Newsletter 1995).
cudaError_t launch_copy(const void* a, void* b, std::size_t bytes, cudaStream_t stream);
/// STREAM triad a = b + s c over `bytes` per array (a multiple of 16): moves 3 x bytes.
cudaError_t launch_triad(void* a, const void* b, const void* c, std::size_t bytes, cudaStream_t stream);
/// Row softmax of `rows` x kSoftmaxCols bf16 values, y = exp(x - max) / sum, one block per row: the memory-bound
/// kernel of unfused attention (read once, write once: 2 x rows x kSoftmaxCols x 2 bytes).
cudaError_t launch_softmax(const void* x, void* y, std::size_t rows, cudaStream_t stream);

enum class FillType { Bf16, Fp16, Fp8E4M3 };
/// Fills `count` elements with pseudo-random values in [-1, 1): zero operands would lower power and flatter clocks.
cudaError_t launch_fill(FillType type, void* p, std::size_t count, unsigned seed, cudaStream_t stream);

}  // namespace calibrate::bench
