// The Megatron importer's token dropping: --moe-expert-capacity-factor and --moe-pad-expert-input-to-capacity become
// training.moe_capacity_factor and training.moe_pad_to_capacity; padding without a factor is refused, naming the file.
#include "sim/base/errors.hpp"
#include "sim/importers/importers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace sim {
namespace {

importers::Import import_flags(const std::string& flags, bool moe = true) {
  return importers::import_megatron_text(
      "torchrun --nproc_per_node=8 --nnodes 4 train.py --expert-model-parallel-size 8 --num-layers 32 "
      "--hidden-size 4096 --num-attention-heads 32 " +
          std::string(moe ? "--num-experts 8 --moe-router-topk 2 " : "") + flags + "\n",
      "launch.sh");
}

TEST(ImportMegatron, TokenDroppingFlags) {
  const auto dropless = import_flags("");
  EXPECT_EQ(dropless.draft.find("training.moe_capacity_factor"), nullptr) << "Megatron-Core's default: dropless";
  const auto dropping = import_flags("--moe-expert-capacity-factor 1.25");
  ASSERT_NE(dropping.draft.find("training.moe_capacity_factor"), nullptr);
  EXPECT_DOUBLE_EQ(std::get<double>(dropping.draft.find("training.moe_capacity_factor")->value), 1.25);
  EXPECT_EQ(dropping.draft.find("training.moe_pad_to_capacity"), nullptr);
  const auto padded = import_flags("--moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity");
  ASSERT_NE(padded.draft.find("training.moe_pad_to_capacity"), nullptr);
  EXPECT_TRUE(std::get<bool>(padded.draft.find("training.moe_pad_to_capacity")->value));
  EXPECT_EQ(import_flags("--moe-expert-capacity-factor 1.25", /*moe=*/false).draft.find("training.moe_capacity_factor"),
            nullptr)
      << "a dense model: noted, not written";
  for (const std::string bad :
       {"--moe-pad-expert-input-to-capacity", "--moe-expert-capacity-factor -1", "--moe-expert-capacity-factor None"}) {
    try {
      (void)import_flags(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const base::ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("launch.sh"), std::string::npos) << "names the file: " << what;
      EXPECT_NE(what.find("capacity"), std::string::npos) << what;
    }
  }
}

// --moe-router-force-load-balancing (the ModelZoo's benchmark recipes) is balanced routing, training.moe_imbalance 1:
// it was listed as "not modelled", and the imported scenario's step then said routing was taken as balanced.
TEST(ImportMegatron, ForcedLoadBalancingIsBalancedRouting) {
  const auto forced = import_flags("--moe-router-force-load-balancing");
  ASSERT_NE(forced.draft.find("training.moe_imbalance"), nullptr);
  EXPECT_DOUBLE_EQ(std::get<double>(forced.draft.find("training.moe_imbalance")->value), 1.0);
  for (const auto& f : forced.ignored)
    EXPECT_EQ(f.what.find("force-load-balancing"), std::string::npos) << f.to_string();
  EXPECT_EQ(import_flags("").draft.find("training.moe_imbalance"), nullptr) << "not stated: left to the default";
  EXPECT_EQ(import_flags("--moe-router-force-load-balancing", /*moe=*/false).draft.find("training.moe_imbalance"),
            nullptr)
      << "a dense model: noted, not written";
}

TEST(ImportMegatron, DispatchersTrainsimDoesNotTimeAreWarnings) {
  // Megatron-LM's --moe-token-dispatcher-type defaults to allgather; trainsim times all-to-all and DeepEP. Found by a
  // user trial: the flag was "ignored" and a script without it was timed as all-to-all without a word.
  auto warned = [](const importers::Import& im) {
    for (const auto& f : im.not_modelled)
      if (f.what.find("dispatch") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(warned(import_flags("")));
  EXPECT_TRUE(warned(import_flags("--moe-token-dispatcher-type allgather")));
  EXPECT_FALSE(warned(import_flags("--moe-token-dispatcher-type alltoall")));
  EXPECT_FALSE(warned(import_flags("--moe-token-dispatcher-type flex --moe-enable-deepep")));
  EXPECT_FALSE(warned(import_flags("", false))) << "a dense model dispatches nothing";
}

}  // namespace
}  // namespace sim
