// sim/importers/toml.cpp: a strict TOML-subset parser (TOML 1.0 syntax for the parts it accepts).
#include "sim/importers/toml.hpp"

#include "sim/base/errors.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace sim::importers {

TomlValue::TomlValue() = default;
TomlValue::TomlValue(const TomlValue&) = default;
TomlValue::TomlValue(TomlValue&&) noexcept = default;
TomlValue& TomlValue::operator=(const TomlValue&) = default;
TomlValue& TomlValue::operator=(TomlValue&&) noexcept = default;
TomlValue::~TomlValue() = default;

namespace {

class TomlParser {
 public:
  TomlParser(std::string_view text, const std::string& origin) : s_(text), origin_(origin) {}

  TomlValue parse() {
    TomlValue root;
    root.type = TomlValue::Type::Table;
    root.defined = true;
    TomlValue* current = &root;
    while (true) {
      skip_blank_lines();
      if (at_end()) break;
      if (peek() == '[') {
        if (peek(1) == '[') fail("arrays of tables ([[...]]) are not supported; use [table] sections");
        ++i_;
        skip_ws();
        const int line = line_;
        auto path = key_path();
        skip_ws();
        expect(']', "']' to close the table header");
        end_of_line();
        current = table_at(root, path, line, true);
      } else {
        const int line = line_;
        auto path = key_path();
        skip_ws();
        expect('=', "'=' after the key");
        skip_ws();
        TomlValue v = value();
        end_of_line();
        insert(*current, path, std::move(v), line);
      }
    }
    return root;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }
  char peek(std::size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

  [[noreturn]] void fail(const std::string& message) const {
    throw base::ConfigError(origin_, "line " + std::to_string(line_), message);
  }
  [[noreturn]] void fail_at(int line, const std::string& message) const {
    throw base::ConfigError(origin_, "line " + std::to_string(line), message);
  }

  std::string found() const {
    if (at_end()) return "the end of the file";
    if (peek() == '\n' || peek() == '\r') return "the end of the line";
    std::size_t end = i_;
    while (end < s_.size() && end - i_ < 20 && s_[end] != '\n' && s_[end] != '\r')
      ++end;
    return "\"" + std::string(s_.substr(i_, end - i_)) + "\"";
  }

  void expect(char c, const char* what) {
    if (peek() != c) fail(std::string("expected ") + what + ", found " + found());
    ++i_;
  }

  void skip_ws() {
    while (peek() == ' ' || peek() == '\t')
      ++i_;
  }

  void skip_comment() {
    if (peek() != '#') return;
    while (!at_end() && peek() != '\n')
      ++i_;
  }

  void newline() {
    if (peek() == '\r' && peek(1) == '\n') ++i_;
    ++i_;
    ++line_;
  }

  /// Whitespace, comments and newlines: between statements, and inside an array.
  void skip_blank_lines() {
    while (!at_end()) {
      skip_ws();
      skip_comment();
      if (peek() == '\n' || peek() == '\r') {
        newline();
      } else {
        return;
      }
    }
  }

  /// Whitespace, a comment, then a newline or the end of the file.
  void end_of_line() {
    skip_ws();
    skip_comment();
    if (at_end()) return;
    if (peek() != '\n' && peek() != '\r') fail("expected the end of the line after the value, found " + found());
    newline();
  }

  static bool bare_key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }

  /// A dotted key: bare or quoted parts joined by '.'.
  std::vector<std::string> key_path() {
    std::vector<std::string> parts;
    while (true) {
      skip_ws();
      if (peek() == '"' || peek() == '\'') {
        parts.push_back(string_value());
      } else {
        const std::size_t start = i_;
        while (bare_key_char(peek()))
          ++i_;
        if (i_ == start) fail("expected a key (letters, digits, '_', '-', or a quoted string), found " + found());
        parts.emplace_back(s_.substr(start, i_ - start));
      }
      skip_ws();
      if (peek() != '.') return parts;
      if (parts.size() >= kMaxDepth) fail("a dotted key of more than " + std::to_string(kMaxDepth) + " parts");
      ++i_;
    }
  }

  static std::string dotted(const std::vector<std::string>& path, std::size_t n) {
    std::string out;
    for (std::size_t k = 0; k < n && k < path.size(); ++k)
      out += (k ? "." : "") + path[k];
    return out;
  }

  static TomlValue* member(TomlValue& t, const std::string& key) {
    for (auto& [k, v] : t.table)
      if (k == key) return &v;
    return nullptr;
  }

