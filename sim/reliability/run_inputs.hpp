// sim/reliability/run_inputs.hpp: the plain values a run-level simulation needs: job, failures, recovery, work.
#pragma once
#include "sim/reliability/checkpoint_policy.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/units.hpp"
#include "sim/hardware/profile.hpp"

#include <compare>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sim::reliability {

/// The longest time a run can be simulated over: the integer-ns clock holds 292 years.
constexpr double kMaxHorizonS = 200.0 * 365.25 * 86400.0;

/// What sets the step rate at run level: data-parallel replicas dropped by elastic shrinking, and the slowdown of
/// the slowest GPU (1.0 = none). The healthy state is {0, 1.0}.
struct ClusterState {
  int missing_dp_replicas = 0;
  double straggler_factor = 1.0;
  auto operator<=>(const ClusterState&) const = default;
};

/// The step time in a cluster state, from the step level (the caller caches per state; trainsim calls it at most
/// once per distinct state, from one thread at a time). Time::max() marks a state the job cannot run in (say, a
/// global batch that no longer divides): the run then waits for repairs instead of shrinking to it.
using StepTimeFn = std::function<base::Time(const ClusterState&)>;

/// The job's size and its failure domains.
struct JobShape {
  int gpus = 0;
  int gpus_per_node = 8;
  int nodes = 0;
  int dp = 1;                // data-parallel replicas
  int gpus_per_replica = 0;  // gpus / dp: what shrinking drops at a time
  int nodes_per_switch = 4;  // nodes below one leaf switch: a switch failure takes all of them down
  int switches = 0;
  int nodes_per_rack = 2;  // nodes of one rack: a rack failure (power, ToR) takes all of them down
  int racks = 0;

  /// Derives nodes, replicas and failure domains. The domain sizes come from the caller's topology (one source of
  /// failure domains: sim/topology's leaf and rack rules, see scenario::run_inputs); without one, the topology's
  /// defaults for a rail-optimised fat tree of 32-port leaves: a leaf switch carries one rail of 32 nodes, a rack
  /// holds 4 nodes (topology::TopologyConfig::nodes_per_rack). Partial domains at the end count as whole ones.
  static JobShape make(int gpus, int gpus_per_node, int dp, int nodes_per_switch = 0, int nodes_per_rack = 0);
};

/// Instances of a failure scope in the job: GPUs, nodes, racks, switches, or 1 for the job itself.
int instances(const JobShape& job, hardware::FailureScope scope);
/// Nodes a failure of one instance of the scope takes out of the job (a GPU failure takes its node to repair).
int nodes_affected(const JobShape& job, hardware::FailureScope scope);

