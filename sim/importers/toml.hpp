// sim/importers/toml.hpp: TOML 1.0 documents (TorchTitan job configs) as TomlValue trees, read by toml++ in toml.cpp
// (the only file that includes it). Invalid TOML is an error with its line number.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::importers {

struct TomlValue {
  enum class Type { String, Integer, Float, Bool, Array, Table };
  Type type = Type::Table;
  std::string string;
  std::int64_t integer = 0;
  double number = 0;  // Float
  bool boolean = false;
  std::vector<TomlValue> array;
  std::vector<std::pair<std::string, TomlValue>> table;  // in file order
  int line = 0;                                          // where the value (or the table header) is

  // Defined in toml.cpp, where the pair of a table's members is complete (clang 14 with libstdc++ 12 rejects the
  // implicit ones: the fuzz preset, issue 10).
  TomlValue();
  TomlValue(const TomlValue&);
  TomlValue(TomlValue&&) noexcept;
  TomlValue& operator=(const TomlValue&);
  TomlValue& operator=(TomlValue&&) noexcept;
  ~TomlValue();

  /// A member of a table, or nullptr.
  const TomlValue* get(std::string_view key) const;
  /// "a string", "an integer", ... for messages.
  const char* type_name() const;
};

/// Parses `text`; errors throw base::ConfigError(origin, "line N", "what was found; what is accepted").
/// Refused beyond TOML's own rules (errors that say so): dates and times (no setting trainsim reads is one), inf and
/// nan, tables and arrays nested deeper than 64, dotted keys of more than 64 parts.
TomlValue parse_toml(std::string_view text, const std::string& origin);

}  // namespace sim::importers
