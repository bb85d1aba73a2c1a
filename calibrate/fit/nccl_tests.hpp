// calibrate/fit/nccl_tests.hpp: nccl-tests output (text tables or its -J JSON) into measurement records.
#pragma once
#include "calibrate/fit/measurement.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace calibrate::fit {

/// What the log itself may not say. Each value, when given, must agree with the log where the log says it too.
struct NcclTestsOptions {
  std::optional<CollectiveOp> op;  // default: "# Collective test starting: X_perf", the JSON args, or the file name
  std::optional<int> ranks;        // default: the "#  Rank" lines (text) or config.devices x nthreads x ngpus (JSON)
  std::optional<Scope> scope;      // default: network when the ranks span more than one host, else nvlink
  std::optional<int> nodes;        // default: the hosts of the "#  Rank" lines; given, it also says network when > 1
  std::string date;                // default: the timestamp column (-S 1) or the JSON start_time, else none
};

struct ImportResult {
  std::vector<Measurement> records;
  std::vector<std::string> notes;  // rows or sections skipped, and why
};

/// Reads one nccl-tests output file, text or JSON (told apart by the first character). A text log may hold several
/// runs (one per "# nThread" header, e.g. `all_reduce_perf ...; all_gather_perf ... > log`). Each result row gives one
/// record per column group (out-of-place, in-place) whose time is a number; columns are found by their header
/// names, so the -I per-iteration columns (i_min ... i_cv%), -C cputime, -S timestamps and "N/A" fields are all
/// accepted. The printed algbw must equal size/time and busbw must equal algbw times nccl-tests' factor for the op and
/// rank count (doc/PERFORMANCE.md in NVIDIA/nccl-tests): a disagreement means the log was misread and is an error.
/// Problems throw sim::base::ConfigError "FILE:LINE: what was found; what is accepted".
ImportResult import_nccl_tests(const std::string& path, const NcclTestsOptions& options);
ImportResult parse_nccl_tests_text(std::string_view text, const std::string& origin, const NcclTestsOptions& options);
ImportResult parse_nccl_tests_json(std::string_view text, const std::string& origin, const NcclTestsOptions& options);

/// The op measured by an nccl-tests program ("./build/all_reduce_perf" -> AllReduce); nullopt when unsupported.
std::optional<CollectiveOp> op_of_nccl_tests_program(std::string_view program);
/// "22703" -> "2.27.3" (NCCL_VERSION_CODE: X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before).
std::string nccl_version_string(long code);

}  // namespace calibrate::fit
