// tests/unit/readme_examples_test.cpp: the scenario sections the README shows as examples load as they are written.
// Found by a user trial: the README's `cost` example (rented pricing beside an `owned` section) was refused by
// `validate` ("/cost/owned: is used only with \"pricing\": \"owned\"").
#include "sim/base/input_file.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

const std::string kSource = TRAINSIM_SOURCE_DIR;

/// The README's ```json blocks that are scenario sections ("key": {...}, ...), without elisions ("...").
std::vector<std::string> section_examples() {
  const std::string text = sim::base::read_input_file(kSource + "/README.md", "the README");
  std::vector<std::string> blocks;
  for (std::size_t at = text.find("```json\n"); at != std::string::npos; at = text.find("```json\n", at)) {
    const std::size_t begin = at + 8;
    const std::size_t end = text.find("```", begin);
    if (end == std::string::npos) break;
    const std::string block = text.substr(begin, end - begin);
    at = end + 3;
    if (block.starts_with("\"") && block.find("...") == std::string::npos) blocks.push_back(block);
  }
  return blocks;
}

void merge(nlohmann::json& into, const nlohmann::json& from) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    if (it->is_object() && into.contains(it.key()) && into[it.key()].is_object())
      merge(into[it.key()], *it);
    else
      into[it.key()] = *it;
  }
}

TEST(ReadmeExamples, EverySectionExampleLoadsIntoTheDefaultScenario) {
  const auto blocks = section_examples();
  ASSERT_GE(blocks.size(), 3u) << "cost, convergence and data, reliability";
  const auto base =
      nlohmann::json::parse(sim::base::read_input_file(kSource + "/scenarios/default.json", "a scenario file"));
  for (const auto& block : blocks) {
    const auto sections = nlohmann::json::parse("{" + block + "}", nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(sections.is_discarded()) << "not JSON once wrapped in braces:\n" << block;
    auto scenario = base;
    merge(scenario, sections);
    try {
      (void)sim::scenario::load_scenario_text(scenario.dump(), "README example", {});
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the README's example is refused: " << e.what() << "\n" << block;
    }
  }
}

}  // namespace
