// sim/scenario/scenario.hpp: scenario files (schema trainsim.scenario/1) loaded strictly into wired, resolved objects.
#pragma once
#include "sim/base/units.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/workload/model_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sim::scenario {

struct NetworkConfig {
  base::Bandwidth nic_bandwidth;           // default: the hardware profile's NIC bandwidth
  std::string topology = "rail-fat-tree";  // "rail-fat-tree" | "fat-tree"
  double oversubscription = 1.0;           // leaf-to-spine, >= 1
};

struct ClusterConfig {
  int gpus = 0;
  int gpus_per_node = 0;  // default: the hardware profile's node size
  NetworkConfig network;
  int nodes() const { return gpus / gpus_per_node; }
};

struct TrainingConfig {
  int seq_len = 0;
  std::optional<base::Count> tokens;   // train until done ...
  std::optional<base::Time> duration;  // ... or simulate a fixed window
  hardware::Dtype dtype = hardware::Dtype::Bf16;
};

struct CheckpointConfig {
  bool auto_interval = true;  // "auto": Daly's higher-order optimum
  base::Time interval;        // when not auto
  base::Time write;           // durable write of one checkpoint (with async, it runs behind a short blocking snapshot)
  bool async = true;
};

struct ReliabilityConfig {
  std::string failures = "default";                        // "default", a file name, or "inline"
  std::vector<hardware::FailureComponentSpec> components;  // effective list after defaults / replace
  CheckpointConfig checkpoint;
  base::Time restart;
  base::Time hang_timeout;
  int spares = 0;
  int trials = 1000;
  std::uint64_t seed = 42;
};

struct CostConfig {
  std::optional<base::Money> gpu_hour;  // default: the hardware profile's list price
  std::optional<base::Time> deadline;
  std::optional<base::Money> budget;
};

/// One `expect` entry: bounds on a result field by its JSON path ("mfu", "memory_gib.total"), or a flag.
struct Expectation {
  std::string metric;
  std::optional<double> min;  // in the result's own unit (seconds, USD, GiB, fraction)
  std::optional<double> max;
  std::optional<bool> equals;         // "fits": true
  std::optional<double> within_best;  // "within_best": "5%"
};

struct Scenario {
  std::string name;
  std::string description;  // free text: what the scenario is and where its numbers come from
  std::string source;       // the file it came from, or "<built-in>/scenarios/default.json"
  workload::ModelSpec model;
  hardware::HardwareProfile hardware;
  ClusterConfig cluster;
  parallel::ParallelConfig parallel;
  TrainingConfig training;
  ReliabilityConfig reliability;
  CostConfig cost;
  std::vector<Expectation> expect;
};

/// A `--set KEY=VALUE` override (dotted path; the value is JSON when it parses as JSON, else a string).
struct Override {
  std::string key;
  std::string value;
  /// Splits "parallel.tp=4"; throws ConfigError when there is no '='.
  static Override parse(std::string_view text);
};

/// Loads, overrides, resolves (built-in names or files relative to the scenario) and checks a scenario. Every
/// problem found is reported in one ConfigError (exit code 2). Feasibility of the parallel strategy is not judged
/// here: see parallel::check_feasibility.
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {});
/// The built-in default scenario (scenarios/default.json, compiled into the binary).
Scenario load_default_scenario(const std::vector<Override>& overrides = {});

/// A built-in or file model / hardware profile by name or path. Throws ConfigError.
workload::ModelSpec load_model(const std::string& name_or_path);
hardware::HardwareProfile load_hardware(const std::string& name_or_path);

/// What kind of trainsim file a JSON document is, from its "schema" member.
enum class FileKind { Scenario, Model, Hardware };
/// Strictly validates one file of any kind (detected by "schema"); throws ConfigError on the first bad file.
FileKind validate_file(const std::string& path);

}  // namespace sim::scenario
