// sim/base/json_reader.cpp: strict reading of a JSON document's fields (types, ranges, quantities with units, enums,
// unknown keys with a did-you-mean). Parsing and --set edits are json_document.cpp's; nlohmann only behind both.
#include "sim/base/json_reader.hpp"

#include "sim/base/json_value.hpp"
#include "sim/base/quantity.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace sim::base {

using json_detail::as_json;
using json_detail::describe_found;
using json_detail::escape_pointer_token;

namespace {

// Whole bounds as integers ("1048576", not "1.04858e+06"), the others as the stream writes them.
std::string fmt_number(double v) {
  if (std::fabs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<std::int64_t>(v));
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

std::string Range::describe() const {
  const bool has_min = std::isfinite(min);
  const bool has_max = std::isfinite(max);
  if (has_min && has_max) return "between " + fmt_number(min) + " and " + fmt_number(max);
  if (has_min && min_exclusive && min == 0) return "positive";
  if (has_min) return (min_exclusive ? "greater than " : "at least ") + fmt_number(min);
  if (has_max) return "at most " + fmt_number(max);
  return "any number";
}
// ---- JsonReader -------------------------------------------------------------------------------------------------

JsonReader::JsonReader(const void* node, std::string path, Diagnostics* diag)
    : node_(node), path_(std::move(path)), diag_(diag) {
  if (!as_json(node_).is_object()) {
    diag_->add(path_.empty() ? "/" : path_, "expected an object, found " + describe_found(as_json(node_)));
    node_ = nullptr;  // an empty object from here on: every accessor reports "missing"
  }
}

const void* JsonReader::member(std::string_view key) const {
  if (node_ == nullptr) return nullptr;
  const Json& o = as_json(node_);
  auto it = o.find(std::string(key));
  return it == o.end() ? nullptr : &*it;
}

JsonReader::Kind JsonReader::kind(std::string_view key) const {
  const void* m = member(key);
  if (m == nullptr) return Kind::Missing;
  switch (as_json(m).type()) {
    case Json::value_t::null:
      return Kind::Null;
    case Json::value_t::boolean:
      return Kind::Bool;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return Kind::Integer;
    case Json::value_t::number_float:
      return Kind::Number;
    case Json::value_t::string:
      return Kind::String;
    case Json::value_t::array:
      return Kind::Array;
    case Json::value_t::object:
      return Kind::Object;
    default:
      return Kind::Null;
  }
}

std::string JsonReader::path(std::string_view key) const {
  return path_ + "/" + escape_pointer_token(key);
}

void JsonReader::accept(std::string_view key) {
  known_.emplace_back(key);
}

void JsonReader::error(std::string_view key, const std::string& message) {
  diag_->add(path(key), message);
}

void JsonReader::error(const std::string& message) {
  diag_->add(path_.empty() ? "/" : path_, message);
}

void JsonReader::type_error(std::string_view key, const char* expected) {
  diag_->add(path(key), std::string("expected ") + expected + ", found " + describe_found(as_json(member(key))));
}

bool JsonReader::missing(std::string_view key, bool required) {
  accept(key);
  if (member(key) != nullptr) return false;
  if (required) diag_->add(path(key), "missing required field \"" + std::string(key) + "\"");
  return true;
}

namespace {

bool check_range(double v, Range r, JsonReader& self, std::string_view key, const std::string& found) {
  if (r.contains(v)) return true;
  self.error(key, found + " is out of range; expected " + r.describe());
  return false;
}

template <class Int>
bool read_integer(const Json& v, Int& out, Range r, JsonReader& self, std::string_view key) {
  // Range checks in integer arithmetic: 2^63 rounds to INT64_MAX as a double, so a double comparison would let it in.
  std::int64_t value = 0;
  bool fits = true;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    fits = u <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max());
    value = fits ? static_cast<std::int64_t>(u) : 0;
  } else if (v.is_number_integer()) {
    value = v.get<std::int64_t>();
    fits = value >= static_cast<std::int64_t>(std::numeric_limits<Int>::min()) &&
           value <= static_cast<std::int64_t>(std::numeric_limits<Int>::max());
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()) &&
             std::fabs(v.get<double>()) >= 0x1p63) {
    fits = false;  // a whole number too large for int64 reaches here as a double (nlohmann/json parses it so)
  } else {
    return false;
  }
  if (!fits) {
    // The key's own bounds where it has them (a seed: at least 0), then the integer type's (a tester's trial: a seed
    // of 1e30 was told the int64 range, negative half included).
    const std::string lo = std::isfinite(r.min) ? fmt_number(r.min_exclusive ? std::floor(r.min) + 1 : std::ceil(r.min))
                                                : std::to_string(std::numeric_limits<Int>::min());
    const std::string hi = std::isfinite(r.max) ? fmt_number(r.max) : std::to_string(std::numeric_limits<Int>::max());
    self.error(key, v.dump() + " is out of range; expected an integer from " + lo + " to " + hi);
    return true;  // handled (reported)
  }
  if (!check_range(static_cast<double>(value), r, self, key, v.dump())) return true;
  out = static_cast<Int>(value);
  return true;
}

}  // namespace

