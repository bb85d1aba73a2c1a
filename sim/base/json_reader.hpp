// sim/base/json_reader.hpp: the strict JSON reader; every problem in a file becomes one line of one ConfigError.
#pragma once
#include "sim/base/errors.hpp"
#include "sim/base/units.hpp"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sim::base {

class JsonReader;

/// Accepted interval for a plain number. Quantities with units take a Sign instead.
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;

  static Range any() { return {}; }
  static Range positive() { return {0.0, std::numeric_limits<double>::infinity(), true}; }
  static Range at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false}; }
  static Range between(double lo, double hi) { return {lo, hi, false}; }
  bool contains(double v) const { return (min_exclusive ? v > min : v >= min) && v <= max; }
  std::string describe() const;
};

enum class Sign { Positive, NonNegative };

/// An owned, parsed JSON document with its origin (a file name or "--set"). nlohmann/json stays inside base.
class JsonDocument {
 public:
  /// Reads and parses a file. Missing files, directories, empty files, invalid JSON (with line and column),
  /// duplicate keys, invalid UTF-8, nesting deeper than kMaxDepth and files over kMaxFileBytes all throw ConfigError.
  static JsonDocument parse_file(const std::string& path);
  static JsonDocument parse_text(std::string_view text, std::string origin);
  static constexpr int kMaxDepth = 64;
  static constexpr std::int64_t kMaxFileBytes = std::int64_t{16} << 20;  // parse_file's limit

  JsonDocument(JsonDocument&&) noexcept;
  JsonDocument& operator=(JsonDocument&&) noexcept;
  ~JsonDocument();

  const std::string& origin() const { return origin_; }
  /// A top-level string member, if the root is an object holding one (used to sniff "schema").
  std::optional<std::string> top_level_string(std::string_view key) const;
  /// Applies a `--set` override: dotted path (numeric segments index arrays), value parsed as JSON when it is
  /// valid JSON, otherwise taken as a string. Missing objects along the path are created. Throws ConfigError.
  void set(std::string_view dotted_path, std::string_view value_text);
  /// A strict reader over the root; problems go to `diag`.
  JsonReader root(Diagnostics& diag) const;
  /// Canonical text (sorted keys, 2-space indent), e.g. to print a resolved scenario.
  std::string dump() const;

 private:
  struct Impl;
  explicit JsonDocument(std::unique_ptr<Impl> impl, std::string origin);
  std::unique_ptr<Impl> impl_;
  std::string origin_;
};

/// A cursor on one JSON object. Each accessor marks its key as known; finish() reports every other key as unknown
/// (with a did-you-mean). Problems are recorded in the shared Diagnostics, never thrown, so that one pass over a
/// file reports all of them. An accessor returns false and leaves `out` unchanged when the field is missing or bad.
class JsonReader {
 public:
  enum class Kind { Missing, Null, Bool, Integer, Number, String, Array, Object };

  Kind kind(std::string_view key) const;
  bool has(std::string_view key) const { return kind(key) != Kind::Missing; }
  /// JSON-pointer path of a member of this object, e.g. "/parallel/tp".
  std::string path(std::string_view key) const;
  const std::string& path() const { return path_; }
  Diagnostics& diagnostics() const { return *diag_; }