  /// The table at `path` below `root`, created (implicitly) as needed. A [header] defines it: twice is an error.
  TomlValue* table_at(TomlValue& root, const std::vector<std::string>& path, int line, bool header) {
    TomlValue* t = &root;
    for (std::size_t k = 0; k < path.size(); ++k) {
      TomlValue* next = member(*t, path[k]);
      if (!next) {
        TomlValue fresh;
        fresh.type = TomlValue::Type::Table;
        fresh.line = line;
        t->table.emplace_back(path[k], std::move(fresh));
        next = &t->table.back().second;
      } else if (next->type != TomlValue::Type::Table) {
        fail_at(line, "\"" + dotted(path, k + 1) + "\" is " + next->type_name() + " (line " +
                          std::to_string(next->line) + "), not a table");
      } else if (header && k + 1 == path.size() && next->defined) {
        fail_at(line, "table [" + dotted(path, path.size()) + "] is defined twice (first at line " +
                          std::to_string(next->line) + ")");
      }
      t = next;
    }
    if (header) {
      t->defined = true;
      t->line = line;
    }
    return t;
  }

  void insert(TomlValue& table, const std::vector<std::string>& path, TomlValue v, int line) {
    std::vector<std::string> parent(path.begin(), path.end() - 1);
    TomlValue* t = table_at(table, parent, line, false);
    if (const TomlValue* old = member(*t, path.back()))
      fail_at(line,
              "duplicate key \"" + dotted(path, path.size()) + "\" (first at line " + std::to_string(old->line) + ")");
    v.line = line;
    t->table.emplace_back(path.back(), std::move(v));
  }

  std::string string_value() {
    const char q = peek();
    if (peek(1) == q && peek(2) == q) fail("multi-line strings (\"\"\" or ''') are not supported");
    ++i_;
    std::string out;
    while (true) {
      if (at_end() || peek() == '\n' || peek() == '\r')
        fail(std::string("unterminated string: no closing ") + q + " on this line");
      const char c = s_[i_++];
      if (c == q) return out;
      if (c != '\\' || q == '\'') {
        out += c;
        continue;
      }
      // A backslash that ends the input escapes nothing (found by fuzz_importers: it read past the end).
      if (at_end()) fail(std::string("unterminated string: no closing ") + q + " on this line");
      const char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u':
        case 'U':
          unicode(out, e == 'u' ? 4 : 8);
          break;
        default:
          --i_;
          fail(std::string("invalid escape \\") + e + " in a string; accepted: \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX");
      }
    }
  }

