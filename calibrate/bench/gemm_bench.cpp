// calibrate/bench/gemm_bench.cpp: cuBLASLt matmul descriptors, heuristic algorithm choice and timing.
#include "calibrate/bench/gemm_bench.hpp"

#include "calibrate/bench/kernels.cuh"
#include "calibrate/bench/measure.hpp"

#include <cstdint>

namespace calibrate::bench {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // NVIDIA's recommendation for Hopper (cuBLAS docs)

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw BenchFailure(std::string(what) + ": " + cublasLtGetStatusString(s));
}

struct DescDestroy {
  void operator()(cublasLtMatmulDescOpaque_t* d) const noexcept { cublasLtMatmulDescDestroy(d); }
};
struct LayoutDestroy {
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const noexcept { cublasLtMatrixLayoutDestroy(l); }
};
struct PreferenceDestroy {
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const noexcept { cublasLtMatmulPreferenceDestroy(p); }
};
using Desc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDestroy>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDestroy>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDestroy>;

cudaDataType_t input_type(GemmDtype d) {
  switch (d) {
    case GemmDtype::Bf16:
      return CUDA_R_16BF;
    case GemmDtype::Fp16:
      return CUDA_R_16F;
    case GemmDtype::Fp8:
      return CUDA_R_8F_E4M3;
  }
  return CUDA_R_16BF;
}

/// fp8 GEMMs write bf16, as Transformer Engine's do.
cudaDataType_t output_type(GemmDtype d) {
  return d == GemmDtype::Fp8 ? CUDA_R_16BF : input_type(d);
}

std::size_t element_bytes(cudaDataType_t t) {
  return t == CUDA_R_8F_E4M3 ? 1 : 2;
}

FillType fill_type(GemmDtype d) {
  switch (d) {
    case GemmDtype::Bf16:
      return FillType::Bf16;
    case GemmDtype::Fp16:
      return FillType::Fp16;
    case GemmDtype::Fp8:
      return FillType::Fp8E4M3;
  }
  return FillType::Bf16;
}

/// A column-major layout of rows x cols with leading dimension `ld`, `batch` matrices `stride` elements apart.
Layout make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  cublasLtMatrixLayout_t l = nullptr;
  check_lt(
      cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), rows),
      "cublasLtMatrixLayoutCreate");
  Layout owned(l);
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    const std::int64_t stride = rows * cols;
    check_lt(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
             "cublasLtMatrixLayoutSetAttribute");
    check_lt(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
             "cublasLtMatrixLayoutSetAttribute");
  }
  return owned;
}

std::string gib(std::size_t bytes) {
  return std::to_string(static_cast<double>(bytes) / (1024.0 * 1024 * 1024)).substr(0, 5) + " GiB";
}

}  // namespace

const char* to_string(GemmDtype d) {
  switch (d) {
    case GemmDtype::Bf16:
      return "bf16";
    case GemmDtype::Fp16:
      return "fp16";
    case GemmDtype::Fp8:
      return "fp8";
  }
  return "?";
}

GemmBench::GemmBench(int device, const DeviceInfo& info) : device_(device), info_(info), stream_(make_stream(device)) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  cublasLtHandle_t h = nullptr;
  check_lt(cublasLtCreate(&h), "cublasLtCreate");
  handle_.reset(h);
  workspace_ = try_allocate(device, kWorkspaceBytes);
  if (!workspace_) throw BenchFailure("cannot allocate the 32 MiB cuBLASLt workspace");
  workspace_bytes_ = kWorkspaceBytes;
}

std::vector<GemmDtype> GemmBench::dtypes() const {
  const int cc = info_.cc_major * 10 + info_.cc_minor;
  std::vector<GemmDtype> out;
  if (cc >= 80) out.push_back(GemmDtype::Bf16);
  out.push_back(GemmDtype::Fp16);
  if (cc >= 89) out.push_back(GemmDtype::Fp8);
  return out;
}

