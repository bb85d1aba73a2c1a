// The published-record converter on records it was not written for (issue 17: trainsim is judged on runs from other
// sources, GPUs and models): a source it has no rules for gets the defaults of the framework the record names, every
// built-in SXM profile is found by its GPU's name, a file of runs dropped beside the shared ones is read, and a record
// that does not follow the schema is listed with what is wrong instead of stopping the others.
#include "tests/validation/evaluate.hpp"
#include "tests/validation/published_records.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

using nlohmann::json;

/// A real record of the shared files (the Megatron-LM README's 16B weak-scaling run), as JSON.
json megatron_readme_record() {
  for (const auto& text : validation::published_record_texts(validation::shared_validation_dir())) {
    json r = json::parse(text);
    if (r.at("id") == "mcore_h100_weak_16B_192gpu") return r;
  }
  ADD_FAILURE() << "mcore_h100_weak_16B_192gpu is not in the shared files";
  return json::object();
}

bool has_assumption(const validation::Record& r, const std::string& what) {
  for (const auto& a : r.assumptions)
    if (a.find(what) != std::string::npos) return true;
  return false;
}

TEST(PublishedRecordConverter, AnUnknownSourceGetsItsFrameworksDefaultsNotARefusal) {
  json r = megatron_readme_record();
  const auto known = validation::convert_record(r.dump());
  ASSERT_TRUE(known.refusal.empty()) << known.refusal;
  EXPECT_EQ(known.family, "megatron-readme");

  // The same run, published by a source the converter has no rules for, whose notes name Megatron-LM.
  r["source"]["paper"] = "Example Lab engineering blog (2026)";
  r["notes"] = "Trained with Megatron-LM on a rented cluster.";
  const auto megatron = validation::convert_record(r.dump());
  ASSERT_TRUE(megatron.refusal.empty()) << megatron.refusal;
  EXPECT_EQ(megatron.family, "other-megatron");
  EXPECT_TRUE(has_assumption(megatron, "source not known to the converter"));
  const auto sc = json::parse(megatron.scenario);
  EXPECT_EQ(sc.at("parallel").at("distributed_optimizer"), true) << "Megatron-Core / NeMo's default";
  EXPECT_EQ(sc.at("parallel").at("sequence_parallel"), true) << "TP 4 with Megatron-style defaults";
  const auto predicted = validation::evaluate(megatron);
  EXPECT_TRUE(predicted.predicted) << predicted.miss;

  // Naming FSDP instead: ZeRO-3 (FULL_SHARD) unless the record says otherwise.
  r["notes"] = "PyTorch FSDP, bf16 mixed precision.";
  const auto fsdp = validation::convert_record(r.dump());
  ASSERT_TRUE(fsdp.refusal.empty()) << fsdp.refusal;
  EXPECT_EQ(fsdp.family, "other-fsdp");
  EXPECT_EQ(json::parse(fsdp.scenario).at("parallel").at("zero_stage"), 3);

  // Naming no framework: only what the record states (no sharding, no sequence parallelism).
  r["notes"] = "";
  const auto bare = validation::convert_record(r.dump());
  ASSERT_TRUE(bare.refusal.empty()) << bare.refusal;
  EXPECT_EQ(bare.family, "other");
  EXPECT_EQ(json::parse(bare.scenario).at("parallel").at("zero_stage"), 0);
  EXPECT_EQ(json::parse(bare.scenario).at("parallel").at("sequence_parallel"), false);
}

