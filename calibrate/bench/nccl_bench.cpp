// calibrate/bench/nccl_bench.cpp: NCCL communicators, buffers and the grouped launch of each collective.
#include "calibrate/bench/nccl_bench.hpp"

#include "calibrate/bench/kernels.cuh"
#include "calibrate/bench/measure.hpp"

#include <algorithm>

namespace calibrate::bench {
namespace {

using fit::CollectiveOp;

constexpr std::int64_t kMaxBytes = std::int64_t{4} << 30;
constexpr std::int64_t kReserve = std::int64_t{2} << 30;  // left free for NCCL's own buffers and the CUDA context
constexpr std::int64_t kElement = 2;                      // bf16

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw BenchFailure(std::string(what) + ": " + ncclGetErrorString(r));
}

}  // namespace

NcclBench::NcclBench(int gpus) {
  for (int d = 0; d < gpus; ++d) {
    devices_.push_back(d);
    streams_.push_back(make_stream(d));
    raw_streams_.push_back(streams_.back().get());
  }
  comms_.resize(devices_.size());
  check_nccl(ncclCommInitAll(comms_.data(), gpus, devices_.data()), "ncclCommInitAll");
  // The largest power of two that fits twice (send and receive) on every device beside the reserve.
  std::int64_t fits = kMaxBytes;
  for (int d : devices_) {
    check_cuda(cudaSetDevice(d), "cudaSetDevice");
    std::size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    fits = std::min(fits, (static_cast<std::int64_t>(free) - kReserve) / 2);
  }
  max_bytes_ = 1024;
  while (max_bytes_ * 2 <= fits)
    max_bytes_ *= 2;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const int d = devices_[i];
    send_.push_back(try_allocate(d, static_cast<std::size_t>(max_bytes_)));
    recv_.push_back(try_allocate(d, static_cast<std::size_t>(max_bytes_)));
    if (!send_.back() || !recv_.back())
      throw BenchFailure("cannot allocate the NCCL buffers on GPU " + std::to_string(d));
    check_cuda(cudaSetDevice(d), "cudaSetDevice");
    check_cuda(launch_fill(FillType::Bf16, send_.back().get(), static_cast<std::size_t>(max_bytes_ / kElement), 7,
                           raw_streams_[i]),
               "fill kernel");
  }
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    check_cuda(cudaSetDevice(devices_[i]), "cudaSetDevice");
    check_cuda(cudaStreamSynchronize(raw_streams_[i]), "cudaStreamSynchronize");
  }
}

NcclBench::~NcclBench() {
  for (auto c : comms_)
    if (c) ncclCommDestroy(c);
}

std::string NcclBench::version() const {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess || v <= 0) return {};
  const bool modern = v >= 10000;  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z from 2.9 on, X*1000 + Y*100 + Z before
  return std::to_string(modern ? v / 10000 : v / 1000) + "." +
         std::to_string(modern ? (v % 10000) / 100 : (v % 1000) / 100) + "." + std::to_string(v % 100);
}

std::int64_t NcclBench::valid_bytes(std::int64_t bytes) const {
  const std::int64_t unit = kElement * ranks();
  return std::min(bytes, max_bytes_) / unit * unit;
}

void NcclBench::launch(CollectiveOp op, std::int64_t bytes) {
  const int p = ranks();
  const auto count = static_cast<std::size_t>(bytes / kElement);
  const auto share = static_cast<std::size_t>(bytes / kElement / p);  // elements per rank or per peer
  const std::size_t share_bytes = share * kElement;
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    auto* send = static_cast<char*>(send_[i].get());
    auto* recv = static_cast<char*>(recv_[i].get());
    ncclComm_t comm = comms_[i];
    cudaStream_t s = raw_streams_[i];
    switch (op) {
      case CollectiveOp::AllReduce:
        check_nccl(ncclAllReduce(send, recv, count, ncclBfloat16, ncclSum, comm, s), "ncclAllReduce");
        break;
      case CollectiveOp::AllGather:
        check_nccl(ncclAllGather(send, recv, share, ncclBfloat16, comm, s), "ncclAllGather");
        break;
      case CollectiveOp::ReduceScatter:
        check_nccl(ncclReduceScatter(send, recv, share, ncclBfloat16, ncclSum, comm, s), "ncclReduceScatter");
        break;
      case CollectiveOp::AllToAll:
        for (int peer = 0; peer < p; ++peer) {
          const std::size_t offset = static_cast<std::size_t>(peer) * share_bytes;
          check_nccl(ncclSend(send + offset, share, ncclBfloat16, peer, comm, s), "ncclSend");
          check_nccl(ncclRecv(recv + offset, share, ncclBfloat16, peer, comm, s), "ncclRecv");
        }
        break;
      case CollectiveOp::SendRecv:
        check_nccl(ncclSend(send, count, ncclBfloat16, (r + 1) % p, comm, s), "ncclSend");
        check_nccl(ncclRecv(recv, count, ncclBfloat16, (r - 1 + p) % p, comm, s), "ncclRecv");
        break;
      case CollectiveOp::Broadcast:
        check_nccl(ncclBroadcast(send, recv, count, ncclBfloat16, 0, comm, s), "ncclBroadcast");
        break;
    }
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

Timing NcclBench::run(CollectiveOp op, std::int64_t bytes, const TimingBudget& budget) {
  return time_operation(
      devices_, raw_streams_, [&] { launch(op, bytes); }, budget);
}

}  // namespace calibrate::bench
