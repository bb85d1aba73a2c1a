// calibrate/cli/compare.hpp: `trainsim-calibrate compare LOG`: a measured nccl-tests log beside trainsim's
// prediction (issue 23), the profile and the cluster that fit and compare simulate.
#pragma once
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/topology/topology.hpp"

#include <ostream>
#include <string>

namespace calibrate::cli {

struct CompareArgs {
  std::string log;
  std::string hardware = "h100-sxm5-80gb";  // a built-in name or a profile file
  std::string algorithm = "auto";
  double tolerance = 0.15;
  std::string measured = "fastest";  // which of nccl-tests' columns (calibrate/fit/compare.hpp's Column)
  bool json = false;
  std::string op, scope;  // as import takes them, for a log that does not say
  int ranks = 0, nodes = 0;
};

/// import's and compare's options for what a log may not say (the collective, ranks, scope, hosts, date).
calibrate::fit::NcclTestsOptions log_options(const std::string& op, const std::string& scope, int ranks, int nodes,
                                             const std::string& date);

/// A built-in profile name (compiled into the binary) or a path to a profile file; `option` names the flag in errors.
sim::base::JsonDocument open_profile(const std::string& name_or_path, const std::string& option);
/// The profile open_profile finds, parsed strictly. Throws ConfigError naming the file and field.
sim::hardware::HardwareProfile load_profile(const std::string& name_or_path, const std::string& option);

/// The cluster that fit and compare simulate: `hw`'s nodes and NICs on a rail-optimised fat tree without
/// oversubscription, as a scenario that names no cluster.network builds it (sim/topology/profile_cluster.hpp); the
/// collective sweeps size it for each measured run.
sim::topology::TopologyConfig profile_cluster(const sim::hardware::HardwareProfile& hw);

/// Prints, per run in the log (op, ranks, hosts), each size's measured and predicted time and bus bandwidth with
/// their ratio, the sizes off by more than the tolerance, and the acceptance counts (busbw within 15% at
/// >= 64 MiB, time within 25% at <= 1 MiB); --json gives the same as schema trainsim.collective-compare/1.
/// Returns 0 (a report, whatever the agreement). Throws ConfigError for an unreadable log or an unfit cluster.
int compare_command(const CompareArgs& a, std::ostream& out, std::ostream& err);

}  // namespace calibrate::cli