bool JsonReader::required(std::string_view key, int& out, Range r) {
  if (missing(key, true)) return false;
  int tmp = out;
  const std::size_t before = diag_->items().size();
  if (!read_integer(as_json(member(key)), tmp, r, *this, key)) {
    type_error(key, "an integer");
    return false;
  }
  if (diag_->items().size() != before) return false;
  out = tmp;
  return true;
}

bool JsonReader::optional(std::string_view key, int& out, Range r) {
  if (missing(key, false)) return false;
  return required(key, out, r);
}

bool JsonReader::required(std::string_view key, std::int64_t& out, Range r) {
  if (missing(key, true)) return false;
  std::int64_t tmp = out;
  const std::size_t before = diag_->items().size();
  if (!read_integer(as_json(member(key)), tmp, r, *this, key)) {
    type_error(key, "an integer");
    return false;
  }
  if (diag_->items().size() != before) return false;
  out = tmp;
  return true;
}

bool JsonReader::optional(std::string_view key, std::int64_t& out, Range r) {
  if (missing(key, false)) return false;
  return required(key, out, r);
}

bool JsonReader::required(std::string_view key, double& out, Range r) {
  if (missing(key, true)) return false;
  const Json& v = as_json(member(key));
  if (!v.is_number()) {
    type_error(key, "a number");
    return false;
  }
  const double d = v.get<double>();
  if (!check_range(d, r, *this, key, v.dump())) return false;
  out = d;
  return true;
}

bool JsonReader::optional(std::string_view key, double& out, Range r) {
  if (missing(key, false)) return false;
  return required(key, out, r);
}

bool JsonReader::required(std::string_view key, bool& out) {
  if (missing(key, true)) return false;
  const Json& v = as_json(member(key));
  if (!v.is_boolean()) {
    type_error(key, "true or false");
    return false;
  }
  out = v.get<bool>();
  return true;
}

bool JsonReader::optional(std::string_view key, bool& out) {
  if (missing(key, false)) return false;
  return required(key, out);
}

bool JsonReader::required(std::string_view key, std::string& out) {
  if (missing(key, true)) return false;
  const Json& v = as_json(member(key));
  if (!v.is_string()) {
    type_error(key, "a string");
    return false;
  }
  out = v.get<std::string>();
  return true;
}

bool JsonReader::optional(std::string_view key, std::string& out) {
  if (missing(key, false)) return false;
  return required(key, out);
}

template <class T, class ParseFn>
bool JsonReader::read_quantity(std::string_view key, T& out, bool required, Sign s, ParseFn parse, const char* what) {
  if (missing(key, required)) return false;
  const Json& v = as_json(member(key));
  if (!v.is_string() && !v.is_number()) {
    type_error(key, (std::string("a ") + what + " with a unit, as a string").c_str());
    return false;
  }
  // A bare JSON number goes through the parser too, which reports the missing unit and lists the accepted ones.
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  auto parsed = parse(text);
  // A negative value where a positive one is needed gets the positive rule, not "must be zero or more" (a user trial
  // saw both messages for one key: -1 and 0 USD).
  if (!parsed && s == Sign::Positive && parsed.error.find(" is negative;") != std::string::npos) {
    diag_->add(path(key), "\"" + text + "\" must be greater than zero");
    return false;
  }
  if (!parsed || v.is_number()) {
    diag_->add(path(key), parsed ? text + " has no unit; write it as a string with a unit" : parsed.error);
    return false;
  }
  if (s == Sign::Positive && *parsed.value <= T{}) {
    diag_->add(path(key), "\"" + text + "\" must be greater than zero");
    return false;
  }
  out = *parsed.value;
  return true;
}

#define SIM_QUANTITY_ACCESSORS(Type, parser, what)                     \
  bool JsonReader::required(std::string_view key, Type& out, Sign s) { \
    return read_quantity(key, out, true, s, parser, what);             \
  }                                                                    \
  bool JsonReader::optional(std::string_view key, Type& out, Sign s) { \
    return read_quantity(key, out, false, s, parser, what);            \
  }

