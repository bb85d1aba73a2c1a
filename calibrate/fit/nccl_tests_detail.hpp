// calibrate/fit/nccl_tests_detail.hpp: what the nccl-tests text and JSON parsers share (number formatting, type and
// file-name readings). Internal to nccl_tests.cpp and nccl_tests_json.cpp.
#pragma once
#include "calibrate/fit/measurement.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace calibrate::fit::nccl_detail {

std::string fmt(double v);
/// "N/A" (no data check, or no result) and nccl-tests' printed "nan"/"inf" mean: no number here.
bool not_available(std::string_view s);
/// nccl-tests' type names to trainsim's dtype names (others kept as printed).
std::string dtype_of(std::string_view t);
std::string basename_of(std::string_view path);
/// The op named in a file name ("allreduce_8xH100.log"), if exactly one is.
std::optional<CollectiveOp> op_from_file_name(std::string_view path);

}  // namespace calibrate::fit::nccl_detail
