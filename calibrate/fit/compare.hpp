// calibrate/fit/compare.hpp: measured nccl-tests rows beside trainsim's prediction for the same op, ranks and sizes
// (`trainsim-calibrate compare`, issue 23): the ratio per size and the sizes off by more than a tolerance.
#pragma once
#include "calibrate/fit/measurement.hpp"
#include "sim/collectives/sweep.hpp"
#include "sim/topology/topology.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace calibrate::fit {

/// The rows of one run in a log: one op over one set of ranks, one measurement per size (the column log_groups was
/// asked for), by size.
struct LogGroup {
  CollectiveOp op = CollectiveOp::AllReduce;
  int ranks = 0;
  int nodes = 0;  // 0: the log names no hosts
  std::vector<Measurement> points;
};
/// Which of nccl-tests' two measurements of a size a group keeps.
enum class Column {
  OutOfPlace,  // out-of-place, as nccl-tests' headline columns; in-place where the log has only that
  InPlace,     // in-place; out-of-place where the log has only that
  Fastest,     // the faster of the two: one stalled iteration block in one column is not the collective's time
};
const char* to_string(Column c);  // "out-of-place", "in-place", "fastest"
std::optional<Column> column_from_string(std::string_view s);

/// Groups collective measurements by (op, ranks, nodes), in the order they first appear; of a size measured twice in
/// one group, `column` decides which is kept (among several of the same column, the first: a log holding two runs
/// of the same test).
std::vector<LogGroup> log_groups(std::span<const Measurement> measurements, Column column = Column::OutOfPlace);

/// sim/collectives' Op of a measurement op (the same six, by name).
sim::collectives::Op sim_op(CollectiveOp op);

/// trainsim's prediction for a group's sizes on `cluster` (its nodes sized for the group: ranks / nodes per node,
/// or whole nodes when the log names no hosts). Throws sim::base::ConfigError "ORIGIN: ..." when the ranks do not
/// fit the cluster (uneven ranks per host, more ranks per host than the profile's node has GPUs).
std::vector<sim::collectives::SweepRow> predict_group(const LogGroup& g, const sim::topology::TopologyConfig& cluster,
                                                      const sim::collectives::CallCosts& costs,
                                                      sim::collectives::Algorithm algorithm, const std::string& origin);

struct ComparedSize {
  sim::base::Bytes size;
  double measured_us = 0, predicted_us = 0;
  double measured_busbw = 0, predicted_busbw = 0;  // GB/s, nccl-tests' bus bandwidth
  std::string algorithm;                           // what trainsim ran
  bool launch_bound = false;                       // the host's issue time (latency.launch) decided the time
  double time_ratio = 0;                           // predicted / measured time
  double busbw_ratio = 0;                          // predicted / measured bus bandwidth (0 when measured is 0)
  bool off = false;                                // |time_ratio - 1| > tolerance
};

/// The acceptance bounds: bus bandwidth within 15% at 64 MiB and above, time within 25% at 1 MiB and below.
inline constexpr std::int64_t kLargeBytes = std::int64_t{64} << 20;
inline constexpr std::int64_t kSmallBytes = std::int64_t{1} << 20;
inline constexpr double kLargeTolerance = 0.15;
inline constexpr double kSmallTolerance = 0.25;

struct Comparison {
  LogGroup group;
  std::vector<ComparedSize> sizes;
  int large = 0, large_within = 0;  // sizes >= 64 MiB, and those with busbw within 15%
  int small = 0, small_within = 0;  // sizes <= 1 MiB, and those with time within 25%
  double large_max_error = 0;       // the worst |busbw_ratio - 1| among the large sizes
  double small_max_error = 0;       // the worst |time_ratio - 1| among the small sizes
};
/// Pairs measured and predicted rows size by size; `tolerance` marks sizes off (the command's default 15%).
Comparison compare(const LogGroup& g, std::span<const sim::collectives::SweepRow> predicted, double tolerance);

}  // namespace calibrate::fit
