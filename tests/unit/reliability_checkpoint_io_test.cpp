// Checkpoint bytes and bandwidth (sim/reliability/checkpoint_io): the closed forms, and published checkpoint times
// reproduced from bytes and a bandwidth (shared/validation/reliability_public.json: checkpoint_systems).
#include "sim/reliability/checkpoint_io.hpp"

#include "sim/execution/step_plan.hpp"
#include "sim/parallel/memory.hpp"
#include "sim/scenario/run_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sim::reliability {
namespace {

TEST(CheckpointIo, BytesAreWeightsPlusOptimizerSavedOnce) {
  CheckpointShape sh;
  sh.params = 70e9;
  sh.gpus = 1024;
  sh.dp = 32;
  const CheckpointIo io = checkpoint_io(sh, CheckpointStorage{});
  EXPECT_EQ(io.total.n, static_cast<std::int64_t>(70e9 * 14)) << "2 B bf16 weights + 12 B fp32 master and Adam";
  // The busiest GPU: its replica's share of the weights (32 GPUs per replica) plus 1/1024 of the optimizer.
  EXPECT_NEAR(static_cast<double>(io.per_gpu_max.n), 70e9 * 2 / 32 + 70e9 * 12 / 1024, 2.0);
  EXPECT_NEAR(static_cast<double>(io.per_node_max.n), 8 * (70e9 * 2 / 32 + 70e9 * 12 / 1024), 16.0);
  sh.optimizer_sharded = false;  // ZeRO-0: one replica holds (and saves) the optimizer
  EXPECT_NEAR(static_cast<double>(checkpoint_io(sh, CheckpointStorage{}).per_gpu_max.n), 70e9 * 14 / 32, 2.0);
}

TEST(CheckpointIo, TheSlowerOfPerNodeAndAggregateBindsAndDataReadsCompete) {
  CheckpointShape sh;
  sh.params = 1e9;
  sh.gpus = 8;
  sh.dp = 8;
  CheckpointStorage st;
  st.write = base::Bandwidth{100e9};
  st.per_node = base::Bandwidth{1e9};  // one node writes 14 GB over 1 GB/s: 14 s
  CheckpointIo io = checkpoint_io(sh, st);
  EXPECT_EQ(io.write.bound, "per node");
  EXPECT_NEAR(io.write.time.seconds(), 14.0, 1e-6);
  st.per_node = base::Bandwidth{1e12};
  st.shared = base::Bandwidth{10e9};
  st.data_reads = base::Bandwidth{3e9};  // the data pipeline leaves 7 GB/s of the shared storage
  io = checkpoint_io(sh, st);
  EXPECT_EQ(io.write.bound, "shared storage");
  EXPECT_NEAR(io.write.time.seconds(), 14e9 / 7e9, 1e-6) << "write = total / (shared - data reads)";
}

TEST(CheckpointIoValidation, ByteCheckpoint405BSaveAndLoadOnItsCluster) {
  // ByteCheckpoint, Table 8: Llama-405B-class model, Megatron TP8 DP70 PP16 on 8,960 GPUs, T_save 51.06 s, T_load
  // 129.49 s (Wan et al.; reliability_public.json: checkpoint_systems.bytecheckpoint). The default rates are derived
  // from these two figures (checkpoint_io.hpp), so this checks the arithmetic, not an independent prediction.
  CheckpointShape sh;
  sh.params = 405e9;
  sh.gpus = 8960;
  sh.dp = 70;
  const CheckpointIo io = checkpoint_io(sh, CheckpointStorage{});
  std::printf("[ckpt] 405B on 8,960 GPUs: %.2f TB, write %.1f s (ByteCheckpoint 51.06), load %.1f s (129.49)\n",
              static_cast<double>(io.total.n) / 1e12, io.write.time.seconds(), io.load.time.seconds());
  EXPECT_NEAR(io.write.time.seconds(), 51.06, 0.25 * 51.06);
  EXPECT_NEAR(io.load.time.seconds(), 129.49, 0.25 * 129.49);
}

TEST(CheckpointIoValidation, GeminiMtNlgOnTwentyGbpsRemoteStorage) {
  // Gemini (Wang et al., SOSP 2023, Sec. 1): "it takes 42 minutes to checkpoint the model states of MT-NLG to the
  // remote persistent storage when the bandwidth is 20Gbps" (reliability_public.json:
  // checkpoint_systems.gemini_sosp23). MT-NLG: 530B parameters; an independent check of bytes / bandwidth (no rate
  // fitted to it).
  CheckpointShape sh;
  sh.params = 530e9;
  sh.gpus = 2240;  // MT-NLG's 280 GPUs per replica x 8 replicas
  sh.dp = 8;
  CheckpointStorage st;
  st.write = base::Bandwidth{20e9 / 8};
  const CheckpointIo io = checkpoint_io(sh, st);
  std::printf("[ckpt] MT-NLG 530B at 20 Gbit/s: %.1f min (Gemini: 42 min)\n", io.write.time.seconds() / 60);
  EXPECT_NEAR(io.write.time.seconds() / 60, 42.0, 0.25 * 42.0);
}

// MLPerf Storage v3.0's checkpointing workload (mlcommons/storage_results_v3.0 at
// 068d91f6d7bc57a6e6309f59d73980fe9e6e0336, closed division, July 2026): Llama 3 70B and 405B checkpoints written
// and read back by 64 and 512 processes, each write ending in an fsync (a durable save, as trainsim's "write"). The
// `metric` block of each run's summary.json; sizes in GiB (the benchmark's "GB" are binary, mlcommons/storage
// Rules.md, Table 2).
struct MlperfCheckpoint {
  const char* system;  // the submission's system, closed/<submitter>/systems/<name>.yaml
  double size_gib;     // checkpoint_size_GB
  double save_s;       // save_checkpoint_duration_mean_seconds
  double load_s;       // load_checkpoint_duration_mean_seconds
};
// results/<system>/checkpointing/llama3-70b/<run>/summary.json: Azure's AMLFS-Durable-Premium-125-1280TiB-16-
// Standard_E192is_v6 runs 20260722_185605 (save) and 20260722_185939 (load); Nebius's nebius-s3-ckpt-llama3-70b run
// 20260714_121444; Alluxio's aws_r5n24xlarge_i3en12xlarge_4c_10s_64p runs 20260708_075034 and 20260708_075733.
constexpr std::array<MlperfCheckpoint, 3> kMlperf70B{{
    {"Azure Managed Lustre, 125 MB/s per TiB x 1,280 TiB, 16 clients", 911.21, 8.647, 7.381},
    {"Nebius managed S3 (s3dlio), 8 clients", 911.21, 46.85, 23.81},
    {"Alluxio cache over S3, 4 clients", 911.21, 26.43, 26.74},
}};
// .../checkpointing/llama3-405b/...: NVIDIA's aistore-6n-oci-bm-denseio-e5-128-8client-405b-1t runs 20260720_230519
// and 20260720_232233; Everpure's FlashBlade//EXA (32 hosts, 30 data nodes) run 20260715_110216.
constexpr std::array<MlperfCheckpoint, 2> kMlperf405B{{
    {"NVIDIA AIStore (S3) on 6 OCI DenseIO nodes, 8 clients", 5292.25, 85.88, 83.70},
    {"Pure Storage FlashBlade//EXA, 32 clients", 5292.25, 7.20, 9.46},
}};

TEST(CheckpointIoValidation, BytesMatchMlperfStoragesMeasuredCheckpoints) {
  // Llama 3 70B (70,553,706,496 parameters) and 405B (405,853,388,800) at 14 bytes per parameter against the sizes
  // the benchmark wrote: an independent check of the bytes (nothing here is fitted to MLPerf).
  CheckpointShape sh;
  sh.gpus = 64;
  sh.dp = 8;
  sh.params = 70'553'706'496.0;
  const double gib = 1024.0 * 1024 * 1024;
  const double b70 = static_cast<double>(checkpoint_io(sh, CheckpointStorage{}).total.n) / gib;
  sh.gpus = 512;
  sh.dp = 2;
  sh.params = 405'853'388'800.0;
  const double b405 = static_cast<double>(checkpoint_io(sh, CheckpointStorage{}).total.n) / gib;
  std::printf("[ckpt] bytes: 70B %.1f GiB (MLPerf %.1f), 405B %.1f GiB (MLPerf %.1f)\n", b70, kMlperf70B[0].size_gib,
              b405, kMlperf405B[0].size_gib);
  EXPECT_NEAR(b70, kMlperf70B[0].size_gib, 0.02 * kMlperf70B[0].size_gib);
  EXPECT_NEAR(b405, kMlperf405B[0].size_gib, 0.02 * kMlperf405B[0].size_gib);
}

TEST(CheckpointIoValidation, BytesMatchMegatronsTrillionParameterCheckpoint) {
  // Narayanan et al., SC21 (arXiv:2104.04473), Sec. 5.10: "the trillion-parameter model has a checkpoint of size 13.8
  // terabytes", written from 3,072 A100s (Table 1: 1,008B parameters, TP 8, PP 64, so 6 data-parallel replicas). An
  // independent check of the 14 bytes per parameter (bf16 weights, fp32 master weights and Adam's two moments).
  CheckpointShape sh;
  sh.params = 1008e9;
  sh.gpus = 3072;
  sh.dp = 6;
  const double tb = static_cast<double>(checkpoint_io(sh, CheckpointStorage{}).total.n) / 1e12;
  std::printf("[ckpt] bytes: 1T %.2f TB (SC21 Sec. 5.10: 13.8)\n", tb);
  EXPECT_NEAR(tb, 13.8, 0.03 * 13.8);
}

// What the run summary prints for a scenario's checkpoint (scenario::checkpoint_io, as `trainsim run`; the data
// pipeline's reads, a few MB/s beside terabytes per second of storage, are left out).
CheckpointIo scenario_checkpoint(const std::string& file, const std::vector<scenario::Override>& overrides = {}) {
  const scenario::Scenario s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + file, overrides);
  const auto plan = execution::build_step_plan(std::get<execution::StepInputs>(scenario::step_setup(s)));
  return scenario::checkpoint_io(s, plan.layout, 0.0);
}

