// sim/base/json_value.hpp: the nlohmann value behind JsonDocument and JsonReader, for their two source files only
// (json_document.cpp parses and edits documents, json_reader.cpp reads their fields); nothing else includes it, so
// nlohmann stays behind sim/base's reader.
#pragma once
#include "sim/base/json_reader.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace sim::base {

using Json = nlohmann::json;

struct JsonDocument::Impl {
  Json root;
};

namespace json_detail {

inline const Json& as_json(const void* p) {
  return *static_cast<const Json*>(p);
}

/// A key as a JSON Pointer token ("~" -> "~0", "/" -> "~1").
std::string escape_pointer_token(std::string_view key);
/// A short rendering of a found value for messages: "\"8\" (a string)", "8.5 (a number)".
std::string describe_found(const Json& v);

}  // namespace json_detail
}  // namespace sim::base
