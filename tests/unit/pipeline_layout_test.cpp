// Megatron-LM's --pipeline-model-parallel-layout (parallel.pipeline_layout, sim/parallel/pipeline_layout.hpp): the
// strings Megatron's parser unrolls, the ones it refuses, what a scenario and an import make of one, and a stage that
// holds only the embedding or the loss.
#include "sim/parallel/pipeline_layout.hpp"
#include "tests/support/step.hpp"

#include "sim/base/errors.hpp"
#include "sim/importers/importers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace sim::parallel {
namespace {

PipelineLayout ok(const std::string& text) {
  const auto r = parse_pipeline_layout(text);
  if (const auto* why = std::get_if<std::string>(&r)) {
    ADD_FAILURE() << text << ": " << *why;
    return {};
  }
  return std::get<PipelineLayout>(r);
}

std::string refused(const std::string& text) {
  const auto r = parse_pipeline_layout(text);
  if (std::holds_alternative<std::string>(r)) return std::get<std::string>(r);
  ADD_FAILURE() << text << " was accepted";
  return {};
}

TEST(PipelineLayout, UnrollsGroupsAndRepeatsAsMegatronDoes) {
  // The NVIDIA GB200 write-up's DeepSeek-V3 layout (PP 8 x VPP 4): embedding and one layer, 30 stages of two, the loss.
  auto l = ok("Et|(tt|)*30L");
  ASSERT_EQ(l.layers.size(), 32u);
  EXPECT_EQ(l.layers.front(), 1);
  EXPECT_EQ(l.layers[1], 2);
  EXPECT_EQ(l.layers.back(), 0);
  EXPECT_EQ(l.mtp, 0);
  // The Megatron-MoE-ModelZoo's, with the MTP layer beside the loss.
  l = ok("Et|(tt|)*30mL");
  EXPECT_EQ(l.layers.size(), 32u);
  EXPECT_EQ(l.mtp, 1);
  // x*n, commas, a repeat inside a group (groups unroll first, then characters), an empty stage.
  EXPECT_EQ(ok("Et*3|t*4,|(t*2|)*2tL").layers, (std::vector<int>{3, 4, 2, 2, 1}));
  EXPECT_EQ(ok("E||tttL").layers, (std::vector<int>{0, 0, 3}));
}

TEST(PipelineLayout, RefusesWhatMegatronRefusesWithWhereAndWhat) {
  EXPECT_NE(refused("Et|tx|L").find("'x' at position 5 of the unrolled layout is not a layer character"),
            std::string::npos);
  EXPECT_NE(refused("Et|(tt|)3L").find("the group at position 4 is not followed by \"*n\""), std::string::npos);
  EXPECT_NE(refused("Et|(t(t|)*2)*2L").find("nested parentheses"), std::string::npos);
  EXPECT_NE(refused("Et|(tt|L").find("never closed"), std::string::npos);
  EXPECT_NE(refused("tE|tL").find("the embedding 'E' must be the layout's first layer"), std::string::npos);
  EXPECT_NE(refused("Et|Lt").find("the loss 'L' must be the layout's last layer"), std::string::npos);
  EXPECT_NE(refused("Et|t").find("exactly once each (it has 1 and 0)"), std::string::npos);
  EXPECT_NE(refused("Et|mtL").find("'t' after an MTP layer"), std::string::npos);
  EXPECT_NE(refused("Ettt|(tt|)*29,m|L").find("MTP layers 'm' on a stage of their own (stage 30)"), std::string::npos)
      << "Megatron's own docstring example: a standalone MTP stage, not modelled";
  EXPECT_NE(refused("Et*|L").find("'*' at position 3 is not followed by a count"), std::string::npos);
  // Hostile repeats are bounded, not unrolled into memory.
  EXPECT_NE(refused("E(t)*999999|L").find("unrolls to more than"), std::string::npos);
  EXPECT_NE(refused("E(t)*99999999999|L").find("is above"), std::string::npos);
  EXPECT_NE(refused("E((t)*999|)*999|L").find("nested"), std::string::npos);
}

TEST(PipelineLayout, ItsTextReadsBackToTheSameStages) {
  for (const auto& [layers, mtp] : std::vector<std::pair<std::vector<int>, int>>{{{1, 2, 2, 0}, 0},
                                                                                 {{9, 10, 11}, 1},
                                                                                 {{0, 4, 3, 0}, 2},
                                                                                 {{61}, 0},
                                                                                 {{1, 2, 2, 2, 2, 1}, 1},
                                                                                 {{0, 1, 1, 1, 0}, 0},
                                                                                 {{3, 3, 3, 3}, 0},
                                                                                 {{2, 2, 2, 3}, 0},
                                                                                 {{1, 2, 3, 3, 3, 2, 1}, 0},
                                                                                 {{0, 0, 0, 0, 0}, 0},
                                                                                 {{7, 8, 8, 8, 8, 7}, 1}}) {
    const std::string text = pipeline_layout_text(layers, mtp);
    const auto back = ok(text);
    EXPECT_EQ(back.layers, layers) << text;
    EXPECT_EQ(back.mtp, mtp) << text;
  }
  EXPECT_EQ(pipeline_layout_text({1, 2, 2, 0}, 0), "Et|tt|tt|L");
  EXPECT_EQ(pipeline_layout_text({9, 10}, 1), "Et*9|t*10mL");
  // Alike stages in a row as Megatron-LM's repetition: Llama 3 405B's 128 one-layer stages, DeepSeek-V3's layout.
  std::vector<int> llama(128, 1);
  llama.front() = llama.back() = 0;
  EXPECT_EQ(pipeline_layout_text(llama, 0), "E|(t|)*126L");
  std::vector<int> deepseek(32, 2);
  deepseek.front() = 1;
  deepseek.back() = 0;
  EXPECT_EQ(pipeline_layout_text(deepseek, 1), "Et|(tt|)*30mL");
  EXPECT_EQ(pipeline_layout_text({3, 3, 3, 3}, 0), "Ettt|ttt|ttt|tttL");  // two alike: written out
  EXPECT_EQ(pipeline_layout_text({3, 3, 3, 3, 3}, 0), "Ettt|(ttt|)*3tttL");
}

TEST(PipelineLayout, AScenarioTakesItsStagesAndVirtualStagesFromIt) {
  // Llama 3 70B (80 layers) on pp 4 of the default scenario: the layout sets vpp 2 and the interleaved schedule, the
  // first stage the embedding with 9 layers, the last the loss with 11.
  const auto s = support::load_step("scenarios/default.json",
                                    {{"parallel.vpp", "2"}, {"parallel.pipeline_layout", "\"Et*9|(t*10|)*6t*11L\""}});
  EXPECT_EQ(s.plan.layout.vpp, 2);
  EXPECT_EQ(s.plan.schedule, Schedule::Interleaved);
  EXPECT_EQ(s.plan.layout.layers_per_stage, (std::vector<int>{9, 10, 10, 10, 10, 10, 10, 11}));
  EXPECT_EQ(s.plan.stage(0, 0).layers, 9);
  // Without vpp the layout's 8 stages over pp 4 give vpp 2 (the default scenario's "vpp": 1 disagrees: refused).
  try {
    support::load_step("scenarios/default.json", {{"parallel.pipeline_layout", "\"Et*9|(t*10|)*6t*11L\""}});
    ADD_FAILURE() << "a layout of 8 stages with pp 4 and vpp 1 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/parallel/pipeline_layout"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 8 stages but pp x vpp = 4 x 1"), std::string::npos) << e.what();
  }
  // A loss-only last stage: the output layer's work and no transformer layer.
  const auto loss_alone = support::load_step(
      "scenarios/default.json", {{"parallel.vpp", "2"}, {"parallel.pipeline_layout", "\"Et*11|(t*12|)*5t*9|L\""}});
  EXPECT_EQ(loss_alone.plan.layout.layers_per_stage.back(), 0);
  EXPECT_GT(loss_alone.plan.stage(1, 3).forward.total(), base::Time::zero()) << "the output layer runs there";
  const auto r = support::run_step(loss_alone, execution::Fidelity::Replica);
  EXPECT_GT(r.step_time, base::Time::zero());
  EXPECT_EQ(r.breakdown.sum(), r.step_time);
}

TEST(PipelineLayout, TheMegatronImporterReadsTheFlag) {
  const auto im = importers::import_megatron_text(
      "torchrun --nproc_per_node=8 --nnodes 32 train.py --pipeline-model-parallel-size 8 "
      "--pipeline-model-parallel-layout \"Et|(tt|)*30mL\" --num-layers 61 --hidden-size 7168 "
      "--num-attention-heads 128\n",
      "launch.sh");
  const auto* f = im.draft.find("parallel.pipeline_layout");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(std::get<std::string>(f->value), "Et|(tt|)*30mL");
}

}  // namespace
}  // namespace sim::parallel
