// calibrate/fit/measurement.hpp: one measured GEMM, memory-bound kernel or collective (schema
// trainsim.measurement/1) and its JSON line. Standard library and sim/base units only: calibrate/bench writes it on
// GPU nodes that lack the rest of the stack.
#pragma once
#include "sim/base/units.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace calibrate::fit {

inline constexpr std::string_view kMeasurementSchema = "trainsim.measurement/1";
/// The shortest time a measurement may report: 1 ns, about two cycles of a 2 GHz SM clock. No kernel or collective
/// completes faster (a CUDA launch alone takes microseconds), so a shorter time is a misread column or a unit error,
/// and dividing by it would give rates of 1e300 GB/s and more, or infinity (found by fuzz_nccl_tests).
inline constexpr double kMinMeasuredSeconds = 1e-9;
/// The longest time a measurement may report: one hour. nccl-tests' largest sizes (a few GiB) take seconds even at
/// 1 GB/s; 1e308 us is a misread column, and would give a bandwidth of zero.
inline constexpr double kMaxMeasuredSeconds = 3600;
/// The most ranks a collective measurement may report: 2^20, the CLI's --ranks limit and the scale trainsim plans
/// for.
inline constexpr int kMaxMeasuredRanks = 1 << 20;

/// An ISO 8601 date as measurements hold it: "2025-01-12", "2025-01-12T10:11:12", with an optional fraction of a
/// second and "Z" or "+01:00"; months 1-12, days 1-31, hours below 24, minutes and seconds below 60.
bool is_iso8601_date(std::string_view text);

enum class Kind { Gemm, Hbm, Collective };
/// Where a collective ran: inside one NVLink/NVSwitch domain, or across nodes over the scale-out network.
enum class Scope { Nvlink, Network };
/// The collectives nccl-tests and `measure` time; names as in the JSON ("all_reduce", ...).
enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast };
/// Memory-bound kernels: STREAM copy and triad, and a row softmax as in unfused attention.
enum class MemoryOp { Copy, Triad, Softmax };

const char* to_string(Kind k);
const char* to_string(Scope s);
const char* to_string(CollectiveOp op);
const char* to_string(MemoryOp op);
std::optional<Kind> kind_from_string(std::string_view s);
std::optional<Scope> scope_from_string(std::string_view s);
std::optional<CollectiveOp> collective_from_string(std::string_view s);
std::optional<MemoryOp> memory_op_from_string(std::string_view s);

/// One timed operation. Sizes follow nccl-tests for collectives (`bytes` is the per-rank buffer: the all-reduce
/// buffer, the gathered all-gather output, the reduce-scatter input, the all-to-all send buffer, the bytes sent by
/// send/recv), STREAM for memory-bound kernels (`bytes` read plus written).
struct Measurement {
  Kind kind = Kind::Gemm;
  CollectiveOp collective = CollectiveOp::AllReduce;  // kind == Collective
  MemoryOp memory = MemoryOp::Copy;                   // kind == Hbm
  std::string dtype;                                  // "bf16", "fp16", "fp8", "fp32", ... (optional for hbm)
  std::int64_t m = 0, n = 0, k = 0, batch = 1;        // GEMM (m x k) times (k x n), `batch` times
  sim::base::Bytes bytes;                             // hbm and collective
  int ranks = 0;                                      // collective: participating GPUs
  int nodes = 0;                                      // collective: hosts they span (0: not recorded)
  Scope scope = Scope::Nvlink;                        // collective
  std::optional<bool> in_place;                       // collective: nccl-tests' in-place column
  sim::base::Duration time;                           // mean time of one operation after outlier rejection
  int samples = 0;                                    // timed samples kept (0: not recorded)
  // Where and how it was measured (all optional).
  std::string label;   // "llama3-70b tp8 mb1 qkv fwd", "square", "nccl-tests all_reduce_perf"
  std::string device;  // "NVIDIA H100 80GB HBM3"
  int sm_count = 0;
  double sm_clock_mhz = 0;   // peak SM clock the driver reports
  double mem_clock_mhz = 0;  // peak memory clock
  std::string driver;        // NVIDIA driver, "550.54.15"
  std::string cuda;          // CUDA runtime, "13.0"
  std::string nccl;          // NCCL library, "2.21.5"
  std::string date;          // ISO 8601, "2025-01-12T10:11:12Z" or "2025-01-12"
  std::string host;
  std::string source;  // the tool or file that produced it
};

/// FLOPs of a GEMM measurement: 2 m n k batch.
double gemm_flops(const Measurement& m);
/// Achieved rate of a GEMM measurement.
sim::base::FlopRate gemm_rate(const Measurement& m);
/// bytes / time: STREAM bandwidth of a memory-bound kernel, algbw of a collective (nccl-tests' definition).
sim::base::Bandwidth algbw(const Measurement& m);
/// nccl-tests' bus bandwidth: algbw times the op's factor for `ranks` (sim/collectives busbw_factor).
sim::base::Bandwidth busbw(const Measurement& m);
/// nccl-tests' bus-bandwidth factor of a collective over p ranks (all-reduce 2(p-1)/p, ...).
double busbw_factor(CollectiveOp op, int p);

/// The record as one line of JSON (no newline), fields in a fixed order, numbers in shortest round-trip form.
/// Derived fields (tflops, gbps, algbw_gbps, busbw_gbps) are written for people; readers check them.
std::string to_json_line(const Measurement& m);
/// The records as JSON lines (one per line, each ending with a newline).
std::string to_json_lines(std::span<const Measurement> records);
/// Writes them atomically (temporary file, then rename: sim/base/atomic_file.hpp). Throws ConfigError naming the path.
void write_measurements(const std::string& path, std::span<const Measurement> records);
/// A JSON string literal with escapes.
std::string json_string(std::string_view s);
/// A number in shortest round-trip form (JSON has no NaN or infinity: those become null).
std::string json_number(double v);

}  // namespace calibrate::fit
