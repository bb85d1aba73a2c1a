// sim/hardware/profile.hpp: GPU, NVLink, NIC, node, price and failure-rate specs from hardware_profiles/*.json.
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/base/units.hpp"
#include "sim/hardware/compute_model.hpp"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sim::hardware {

enum class Dtype { Fp32, Tf32, Bf16, Fp16, Fp8, Fp4 };
inline constexpr std::array kAllDtypes{Dtype::Fp32, Dtype::Tf32, Dtype::Bf16, Dtype::Fp16, Dtype::Fp8, Dtype::Fp4};
const char* to_string(Dtype d);
std::optional<Dtype> dtype_from_string(std::string_view s);
/// Bytes per element of the weights and activations a step of this training dtype stores and moves: 4 for fp32 and
/// tf32 (TF32 is a tensor-core mode over fp32 tensors: NVIDIA A100 Tensor Core GPU Architecture whitepaper, "TF32"),
/// 2 otherwise (bf16 and fp16; FP8 and FP4 training keep 16-bit weights and activations and cast per GEMM).
inline double tensor_bytes(Dtype d) {
  return d == Dtype::Fp32 || d == Dtype::Tf32 ? 4.0 : 2.0;
}

struct GpuSpec {
  std::string model;
  std::map<Dtype, base::FlopRate> peak;  // dense peaks; a dtype missing here is unsupported
  base::Bytes hbm;
  base::Bandwidth hbm_bandwidth;
  int sm_count = 0;
  base::Power tdp;

  std::optional<base::FlopRate> peak_for(Dtype d) const {
    auto it = peak.find(d);
    if (it == peak.end()) return std::nullopt;
    return it->second;
  }
};

struct NvlinkSpec {
  base::Bandwidth bandwidth;  // per GPU, per direction
  int domain = 8;             // GPUs that share one NVLink/NVSwitch domain
  /// The NVSwitches reduce and multicast (NVLink SHARP, third-generation NVSwitch and later: HGX H100/H200/H800,
  /// B200, GB200 NVL72), so NCCL's NVLS and NVLS-tree all-reduce run (sim/collectives). Default false.
  bool sharp = false;
};

/// The collectives nccl-tests times, in sim/collectives' Op order, by their profile and measurement names.
inline constexpr std::array<const char*, 6> kCollectiveNames{"all_reduce", "all_gather", "reduce_scatter",
                                                             "all_to_all", "send_recv",  "broadcast"};

/// Latencies of the collective model (profile section "latency", optional; issue 23). A field left out keeps the
/// compiled-in default, so a profile without the section gives what trainsim gave before it existed:
/// - nvlink: one GPU-to-GPU step through the NVSwitch (default 0.6 us, topology::kDefaultNvlinkLatency);
/// - network_hop: one network hop, NIC<->leaf, leaf<->spine, spine<->core (default 1.35 us,
///   topology::kDefaultNicLatency; a rail-local inter-node step is two hops);
/// - base: per collective, a fixed cost added once per call on top of the per-step terms (default 0): the launch and
///   protocol overhead that NCCL's tuner models as baseLat (src/graph/tuning.cc), fitted by trainsim-calibrate;
/// - launch: the host's time to issue one collective call (the NCCL call and its kernel launches, on every GPU the
///   calling process drives), default 0. Calls issued back to back, as nccl-tests issues its iterations, cannot
///   complete faster than the host issues them: a sweep's time is max(launch, base + the collective's time). Only the
///   collective sweeps (`trainsim collective`, `trainsim-calibrate compare`) apply it; in a training step the host
///   issues ahead of the GPU and the issue overlaps the work before it. Fitted by trainsim-calibrate; one process
///   driving several GPUs (nccl-tests -g 8) issues more per call than one process per GPU.
struct LatencySpec {
  std::optional<base::Time> nvlink;
  std::optional<base::Time> network_hop;
  std::array<base::Time, kCollectiveNames.size()> base{};  // by kCollectiveNames index
  base::Time launch;

