// sim/base/json_document.cpp: JSON documents: strict parsing of files and text (duplicate keys, nesting depth, number
// overflow named by line and column), --set edits by dotted path, dumping. The fields are read in json_reader.cpp.
#include "sim/base/input_file.hpp"
#include "sim/base/json_value.hpp"

#include <algorithm>
#include <set>

namespace sim::base {

namespace json_detail {

std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string describe_found(const Json& v) {
  if (v.is_array()) return "an array";  // before dump(): a deeply nested value would recurse as deep
  if (v.is_object()) return "an object";
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 48) text = text.substr(0, 45) + "...";
  const char* kind = "a value";
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      kind = "a boolean";
      break;
    case Json::value_t::string:
      kind = "a string";
      break;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      kind = "an integer";
      break;
    case Json::value_t::number_float:
      kind = "a number";
      break;
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      break;
  }
  return text + " (" + kind + ")";
}

}  // namespace json_detail

using json_detail::describe_found;
using json_detail::escape_pointer_token;

namespace {

/// nlohmann's messages start with "[json.exception.parse_error.101] "; keep what a user can act on.
std::string clean_parse_message(const std::string& what) {
  auto pos = what.find("] ");
  std::string msg = pos == std::string::npos ? what : what.substr(pos + 2);
  return msg;
}

/// nlohmann's "number overflow parsing '1e400'" says no where: find the number's line and column in the text.
std::string where_overflow(std::string_view text, const Json::exception& e) {
  const std::string what = e.what();
  const auto open = what.find('\'');
  const auto close = what.rfind('\'');
  if (e.id != 406 || open == std::string::npos || close <= open + 1) return "";
  const auto at = text.find(std::string_view(what).substr(open + 1, close - open - 1));
  if (at == std::string_view::npos) return "";
  const auto line_start = text.rfind('\n', at);
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const auto column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return " at line " + std::to_string(line) + ", column " + std::to_string(column) +
         " (a number beyond the range of a double)";
}

/// SAX events of a document, checked for duplicate keys and nesting deeper than kMaxDepth; builds nothing. A syntax
/// error stops it with `problem` empty (the parse that follows reports it in nlohmann's words).
struct StructureCheck : nlohmann::json_sax<Json> {
  std::vector<std::set<std::string>> open_objects;
  int depth = 0;
  std::string problem;

  bool open() {
    if (++depth <= JsonDocument::kMaxDepth) return true;
    problem = "nesting deeper than " + std::to_string(JsonDocument::kMaxDepth) + " levels";
    return false;
  }
  bool null() override { return true; }
  bool boolean(bool /*val*/) override { return true; }
  bool number_integer(number_integer_t /*val*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*val*/) override { return true; }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*val*/) override { return true; }
  bool binary(binary_t& /*val*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override {
    open_objects.emplace_back();
    return open();
  }
  bool key(string_t& val) override {
    if (open_objects.back().insert(val).second) return true;
    problem = "duplicate key \"" + val + "\"";
    return false;
  }
  bool end_object() override {
    open_objects.pop_back();
    --depth;
    return true;
  }
  bool start_array(std::size_t /*elements*/) override { return open(); }
  bool end_array() override {
    --depth;
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }
};

/// A duplicate key or nesting beyond kMaxDepth in JSON text, or "" (also for a syntax error: the parse that follows
/// reports it in nlohmann's words).
std::string structure_problem(std::string_view text) {
  StructureCheck check;
  const bool clean = Json::sax_parse(text.begin(), text.end(), &check, nlohmann::detail::input_format_t::json,
                                     /*strict=*/true, /*ignore_comments=*/false);
  return clean ? std::string() : check.problem;
}

JsonDocument parse_impl(std::string_view text, const std::string& origin, auto make) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw ConfigError(origin, "", "the file is empty; expected a JSON object");
  // Duplicate keys and excessive nesting are rejected by a first, event-only pass (nlohmann alone keeps the last
  // duplicate). Not by a parse callback: nlohmann's callback parser walks the parent object at the end of every
  // child object, so an object of n objects (an "expect" of 50,000 metrics) took O(n^2), minutes.
  if (const std::string problem = structure_problem(text); !problem.empty())
    throw ConfigError(origin, "", "invalid JSON: " + problem);
  try {
    Json root = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/false);
    return make(std::move(root));
  } catch (const Json::parse_error& e) {
    throw ConfigError(origin, "", "invalid JSON: " + clean_parse_message(e.what()));
  } catch (const Json::exception& e) {
    throw ConfigError(origin, "", "invalid JSON: " + clean_parse_message(e.what()) + where_overflow(text, e));
  }
}

}  // namespace

namespace {

/// The deepest nesting of [ and { in JSON text (outside strings), without parsing it.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if (c == ']' || c == '}') --depth;
  }
  return deepest;
}

}  // namespace

// ---- JsonDocument -----------------------------------------------------------------------------------------------

