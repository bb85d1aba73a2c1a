// sim/scenario/scenario.hpp: scenario files (schema trainsim.scenario/1) loaded strictly into wired, resolved objects.
#pragma once
#include "sim/base/units.hpp"
#include "sim/cost/cost.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/parallel/parallel_config.hpp"
#include "sim/reliability/checkpoint_io.hpp"
#include "sim/reliability/run_inputs.hpp"
#include "sim/topology/topology.hpp"
#include "sim/workload/layer_costs.hpp"
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
  /// Failed fabric elements ("spine S", "leaf L uplink P"): step and run route around them; plan refuses them.
  std::vector<topology::FabricFailure> failed;
  /// NCCL's NVLink SHARP algorithms (NCCL_NVLS_ENABLE, on by default where the hardware's nvlink.sharp is set);
  /// false as NCCL_NVLS_ENABLE=0, which NVIDIA's DGX Cloud recipes set to save memory.
  bool nvls = true;
};

struct ClusterConfig {
  int gpus = 0;
  int gpus_per_node = 0;  // default: the hardware profile's node size
  /// GPUs of one NVLink domain that the job's placement fills before the next ("nvlink_domain"; 0: the profile's
  /// domain): e.g. 64 where a job takes 16 of an NVL72 rack's 18 trays. A multiple of gpus_per_node, at most the
  /// profile's domain; the scenario's hardware profile carries it (HardwareProfile::nvlink.domain).
  int nvlink_domain = 0;
  NetworkConfig network;
  int nodes() const { return gpus / gpus_per_node; }
};

/// Loss spikes that force a rollback (issue 11). Defaults from PaLM 540B's account: "spikes in the loss roughly 20
/// times during training", handled by restarting "from a checkpoint roughly 100 steps before the spike" and skipping
/// "roughly 200-500 data batches" (Chowdhery et al., "PaLM", arXiv:2204.02311, Sec. 5.1); over PaLM's about 255k
/// steps (its batch schedule, Sec. 5) that is 20 / 0.255 = 78.4 spikes per million steps.
struct LossSpikeConfig {
  double per_million_steps = 78.4;
  double rollback_steps = 100;  // the restart point lies this many steps before the spike began
  double skip_batches = 350;    // data skipped after the restart: costs no time (the loader seeks past it)
  /// From the spike to the decision to roll back. Assumed 30 min (an on-call engineer or an automatic loss monitor;
  /// no source publishes a figure).
  base::Time detection{1'800'000'000'000};
};

struct TrainingConfig {
  int seq_len = 0;
  std::optional<base::Count> tokens;   // train until done ...
  std::optional<base::Time> duration;  // ... or simulate a fixed window
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  /// FP8 scaling recipe ("fp8_recipe", only with dtype fp8/fp4): "delayed" (default: Megatron-Core's --fp8-recipe
  /// default and Transformer Engine's DelayedScaling) or "tensorwise", "rowwise", "blockwise", "mxfp8" (current
  /// scaling: torchao.float8's recipes, TE's Float8CurrentScaling / Float8BlockScaling / MXFP8BlockScaling; torchao's
  /// "rowwise" all-gathers in 16 bits, workload::Fp8Scaling::Rowwise).
  workload::Fp8Scaling fp8_scaling = workload::Fp8Scaling::Delayed;
  std::string fp8_recipe = "delayed";  // the recipe's name, as written (Megatron-LM's --fp8-recipe for --explain)
  /// Fused attention kernel ("attention_kernel"): "fused" (default: cuDNN / FlashAttention-3, what Transformer Engine
  /// runs in Megatron-Core and NeMo), "flash2" (FlashAttention-2 class: PyTorch SDPA's flash backend) or "triton" (Tri
  /// Dao's Triton FlashAttention, MPT's attn_impl "triton"; hardware::AttentionKernel).
  hardware::AttentionKernel attention_kernel = hardware::AttentionKernel::Fused;
  /// Elementwise kernels ("kernels"): "fused" (default: Transformer Engine's and torch.compile's fused norms, RoPE and
  /// SwiGLU) or "eager" (PyTorch eager mode, e.g. TorchTitan without compile: RMSNorm, RoPE and SwiGLU as separate
  /// kernels with fp32 intermediates; workload::LayerShape::eager_kernels counts their bytes).
  bool eager_kernels = false;
  /// How keys and values reach the attention kernel ("attention_kv"): "grouped" (default: their kv_heads, as
  /// Transformer Engine and FlashAttention take grouped-query attention) or "repeated" (copied to every query head
  /// first, as TorchTitan's Llama does with repeat_kv before SDPA): what context parallelism moves per token.
  bool repeated_kv = false;
  /// Layout of sequence-parallel activations ("sp_layout"): "seq_first" (default: Megatron-Core's [sequence, batch,
  /// hidden], gathered and scattered in place) or "batch_first" (PyTorch DTensor's Shard(1) on [batch, sequence,
  /// hidden], TorchTitan: with more than one sequence per micro-batch each all-gather and reduce-scatter is
  /// rearranged by a copy of the whole tensor; workload::LayerShape::sp_batch_first).
  bool sp_batch_first = false;
  /// Whether the scenario states training.moe_imbalance (its value lives in MemoryOptions): absent, a model with
  /// experts is simulated with balanced routing, and `trainsim step` says so.
  bool moe_imbalance_given = false;
  /// McCandlish's critical (noise) batch in tokens; absent: estimated (workload::estimate_critical_batch).
  std::optional<base::Count> critical_batch;
  /// Off by default (issue 19): PaLM's rate comes from one 540B run and no source scales it with model size, so a
  /// default would charge every model PaLM 540B's spikes. An object opts in (its fields default to PaLM's figures).
  std::optional<LossSpikeConfig> loss_spikes;  // nullopt: absent or "loss_spikes": "none"
};

