// calibrate/bench/measure.cpp: the measurement sweeps (HBM, GEMM, NCCL) and their records.
#include "calibrate/bench/measure.hpp"

#include "calibrate/bench/cuda_util.hpp"
#include "calibrate/bench/gemm_bench.hpp"
#include "calibrate/bench/kernels.cuh"
#include "calibrate/bench/nccl_bench.hpp"
#include "calibrate/bench/shapes.hpp"
#include "calibrate/fit/measurement.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

namespace calibrate::bench {
namespace {

using fit::Measurement;

struct Budgets {
  TimingBudget hbm, gemm, nccl;
};

Budgets budgets(bool quick) {
  Budgets b;
  b.hbm = {quick ? 0.02 : 0.1, 3, 5, 30, 1e-3};
  b.gemm = {quick ? 0.01 : 0.05, 2, quick ? 3 : 5, 30, 1e-3};
  b.nccl = {quick ? 0.02 : 0.1, 3, 5, 30, 1e-3};
  return b;
}

/// What every record carries about where it was measured.
Measurement stamped(const DeviceInfo& d, const MeasureOptions& o) {
  Measurement m;
  m.device = d.name;
  m.sm_count = d.sm_count;
  m.sm_clock_mhz = d.sm_clock_mhz;
  m.mem_clock_mhz = d.mem_clock_mhz;
  m.driver = d.driver;
  m.cuda = d.cuda;
  m.host = d.host;
  m.date = d.date;
  m.source = std::string("trainsim-calibrate measure") + (o.quick ? " --quick" : "");
  return m;
}

/// STREAM copy and triad, and the row softmax, over per-array sizes from 1 MiB (32 MiB quick) up to 4 GiB, as far as
/// three arrays fit in a third of the free memory each.
void hbm_sweep(const DeviceInfo& info, const MeasureOptions& o, const TimingBudget& budget,
               std::vector<Measurement>& out, std::ostream& progress) {
  const int device = 0;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  std::size_t free = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  std::size_t largest = std::size_t{1} << 20;
  while (largest * 2 <= std::min<std::size_t>(std::size_t{4} << 30, free / 4))
    largest *= 2;
  auto a = try_allocate(device, largest), b = try_allocate(device, largest), c = try_allocate(device, largest);
  if (!a || !b || !c) throw BenchFailure("cannot allocate the HBM benchmark arrays");
  Stream stream = make_stream(device);
  for (auto* p : {a.get(), b.get(), c.get()})
    check_cuda(launch_fill(FillType::Bf16, p, largest / 2, 3, stream.get()), "fill kernel");
  check_cuda(cudaStreamSynchronize(stream.get()), "fill kernel");
  const int devices[] = {device};
  const cudaStream_t streams[] = {stream.get()};
  progress << "measure: HBM copy, triad and softmax up to " << (largest >> 20) << " MiB per array\n";
  for (std::size_t bytes = std::size_t{o.quick ? 32u : 1u} << 20; bytes <= largest; bytes *= 2) {
    const std::size_t rows = bytes / (kSoftmaxCols * 2);
    struct Kernel {
      fit::MemoryOp op;
      std::size_t moved;
      std::function<cudaError_t()> launch;
    };
    const Kernel kernels[] = {
        {fit::MemoryOp::Copy, 2 * bytes, [&] { return launch_copy(a.get(), b.get(), bytes, stream.get()); }},
        {fit::MemoryOp::Triad, 3 * bytes, [&] { return launch_triad(a.get(), b.get(), c.get(), bytes, stream.get()); }},
        {fit::MemoryOp::Softmax, 2 * rows * kSoftmaxCols * 2,
         [&] { return launch_softmax(b.get(), c.get(), rows, stream.get()); }},
    };
    for (const auto& k : kernels) {
      const Timing t = time_operation(
          devices, streams, [&] { check_cuda(k.launch(), "kernel launch"); }, budget);
      Measurement m = stamped(info, o);
      m.kind = fit::Kind::Hbm;
      m.memory = k.op;
      m.dtype = k.op == fit::MemoryOp::Softmax ? "bf16" : "fp32";
      m.bytes = sim::base::Bytes{static_cast<std::int64_t>(k.moved)};
      m.time = sim::base::Duration{t.seconds};
      m.samples = t.samples;
      m.label = std::string(fit::to_string(k.op)) + " " + std::to_string(bytes >> 20) + " MiB per array";
      out.push_back(std::move(m));
    }
  }
}

void gemm_sweep(const DeviceInfo& info, const MeasureOptions& o, const TimingBudget& budget,
                std::vector<Measurement>& out, std::vector<std::string>& notes, std::ostream& progress) {
  GemmBench bench(0, info);
  const auto shapes = sweep_shapes(o.quick);
  for (GemmDtype dtype : bench.dtypes()) {
    progress << "measure: " << to_string(dtype) << " GEMMs, " << shapes.size() << " shapes\n";
    std::map<std::string, int> skipped;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const auto& s = shapes[i];
      std::string why;
      const auto t = bench.run(dtype, s, budget, why);
      if (!t) {
        ++skipped[why];
        continue;
      }
      Measurement m = stamped(info, o);
      m.kind = fit::Kind::Gemm;
      m.dtype = to_string(dtype);
      m.m = s.m;
      m.n = s.n;
      m.k = s.k;
      m.batch = s.batch;
      m.time = sim::base::Duration{t->seconds};
      m.samples = t->samples;
      m.label = s.label;
      out.push_back(std::move(m));
      if ((i + 1) % 50 == 0) progress << "  " << (i + 1) << "/" << shapes.size() << "\n";
    }
    for (const auto& [why, n] : skipped)
      notes.push_back(std::string(to_string(dtype)) + ": skipped " + std::to_string(n) + " shapes: " + why);
  }
}

void nccl_sweep(const DeviceInfo& info, const MeasureOptions& o, int gpus, const TimingBudget& budget,
                std::vector<Measurement>& out, std::vector<std::string>& notes, std::ostream& progress) {
  NcclBench bench(gpus);
  const auto scope = fit::scope_from_string(o.scope).value_or(fit::Scope::Nvlink);
  progress << "measure: NCCL " << bench.version() << " over " << bench.ranks() << " GPU(s), 1 KiB to "
           << (bench.max_bytes() >> 20) << " MiB\n";
  if (bench.ranks() == 1)
    notes.push_back(
        "one GPU: NCCL ran with one rank only, so the collectives moved no data between GPUs (the fit "
        "leaves them out); measure on a multi-GPU node, or import nccl-tests logs, for NVLink and network");
  for (auto op : {fit::CollectiveOp::AllReduce, fit::CollectiveOp::AllGather, fit::CollectiveOp::ReduceScatter,
                  fit::CollectiveOp::AllToAll, fit::CollectiveOp::SendRecv}) {
    std::int64_t last = -1;
    for (std::int64_t n = 1024; n <= bench.max_bytes(); n *= (o.quick ? 4 : 2)) {
      const std::int64_t bytes = bench.valid_bytes(n);
      if (bytes <= 0 || bytes == last) continue;
      last = bytes;
      const Timing t = bench.run(op, bytes, budget);
      Measurement m = stamped(info, o);
      m.kind = fit::Kind::Collective;
      m.collective = op;
      m.dtype = "bf16";
      m.bytes = sim::base::Bytes{bytes};
      m.ranks = bench.ranks();
      m.nodes = 1;
      m.scope = scope;
      m.in_place = false;
      m.time = sim::base::Duration{t.seconds};
      m.samples = t.samples;
      m.nccl = bench.version();
      m.label = std::string("nccl ") + fit::to_string(op);
      out.push_back(std::move(m));
    }
  }
}

}  // namespace