JsonDocument::JsonDocument(std::unique_ptr<Impl> impl, std::string origin)
    : impl_(std::move(impl)), origin_(std::move(origin)) {}
JsonDocument::JsonDocument(JsonDocument&&) noexcept = default;
JsonDocument& JsonDocument::operator=(JsonDocument&&) noexcept = default;
JsonDocument::~JsonDocument() = default;

JsonDocument JsonDocument::parse_file(const std::string& path) {
  // The one bounded reader: a FIFO, a device (/dev/zero) or a huge file stops here with a message.
  return parse_text(read_input_file(path, "a JSON file", kMaxFileBytes), path);
}

JsonDocument JsonDocument::parse_text(std::string_view text, std::string origin) {
  return parse_impl(text, origin, [&](Json root) {
    auto impl = std::make_unique<Impl>();
    impl->root = std::move(root);
    return JsonDocument(std::move(impl), origin);
  });
}

std::optional<std::string> JsonDocument::top_level_string(std::string_view key) const {
  const Json& r = impl_->root;
  if (!r.is_object()) return std::nullopt;
  auto it = r.find(std::string(key));
  if (it == r.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

void JsonDocument::set(std::string_view dotted_path, std::string_view value_text) {
  const std::string where = "--set " + std::string(dotted_path);
  if (dotted_path.empty()) throw ConfigError("--set", "", "empty key; write --set KEY=VALUE, e.g. --set parallel.tp=4");
  // The same depth limit as files, for the key and the value: a key of 50,000 segments or a value of 35,000 nested
  // brackets would otherwise build (and later walk) a tree that deep.
  if (std::count(dotted_path.begin(), dotted_path.end(), '.') >= kMaxDepth)
    throw ConfigError("--set", "",
                      "the key has more than " + std::to_string(kMaxDepth) + " segments; scenario keys are a few deep");
  if (nesting_depth(value_text) > kMaxDepth)
    throw ConfigError("--set", "",
                      "the value of " + std::string(dotted_path.substr(0, 80)) + " nests deeper than " +
                          std::to_string(kMaxDepth) + " levels");
  Json value;
  try {
    // A value that is JSON is held to the rules of files: a duplicate key is refused, not resolved to the last one
    // (a user trial: two "trace" keys in one --set ran the second silently, where the same text in a file was refused).
    if (const std::string problem = structure_problem(value_text); !problem.empty())
      throw ConfigError("--set", "",
                        "the value of " + std::string(dotted_path.substr(0, 80)) + " is invalid JSON: " + problem);
    value = Json::parse(value_text);
  } catch (const Json::exception&) {
    value = std::string(value_text);  // not JSON: a plain string such as 400 Gbit/s
    try {
      (void)value.dump();  // files must be UTF-8 (the parser checks); so must a --set string
    } catch (const Json::type_error&) {
      throw ConfigError("--set", "", "the value of " + std::string(dotted_path) + " is not valid UTF-8");
    }
  }
  Json* node = &impl_->root;
  std::string pointer;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted_path.find('.', start);
    const std::string_view seg =
        dotted_path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (seg.empty()) throw ConfigError("--set", "", "\"" + std::string(dotted_path) + "\": empty path segment");
    const bool last = dot == std::string_view::npos;
    if (node->is_array()) {
      std::size_t idx = 0;
      const bool numeric = std::all_of(seg.begin(), seg.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!numeric || seg.size() > 9 || (idx = std::stoul(std::string(seg))) >= node->size())
        throw ConfigError("--set", pointer,
                          "\"" + std::string(seg) + "\" is not an index of this array of " +
                              std::to_string(node->size()) + " elements");
      pointer += "/" + std::string(seg);
      node = &(*node)[idx];
    } else {
      // An index under a key the document lacks (`--set parallel.layers_per_stage.0=4` with no layers_per_stage):
      // nothing to index; making an object of it was read as the key (a tester's trial).
      const bool numeric = std::all_of(seg.begin(), seg.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (node->is_null() && numeric && !pointer.empty())
        throw ConfigError("--set", pointer,
                          "\"" + std::string(seg) + "\" indexes an array, and the scenario has none at " + pointer +
                              "; give the whole value: --set " +
                              std::string(dotted_path.substr(0, start > 0 ? start - 1 : 0)) + "=[...]");
      if (node->is_null()) *node = Json::object();
      if (!node->is_object())
        throw ConfigError("--set", pointer.empty() ? "/" : pointer,
                          "cannot set \"" + std::string(dotted_path) + "\": " + pointer + " is " +
                              describe_found(*node) + ", not an object");
      pointer += "/" + escape_pointer_token(seg);
      node = &(*node)[std::string(seg)];
    }
    if (last) {
      *node = std::move(value);
      return;
    }
    start = dot + 1;
  }
}

JsonReader JsonDocument::root(Diagnostics& diag) const {
  return JsonReader(&impl_->root, "", &diag);
}

std::string JsonDocument::dump() const {
  return impl_->root.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace sim::base