/// The input pipeline (issue 11). Storage is shared by data reads and checkpoint traffic.
struct DataConfig {
  /// Aggregate read bandwidth of the shared storage: Llama 3's Tectonic cluster sustains 2 TB/s (Llama Team 2024,
  /// Sec. 3.3.1; shared/validation/reliability_public.json). Also the checkpoint load rate at restart.
  base::Bandwidth storage_bandwidth{2e12};
  /// Bytes read per trained token after tokenisation and packing: Megatron-LM's indexed datasets store token ids as
  /// uint16 when the vocabulary has fewer than 65,500 entries, else int32 (megatron/core/datasets/indexed_dataset.py,
  /// DType.optimal_dtype). Absent: 2 or 4 B by the model's vocabulary.
  std::optional<base::Bytes> bytes_per_token;
  /// Tokens per second one node's loader processes can prepare (CPU-bound tokenisation, decoding); absent: not a
  /// limit (pre-tokenised, memory-mapped shards are read at storage speed).
  std::optional<base::Count> loader_tokens_per_s;
  double cache_hit_rate = 0;  // fraction of reads served from node-local cache instead of the shared storage
};

struct CheckpointConfig {
  bool auto_interval = true;  // "auto": Daly's higher-order optimum
  base::Time interval;        // when not auto: compute time between checkpoints ("2 h")
  /// When not auto and given in optimizer steps ("1000 steps", what a launch script's --save-interval says): the
  /// steps between checkpoints, whatever the step time; 0 when given as a time.
  long long interval_steps = 0;
  /// Durable write and load of one checkpoint; absent ("auto", the default): from the checkpoint's bytes and the
  /// storage bandwidths below (reliability::checkpoint_io). With async, the write runs behind a blocking snapshot.
  std::optional<base::Time> write;
  std::optional<base::Time> load;
  bool async = true;
  reliability::CheckpointStorage storage;  // defaults and their sources: sim/reliability/checkpoint_io.hpp
};

