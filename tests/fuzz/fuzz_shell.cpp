// tests/fuzz/fuzz_shell.cpp: libFuzzer target for the launch-script reader (sim/importers/shell.hpp) on its own:
// any text is read or refused with a ConfigError, within the reader's limits on memory and nesting, and what it
// reads keeps its invariants (every command has words, every word a line inside the text, no marker of unknown
// text left in a word).
#include "sim/base/errors.hpp"
#include "sim/importers/shell.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <algorithm>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  const std::string_view text = fuzz::as_text(data, size);
  try {
    // Read as run with two arguments and one environment variable too (trainsim import --args / --env), by the
    // input's first byte: their values have no line of their own and take the line that uses them.
    importers::ShellInvocation inv;
    if (size > 0 && data[0] % 2 == 1) {
      inv.args = std::vector<std::string>{"8", "a b"};
      inv.env = {{"NNODES", "4"}};
    }
    const auto script = importers::read_shell(text, "fuzz.sh", {}, inv);
    const auto lines = 1 + std::count(text.begin(), text.end(), '\n');
    std::size_t total = 0;
    for (const auto& c : script.commands) {
      fuzz::require(!c.words.empty(), "a command without words");
      for (const auto& w : c.words) {
        fuzz::require(w.line >= 1 && w.line <= lines, "a word's line outside the text");
        fuzz::require(w.text.find('\x01') == std::string::npos, "an unknown-text marker left in a word");
        total += w.text.size();
      }
    }
    fuzz::require(total <= importers::kShellMaxTotal, "more expanded text than the reader's limit");
  } catch (const base::ConfigError&) {
    // the defined outcome for bad input
  }
  return 0;
}
