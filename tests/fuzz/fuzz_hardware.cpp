// tests/fuzz/fuzz_hardware.cpp: libFuzzer target for the hardware profile loader (hardware_profiles/*.json, schema
// trainsim.hardware/1): strict parse, provenance coverage, and the peak rates an accepted profile reports.
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/hardware/profile.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  try {
    const auto doc = base::JsonDocument::parse_text(fuzz::as_text(data, size), "fuzz-hardware.json");
    base::Diagnostics diag(doc.origin());
    base::JsonReader root = doc.root(diag);
    const auto leaves = root.leaf_paths();
    const hardware::HardwareProfile h = hardware::HardwareProfile::parse(root);
    diag.throw_if_any();
    (void)hardware::provenance_gaps(leaves, h.provenance);
    for (auto dtype : hardware::kAllDtypes)
      if (auto peak = h.gpu.peak_for(dtype)) fuzz::require(std::isfinite(peak->flops_per_s), "finite peak");
    fuzz::require(h.gpu.hbm.n > 0, "HBM capacity");
  } catch (const base::ConfigError&) {
    // the defined outcome for bad input
  }
  return 0;
}