SIM_QUANTITY_ACCESSORS(Time, parse_time, "time")
SIM_QUANTITY_ACCESSORS(Duration, parse_duration, "time")
SIM_QUANTITY_ACCESSORS(Bytes, parse_bytes, "size")
SIM_QUANTITY_ACCESSORS(Bandwidth, parse_bandwidth, "bandwidth")
SIM_QUANTITY_ACCESSORS(FlopRate, parse_flop_rate, "FLOP rate")
SIM_QUANTITY_ACCESSORS(Power, parse_power, "power")
SIM_QUANTITY_ACCESSORS(Money, parse_money, "money amount")
#undef SIM_QUANTITY_ACCESSORS

bool JsonReader::required(std::string_view key, Count& out, Sign s) {
  if (missing(key, true)) return false;
  const Json& v = as_json(member(key));
  Count c;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    c.n = v.get<double>();
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>()) {
    c.n = v.get<double>();  // a whole number in exponent form, e.g. 15e12 tokens
  } else if (v.is_string()) {
    auto parsed = parse_count(v.get<std::string>());
    if (!parsed) {
      diag_->add(path(key), parsed.error);
      return false;
    }
    c = *parsed.value;
  } else {
    type_error(key, "an integer or a count such as \"15T\"");
    return false;
  }
  if (c.n < 0 || (s == Sign::Positive && c.n <= 0)) {
    diag_->add(path(key), v.dump() + (s == Sign::Positive ? " must be greater than zero" : " must not be negative"));
    return false;
  }
  out = c;
  return true;
}

bool JsonReader::optional(std::string_view key, Count& out, Sign s) {
  if (missing(key, false)) return false;
  return required(key, out, s);
}

bool JsonReader::required_fraction(std::string_view key, double& out) {
  if (missing(key, true)) return false;
  const Json& v = as_json(member(key));
  double f = 0;
  if (v.is_number()) {
    f = v.get<double>();
  } else if (v.is_string()) {
    auto parsed = parse_fraction(v.get<std::string>());
    if (!parsed) {
      diag_->add(path(key), parsed.error);
      return false;
    }
    f = *parsed.value;
  } else {
    type_error(key, "a fraction such as 0.05 or \"5%\"");
    return false;
  }
  if (!(f >= 0 && f <= 1)) {
    diag_->add(path(key), v.dump() + " is out of range; expected a fraction between 0 and 1 (0% to 100%)");
    return false;
  }
  out = f;
  return true;
}

bool JsonReader::optional_fraction(std::string_view key, double& out) {
  if (missing(key, false)) return false;
  return required_fraction(key, out);
}

namespace {

std::string list_allowed(std::span<const std::string_view> allowed) {
  std::string out;
  for (auto a : allowed) {
    if (!out.empty()) out += ", ";
    out += "\"" + std::string(a) + "\"";
  }
  return out;
}

}  // namespace

bool JsonReader::required_enum(std::string_view key, std::string& out,
                               std::initializer_list<std::string_view> allowed) {
  std::size_t index = 0;
  if (!required_enum(key, index, std::span(allowed.begin(), allowed.size()))) return false;
  out = allowed.begin()[index];
  return true;
}

bool JsonReader::required_enum(std::string_view key, std::size_t& index, std::span<const std::string_view> allowed) {
  std::string value;
  if (!required(key, value)) return false;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    if (allowed[i] == value) {
      index = i;
      return true;
    }
  }
  std::vector<std::string> candidates(allowed.begin(), allowed.end());
  std::string hint = did_you_mean(value, candidates);
  diag_->add(path(key), "\"" + value + "\" is not accepted; expected one of " + list_allowed(allowed) +
                            (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
  return false;
}

bool JsonReader::optional_enum(std::string_view key, std::string& out,
                               std::initializer_list<std::string_view> allowed) {
  if (missing(key, false)) return false;
  return required_enum(key, out, allowed);
}

bool JsonReader::optional_enum(std::string_view key, std::size_t& index, std::span<const std::string_view> allowed) {
  if (missing(key, false)) return false;
  return required_enum(key, index, allowed);
}

bool JsonReader::optional(std::string_view key, std::vector<int>& out, Range each) {
  if (missing(key, false)) return false;
  const Json& v = as_json(member(key));
  if (!v.is_array()) {
    type_error(key, "an array of integers");
    return false;
  }
  std::vector<int> tmp;
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Json& e = v[i];
    const std::string where = path(key) + "/" + std::to_string(i);
    if (!e.is_number_integer() || e.get<std::int64_t>() < std::numeric_limits<int>::min() ||
        e.get<std::int64_t>() > std::numeric_limits<int>::max()) {
      diag_->add(where, "expected an integer, found " + describe_found(e));
      ok = false;
      continue;
    }
    const int x = e.get<int>();
    if (!each.contains(x)) {
      diag_->add(where, std::to_string(x) + " is out of range; expected " + each.describe());
      ok = false;
      continue;
    }
    tmp.push_back(x);
  }
  if (!ok) return false;
  out = std::move(tmp);
  return true;
}

