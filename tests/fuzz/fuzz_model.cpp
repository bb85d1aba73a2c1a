// tests/fuzz/fuzz_model.cpp: libFuzzer target for the model loader (models/*.json, schema trainsim.model/1): strict
// parse, then the parameter count every command derives from an accepted model, which must be finite.
#include "sim/base/errors.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/workload/model_spec.hpp"
#include "sim/workload/params.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  try {
    const auto doc = base::JsonDocument::parse_text(fuzz::as_text(data, size), "fuzz-model.json");
    base::Diagnostics diag(doc.origin());
    base::JsonReader root = doc.root(diag);
    const workload::ModelSpec m = workload::ModelSpec::parse(root);
    diag.throw_if_any();
    fuzz::require(m.layers > 0 && m.hidden > 0 && m.heads > 0 && m.kv_heads > 0 && m.vocab > 0, "positive shape");
    const auto p = workload::count_params(m);
    fuzz::require_finite(p.total(m.layers), "parameter count");
    fuzz::require_finite(p.active(m.layers), "active parameter count");
  } catch (const base::ConfigError&) {
    // the defined outcome for bad input
  }
  return 0;
}
