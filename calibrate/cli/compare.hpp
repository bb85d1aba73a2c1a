// calibrate/cli/compare.hpp: `trainsim-calibrate compare LOG`: a measured nccl-tests log beside trainsim's
// prediction (issue 23), and the cluster that fit and compare simulate.
#pragma once
#include "sim/scenario/scenario.hpp"
#include "sim/topology/topology.hpp"

#include <ostream>
#include <string>

namespace calibrate::cli {

struct CompareArgs {
  std::string log;
  std::string hardware;  // a built-in name or a profile file; empty: the scenario's
  std::string scenario;  // empty: the built-in default scenario
  std::string algorithm = "auto";
  double tolerance = 0.15;
  bool json = false;
};

/// The scenario whose cluster is simulated: `scenario_path` (or the built-in default) with its hardware replaced by
/// `hardware` when given. Throws ConfigError as scenario loading does.
sim::scenario::Scenario cluster_scenario(const std::string& scenario_path, const std::string& hardware);

/// Prints, per run in the log (op, ranks, hosts), each size's measured and predicted time and bus bandwidth with
/// their ratio, the sizes off by more than the tolerance, and the acceptance counts (busbw within 15% at
/// >= 64 MiB, time within 25% at <= 1 MiB); --json gives the same as schema trainsim.collective-compare/1.
/// Returns 0 (a report, whatever the agreement). Throws ConfigError for an unreadable log or an unfit cluster.
int compare_command(const CompareArgs& a, std::ostream& out, std::ostream& err);

}  // namespace calibrate::cli