// The nearest published figure: its relative difference, and which it is.
template <std::size_t N>
double nearest(double predicted, const std::array<MlperfCheckpoint, N>& runs, double MlperfCheckpoint::*field,
               const char** system) {
  double best = INFINITY;
  for (const MlperfCheckpoint& r : runs) {
    const double error = predicted / (r.*field) - 1;
    if (std::abs(error) < std::abs(best)) {
      best = error;
      *system = r.system;
    }
  }
  return best;
}

TEST(CheckpointIoValidation, DefaultScenarios70BCheckpointAgainstMlperfStorage) {
  // The default scenario (Llama 3 70B on 1,024 H100s) with the default storage rates, which come from
  // ByteCheckpoint's 405B figures (checkpoint_io.hpp): an out-of-sample prediction for a 70B checkpoint. Published
  // 70B saves span 8.6-46.8 s and loads 7.4-26.7 s with the storage; the acceptance (issue 19) is 25% of one of them.
  const CheckpointIo io = scenario_checkpoint("scenarios/default.json");
  const char* save_system = "";
  const char* load_system = "";
  const double save = nearest(io.write.time.seconds(), kMlperf70B, &MlperfCheckpoint::save_s, &save_system);
  const double load = nearest(io.load.time.seconds(), kMlperf70B, &MlperfCheckpoint::load_s, &load_system);
  std::printf("[ckpt] default 70B: write %.1f s (%+.0f%% vs %s), load %.1f s (%+.0f%% vs %s)\n",
              io.write.time.seconds(), 100 * save, save_system, io.load.time.seconds(), 100 * load, load_system);
  EXPECT_LT(std::abs(save), 0.25);
  EXPECT_LT(std::abs(load), 0.25);
}

