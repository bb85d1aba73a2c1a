// sim/importers/megatron_args.hpp: the Megatron-LM arguments trainsim reads (megatron/training/arguments.py): their
// names, kinds, accepted values and bounds, the scenario field each gives, and how argparse reads an integer. Used by
// megatron.cpp, which applies them to a scenario draft.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sim::importers::megatron {

enum class Kind { Int, Bool, Choice, Text };  // Text: any value, checked where it is used

struct FlagSpec {
  const char* name;  // without the leading "--"
  Kind kind;
  const char* path;                       // scenario path for a direct mapping, else nullptr (handled by the caller)
  std::vector<const char*> choices = {};  // accepted values of a Choice flag
  int nargs = 1;                          // values an Int flag takes (--rampup-batch-size START INCR SAMPLES)
  std::int64_t max = 1'000'000'000;       // the largest value accepted
};

/// Every flag trainsim reads. Anything else is listed as ignored.
const std::vector<FlagSpec>& flag_specs();
/// The spec of a flag written without "--" and with '-' for '_'; nullptr when trainsim does not read it.
const FlagSpec* find_spec(const std::string& normalized);
/// The scenario field a flag gives (for unresolved values); empty when none.
std::string settles(const FlagSpec& s);
/// "a, b, c".
std::string join(const std::vector<const char*>& items);
/// An integer as Python's int() reads argparse values: digits with single underscores between them ("220_000_000").
std::optional<std::int64_t> python_int(std::string text);

}  // namespace sim::importers::megatron
