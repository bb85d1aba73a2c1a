// calibrate/bench/kernels.cu: memory-bound benchmark kernels (STREAM copy and triad, a row softmax) and operand fill.
#include "calibrate/bench/kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>

namespace calibrate::bench {
namespace {

constexpr unsigned kThreads = 256;

unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), std::size_t{1} << 20));
}

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{blockDim.x} * gridDim.x)
    b[i] = a[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             float s, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{blockDim.x} * gridDim.x) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

/// Block-wide reduction of one value per thread (warp shuffles, then one warp over the warp results); `identity` fills
/// the lanes beyond the number of warps.
template <class Op>
__device__ float block_reduce(float v, Op op, float identity, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < blockDim.x / 32 ? shared[lane] : identity;
  if (warp == 0)
    for (int offset = 16; offset > 0; offset /= 2)
      v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  const float result = shared[0];
  __syncthreads();
  return result;
}

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};

/// One block per row of kSoftmaxCols values; each thread keeps its kPer values in registers (one HBM read).
template <int kPer>
__global__ void softmax_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y) {
  __shared__ float shared[32];
  const std::size_t row = blockIdx.x;
  const __nv_bfloat16* in = x + row * kSoftmaxCols;
  __nv_bfloat16* out = y + row * kSoftmaxCols;
  float v[kPer];
  float m = -3.0e38f;
  for (int j = 0; j < kPer; ++j) {
    v[j] = __bfloat162float(in[threadIdx.x + j * kThreads]);
    m = fmaxf(m, v[j]);
  }
  m = block_reduce(m, Max{}, -3.0e38f, shared);
  float s = 0;
  for (int j = 0; j < kPer; ++j) {
    v[j] = __expf(v[j] - m);
    s += v[j];
  }
  s = block_reduce(s, Sum{}, 0.0f, shared);
  const float inv = 1.0f / s;
  for (int j = 0; j < kPer; ++j)
    out[threadIdx.x + j * kThreads] = __float2bfloat16(v[j] * inv);
}

/// A value in [-1, 1) from an index (SplitMix64's finaliser; Steele, Lea, Flood, OOPSLA 2014).
__device__ float unit_hash(std::uint64_t i, unsigned seed) {
  std::uint64_t z = i + 0x9e3779b97f4a7c15ULL * (seed + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

template <class T, class Convert>
__global__ void fill_kernel(T* p, std::size_t n, unsigned seed, Convert convert) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{blockDim.x} * gridDim.x)
    p[i] = convert(unit_hash(i, seed));
}

struct ToBf16 {
  __device__ __nv_bfloat16 operator()(float v) const { return __float2bfloat16(v); }
};
struct ToFp16 {
  __device__ __half operator()(float v) const { return __float2half(v); }
};
struct ToFp8 {
  __device__ __nv_fp8_e4m3 operator()(float v) const { return __nv_fp8_e4m3(v); }
};

}  // namespace

cudaError_t launch_copy(const void* a, void* b, std::size_t bytes, cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(float4);
  copy_kernel<<<grid_for(n), kThreads, 0, stream>>>(static_cast<const float4*>(a), static_cast<float4*>(b), n);
  return cudaGetLastError();
}

cudaError_t launch_triad(void* a, const void* b, const void* c, std::size_t bytes, cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(float4);
  triad_kernel<<<grid_for(n), kThreads, 0, stream>>>(static_cast<float4*>(a), static_cast<const float4*>(b),
                                                     static_cast<const float4*>(c), 3.0f, n);
  return cudaGetLastError();
}

cudaError_t launch_softmax(const void* x, void* y, std::size_t rows, cudaStream_t stream) {
  static_assert(kSoftmaxCols % kThreads == 0, "whole rows per block");
  softmax_kernel<kSoftmaxCols / kThreads><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y));
  return cudaGetLastError();
}

cudaError_t launch_fill(FillType type, void* p, std::size_t count, unsigned seed, cudaStream_t stream) {
  switch (type) {
    case FillType::Bf16:
      fill_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(p), count, seed, ToBf16{});
      break;
    case FillType::Fp16:
      fill_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<__half*>(p), count, seed, ToFp16{});
      break;
    case FillType::Fp8E4M3:
      fill_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(p), count, seed, ToFp8{});
      break;
  }
  return cudaGetLastError();
}

}  // namespace calibrate::bench
