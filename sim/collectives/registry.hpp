// sim/collectives/registry.hpp: collective algorithms by name, with a one-line description, for lookup and `describe`.
#pragma once
#include "sim/collectives/collective.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::collectives {

struct AlgorithmInfo {
  std::string name;         // "ring"
  std::string description;  // one line, with its cost and source
  Algorithm algorithm = Algorithm::Ring;
};

/// Algorithms known by name, in registration order. Filled explicitly (E7): no self-registering statics.
class Registry {
 public:
  /// Names are unique (a duplicate is a bug in the caller).
  void add(std::string name, std::string description, Algorithm algorithm);
  const AlgorithmInfo* find(std::string_view name) const;
  const std::vector<AlgorithmInfo>& entries() const { return entries_; }

 private:
  std::vector<AlgorithmInfo> entries_;
};

/// Registers ring, tree, hierarchical, auto and nvls.
void register_builtin_algorithms(Registry& r);

/// (name, description) of every built-in algorithm, in order: what `trainsim describe collectives` prints.
std::vector<std::pair<std::string, std::string>> describe_algorithms();

}  // namespace sim::collectives
