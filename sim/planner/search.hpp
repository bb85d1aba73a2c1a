// sim/planner/search.hpp: (internal to sim/planner) what the search (planner.cpp) and the wire form of its shards and
// farmed tasks (wire.cpp) share: a search's cluster sizes and points, how a point is described as a candidate, and the
// exact serialisation of candidates and run estimates.
#pragma once
#include "sim/base/json_reader.hpp"
#include "sim/planner/planner.hpp"
#include "sim/results/json.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sim::planner::detail {

using parallel::ParallelConfig;

/// One cluster size of the search, with its topology (built once, shared by every plan of that size).
struct Size {
  int gpus = 0;
  parallel::ClusterShape shape;
  std::shared_ptr<const topology::Topology> topology;
};

struct Point {
  int size = 0;  // index into the sizes
  ParallelConfig config;
};

/// The sizes (with their topology when `with_topology`) and every point of the search, in enumeration order.
void enumerate_points(const PlanProblem& problem, bool with_topology, std::vector<Size>& sizes,
                      std::vector<Point>& points);

/// A fingerprint of the search's sizes and points in enumeration order (64 bits, in hex): a shard names its
/// candidates by point index, so shards merge only into the search that numbered them.
std::string search_digest(const std::vector<Size>& sizes, const std::vector<Point>& points);

/// What a candidate is, from its point: the configuration, layout, GPUs, flags and relative steps (no simulation).
void describe(Candidate& c, const PlanProblem& problem, const std::vector<Size>& sizes,
              const std::vector<Point>& points, std::int64_t index);

/// A candidate and a run estimate in the wire form of shards and farmed tasks (wire.cpp), and back; a candidate's
/// configuration comes from its point of the search.
results::Json candidate_wire(const Candidate& c);
Candidate read_candidate_wire(base::JsonReader& r, const PlanProblem& problem, const std::vector<Size>& sizes,
                              const std::vector<Point>& points);
results::Json run_wire(const RunEstimate& r);
RunEstimate read_run_wire(base::JsonReader& r);

}  // namespace sim::planner::detail
