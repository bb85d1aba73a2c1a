// tests/support/layout.hpp: resolve a parallel layout in a test, failing the test (not crashing) when it breaks a rule.
#pragma once
#include "sim/parallel/feasibility.hpp"

#include <gtest/gtest.h>

#include <variant>
#include <vector>

namespace support {

inline sim::parallel::Layout resolve(const sim::workload::ModelSpec& m, const sim::parallel::ClusterShape& cluster,
                                     const sim::parallel::ParallelConfig& c, int seq_len) {
  auto r = sim::parallel::resolve_layout(m, cluster, c, seq_len);
  if (auto* v = std::get_if<std::vector<sim::parallel::Infeasible>>(&r)) {
    ADD_FAILURE() << "infeasible: " << v->front().rule << ": " << v->front().reason;
    return {};
  }
  return std::get<sim::parallel::Layout>(r);
}

}  // namespace support
