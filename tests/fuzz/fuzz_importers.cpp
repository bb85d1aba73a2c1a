// tests/fuzz/fuzz_importers.cpp: libFuzzer target for every importer of `trainsim import`. The first byte picks it:
// Megatron-LM command lines and TorchTitan TOML from memory, DeepSpeed and Hugging Face JSON from a scratch file (their
// only entry points). A draft that comes out must render as scenario and model JSON that reads back as JSON.
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/importers/importers.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

/// A scratch file for the importers that only read files, in the working directory (run_fuzz.sh runs each target
/// in a temporary directory that it removes afterwards).
const std::string& scratch_path() {
  static const std::string path = "fuzz-import-" + std::to_string(::getpid()) + ".json";
  return path;
}

sim::importers::Import from_file(std::string_view text, bool deepspeed) {
  {
    std::ofstream out(scratch_path(), std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  return deepspeed ? sim::importers::import_deepspeed(scratch_path())
                   : sim::importers::import_hf_config(scratch_path());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  try {
    importers::Import im;
    switch (data[0] % 4) {
      case 0:
        im = importers::import_megatron_text(text, "fuzz.sh");
        break;
      case 1:
        im = importers::import_torchtitan_text(text, "fuzz.toml");
        break;
      case 2:
        im = from_file(text, true);
        break;
      default:
        im = from_file(text, false);
        break;
    }
    (void)importers::unsettled(im);
    (void)importers::missing_scenario_fields(im.draft);
    const std::string scenario = importers::scenario_json(im.draft).dump();
    const std::string model = importers::model_json(im.draft).dump();
    (void)base::JsonDocument::parse_text(scenario, "imported scenario");
    (void)base::JsonDocument::parse_text(model, "imported model");
  } catch (const base::ConfigError&) {
    // the defined outcome for bad input
  }
  return 0;
}