TEST(PublishedRecordConverter, ParameterCountFlopConventionsGiveTheirStepTimes) {
  // 16B parameters, 192 sequences of 4,096 tokens on 192 GPUs at 100 TFLOP/s each: 6ND is
  // 6 x 16e9 x 786,432 / 1.92e16 = 3.93 s; PaLM's count adds 12 x 32 layers x 6,144 x 4,096 FLOPs per token.
  json r = megatron_readme_record();
  r["model"]["params_b"] = 16.0;
  r["measured"]["tflops_per_gpu"] = 100.0;
  r["measured"]["mfu"] = nullptr;
  const double tokens = 192.0 * 4096, six_nd = 6 * 16e9 * tokens / (192 * 100e12);
  for (const char* conv : {"6ND", "6 x N x D", "6*N*D", "6\u00b7N\u00b7D", "6ND (not Megatron's formula)"}) {
    r["flop_convention"] = conv;
    const auto c = validation::convert_record(r.dump());
    ASSERT_TRUE(c.refusal.empty()) << conv << ": " << c.refusal;
    EXPECT_NEAR(c.reference_step_s, six_nd, 1e-9 * six_nd) << conv;
  }
  r["flop_convention"] = "PaLM MFU (6N + 12LHQT) against the 989 TFLOP/s peak";  // not Llama 3's "989" reading
  const auto palm = validation::convert_record(r.dump());
  ASSERT_TRUE(palm.refusal.empty()) << palm.refusal;
  EXPECT_NEAR(palm.reference_step_s, six_nd + 12.0 * 32 * 6144 * 4096 * tokens / (192 * 100e12), 1e-6);
  // An MoE's 6ND needs its active parameters, which the records do not give; an unknown convention is refused.
  r["flop_convention"] = "6ND";
  r["model"]["moe"] = {{"num_experts", 8}, {"top_k", 2}};
  EXPECT_NE(validation::convert_record(r.dump()).refusal.find("model.params_b"), std::string::npos);
  r["model"]["moe"] = nullptr;
  r["flop_convention"] = "16ND";
  EXPECT_NE(validation::convert_record(r.dump()).refusal.find("unknown FLOP convention"), std::string::npos)
      << "16ND is not 6ND";
  r["flop_convention"] = "vendor's own count";
  EXPECT_NE(validation::convert_record(r.dump()).refusal.find("unknown FLOP convention"), std::string::npos);
}

TEST(PublishedRecordConverter, FindsEveryBuiltInSxmProfileByItsGpuAndRefusesOthers) {
  json r = megatron_readme_record();
  const std::pair<const char*, const char*> found[] = {
      {"A100-SXM4-40GB", "a100-sxm4-40gb"},
      {"A100-SXM4-80GB", "a100-sxm4-80gb"},
      {"H100-SXM5-80GB", "h100-sxm5-80gb"},
      {"H800 SXM5", "h800-sxm5-80gb"},
      {"H200-SXM-141GB", "h200-sxm-141gb"},
      {"B200-SXM-180GB", "b200-sxm-180gb"},
      {"GB200 NVL72", "gb200-nvl72"},
      {"GB300 (NVL72)", "gb300-nvl72"},
      {"H100 SXM5 80GB NVLink", "h100-sxm5-80gb"},
      {"A100 40G", "a100-sxm4-40gb"},
  };
  for (const auto& [gpu, profile] : found) {
    r["hardware"]["gpu"] = gpu;
    const auto c = validation::convert_record(r.dump());
    EXPECT_EQ(c.hardware, profile) << gpu << ": " << c.refusal;
  }
  // Boards with other clocks, power or links than any built-in profile: refused by name, never mapped to a neighbour.
  for (const char* gpu : {"H100 PCIe 80GB", "H100 NVL", "V100-SXM2-32GB", "MI300X"}) {
    r["hardware"]["gpu"] = gpu;
    const auto c = validation::convert_record(r.dump());
    EXPECT_NE(c.refusal.find(std::string("no built-in hardware profile for ") + gpu), std::string::npos)
        << gpu << " -> " << c.hardware;
  }
}

TEST(PublishedRecordConverter, ReadsEveryRecordFileBesideTheSharedOnesAndListsBadRecords) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("trainsim-records-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"published_runs.json", "published_runs_more.json"})
    fs::copy_file(fs::path(validation::shared_validation_dir()) / f, dir / f);
  const size_t shared = validation::load_published_records(dir.string()).size();

  json extra = json::array();
  json run = megatron_readme_record();
  run["id"] = "extra_run";
  extra.push_back(run);
  json bad = run;
  bad["id"] = "extra_run_without_model";
  bad.erase("model");
  extra.push_back(bad);
  std::ofstream(dir / "published_runs_zz_extra.json") << extra.dump();
  std::ofstream(dir / "notes.json") << "not records";  // not a published_runs*.json file: not read

  const auto records = validation::load_published_records(dir.string());
  ASSERT_EQ(records.size(), shared + 2);
  EXPECT_TRUE(records.front().core) << "published_runs.json comes first";
  EXPECT_EQ(records[shared].id, "extra_run");
  EXPECT_TRUE(records[shared].refusal.empty()) << records[shared].refusal;
  EXPECT_EQ(records[shared + 1].id, "extra_run_without_model");
  EXPECT_NE(records[shared + 1].refusal.find("does not follow the shared schema"), std::string::npos)
      << records[shared + 1].refusal;

  fs::remove(dir / "published_runs_more.json");
  EXPECT_THROW(validation::load_published_records(dir.string()), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