bool JsonReader::optional(std::string_view key, std::vector<std::string>& out) {
  if (missing(key, false)) return false;
  const Json& v = as_json(member(key));
  if (!v.is_array()) {
    type_error(key, "an array of strings");
    return false;
  }
  std::vector<std::string> tmp;
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Json& e = v[i];
    if (!e.is_string()) {
      diag_->add(path(key) + "/" + std::to_string(i), "expected a string, found " + describe_found(e));
      ok = false;
      continue;
    }
    tmp.push_back(e.get<std::string>());
  }
  if (ok) out = std::move(tmp);
  return ok;
}

std::optional<JsonReader> JsonReader::required_object(std::string_view key) {
  if (missing(key, true)) return std::nullopt;
  const Json& v = as_json(member(key));
  if (!v.is_object()) {
    type_error(key, "an object");
    return std::nullopt;
  }
  return JsonReader(&v, path(key), diag_);
}

std::optional<JsonReader> JsonReader::optional_object(std::string_view key) {
  if (missing(key, false)) return std::nullopt;
  if (as_json(member(key)).is_null()) return std::nullopt;
  return required_object(key);
}

std::vector<JsonReader> JsonReader::object_array(std::string_view key, bool required) {
  std::vector<JsonReader> out;
  if (missing(key, required)) return out;
  const Json& v = as_json(member(key));
  if (!v.is_array()) {
    type_error(key, "an array of objects");
    return out;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_object()) {
      diag_->add(path(key) + "/" + std::to_string(i), "expected an object, found " + describe_found(v[i]));
      continue;
    }
    out.push_back(JsonReader(&v[i], path(key) + "/" + std::to_string(i), diag_));
  }
  return out;
}

std::vector<std::string> JsonReader::keys() {
  std::vector<std::string> out;
  if (node_ == nullptr) return out;
  for (auto it = as_json(node_).begin(); it != as_json(node_).end(); ++it)
    out.push_back(it.key());
  known_.insert(known_.end(), out.begin(), out.end());
  return out;
}

namespace {

void collect_leaves(const Json& v, const std::string& prefix, std::vector<std::string>& out) {
  if (!v.is_object() || v.empty()) {
    out.push_back(prefix);
    return;
  }
  for (auto it = v.begin(); it != v.end(); ++it)
    collect_leaves(*it, prefix.empty() ? it.key() : prefix + "." + it.key(), out);
}

}  // namespace

std::vector<std::string> JsonReader::leaf_paths() const {
  std::vector<std::string> out;
  if (node_ == nullptr) return out;
  for (auto it = as_json(node_).begin(); it != as_json(node_).end(); ++it)
    collect_leaves(*it, it.key(), out);
  return out;
}

void JsonReader::finish() {
  if (node_ == nullptr) return;
  for (auto it = as_json(node_).begin(); it != as_json(node_).end(); ++it) {
    if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
    std::string hint = did_you_mean(it.key(), known_);
    std::string accepted;
    for (std::size_t i = 0; i < known_.size(); ++i)  // each once ("gpus, gpus_per_node", not "gpus, gpus, ...")
      if (std::find(known_.begin(), known_.begin() + static_cast<std::ptrdiff_t>(i), known_[i]) ==
          known_.begin() + static_cast<std::ptrdiff_t>(i))
        accepted += (accepted.empty() ? "" : ", ") + known_[i];
    diag_->add(path_.empty() ? "/" : path_,
               "unknown key \"" + it.key() + "\"" +
                   (hint.empty() ? " (accepted: " + accepted + ")" : " (did you mean \"" + hint + "\"?)"));
  }
}

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    prev[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = std::max<int>(2, static_cast<int>(word.size()) / 3) + 1;
  for (const auto& c : candidates) {
    // The distance is at least the difference in length: a 1 MB key is compared with nothing.
    const auto longer = std::max(word.size(), c.size()), shorter = std::min(word.size(), c.size());
    if (longer - shorter >= static_cast<std::size_t>(best_d)) continue;
    const int d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}
}  // namespace sim::base