struct ReliabilityConfig {
  std::string failures = "default";                        // "default", a file name, or "inline"
  std::vector<hardware::FailureComponentSpec> components;  // effective list after defaults / replace
  /// The failures object's "trace": a failure log replayed instead of drawn arrivals (reliability::FailureTrace).
  std::optional<reliability::FailureTrace> trace;
  /// SHA-256 of a failure file's document (reliability.failures naming a file; empty otherwise): its contents are
  /// part of the run's provenance, as the scenario document's are (scenario::Scenario::document_sha256).
  std::string failures_sha256;
  CheckpointConfig checkpoint;
  base::Time restart;
  base::Time hang_timeout;
  /// "detection": {"crash", "straggler", "sdc"}: how long after a failure the job notices it (defaults and sources:
  /// reliability::DetectionDelays); absent keys keep the defaults.
  std::optional<base::Time> detect_crash, detect_straggler, detect_sdc;
  /// "straggler_slowdown": step-time factor of a fail-slow GPU (default and source: reliability::RunInputs).
  std::optional<double> straggler_slowdown;
  std::optional<int> spares;              // absent ("auto", the default): reliability::auto_spares
  base::Time node_swap{180'000'000'000};  // default and source: reliability::RunInputs::node_swap
  bool shrink = true;  // "on_spares_exhausted": "shrink" (elastic, the default) or "wait" for repairs
  int trials = 1000;
  std::uint64_t seed = 42;
};

/// "19 component classes (default)", and with a trace "...; failures replayed from inline: 12 over 54.0 d, repeated
/// after it": the failure model in one line, for the CLI's and the report's effective configuration.
std::string failures_line(const ReliabilityConfig& r);
/// A replayed trace's extent, "12 failures over 54.0 d" ("1 failure over ..."), for the summary and the report's note.
std::string trace_extent(const reliability::FailureTrace& t);

struct CostConfig {
  std::optional<base::Money> gpu_hour;  // default: the hardware profile's list price
  bool rent_given = false;              // gpu_hour, price_kind or price_date in the file (not read when owned)
  std::optional<base::Time> deadline;
  std::optional<base::Money> budget;
  // Pricing, energy and storage (defaults and their sources: sim/cost/cost.hpp; keys: README "Cost model").
  cost::Pricing pricing = cost::Pricing::Rented;
  std::string price_kind;       // rented: "on-demand" | "reserved" | "spot"
  std::string price_date;       // rented: when the price was quoted, "2026-09"
  std::string price_source;     // where the compute price comes from (profile provenance or the scenario)
  cost::OwnedPrice owned;       // owned: node_price is required
  cost::EnergyInputs energy;    // node_power defaults to the profile's; billed defaults to pricing == owned
  cost::StorageInputs storage;  // checkpoint bytes are filled from the model by the caller
};

/// One `expect` entry: bounds on a result field by its JSON path ("mfu", "memory_gib.total"), or a flag.
struct Expectation {
  std::string metric;
  std::optional<double> min;  // in `unit` when the bound had one, else in the result's own unit
  std::optional<double> max;
  std::string unit;                   // "s", "USD", "GiB" when the bounds were quantities ("60 d"); else empty
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
  std::vector<std::string> parallel_fixed;  // keys "parallel" gave (--set too): the planner keeps them fixed
  TrainingConfig training;
  /// What the training stack decides about memory and attention: training.fused_attention, attention_dropout,
  /// hidden_dropout, main_grads, fp8_weight_copies, fp8_activations and the memory section (reserve, zero3_units).
  /// Defaults: today's Megatron-Core / NeMo / TorchTitan (parallel::MemoryOptions).
  parallel::MemoryOptions memory;
  DataConfig data;
  ReliabilityConfig reliability;
  CostConfig cost;
  std::vector<Expectation> expect;
  /// Provenance: the --set overrides applied ("key=value", in order) and the SHA-256 of the scenario document as run
  /// (the file, or the built-in default, with them applied; canonical JSON as canonical_text gives it), which every
  /// key changes.
  std::vector<std::string> overrides;
  std::string document_sha256;
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
/// The same from text held in memory (fuzzing, tests); `origin` names it in messages; relative file references
/// resolve against the working directory.
Scenario load_scenario_text(std::string_view text, const std::string& origin,
                            const std::vector<Override>& overrides = {});
/// The built-in default scenario (scenarios/default.json, compiled into the binary).
Scenario load_default_scenario(const std::vector<Override>& overrides = {});
/// The scenario document at `path` (the built-in default when empty) with the overrides applied, as canonical JSON
/// text (sorted keys): the same bytes for the same inputs on any machine, to fingerprint them (shard files). Throws
/// ConfigError as load_scenario does for unreadable files and bad overrides.
std::string canonical_text(const std::string& path, const std::vector<Override>& overrides = {});

/// A built-in or file model / hardware profile by name or path. Throws ConfigError.
workload::ModelSpec load_model(const std::string& name_or_path);
hardware::HardwareProfile load_hardware(const std::string& name_or_path);

/// What kind of trainsim file a JSON document is, from its "schema" member.
enum class FileKind { Scenario, Model, Hardware };
/// Strictly validates one file of any kind (detected by "schema"); throws ConfigError on the first bad file.
FileKind validate_file(const std::string& path, const std::vector<Override>& scenario_overrides = {});

}  // namespace sim::scenario
