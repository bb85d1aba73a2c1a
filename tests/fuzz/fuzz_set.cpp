// tests/fuzz/fuzz_set.cpp: libFuzzer target for `--set KEY=VALUE` (issue 22: a 50,000-segment key and a 35,000-deep
// value overflowed the stack before the depth limit). Each line of the input is one override, applied to the built-in
// default scenario as trainsim applies them: Override::parse, the document edit, then the strict load. An accepted
// set must load into a scenario with a cluster and a parallel layout, and its canonical text must read back.
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  std::string_view text = fuzz::as_text(data, size);
  std::vector<scenario::Override> overrides;
  try {
    while (!text.empty() && overrides.size() < 64) {
      const auto end = text.find('\n');
      overrides.push_back(scenario::Override::parse(text.substr(0, end)));
      text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    const std::string canonical = scenario::canonical_text("", overrides);
    (void)base::JsonDocument::parse_text(canonical, "canonical");
    const scenario::Scenario s = scenario::load_default_scenario(overrides);
    fuzz::require(s.cluster.gpus > 0 && s.cluster.gpus_per_node > 0, "a cluster");
    fuzz::require(s.parallel.tp > 0 && s.parallel.pp > 0 && s.parallel.global_batch > 0, "a parallel layout");
    fuzz::require(s.training.seq_len > 0, "a sequence length");
  } catch (const base::ConfigError&) {
    // the defined outcome for a bad override
  }
  return 0;
}