/// How long after a failure the job notices it, per effect.
struct DetectionDelays {
  /// A crash (process exit, Xid error) reaches the launcher at its next heartbeat. Assumed 2 min, well inside
  /// MegaScale's "< 10 min" detection and diagnosis (Jiang et al., NSDI 2024, Sec. 6.3; reliability_public.json:
  /// recovery_times.megascale_detection_diag_min).
  base::Time crash{120'000'000'000};
  /// A hang is found by the collective timeout: PyTorch ProcessGroupNCCL's default, 10 min since PR #110947
  /// (reliability_public.json: recovery_times.pytorch_nccl_default_timeout). A scenario's hang_timeout overrides it.
  base::Time hang{600'000'000'000};
  /// Silent data corruption shows only as a loss spike (or a periodic check) some time later, and forces a rollback
  /// to the newest durable checkpoint written before the corruption. Assumed 1 h: no source publishes a detection
  /// delay (Llama 3 reports 6 SDC interruptions without timing).
  base::Time sdc{3'600'000'000'000};
  /// A straggler slows every synchronous step until found and drained. 10 min: MegaScale's bound for detection and
  /// diagnosis (recovery_times.megascale_detection_diag_min), and the mean duration of a computation fail-slow
  /// (Greyhound, USENIX ATC 2025: "a short mean duration of 10 minutes"; communication fail-slows last 24 min on
  /// average, and the fail-slows of its 27 jobs of >= 512 GPUs 72 min, undetected).
  base::Time straggler{600'000'000'000};
  /// Maintenance is initiated by the operator: known at once.
  base::Time maintenance{0};
  /// A loss spike is plain on the loss curve; deciding to roll back takes an engineer or a monitor. Assumed 30 min
  /// (no source publishes a figure); a scenario's training.loss_spikes.detection overrides it.
  base::Time loss_spike{1'800'000'000'000};

  base::Time of(hardware::FailureEffect effect) const;
};

/// What the job does when a failed node needs replacing and no hot spare is left.
enum class OnSparesExhausted {
  Wait,    // wait until repaired nodes come back, then restart at full size
  Shrink,  // restart without the data-parallel replicas that lost GPUs (elastic), regrow at the next restart
};
const char* to_string(OnSparesExhausted s);

/// Checkpointing: the policy picks the compute time between checkpoints; a checkpoint blocks training for `write`
/// (synchronous) or only for `snapshot` (asynchronous: copied to host memory, then written in the background and
/// durable `write` later). Defaults: ByteCheckpoint's Llama-405B-class measurements on 8,960 GPUs, T_block 0.59 s,
/// T_save 51.06 s, T_load 129.49 s (Wan et al., ByteCheckpoint, Table 8; reliability_public.json:
/// checkpoint_systems.bytecheckpoint, status secondary).
struct CheckpointSpec {
  CheckpointPolicy policy = CheckpointPolicy::Daly;  // a scenario's "auto"
  base::Time interval{0};                            // Fixed only: compute time between checkpoints
  double interval_steps = 0;  // Fixed only, when > 0: optimizer steps between checkpoints (instead of `interval`)
  base::Time write{51'060'000'000};  // durable write
  bool async = true;
  base::Time snapshot{590'000'000};  // blocking part when async
  base::Time load{129'490'000'000};  // read back at every restart
  /// How write and load were derived ("0.99 TB / 111 GB/s aggregate"), for the summary; empty when given as times.
  std::string write_basis;
  std::string load_basis;
  std::string snapshot_basis;  // "4.69 GB per GPU at 25 GB/s": the bytes and rate behind `snapshot`

  /// Training time lost per checkpoint: the write, or only the snapshot when asynchronous (Young's and Daly's delta).
  base::Time blocking() const { return async ? snapshot : write; }
};

/// One failure of a replayed trace: when, from the job's start in wall-clock time, and which component failed (its
/// effect, scope, detection and repair are that component's).
struct TraceEvent {
  double at_s = 0;
  std::string component;
};

/// A failure log replayed in place of sampled arrivals (DESIGN.md, sim/reliability: "trace replay"): every trial sees
/// the same failures at the same times, repeated every `span_s` (the window the log covers, quiet time after its
/// last event included) for as long as the run lasts. What still varies between trials: repair times and which node a
/// failure hits while the job runs shrunk. Loss spikes (training.loss_spikes, a per-step rate) still arrive as drawn
/// (FailureTrace::replaces).
struct FailureTrace {
  double span_s = 0;
  std::vector<TraceEvent> events;  // in time order
  std::string source;              // where it came from ("failures/llama3.json", "inline"), for the summary
  /// The trace replaces the arrivals of RunInputs::components[0, replaces); those after (the loss-spike component the
  /// caller adds for training.loss_spikes) are still drawn. Events may name only the replaced ones.
  std::size_t replaces = static_cast<std::size_t>(-1);
};

/// The most events a trace may list (one per line of a log; a year of Llama 3's rate on 16,384 GPUs is 2,800).
inline constexpr std::size_t kMaxTraceEvents = 1'000'000;

/// Everything one run-level simulation needs, as plain values (the caller derives them from a scenario).
struct RunInputs {
  JobShape job;
  std::vector<hardware::FailureComponentSpec> components;  // e.g. a hardware profile's `failures`
  /// When set, the failures are replayed from it instead of drawn from the components' rates (loss spikes excepted).
  std::optional<FailureTrace> trace;
  DetectionDelays detection;
  /// Step-time factor of a straggler (the caller's step level turns it into a step time): 1.2, a fail-slow GPU as
  /// Greyhound measured it in ByteDance's clusters ("20% slower" under thermal throttling, a "maximum performance drop
  /// of 21.6%" for computation fail-slows; Wu et al., "Greyhound", USENIX ATC 2025, the published version of FALCON,
  /// arXiv:2410.12588). It was an assumed 1.5 (Llama 3 reports stragglers only qualitatively).
  double straggler_slowdown = 1.2;
  /// Scheduling and initialisation before the checkpoint load. 10 min: the scenario default, inside Kokolis et al.'s
  /// 5-20 min restart overhead (HPCA 2025; reliability_public.json: recovery_times.kokolis_u0_min).
  base::Time restart{600'000'000'000};
  CheckpointSpec checkpoint;
  int spares = 0;  // hot spare nodes (see auto_spares for the scenario default)
  /// Swapping a failed node for a spare: evicting it and bringing a warm standby into the job, before the restart.
  /// Default 3 min: MegaScale detects, diagnoses and evicts faulty nodes "in under 10 minutes" (Jiang et al., NSDI
  /// 2024, Sec. 6.3; reliability_public.json: recovery_times.megascale_detection_diag_min) and ByteRobust keeps warm
  /// standby machines for the swap (Wan et al., arXiv:2509.16293); of MegaScale's 10 min, the crash detection (2 min)
  /// and the restart's own scheduling (DetectionDelays, `restart`) are counted elsewhere, so the swap proper is assumed
  /// 3 min. NVIDIA's resiliency extension keeps hot spares already in the rendezvous (nvidia-resiliency-ext v0.6
  /// release notes, "Hot-spare node support"): set 0 for that.
  base::Time node_swap{180'000'000'000};
  OnSparesExhausted when_spares_exhausted = OnSparesExhausted::Wait;
  int min_dp_replicas = 1;  // Shrink never goes below this many replicas (it waits instead)
  /// Repair times are exponential with the component's mean (memoryless, the usual MTTR model) or fixed.
  bool exponential_repair = true;

  /// The work: exactly one of a number of steps (train until done) or a fixed wall-clock window.
  std::optional<double> total_steps;
  std::optional<base::Time> window;
  StepTimeFn step_time;

  /// A trial not done after horizon_factor x its failure-free time never finishes (capped at 200 years, the range of
  /// the integer-nanosecond clock being 292).
  double horizon_factor = 100;
  /// A trial that sees this many interruptions in a row without one new durable checkpoint in between stalls: it
  /// stops and never finishes (a run whose MTBF is shorter than a checkpoint write would otherwise spin until the
  /// horizon). A healthy run almost never meets even a few in a row.
  int stall_interruptions = 1000;
  /// The trial whose timeline the summary keeps, and how many events of it at most.
  int sample_trial = 0;
  std::size_t max_timeline_events = 2000;
};

/// Problems with the inputs, each with a path such as "/components/3/mtbf" (empty when usable). Not a problem: a
/// run that can never finish (that is a result).
std::vector<base::Diagnostic> check_inputs(const RunInputs& in);

/// Failures per second of the whole job: sum over components of instances / MTBF. Weibull components enter with
/// their long-run rate (renewal theorem: 1 / mean). With a trace: its events per span, plus the components it leaves
/// drawn.
double job_failure_rate(const RunInputs& in);
/// Job MTBF = 1 / sum of rates (DESIGN.md, "Modelling"); infinite without components.
base::Duration job_mtbf(const RunInputs& in);
/// Whether a trace replaces component `i`'s drawn arrivals.
bool replaced_by_trace(const RunInputs& in, std::size_t i);
/// The interruptions one trial is expected to simulate: the job's failure rate (a trace's events counted exactly,
/// however bunched) over the time it trains (`step0` x total_steps, lengthened by what failures cost in Daly's
/// expectation, or the window), at most what a trial reaches before it stops at its event cap (an interruption takes
/// at least two events, the failure and the restart; trial.hpp).
double interruptions_per_trial(const RunInputs& in, base::Time step0);
/// The most a trial simulates before it stops as never finished (trial.hpp, Trial's event cap).
inline constexpr double kMaxTrialEvents = 10'000'000;
/// What one command simulates at most over all its trials: about 20 minutes on two cores (a trial at the event cap,
/// 3.3 million interruptions, took 0.4-0.9 s on this project's 2-core CI machine). A run beyond it is refused before
/// it starts (a user trial: a 10-minute job MTBF over 200 years with ten million trials would have run for weeks).
inline constexpr double kMaxRunInterruptions = 1e10;

/// Nodes under repair at a random moment, on average: sum over components that take nodes out of the job of
/// rate x nodes taken x mean repair time (Little's law, L = lambda W); with a trace, over its events per span.
double mean_nodes_in_repair(const RunInputs& in);
/// The spare pool a scenario gets by default: the smallest pool that covers the nodes under repair at once with
/// probability 0.99 when their number is Poisson with mean_nodes_in_repair (an M/G/infinity queue: Poisson whatever
/// the repair law; Takacs 1962). With elastic shrinking behind it, the rare overflow costs replicas, not a wait.
int auto_spares(const RunInputs& in);

}  // namespace sim::reliability
