// sim/results/metric_paths.hpp: the numeric fields of trainsim.step/1 and trainsim.run/1 that a scenario's `expect`
// section and a check baseline may name, by dotted JSON path (DESIGN.md "JSON results"; the fields the cost model and
// the step's convergence block add included). tests/unit/metric_paths_test.cpp keeps this list and the serialisers
// in step.
#pragma once
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sim::results {

/// Unit suffixes the first segment of a metric path may leave out: "step_time" finds "step_time_s".
inline constexpr std::array<std::string_view, 6> kMetricUnitSuffixes{"", "_s", "_days", "_h", "_usd", "_gib"};

/// Every number (or flag) of the step result, then of the run result, by dotted path. The run result also holds the
/// step result under "step." and one entry per cause under each "....by_cause." group.
std::span<const std::string_view> step_metric_paths();
std::span<const std::string_view> run_metric_paths();
/// The run result's groups keyed by cause name ("interruptions.by_cause"), not listed in run_metric_paths().
std::span<const std::string_view> by_cause_groups();

/// `path` as it is found in a result: exact or with a unit suffix on its first segment; "step." + a step path; a
/// by_cause group followed by one of `causes` (the failure components' names). nullopt when it names no field.
std::optional<std::string> resolve_metric(std::string_view path, std::span<const std::string> causes);

/// The accepted paths, grouped for a message: "step_time_s, mfu, ..., breakdown_s.{compute, tp_exposed, ...}, ...".
std::string metric_paths_text();

/// Every accepted path (the by_cause groups with the given causes), for a did-you-mean hint.
std::vector<std::string> all_metric_paths(std::span<const std::string> causes);

}  // namespace sim::results
