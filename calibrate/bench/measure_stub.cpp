// calibrate/bench/measure_stub.cpp: `measure` in a build without CUDA, cuBLAS and NCCL: there is no device to use.
#include "calibrate/bench/measure.hpp"

namespace calibrate::bench {

bool built_with_cuda() {
  return false;
}

MeasureSummary measure(const MeasureOptions& /*options*/, std::ostream& /*progress*/) {
  throw NoDevice(
      "no CUDA device found: this trainsim-calibrate was built without CUDA, cuBLAS and NCCL; build it on a GPU node "
      "(see calibrate/README.md: cmake -S calibrate/bench -B build/bench) and bring the measurements back");
}

}  // namespace calibrate::bench
