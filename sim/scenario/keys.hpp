// sim/scenario/keys.hpp: the scenario keys beyond DESIGN.md's schema (the step and memory keys of issues 16 and 17, the
// run-level, data-pipeline and cost keys of issues 11, 19 and the cost model), with the default the loader applies and
// the values it takes, for `trainsim describe keys`. The README's key tables list the same keys;
// tests/unit/describe_keys_test.cpp checks that both list the same set, that every key loads, and that setting a key to
// its listed default changes no result.
#pragma once
#include <string_view>
#include <vector>

namespace sim::scenario {

struct KeyDoc {
  std::string_view path;      // dotted path, as --set takes it
  std::string_view fallback;  // the default: JSON text where it is a value, else how it is derived ("tp", "not given")
  std::string_view accepted;  // the values the loader takes
  std::string_view meaning;   // one line; the README has the sources
};

/// Every key of the table, in the README's order.
const std::vector<KeyDoc>& extension_keys();

/// The keys of DESIGN.md's scenario schema (the contract's example), with the loader's defaults ("required" where
/// there is none), so that `describe keys` lists every key a scenario takes (found by a user trial: the keys a new
/// user needs first, the GPU count, the layout and the price, were missing).
const std::vector<KeyDoc>& schema_keys();

}  // namespace sim::scenario
