// calibrate/bench/nccl_bench.hpp: NCCL collectives over every GPU of this process (one communicator per device).
#pragma once
#include "calibrate/bench/cuda_util.hpp"
#include "calibrate/fit/measurement.hpp"

#include <nccl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace calibrate::bench {

class NcclBench {
 public:
  /// Communicators over devices 0..gpus-1 (ncclCommInitAll) and send/receive buffers as large as memory allows, up
  /// to 4 GiB each.
  explicit NcclBench(int gpus);
  NcclBench(const NcclBench&) = delete;
  NcclBench& operator=(const NcclBench&) = delete;
  ~NcclBench();

  int ranks() const { return static_cast<int>(devices_.size()); }
  std::int64_t max_bytes() const { return max_bytes_; }
  std::string version() const;  // "2.21.5"

  /// `bytes` rounded down to what `op` can split evenly over the ranks (2-byte elements, n/p per rank).
  std::int64_t valid_bytes(std::int64_t bytes) const;
  /// Time of one collective of `bytes` in nccl-tests' convention (the all-reduce buffer, the gathered all-gather
  /// output, the reduce-scatter input, the all-to-all send buffer, the bytes sent by send/recv), in bf16, launched on
  /// every rank in one group. All-to-all is grouped send/recv to every peer and send/recv a ring of pairs, as in
  /// nccl-tests (src/alltoall.cu, src/sendrecv.cu).
  Timing run(fit::CollectiveOp op, std::int64_t bytes, const TimingBudget& budget);

 private:
  void launch(fit::CollectiveOp op, std::int64_t bytes);

  std::vector<int> devices_;
  std::vector<Stream> streams_;
  std::vector<cudaStream_t> raw_streams_;
  std::vector<ncclComm_t> comms_;
  std::vector<DeviceBuffer> send_, recv_;
  std::int64_t max_bytes_ = 0;
};

}  // namespace calibrate::bench
