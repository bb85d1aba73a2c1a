// tests/fuzz/fuzz_measurements.cpp: libFuzzer target for the measurement reader of `trainsim-calibrate fit`
// (JSON lines, schema trainsim.measurement/1). Accepted records must be usable by the fits and write back to the
// same record.
#include "calibrate/fit/measurement.hpp"
#include "calibrate/fit/measurement_io.hpp"
#include "sim/base/errors.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>

using namespace calibrate::fit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto records = parse_measurements(fuzz::as_text(data, size), "fuzz.jsonl");
    for (const Measurement& m : records) {
      fuzz::require(std::isfinite(m.time.s) && m.time.s > 0, "a positive finite time");
      if (m.kind == Kind::Gemm) fuzz::require_finite(gemm_rate(m).flops_per_s, "GEMM rate");
      if (m.kind != Kind::Gemm) fuzz::require_finite(algbw(m).bytes_per_s, "bandwidth");
      const std::string line = to_json_line(m);
      const auto back = parse_measurements(line + "\n", "round trip");
      fuzz::require(back.size() == 1 && to_json_line(back[0]) == line, "a record writes back to itself");
    }
  } catch (const sim::base::ConfigError&) {
    // the defined outcome for bad input
  }
  return 0;
}
