// calibrate/bench/cuda_util.hpp: CUDA runtime helpers of the benchmarks: error checks, owning wrappers of device
// memory, streams and events, the device description, and event timing with warm-ups and outlier rejection.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace calibrate::bench {

/// Throws BenchFailure("what: CUDA error string") unless e is cudaSuccess.
void check_cuda(cudaError_t e, const char* what);

/// The number of visible CUDA devices; throws NoDevice when there are none or no driver.
int visible_devices();

struct DeviceInfo {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  double sm_clock_mhz = 0, mem_clock_mhz = 0;  // peak clocks the driver reports
  std::size_t memory = 0;
  std::string driver;  // NVIDIA driver version from /proc/driver/nvidia/version, else the CUDA driver API version
  std::string cuda;    // CUDA runtime version, "13.0"
  std::string host;
  std::string date;  // now, UTC, ISO 8601
};
DeviceInfo device_info(int device);

/// Device memory owned by a unique_ptr; freed on the device it was allocated on.
struct DeviceFree {
  int device = 0;
  void operator()(void* p) const noexcept;
};
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;
/// nullptr (not an exception) when the device is out of memory: callers skip what does not fit.
DeviceBuffer try_allocate(int device, std::size_t bytes);

struct StreamDestroy {
  void operator()(CUstream_st* s) const noexcept;
};
using Stream = std::unique_ptr<CUstream_st, StreamDestroy>;
Stream make_stream(int device);

/// How long to time one operation.
struct TimingBudget {
  double target_s = 0.05;  // total timed time to aim for
  int warmups = 3;         // untimed launches first (clocks ramp up, caches and allocators settle)
  int min_samples = 5;
  int max_samples = 30;
  double min_sample_s = 1e-3;  // back-to-back launches per sample so that a sample lasts at least this long
};

struct Timing {
  double seconds = 0;  // mean per operation over the kept samples
  int samples = 0;     // kept
  int rejected = 0;
  int ops_per_sample = 0;
};

/// Times `launch`, which enqueues one operation on `streams` (one per device in `devices`, e.g. one NCCL group over
/// all of them): warm-ups, one timed launch to size the samples, then samples of back-to-back launches between CUDA
/// events recorded on every stream; a sample's time is the slowest device's. Outliers are rejected (stats.hpp).
Timing time_operation(std::span<const int> devices, std::span<cudaStream_t const> streams,
                      const std::function<void()>& launch, const TimingBudget& budget);

}  // namespace calibrate::bench