  void unicode(std::string& out, int digits) {
    std::uint32_t cp = 0;
    for (int k = 0; k < digits; ++k) {
      const char h = peek();
      const int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
      if (d < 0) fail("\\u needs " + std::to_string(digits) + " hexadecimal digits, found " + found());
      cp = cp * 16 + static_cast<std::uint32_t>(d);
      ++i_;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail("\\u escape is not a Unicode scalar value");
    auto put = [&](std::uint32_t b) { out += static_cast<char>(b); };
    if (cp < 0x80) {
      put(cp);
    } else if (cp < 0x800) {
      put(0xC0 | (cp >> 6));
      put(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      put(0xE0 | (cp >> 12));
      put(0x80 | ((cp >> 6) & 0x3F));
      put(0x80 | (cp & 0x3F));
    } else {
      put(0xF0 | (cp >> 18));
      put(0x80 | ((cp >> 12) & 0x3F));
      put(0x80 | ((cp >> 6) & 0x3F));
      put(0x80 | (cp & 0x3F));
    }
  }

  TomlValue value() {
    TomlValue v;
    v.line = line_;
    v.defined = true;
    const char c = peek();
    // Arrays and inline tables nest by recursion: a limit keeps a 35,000-deep value from overflowing the stack.
    const bool nests = c == '[' || c == '{';
    if (nests && ++depth_ > static_cast<int>(kMaxDepth))
      fail("arrays or inline tables nested deeper than " + std::to_string(kMaxDepth) + " levels");
    const Unnest unnest{nests ? &depth_ : nullptr};
    if (c == '"' || c == '\'') {
      v.type = TomlValue::Type::String;
      v.string = string_value();
      return v;
    }
    if (c == '[') {
      v.type = TomlValue::Type::Array;
      ++i_;
      while (true) {
        skip_blank_lines();  // whitespace, newlines and comments inside an array
        if (peek() == ']') break;
        v.array.push_back(value());
        skip_blank_lines();  // whitespace, newlines and comments inside an array
        if (peek() == ',') {
          ++i_;
          continue;
        }
        if (peek() != ']') fail("expected ',' or ']' in the array, found " + found());
      }
      ++i_;
      return v;
    }
    if (c == '{') {
      v.type = TomlValue::Type::Table;
      ++i_;
      skip_ws();
      if (peek() == '}') {
        ++i_;
        return v;
      }
      while (true) {
        const int line = line_;
        auto path = key_path();
        skip_ws();
        expect('=', "'=' after the key");
        skip_ws();
        insert(v, path, value(), line);
        skip_ws();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect('}', "',' or '}' in the inline table (which must fit on one line)");
        return v;
      }
    }
    // A bare word: a boolean, a number, or an error that says what is accepted.
    const std::size_t start = i_;
    while (!at_end() && peek() != ',' && peek() != ']' && peek() != '}' && peek() != ' ' && peek() != '\t' &&
           peek() != '\n' && peek() != '\r' && peek() != '#')
      ++i_;
    const std::string_view word = s_.substr(start, i_ - start);
    if (word == "true" || word == "false") {
      v.type = TomlValue::Type::Bool;
      v.boolean = word == "true";
      return v;
    }
    i_ = start;
    if (word.empty()) fail("expected a value, found " + found());
    number(word, v);
    i_ = start + word.size();
    return v;
  }

  void number(std::string_view word, TomlValue& v) {
    const std::string quoted = "\"" + std::string(word) + "\"";
    const std::string accepted =
        "; accepted: a \"string\", an integer (1_024), a float (3.0e-4), true, false, an [array] or an {inline table}";
    if (word.size() >= 10 && word[4] == '-' && word[7] == '-')
      fail(quoted + " looks like a date; dates and times are not supported");
    std::string_view body = word;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) body.remove_prefix(1);
    if (body == "inf" || body == "nan") {
      v.type = TomlValue::Type::Float;
      v.number = body == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      if (word[0] == '-') v.number = -v.number;
      return;
    }
    if (body.size() > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'o' || body[1] == 'b'))
      fail(quoted + ": hexadecimal, octal and binary integers are not supported; write it in decimal");
    // Underscores only between digits.
    std::string clean;
    for (std::size_t k = 0; k < word.size(); ++k) {
      if (word[k] != '_') {
        clean += word[k];
        continue;
      }
      const bool ok = k > 0 && k + 1 < word.size() && std::isdigit(static_cast<unsigned char>(word[k - 1])) &&
                      std::isdigit(static_cast<unsigned char>(word[k + 1]));
      if (!ok) fail(quoted + " is not a value: '_' must sit between digits" + accepted);
    }
    const bool is_float = clean.find_first_of(".eE") != std::string::npos;
    std::string_view digits = clean;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
    if (digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0])))
      fail(quoted + " is not a value" + accepted);
    if (digits.size() > 1 && digits[0] == '0' && std::isdigit(static_cast<unsigned char>(digits[1])))
      fail(quoted + ": leading zeros are not allowed in TOML numbers");
    const char* b = clean.data() + (clean[0] == '+' ? 1 : 0);
    const char* e = clean.data() + clean.size();
    if (is_float) {
      const auto dot = clean.find('.');
      if (dot != std::string::npos &&
          (dot + 1 >= clean.size() || !std::isdigit(static_cast<unsigned char>(clean[dot + 1])) || dot == 0 ||
           !std::isdigit(static_cast<unsigned char>(clean[dot - 1]))))
        fail(quoted + ": a float needs digits on both sides of '.'" + accepted);
      double d = 0;
      auto [p, ec] = std::from_chars(b, e, d);
      if (ec != std::errc{} || p != e) fail(quoted + " is not a value" + accepted);
      v.type = TomlValue::Type::Float;
      v.number = d;
      return;
    }
    std::int64_t n = 0;
    auto [p, ec] = std::from_chars(b, e, n);
    if (ec == std::errc::result_out_of_range) fail(quoted + " does not fit a 64-bit integer");
    if (ec != std::errc{} || p != e) fail(quoted + " is not a value" + accepted);
    v.type = TomlValue::Type::Integer;
    v.integer = n;
  }

  static constexpr std::size_t kMaxDepth = 64;  // as the JSON reader's limit
  struct Unnest {
    int* depth;
    ~Unnest() {
      if (depth != nullptr) --*depth;
    }
  };

  std::string_view s_;
  const std::string& origin_;
  std::size_t i_ = 0;
  int line_ = 1;
  int depth_ = 0;
};

}  // namespace

const TomlValue* TomlValue::get(std::string_view key) const {
  for (const auto& [k, v] : table)
    if (k == key) return &v;
  return nullptr;
}

const char* TomlValue::type_name() const {
  switch (type) {
    case Type::String:
      return "a string";
    case Type::Integer:
      return "an integer";
    case Type::Float:
      return "a float";
    case Type::Bool:
      return "a boolean";
    case Type::Array:
      return "an array";
    case Type::Table:
      return "a table";
  }
  return "?";
}

TomlValue parse_toml(std::string_view text, const std::string& origin) {
  return TomlParser(text, origin).parse();
}

}  // namespace sim::importers
