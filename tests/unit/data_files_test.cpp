// The built-in data: every model and hardware profile loads strictly, parameter counts match the published ones,
// and every hardware number has a provenance entry.
#include "sim/base/json_reader.hpp"
#include "sim/hardware/profile.hpp"
#include "sim/base/builtin.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/params.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace sim {
namespace {

TEST(BuiltinData, HasTheNamesTheContractPromises) {
  const auto models = base::builtin_names("models");
  for (const char* m :
       {"gpt3-175b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b", "mixtral-8x22b"})
    EXPECT_NE(std::find(models.begin(), models.end(), m), models.end()) << m;
  const auto hw = base::builtin_names("hardware_profiles");
  for (const char* h : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "h800-sxm5-80gb", "h200-sxm-141gb",
                        "b200-sxm-180gb", "gb200-nvl72"})
    EXPECT_NE(std::find(hw.begin(), hw.end(), h), hw.end()) << h;
}

TEST(BuiltinData, EveryModelLoadsAndItsNameIsItsFileName) {
  for (const auto& name : base::builtin_names("models")) {
    auto m = scenario::load_model(name);
    EXPECT_EQ(m.name, name);
    EXPECT_FALSE(m.provenance.empty()) << name << " has no provenance";
  }
}

struct PublishedCount {
  const char* model;
  double total;
  double active;  // 0 when dense
};

TEST(ParamCounts, MatchPublishedFigures) {
  // Issue 3's targets: GPT-3 174.6B (Brown et al. 2020), Llama 3 70B 70.6B and 405B 405.9B (Meta model cards),
  // Mixtral 8x7B 46.7B total / 12.9B active (Jiang et al. 2024).
  for (auto [model, total, active] :
       {PublishedCount{"gpt3-175b", 174.6e9, 0}, PublishedCount{"llama3-70b", 70.6e9, 0},
        PublishedCount{"llama3-405b", 405.9e9, 0}, PublishedCount{"mixtral-8x7b", 46.7e9, 12.9e9}}) {
    auto m = scenario::load_model(model);
    auto p = workload::count_params(m);
    EXPECT_NEAR(p.total(m.layers) / total, 1.0, 0.002) << model << ": counted " << p.total(m.layers);
    if (active > 0) {
      EXPECT_NEAR(p.active(m.layers) / active, 1.0, 0.005) << model << " active";
    }
  }
}

TEST(ParamCounts, EveryModelAgreesWithItsOwnPublishedCount) {
  for (const auto& name : base::builtin_names("models")) {
    auto m = scenario::load_model(name);
    ASSERT_TRUE(m.published_params) << name;
    auto p = workload::count_params(m);
    EXPECT_NEAR(p.total(m.layers) / m.published_params->n, 1.0, 0.01) << name;
    if (m.published_active_params) {
      EXPECT_NEAR(p.active(m.layers) / m.published_active_params->n, 1.0, 0.01) << name;
    }
  }
}

TEST(ParamCounts, Gpt3FollowsNarayananClosedForm) {
  // Narayanan et al. SC21 Sec. 3: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)), biases and tied embeddings.
  auto m = scenario::load_model("gpt3-175b");
  const double l = m.layers, h = m.hidden, V = m.vocab, s = m.max_seq_len;
  const double closed = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  const double counted = workload::count_params(m).total(m.layers) - 2 * h;  // the closed form omits the final norm
  EXPECT_DOUBLE_EQ(counted, closed);
}

TEST(BuiltinData, EveryHardwareNumberHasProvenance) {
  for (const auto& name : base::builtin_names("hardware_profiles")) {
    auto text = base::builtin_text("hardware_profiles/" + name + ".json");
    ASSERT_TRUE(text);
    auto doc = base::JsonDocument::parse_text(*text, name);
    base::Diagnostics diag(name);
    auto r = doc.root(diag);
    auto profile = hardware::HardwareProfile::parse(r);
    ASSERT_TRUE(diag.empty()) << diag.items().front().to_string();
    EXPECT_EQ(profile.name, name);
    const auto gaps = hardware::provenance_gaps(r.leaf_paths(), profile.provenance);
    EXPECT_TRUE(gaps.empty()) << name << ": no provenance for " << gaps.front();
    EXPECT_TRUE(profile.gpu.peak_for(hardware::Dtype::Bf16)) << name;
    EXPECT_FALSE(profile.failures.empty()) << name << " has no default failure rates";
  }
}

TEST(Provenance, AnAncestorKeyCoversItsFields) {
  std::map<std::string, std::string> prov{{"gpu.peak", "datasheet"}, {"nvlink", "spec"}};
  auto gaps = hardware::provenance_gaps({"gpu.peak.bf16", "nvlink.domain", "gpu.hbm", "gpu.peakish"}, prov);
  EXPECT_EQ(gaps, (std::vector<std::string>{"gpu.hbm", "gpu.peakish"}));
}

TEST(BuiltinData, EmbeddedCopiesMatchTheRepositoryFiles) {
  for (const auto& f : base::builtin_files()) {
    const auto path = std::filesystem::path(TRAINSIM_SOURCE_DIR) / std::string(f.path);
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_EQ(std::filesystem::file_size(path), f.text.size()) << f.path << ": rebuild to refresh the built-in copy";
  }
}

}  // namespace
}  // namespace sim
