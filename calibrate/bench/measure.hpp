// calibrate/bench/measure.hpp: `trainsim-calibrate measure`: GEMM, HBM and NCCL sweeps on the local GPUs.
// Standard library only in this interface: the CUDA, cuBLAS and NCCL code stays in the .cpp/.cu files behind it.
#pragma once
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace calibrate::bench {

struct MeasureOptions {
  bool quick = false;            // fewer shapes and sizes, shorter timing budgets: <= 5 minutes on one GPU
  std::string out;               // JSON-lines file, written atomically at the end
  std::string scope = "nvlink";  // what connects the GPUs of this process (label of the collective records)
  bool gemm = true, hbm = true, collectives = true;
  int gpus = 0;  // GPUs for the collectives (0: every visible GPU)
};

struct MeasureSummary {
  int gemm = 0, hbm = 0, collectives = 0;  // records written
  int ranks = 0;                           // GPUs the collectives ran on
  std::string device;
  double seconds = 0;
  std::vector<std::string> notes;  // skipped shapes, single-GPU NCCL, ...
};

/// No usable CUDA device (none present, no driver, or built without CUDA): exit code 2.
class NoDevice : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A CUDA, cuBLAS or NCCL call failed during the measurement: exit code 1.
class BenchFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Whether this build has the GPU code (CUDA, cuBLAS and NCCL were found at build time).
bool built_with_cuda();

/// Runs the sweeps and writes the records to options.out; progress lines go to `progress`. Warm-ups first, then
/// timed samples of back-to-back launches between CUDA events; samples beyond 3 median absolute deviations of the
/// median are rejected and the rest averaged. Throws NoDevice or BenchFailure.
MeasureSummary measure(const MeasureOptions& options, std::ostream& progress);

}  // namespace calibrate::bench
