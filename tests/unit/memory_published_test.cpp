// tests/unit/memory_published_test.cpp: predicted peak memory per GPU against published peak-memory figures, and
// published out-of-memory reports that must stay refused (issue 16). Each scenario in scenarios/validation/memory/
// names its source and settings in its description; the figures and their citations are in the tables below, the
// comparison and what explains the gap in docs/memory-validation.md.
#include "sim/parallel/memory.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/step_setup.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <variant>

namespace {

/// The scenario's peak memory per GPU (GiB) and its capacity, or -1 if its layout is infeasible.
sim::results::MemoryGib predicted(const std::string& file) {
  const auto s =
      sim::scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/memory/" + file);
  const sim::parallel::ClusterShape shape{s.cluster.gpus, s.cluster.gpus_per_node,
                                          std::max(s.hardware.nvlink.domain, s.cluster.gpus_per_node)};
  auto layout = sim::parallel::resolve_layout(s.model, shape, s.parallel, s.training.seq_len);
  if (auto* bad = std::get_if<std::vector<sim::parallel::Infeasible>>(&layout)) {
    ADD_FAILURE() << file << ": " << bad->front().rule << ": " << bad->front().reason;
    return {};
  }
  return sim::scenario::memory_gib(s, std::get<sim::parallel::Layout>(layout));
}

struct Published {
  const char* file;
  double gib;  // published peak memory per GPU
};

// PyTorch torchtitan benchmark report, docs/performance.md (runs of 2024-12 at torchtitan commit 9dec370, Grand Teton
// H100 96GB HBM2e at 500 W), https://github.com/pytorch/torchtitan/blob/main/docs/performance.md, Tables 1 to 6: the
// maximum over GPUs of torch.cuda.max_memory_reserved. Tables 1 and 3 (8B on 8 and 128 GPUs, eager, compiled and
// Float8) were added on 2026-12-06 from a user trial.
constexpr Published kPublished[] = {
    {"torchtitan_t1_8b_fsdp8.json", 82.4},
    {"torchtitan_t1_8b_fsdp8_compile.json", 77.0},
    {"torchtitan_t1_8b_fsdp8_compile_float8.json", 76.8},
    {"torchtitan_t3_8b_fsdp128.json", 67.0},
    {"torchtitan_t3_8b_fsdp128_compile.json", 62.0},
    {"torchtitan_t3_8b_fsdp128_compile_float8.json", 61.8},
    {"torchtitan_t2_8b_fsdp8_cp1.json", 83.9},
    {"torchtitan_t2_8b_fsdp4_cp2.json", 84.2},
    {"torchtitan_t2_8b_fsdp2_cp4.json", 84.0},
    {"torchtitan_t2_8b_fsdp1_cp8.json", 84.5},
    {"torchtitan_t4_70b_2d.json", 71.9},
    {"torchtitan_t4_70b_2d_asynctp.json", 67.6},
    {"torchtitan_t5_405b_1f1b.json", 82.5},
    {"torchtitan_t5_405b_interleaved.json", 72.7},
    {"torchtitan_t6_405b_fsdp8_cp1.json", 75.3},
    {"torchtitan_t6_405b_fsdp4_cp2.json", 75.9},
    {"torchtitan_t6_405b_fsdp2_cp4.json", 77.1},
    {"torchtitan_t6_405b_fsdp1_cp8.json", 84.9},
    // torchtitan pull request 1690 (2025-09-08), Qwen3-32B on H100 96GB: the runs its description logs (added
    // 2026-12-06 from a user trial; 5.5-6.1% above, where the Llama tables above are mostly below).
    {"torchtitan_qwen3_32b_fsdp8_lbs2_compile.json", 81.85},
    {"torchtitan_qwen3_32b_fsdp4_tp8_lbs16.json", 43.45},
    {"torchtitan_qwen3_32b_fsdp4_tp8_lbs32.json", 70.79},
    {"torchtitan_qwen3_32b_fsdp8_tp8_lbs32.json", 63.27},
};

TEST(PublishedMemory, TorchtitanTablesAreNotOverestimated) {
  // What is asserted: no published run is predicted above its measured peak by more than 10% (so none that ran is
  // refused). The prediction is below most torchtitan figures by more than 10%: torchtitan reports the caching
  // allocator's reserved memory and keeps tensors trainsim does not count (docs/memory-validation.md).
  std::printf("%-40s %10s %10s %8s\n", "run", "published", "predicted", "error");
  int within = 0;
  for (const auto& p : kPublished) {
    const auto m = predicted(p.file);
    const double err = m.total / p.gib - 1.0;
    within += std::fabs(err) <= 0.10 ? 1 : 0;
    std::printf("%-40s %10.1f %10.1f %+7.1f%%  (params %.1f grads %.1f optimizer %.1f activations %.1f buffers %.1f)\n",
                p.file, p.gib, m.total, 100 * err, m.params, m.grads, m.optimizer, m.activations, m.buffers);
    EXPECT_LE(err, 0.10) << p.file << ": published " << p.gib << " GiB, predicted " << m.total;
    EXPECT_LE(m.total, m.capacity) << p.file << " ran";
  }
  std::printf("%d of %zu within 10%%\n", within, std::size(kPublished));
  // Ratchet: 8 of 12 since context parallelism by all-gather holds the whole sequence's keys and values (T6's CP 2
  // and CP 4 rows), 14 of 18 with Tables 1 and 3 (2026-12-06: compiled and Float8 within 3%, eager 9% low), 18 of 22
  // with pull request 1690's Qwen3-32B runs; the 405B pipeline rows below 10% are in docs/memory-validation.md.
  EXPECT_GE(within, 18);
}

struct NemoLog {
  const char* file;
  double peak_bytes;       // peak_memory_usage: torch.cuda.max_memory_reserved, rank 0
  double allocated_bytes;  // memory_allocated after the forward-backward: what stays between steps
};

// NVIDIA dgxc-benchmarking (release v25.04, NeMo 25.02.01): the example training logs of its READMEs. NeMo's
// MegatronStrategy.training_step logs torch.cuda.max_memory_reserved() as peak_memory_usage and
// torch.cuda.memory_allocated() as memory_allocated. Megatron-Core / NeMo sources beside torchtitan's tables.
constexpr NemoLog kNemoLogs[] = {
    // nemotron/README.md at dc1028f6: Nemotron4 15B BF16 on 64 H100 80GB.
    {"dgxc_nemotron4_15b_64h100_bf16.json", 72972500992.0, 34466545664.0},
    // llama3.1/README.md at 741c886: Llama 3.1 8B on 8 H100 80GB, labelled FP8 but timed as the BF16 run: both
    // readings.
    {"dgxc_llama31_8b_8h100_log_fp8.json", 70833405952.0, 44271689728.0},
    {"dgxc_llama31_8b_8h100_log_bf16.json", 70833405952.0, 44271689728.0},
};

TEST(PublishedMemory, NemoLogsOfDgxCloudRecipes) {
  constexpr double kGib = 1024.0 * 1024 * 1024;
  for (const auto& log : kNemoLogs) {
    const auto m = predicted(log.file);
    const double peak = log.peak_bytes / kGib, allocated = log.allocated_bytes / kGib;
    const double persistent = m.params + m.grads + m.optimizer;
    std::printf(
        "%-40s peak published %.2f predicted %.2f GiB (%+.1f%%); between steps published %.2f predicted "
        "%.2f GiB (%+.1f%%)\n",
        log.file, peak, m.total, 100 * (m.total / peak - 1), allocated, persistent, 100 * (persistent / allocated - 1));
    // Weights, bf16 gradients and the sharded optimizer are exact counts: within 2% of what stays allocated.
    EXPECT_NEAR(persistent / allocated, 1.0, 0.02) << log.file;
    // The peak: within 10%, the bar (the published figure is the caching allocator's reserved memory).
    EXPECT_NEAR(m.total / peak, 1.0, 0.10) << log.file;
  }
}

struct OutOfMemory {
  const char* file;
  const char* source;
};

constexpr OutOfMemory kOutOfMemory[] = {
    {"oom_torchtitan_llama2_70b_64a100_lbs2_sac.json",
     "torchtitan docs/performance.md (Llama 2 table, 64 A100 80GB, FSDP2), footnote 1: 'the 70B training with local "
     "batch size 2 will cause an OOM error when selective activation checkpointing is used'"},
    {"oom_torchtitan_405b_128h100_fsdp.json",
     "torchtitan docs/performance.md (Llama 3.1 405B on 128 H100): 'We do see OOM for 1D parallelism (FSDP2), so we "
     "only tested 2D parallelism (FSDP2 + Tensor Parallel)' (local batch 2, full activation checkpointing)"},
    {"oom_korthikanti22_175B_tp_no_recompute.json",
     "Korthikanti et al. 2022 (arXiv:2205.05198), Figure 7: tensor parallelism alone without recomputation exceeds "
     "the A100's 80 GB for the 175B Table 3 configuration"},
    {"oom_korthikanti22_530B_tp_no_recompute.json",
     "Korthikanti et al. 2022 (arXiv:2205.05198), Figure 7: the same for the 530B Table 3 configuration"},
    {"oom_torchtitan_qwen3_32b_fsdp4_tp8_lbs64.json",
     "torchtitan pull request 1690: Qwen3-32B on 32 H100 96GB, FSDP 4 x TP 8, full activation checkpointing, local "
     "batch 64: 'Full AC,OOM' (local batch 32 ran at 70.79 GiB)"},
    {"oom_torchtitan_deepseek16b_8b200_lbs8.json",
     "torchtitan pull request 1993: DeepSeek-V3 16B on 8 B200, FSDP, no activation checkpointing: 'local batch size "
     "of 8 creates OOM' (local batch 6 ran: ADeepSeek16bRunThatRanFits)"},
};

TEST(PublishedMemory, ADeepSeek16bRunThatRanFits) {
  // torchtitan pull request 1993 ran DeepSeek-V3 16B on 8 B200 at local batch 6; its local batch 8 ran out of memory
  // (ReportedOutOfMemoryStaysRefused: 181.4 of 179.1 GiB once the loss holds 12 B per logit, training.cross_entropy
  // "upcast"; at 4 B it was 158.1 and fitted).
  const auto m = predicted("torchtitan_deepseek16b_8b200_lbs6.json");
  std::printf("torchtitan_deepseek16b_8b200_lbs6.json predicted %.1f of %.1f GiB\n", m.total, m.capacity);
  EXPECT_LE(m.total, m.capacity);
}

TEST(PublishedMemory, ReportedOutOfMemoryStaysRefused) {
  for (const auto& o : kOutOfMemory) {
    const auto m = predicted(o.file);
    std::printf("%-48s predicted %.1f of %.1f GiB\n", o.file, m.total, m.capacity);
    EXPECT_GT(m.total, m.capacity) << o.file << " ran out of memory (" << o.source << ")";
  }
}

}  // namespace
