// calibrate/bench/gemm_bench.hpp: cuBLASLt GEMM timing in bf16, fp16 and fp8 on one GPU.
#pragma once
#include "calibrate/bench/cuda_util.hpp"
#include "calibrate/bench/shapes.hpp"

#include <cublasLt.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace calibrate::bench {

enum class GemmDtype { Bf16, Fp16, Fp8 };
const char* to_string(GemmDtype d);  // "bf16", "fp16", "fp8" (the measurement record's dtype names)

class GemmBench {
 public:
  GemmBench(int device, const DeviceInfo& info);
  /// The dtypes this GPU runs on tensor cores: fp16 always, bf16 from sm_80, fp8 (e4m3) from sm_89.
  std::vector<GemmDtype> dtypes() const;
  /// Times one GEMM as Megatron-style training issues it: D (m x n) = A^T B with A stored k x m and B k x n
  /// ("TN", the layout cuBLASLt requires for fp8), fp32 accumulation, fp8 inputs giving a bf16 output. Returns
  /// nullopt and sets `why` when cuBLASLt has no algorithm for the shape (fp8 needs dimensions divisible by 16) or
  /// the operands do not fit in memory.
  std::optional<Timing> run(GemmDtype dtype, const GemmShape& shape, const TimingBudget& budget, std::string& why);

 private:
  struct LtDestroy {
    void operator()(cublasLtContext* h) const noexcept { cublasLtDestroy(h); }
  };
  /// Operand slot `i`, grown (and refilled with random values) when too small; nullptr when memory is short.
  void* operand(int i, std::size_t bytes, GemmDtype dtype);

  int device_;
  DeviceInfo info_;
  Stream stream_;
  std::unique_ptr<cublasLtContext, LtDestroy> handle_;
  DeviceBuffer workspace_;
  std::size_t workspace_bytes_ = 0;
  std::array<DeviceBuffer, 3> operands_;
  std::array<std::size_t, 3> sizes_{};
  std::array<int, 3> filled_as_{-1, -1, -1};  // the GemmDtype an operand holds values of
};

}  // namespace calibrate::bench