  bool required(std::string_view key, int& out, Range r = Range::any());
  bool optional(std::string_view key, int& out, Range r = Range::any());
  bool required(std::string_view key, std::int64_t& out, Range r = Range::any());
  bool optional(std::string_view key, std::int64_t& out, Range r = Range::any());
  bool required(std::string_view key, double& out, Range r = Range::any());
  bool optional(std::string_view key, double& out, Range r = Range::any());
  bool required(std::string_view key, bool& out);
  bool optional(std::string_view key, bool& out);
  bool required(std::string_view key, std::string& out);
  bool optional(std::string_view key, std::string& out);
  bool required(std::string_view key, Time& out, Sign s = Sign::Positive);
  bool optional(std::string_view key, Time& out, Sign s = Sign::Positive);
  bool required(std::string_view key, Duration& out, Sign s = Sign::Positive);
  bool optional(std::string_view key, Duration& out, Sign s = Sign::Positive);
  bool required(std::string_view key, Bytes& out, Sign s = Sign::Positive);
  bool optional(std::string_view key, Bytes& out, Sign s = Sign::Positive);
  bool required(std::string_view key, Bandwidth& out, Sign s = Sign::Positive);
  bool optional(std::string_view key, Bandwidth& out, Sign s = Sign::Positive);
  bool required(std::string_view key, FlopRate& out, Sign s = Sign::Positive);
  bool optional(std::string_view key, FlopRate& out, Sign s = Sign::Positive);
  bool required(std::string_view key, Power& out, Sign s = Sign::Positive);
  bool optional(std::string_view key, Power& out, Sign s = Sign::Positive);
  bool required(std::string_view key, Money& out, Sign s = Sign::NonNegative);
  bool optional(std::string_view key, Money& out, Sign s = Sign::NonNegative);
  /// Counts accept a string with an SI suffix ("15T") or a plain JSON integer.
  bool required(std::string_view key, Count& out, Sign s = Sign::Positive);
  bool optional(std::string_view key, Count& out, Sign s = Sign::Positive);
  /// A fraction: a number in [0, 1] or a string "5%".
  bool required_fraction(std::string_view key, double& out);
  bool optional_fraction(std::string_view key, double& out);
  /// A string that must be one of `allowed`.
  bool required_enum(std::string_view key, std::string& out, std::initializer_list<std::string_view> allowed);
  bool required_enum(std::string_view key, std::size_t& index, std::span<const std::string_view> allowed);
  bool optional_enum(std::string_view key, std::string& out, std::initializer_list<std::string_view> allowed);
  /// The same over a named list, giving the index of the value found (an enum's spellings in its order).
  bool optional_enum(std::string_view key, std::size_t& index, std::span<const std::string_view> allowed);
  /// A list of integers (e.g. layers_per_stage).
  bool optional(std::string_view key, std::vector<int>& out, Range each = Range::any());
  /// A list of strings (e.g. the --set overrides a shard file records).
  bool optional(std::string_view key, std::vector<std::string>& out);

  /// A nested object. required_object records an error when it is missing or not an object.
  std::optional<JsonReader> required_object(std::string_view key);
  std::optional<JsonReader> optional_object(std::string_view key);
  /// An array of objects (empty when missing or bad; the problem is recorded).
  std::vector<JsonReader> object_array(std::string_view key, bool required);
  /// Every key of this object (for free-form maps such as provenance); marks them all known.
  std::vector<std::string> keys();
  /// Dotted paths of every leaf below this object ("gpu.peak.bf16"); an array counts as one leaf.
  std::vector<std::string> leaf_paths() const;
  /// Marks a key as known without reading it (the caller reads it another way, e.g. kind() then a typed read).
  void accept(std::string_view key);

  /// Records a problem with one member (custom rules: "must be even", "must divide heads").
  void error(std::string_view key, const std::string& message);
  /// Records a problem with this object as a whole.
  void error(const std::string& message);
  /// Records every member that no accessor asked for as "unknown key", with a did-you-mean when one is close.
  void finish();

 private:
  friend class JsonDocument;
  JsonReader(const void* node, std::string path, Diagnostics* diag);
  const void* member(std::string_view key) const;  // nullptr when missing
  void type_error(std::string_view key, const char* expected);
  template <class T, class ParseFn>
  bool read_quantity(std::string_view key, T& out, bool required, Sign s, ParseFn parse, const char* what);
  bool missing(std::string_view key, bool required);

  const void* node_;  // const nlohmann::json*; opaque so that the header does not leak nlohmann
  std::string path_;
  Diagnostics* diag_;
  std::vector<std::string> known_;
};

/// Levenshtein distance, for did-you-mean suggestions.
int edit_distance(std::string_view a, std::string_view b);
/// The closest candidate within a small distance, or empty.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace sim::base
