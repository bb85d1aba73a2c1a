// reports/charts.hpp: the report's seven SVG charts (internal to reports/; each returns one <svg> element).
#pragma once
#include "reports/report.hpp"

#include <string>

namespace reports::detail {

std::string chart_step_breakdown(const ReportInput& in);
std::string chart_pipeline_timeline(const ReportInput& in);
std::string chart_memory(const ReportInput& in);
std::string chart_failure_timeline(const ReportInput& in);
std::string chart_time_to_train_cdf(const ReportInput& in);
std::string chart_cost_waterfall(const ReportInput& in);
std::string chart_sensitivity_tornado(const ReportInput& in);

}  // namespace reports::detail