void* GemmBench::operand(int i, std::size_t bytes, GemmDtype dtype) {
  const auto slot = static_cast<std::size_t>(i);
  if (sizes_[slot] < bytes) {
    operands_[slot].reset();
    sizes_[slot] = 0;
    filled_as_[slot] = -1;
    operands_[slot] = try_allocate(device_, bytes);
    if (!operands_[slot]) {
      for (auto& o : operands_)  // fragmentation: free everything and try once more
        o.reset();
      sizes_ = {};
      filled_as_ = {-1, -1, -1};
      operands_[slot] = try_allocate(device_, bytes);
      if (!operands_[slot]) return nullptr;
    }
    sizes_[slot] = bytes;
  }
  if (i < 2 && filled_as_[slot] != static_cast<int>(dtype)) {
    const std::size_t count = sizes_[slot] / element_bytes(input_type(dtype));
    check_cuda(launch_fill(fill_type(dtype), operands_[slot].get(), count, static_cast<unsigned>(i), stream_.get()),
               "fill kernel");
    filled_as_[slot] = static_cast<int>(dtype);
  }
  return operands_[slot].get();
}

std::optional<Timing> GemmBench::run(GemmDtype dtype, const GemmShape& s, const TimingBudget& budget,
                                     std::string& why) {
  check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  const cudaDataType_t in = input_type(dtype);
  const cudaDataType_t out = output_type(dtype);
  const auto elements = [&](std::int64_t rows, std::int64_t cols) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * static_cast<std::size_t>(s.batch);
  };
  const std::size_t a_bytes = elements(s.k, s.m) * element_bytes(in);
  const std::size_t b_bytes = elements(s.k, s.n) * element_bytes(in);
  const std::size_t d_bytes = elements(s.m, s.n) * element_bytes(out);
  void* a = operand(0, a_bytes, dtype);
  void* b = a ? operand(1, b_bytes, dtype) : nullptr;
  void* d = b ? operand(2, d_bytes, dtype) : nullptr;
  if (!d) {
    why = "operands of " + gib(a_bytes + b_bytes + d_bytes) + " do not fit in device memory";
    return std::nullopt;
  }

  cublasLtMatmulDesc_t raw_desc = nullptr;
  check_lt(cublasLtMatmulDescCreate(&raw_desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const Desc desc(raw_desc);
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(raw_desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose),
           "cublasLtMatmulDescSetAttribute");
  check_lt(cublasLtMatmulDescSetAttribute(raw_desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep),
           "cublasLtMatmulDescSetAttribute");
  const Layout a_layout = make_layout(in, s.k, s.m, s.batch);  // stored k x m, used transposed
  const Layout b_layout = make_layout(in, s.k, s.n, s.batch);
  const Layout d_layout = make_layout(out, s.m, s.n, s.batch);

  cublasLtMatmulPreference_t raw_pref = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&raw_pref), "cublasLtMatmulPreferenceCreate");
  const Preference pref(raw_pref);
  const std::uint64_t ws = workspace_bytes_;
  check_lt(cublasLtMatmulPreferenceSetAttribute(raw_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
           "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(handle_.get(), raw_desc, a_layout.get(), b_layout.get(), d_layout.get(),
                                     d_layout.get(), raw_pref, 1, &heuristic, &found);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
    why = std::string("no cuBLASLt algorithm (") + cublasLtGetStatusString(hs) + ")";
    return std::nullopt;
  }

  const float alpha = 1.0f, beta = 0.0f;
  auto matmul = [&] {
    return cublasLtMatmul(handle_.get(), raw_desc, &alpha, a, a_layout.get(), b, b_layout.get(), &beta, d,
                          d_layout.get(), d, d_layout.get(), &heuristic.algo, workspace_.get(), workspace_bytes_,
                          stream_.get());
  };
  if (const cublasStatus_t first = matmul(); first != CUBLAS_STATUS_SUCCESS) {
    why = std::string("cublasLtMatmul: ") + cublasLtGetStatusString(first);
    return std::nullopt;
  }
  check_cuda(cudaStreamSynchronize(stream_.get()), "cublasLtMatmul");
  const int devices[] = {device_};
  const cudaStream_t streams[] = {stream_.get()};
  return time_operation(
      devices, streams, [&] { check_lt(matmul(), "cublasLtMatmul"); }, budget);
}

}  // namespace calibrate::bench