  /// Strict parse of {"nvlink", "network_hop", "launch", "base": {op: time}}; times are quantities ("0.6 us"), >= 0.
  static LatencySpec parse(base::JsonReader& in);
  /// The field named as in the profile, "nvlink", "network_hop", "launch" or "base.OP"; nullopt when the name is none
  /// of them or the optional field is unset.
  std::optional<base::Time> field(std::string_view key) const;
};

struct NetworkSpec {
  int nics_per_gpu = 1;
  base::Bandwidth nic_bandwidth;  // per NIC, per direction
};

struct NodeSpec {
  int gpus = 8;
  base::Power power;  // whole server at full load
};

struct PriceSpec {
  base::Money gpu_hour;
  std::string kind;  // "on-demand" | "reserved" | "spot"
  std::string date;  // when the price was published, "2025-06"
};

enum class FailureScope { Gpu, Node, Rack, Switch, Job };
/// What a failure does to the job. LossSpike is a training instability: like silent corruption it is found later and
/// forces a rollback, to a checkpoint some steps before the spike began (FailureComponentSpec::rollback_steps).
enum class FailureEffect { Crash, Hang, Sdc, Straggler, Maintenance, LossSpike };
const char* to_string(FailureScope s);
const char* to_string(FailureEffect e);

/// One class of failing component: how often (MTBF per instance of its scope), with what inter-arrival law, what it
/// does to the job, and how long the failed part is out.
struct FailureComponentSpec {
  std::string name;
  FailureScope scope = FailureScope::Gpu;
  base::Duration mtbf;  // per instance of the scope (per GPU, per node, ...); may be centuries

  double weibull_shape = 1.0;  // 1.0 = exponential
  bool exponential = true;
  FailureEffect effect = FailureEffect::Crash;
  base::Duration repair;
  double rollback_steps = 0;  // loss_spike: the restart point lies this many steps before the spike began

  /// Strict parse of {"name","scope","mtbf","distribution","effect","repair"}.
  static FailureComponentSpec parse(base::JsonReader& in);
};

/// The most failure components a profile, failure file or scenario lists (the built-in model has 19).
constexpr std::size_t kMaxFailureComponents = 256;
/// Adds an error at `key` of `in` (the "components" array) for more than kMaxFailureComponents, and one per name
/// given twice. Found by a user trial: 20,000 copies of one component took 9 GB in the run's pairwise check.
void check_failure_components(base::JsonReader& in, std::string_view key, const std::vector<FailureComponentSpec>& c);

/// Adds an error at `key` when a rate is positive but below what the integer clock can time (1 GB/s, 1 GFLOP/s;
/// profile.cpp says why). Used for profiles and for a scenario's own NIC bandwidth.
void check_rate_floor(base::JsonReader& in, std::string_view key, base::Bandwidth b);
void check_rate_floor(base::JsonReader& in, std::string_view key, base::FlopRate r);

struct HardwareProfile {
  std::string name;
  std::string description;
  GpuSpec gpu;
  NvlinkSpec nvlink;
  NetworkSpec network;
  NodeSpec node;
  std::optional<PriceSpec> price;
  std::vector<FailureComponentSpec> failures;
  Efficiency efficiency;  // achieved-versus-peak factors (defaults documented in compute_model.hpp)
  LatencySpec latency;    // collective latencies (defaults documented above)
  std::map<std::string, std::string> provenance;  // dotted field path (or an ancestor) -> source

  /// Strict parse of a profile object (schema "trainsim.hardware/1"). Problems go to the reader's diagnostics.
  static HardwareProfile parse(base::JsonReader& in);
};

/// Leaf fields of a profile that no provenance entry covers (an entry covers its own path and everything below).
/// `leaves` comes from JsonReader::leaf_paths() of the profile object.
std::vector<std::string> provenance_gaps(const std::vector<std::string>& leaves,
                                         const std::map<std::string, std::string>& provenance);

}  // namespace sim::hardware
