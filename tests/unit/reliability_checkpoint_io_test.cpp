// Checkpoint bytes and bandwidth (sim/reliability/checkpoint_io): the closed forms, and published checkpoint times
// reproduced from bytes and a bandwidth (shared/validation/reliability_public.json: checkpoint_systems).
#include "sim/reliability/checkpoint_io.hpp"

#include <gtest/gtest.h>

#include <cstdio>

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

}  // namespace
}  // namespace sim::reliability