TEST(CheckpointIoValidation, Llama3405BExampleAgainstPublishedCheckpoints) {
  // scenarios/examples/llama3-405b-16384-h100.json: its write and load within 25% of ByteCheckpoint's 405B figures
  // (by construction: the default rates come from them), and where MLPerf's two 405B storage systems put it.
  const CheckpointIo io = scenario_checkpoint("scenarios/examples/llama3-405b-16384-h100.json");
  std::printf(
      "[ckpt] 405B example: write %.1f s (ByteCheckpoint 51.06; MLPerf %.1f-%.1f), load %.1f s (129.49; "
      "MLPerf %.1f-%.1f)\n",
      io.write.time.seconds(), kMlperf405B[1].save_s, kMlperf405B[0].save_s, io.load.time.seconds(),
      kMlperf405B[1].load_s, kMlperf405B[0].load_s);
  EXPECT_NEAR(io.write.time.seconds(), 51.06, 0.25 * 51.06);
  EXPECT_NEAR(io.load.time.seconds(), 129.49, 0.25 * 129.49);
}

// The busiest GPU's share of a checkpoint is what it holds of the weights and optimizer states, as the memory model
// counts them on the pipeline rank that holds the most: within 2%. Before 2026-12-07 the checkpoint took an even split
// of a replica: 5.24 GB for the default scenario, whose first stage holds 5.39 (a user trial). Mixture-of-experts
// layouts included: their expert weights spread over expert parallelism, which spans data-parallel ranks. Before, a
// replica was taken to hold every expert, and Qwen3-235B-A22B on 256 GB200s (PP 2, CP 2, EP 8) snapshotted 246 GB per
// GPU, more than its 186 GB of HBM, blocking 9.8 s instead of 1.9.
TEST(CheckpointIo, TheBusiestGpuSavesWhatItHoldsOfTheWeightsAndOptimizer) {
  const std::vector<scenario::Override> qwen3_gb200 = {{"model", "\"qwen3-235b-a22b\""},
                                                       {"hardware", "\"gb200-nvl72\""},
                                                       {"cluster.gpus", "256"},
                                                       {"cluster.gpus_per_node", "4"},
                                                       {"parallel.tp", "1"},
                                                       {"parallel.pp", "2"},
                                                       {"parallel.vpp", "47"},
                                                       {"parallel.cp", "2"},
                                                       {"parallel.ep", "8"},
                                                       {"parallel.dp", "64"},
                                                       {"parallel.distributed_optimizer", "true"},
                                                       {"parallel.recompute", "\"selective\""},
                                                       {"parallel.global_batch", "1024"},
                                                       {"training.seq_len", "4096"}};
  const std::vector<std::pair<std::string, std::vector<scenario::Override>>> cases = {
      {"scenarios/default.json", {}},
      {"scenarios/examples/llama3-405b-16384-h100.json", {}},
      {"scenarios/examples/mixtral-8x7b-256-h100.json", {}},
      {"scenarios/validation/deepseek_v3_256_gb200_mxfp8.json", {}},
      // DualPipeV with the embedding's rank holding dense layers: the busiest rank by bytes, not by parameters (a
      // review found 12.5 GB counted against 7.6 GB held).
      {"scenarios/validation/deepseek_v3_2048_h800_dualpipev.json", {}},
      {"scenarios/validation/deepseek_v2_2048_h800.json", {}},
      {"scenarios/default.json", qwen3_gb200},
      // Hybrid sharding: the optimizer sharded over groups of 8 of the 32 data-parallel ranks.
      {"scenarios/default.json", {{"parallel.dp_shard", "8"}}},
      // Pure 16-bit training under ZeRO-1: the weights whole in each replica, as the GPUs hold them (a user trial
      // found them counted sharded over data parallelism: 0.41 GB per GPU against 4.7 GB held).
      {"scenarios/default.json", {{"training.master_weights", "\"none\""}}},
      // PyTorch FSDP (training.master_weights "params"): the fp32 shards and Adam's moments, 4 + 8 bytes.
      {"scenarios/default.json",
       {{"training.master_weights", "\"params\""},
        {"parallel.pp", "1"},
        {"parallel.dp", "128"},
        {"parallel.zero_stage", "3"},
        {"parallel.global_batch", "128"}}}};
  for (const auto& [file, overrides] : cases) {
    const scenario::Scenario s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + file, overrides);
    const auto in = std::get<execution::StepInputs>(scenario::step_setup(s));
    // The busiest GPU: the pipeline rank holding the most weight and optimizer bytes.
    double held = 0;
    for (int r = 0; r < in.layout.pp; ++r) {
      const auto m = parallel::memory_per_gpu(s.model, in.layout, s.parallel, s.training.seq_len, r, s.memory);
      held = std::max(held, static_cast<double>(m.params.n + m.optimizer.n));
    }
    const double saved = static_cast<double>(scenario_checkpoint(file, overrides).per_gpu_max.n);
    EXPECT_NEAR(saved / held, 1.0, 0.02) << file << ": checkpoint share " << saved / 1e9 << " GB, held " << held / 1e9;
  }
}

}  // namespace
}  // namespace sim::reliability
