// tests/fuzz/fuzz_nccl_tests.cpp: libFuzzer target for the nccl-tests importer of trainsim-calibrate (text tables
// and -J JSON, told apart by the first character as import_nccl_tests does). The first byte picks the options a
// user may pass (--op, --ranks, --scope). Every imported record must be usable by the fits: a positive finite time,
// a size, ranks, and a JSON line that reads back.
#include "calibrate/fit/measurement.hpp"
#include "calibrate/fit/measurement_io.hpp"
#include "calibrate/fit/nccl_tests.hpp"
#include "sim/base/errors.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>
#include <string>

using namespace calibrate::fit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  NcclTestsOptions options;
  const std::uint8_t pick = data[0];
  if (pick & 1U) options.op = CollectiveOp::AllReduce;
  if (pick & 2U) options.ranks = 1 + (pick >> 4U);
  if (pick & 4U) options.scope = Scope::Network;
  const std::string text(fuzz::as_text(data + 1, size - 1));
  try {
    const auto first = text.find_first_not_of(" \t\r\n");
    const bool json = first != std::string::npos && text[first] == '{';
    const ImportResult r =
        json ? parse_nccl_tests_json(text, "fuzz.json", options) : parse_nccl_tests_text(text, "fuzz.log", options);
    for (const Measurement& m : r.records) {
      fuzz::require(m.kind == Kind::Collective, "a collective record");
      fuzz::require(std::isfinite(m.time.s) && m.time.s > 0, "a positive finite time");
      fuzz::require(m.bytes.n >= 0, "a size of zero or more");
      fuzz::require(m.ranks > 0, "ranks");
      fuzz::require_finite(algbw(m).bytes_per_s, "algbw");
      fuzz::require_finite(busbw(m).bytes_per_s, "busbw");
      const auto back = parse_measurements(to_json_line(m) + "\n", "round trip");
      fuzz::require(back.size() == 1, "the record's JSON line reads back");
    }
  } catch (const sim::base::ConfigError&) {
    // the defined outcome for bad input
  }
  return 0;
}
