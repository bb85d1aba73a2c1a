// calibrate/bench/cuda_util.cpp: CUDA error checks, owning wrappers, device description and event timing.
#include "calibrate/bench/cuda_util.hpp"

#include "calibrate/bench/measure.hpp"
#include "calibrate/bench/stats.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace calibrate::bench {
namespace {

/// An event on one device; destroyed with its owner.
class Event {
 public:
  explicit Event(int device) {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    check_cuda(cudaEventCreate(&event_), "cudaEventCreate");
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : event_(o.event_) { o.event_ = nullptr; }
  Event& operator=(Event&&) = delete;
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

/// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." -> "550.54.15".
std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  std::istringstream words(line);
  std::string w;
  while (words >> w)
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
  return {};
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw BenchFailure(std::string(what) + ": " + cudaGetErrorString(e));
}

int visible_devices() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    throw NoDevice(std::string("no CUDA device found (cudaGetDeviceCount: ") +
                   (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
                   "); `measure` needs an NVIDIA GPU and its driver. Run it on a GPU node and bring the measurements "
                   "back, or import nccl-tests logs with `trainsim-calibrate import nccl-tests`");
  return n;
}

DeviceInfo device_info(int device) {
  DeviceInfo d;
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.memory = prop.totalGlobalMem;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) d.sm_clock_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess) d.mem_clock_mhz = khz / 1000.0;
  cudaGetLastError();  // an unsupported attribute is not an error of the measurement
  int runtime = 0, driver = 0;
  check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  d.cuda = version_string(runtime);
  d.driver = nvidia_driver_version();
  if (d.driver.empty()) d.driver = "CUDA driver API " + version_string(driver);
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) d.host = host;
  d.date = utc_now();
  return d;
}

void DeviceFree::operator()(void* p) const noexcept {
  cudaSetDevice(device);
  cudaFree(p);
}

DeviceBuffer try_allocate(int device, std::size_t bytes) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  void* p = nullptr;
  if (cudaMalloc(&p, std::max<std::size_t>(bytes, 256)) != cudaSuccess) {
    cudaGetLastError();  // clear the out-of-memory error
    return DeviceBuffer(nullptr, DeviceFree{device});
  }
  return DeviceBuffer(p, DeviceFree{device});
}

void StreamDestroy::operator()(CUstream_st* s) const noexcept {
  cudaStreamDestroy(s);
}

Stream make_stream(int device) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return Stream(s);
}

Timing time_operation(std::span<const int> devices, std::span<cudaStream_t const> streams,
                      const std::function<void()>& launch, const TimingBudget& budget) {
  const std::size_t n = devices.size();
  std::vector<Event> start, stop;
  for (int d : devices) {
    start.emplace_back(d);
    stop.emplace_back(d);
  }
  auto sync = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      check_cuda(cudaSetDevice(devices[i]), "cudaSetDevice");
      check_cuda(cudaStreamSynchronize(streams[i]), "cudaStreamSynchronize");
    }
  };
  // One sample: `ops` launches between events on every stream; the slowest device's time per launch.
  auto sample = [&](int ops) {
    for (std::size_t i = 0; i < n; ++i) {
      check_cuda(cudaSetDevice(devices[i]), "cudaSetDevice");
      check_cuda(cudaEventRecord(start[i].get(), streams[i]), "cudaEventRecord");
    }
    for (int k = 0; k < ops; ++k)
      launch();
    for (std::size_t i = 0; i < n; ++i) {
      check_cuda(cudaSetDevice(devices[i]), "cudaSetDevice");
      check_cuda(cudaEventRecord(stop[i].get(), streams[i]), "cudaEventRecord");
    }
    sync();
    float slowest_ms = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, start[i].get(), stop[i].get()), "cudaEventElapsedTime");
      slowest_ms = std::max(slowest_ms, ms);
    }
    return static_cast<double>(slowest_ms) * 1e-3 / ops;
  };
  for (int w = 0; w < budget.warmups; ++w)
    launch();
  sync();
  const double estimate = std::max(sample(1), 1e-7);
  Timing t;
  t.ops_per_sample = static_cast<int>(std::clamp(std::ceil(budget.min_sample_s / estimate), 1.0, 10000.0));
  const int samples =
      static_cast<int>(std::clamp(std::ceil(budget.target_s / (estimate * t.ops_per_sample)),
                                  static_cast<double>(budget.min_samples), static_cast<double>(budget.max_samples)));
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(samples));
  for (int s = 0; s < samples; ++s)
    times.push_back(sample(t.ops_per_sample));
  const auto r = robust_mean(times);
  t.seconds = r.mean;
  t.samples = r.kept;
  t.rejected = r.rejected;
  return t;
}

}  // namespace calibrate::bench
