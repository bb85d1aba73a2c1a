// sim/results/json.cpp: deterministic JSON serialisation.
#include "sim/results/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace sim::results {

Json& Json::operator[](const std::string& key) {
  if (is_null()) v_ = Object{};
  auto& obj = std::get<Object>(v_);
  for (auto& [k, v] : obj)
    if (k == key) return v;
  obj.emplace_back(key, Json());
  return obj.back().second;
}

void Json::push_back(Json v) {
  if (is_null()) v_ = Array{};
  std::get<Array>(v_).push_back(std::move(v));
}

std::vector<std::pair<std::string, std::string>> Json::leaves() const {
  std::vector<std::pair<std::string, std::string>> out;
  const auto walk = [&out](const auto& self, const Json& j, const std::string& path) -> void {
    if (const auto* o = std::get_if<Object>(&j.v_)) {
      for (const auto& [k, v] : *o)
        self(self, v, path.empty() ? k : path + "." + k);
    } else if (const auto* str = std::get_if<std::string>(&j.v_)) {
      out.emplace_back(path, *str);
    } else if (!std::holds_alternative<Array>(j.v_)) {
      out.emplace_back(path, j.dump(-1));
    }
  };
  walk(walk, *this, "");
  return out;
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

namespace {

void newline(std::string& out, int indent, int level) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent * level), ' ');
}

}  // namespace

void Json::dump_to(std::string& out, int indent, int level) const {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          out += "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          out += x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          out += std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(x)) {
            out += "null";
            return;
          }
          char buf[32];
          auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, x);
          std::string_view text(buf, static_cast<std::size_t>(ptr - buf));
          out += text;
          // Keep doubles recognisable as numbers with a fraction or exponent ("2.0", not "2").
          if (text.find_first_of(".en") == std::string_view::npos) out += ".0";
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += json_quote(x);
        } else if constexpr (std::is_same_v<T, Array>) {
          if (x.empty()) {
            out += "[]";
            return;
          }
          out += '[';
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (i) out += indent < 0 ? "," : ",";
            newline(out, indent, level + 1);
            x[i].dump_to(out, indent, level + 1);
          }
          newline(out, indent, level);
          out += ']';
        } else {
          if (x.empty()) {
            out += "{}";
            return;
          }
          out += '{';
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (i) out += ',';
            newline(out, indent, level + 1);
            out += json_quote(x[i].first);
            out += indent < 0 ? ":" : ": ";
            x[i].second.dump_to(out, indent, level + 1);
          }
          newline(out, indent, level);
          out += '}';
        }
      },
      v_);
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

}  // namespace sim::results