bool built_with_cuda() {
  return true;
}

MeasureSummary measure(const MeasureOptions& options, std::ostream& progress) {
  const auto started = std::chrono::steady_clock::now();
  const int count = visible_devices();
  const DeviceInfo info = device_info(0);
  const Budgets b = budgets(options.quick);
  MeasureSummary summary;
  summary.device = info.name;
  progress << "measure: " << count << " visible GPU(s); timing on GPU 0: " << info.name << " (" << info.sm_count
           << " SMs, sm_" << info.cc_major << info.cc_minor << ", driver " << info.driver << ", CUDA " << info.cuda
           << ")\n";
  std::vector<Measurement> records;
  if (options.hbm) hbm_sweep(info, options, b.hbm, records, progress);
  summary.hbm = static_cast<int>(records.size());
  if (options.gemm) gemm_sweep(info, options, b.gemm, records, summary.notes, progress);
  summary.gemm = static_cast<int>(records.size()) - summary.hbm;
  if (options.collectives) {
    const int gpus = options.gpus > 0 ? std::min(options.gpus, count) : count;
    nccl_sweep(info, options, gpus, b.nccl, records, summary.notes, progress);
    summary.ranks = gpus;
  }
  summary.collectives = static_cast<int>(records.size()) - summary.hbm - summary.gemm;
  fit::write_measurements(options.out, records);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

}  // namespace calibrate::bench
