// sim/results/json.hpp: an ordered JSON value for results, serialised deterministically (same value, same bytes).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sim::results {

/// Objects keep insertion order, so a result's JSON reads in the order the contract lists its fields.
class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(static_cast<std::int64_t>(i)) {}
  Json(std::int64_t i) : v_(i) {}
  Json(double d) : v_(d) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(const char* s) : v_(std::string(s)) {}
  static Json object() { return Json(Object{}); }
  static Json array() { return Json(Array{}); }

  /// Object member (inserted at the end when new). Using it on a null value makes the value an object.
  Json& operator[](const std::string& key);
  /// Appends to an array (a null value becomes an array).
  void push_back(Json v);
  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v_); }

  /// Serialises with `indent` spaces per level (negative: one line). Doubles use the shortest round-trip form;
  /// NaN and infinities, which JSON cannot hold, become null.
  std::string dump(int indent = 2) const;

  /// Every scalar below this value as (dotted path, text): strings as they are, numbers as dump() writes them; arrays
  /// are left out. For the one-row and two-column renderings (`--format md|csv` of a step).
  std::vector<std::pair<std::string, std::string>> leaves() const;

 private:
  explicit Json(Object o) : v_(std::move(o)) {}
  explicit Json(Array a) : v_(std::move(a)) {}
  void dump_to(std::string& out, int indent, int level) const;
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object> v_ = nullptr;
};

/// A JSON string literal with escapes (also used by other writers: CSV/trace renderers).
std::string json_quote(std::string_view s);

}  // namespace sim::results
