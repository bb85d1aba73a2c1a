// sim/base/table.cpp: column widths and alignment.
#include "sim/base/table.hpp"

#include "sim/base/printable.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace sim::base {
namespace {

/// Display width in code points (UTF-8 continuation bytes do not take a column).
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

TableStyle g_style = TableStyle::Text;

std::string csv_cell(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string q = "\"";
  for (char c : cell)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string md_cell(const std::string& cell) {
  std::string m;
  for (char c : cell)
    m += c == '|' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return m;
}

}  // namespace

void Table::set_style(TableStyle style) {
  g_style = style;
}

TableStyle Table::style() {
  return g_style;
}

std::string fmt(double v, int digits) {
  char buf[64];
  // From 1e15 on, four significant digits and an exponent: "%.0f" of 1e300 is 301 digits (cut at 63 here, a wrong
  // number), as an absurd input's cost once printed.
  if (std::fabs(v) >= 1e15 && std::isfinite(v)) {
    std::snprintf(buf, sizeof buf, "%.3e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  }
  return buf;
}

std::string pct(double f) {
  return fmt(100.0 * f, 1) + "%";
}

void Table::add(std::vector<std::string> row) {
  for (auto& cell : row)
    cell = base::printable(cell);
  rows_.push_back(std::move(row));
}

void Table::print(std::ostream& out) const {
  if (g_style != TableStyle::Text) {
    const bool md = g_style == TableStyle::Markdown;
    auto line = [&](const std::vector<std::string>& row) {
      for (std::size_t i = 0; i < header_.size(); ++i) {
        const std::string cell = i < row.size() ? row[i] : "";
        out << (md ? (i ? " | " : "| ") + md_cell(cell) : (i ? "," : "") + csv_cell(cell));
      }
      out << (md ? " |\n" : "\n");
    };
    line(header_);
    if (md) line(std::vector<std::string>(header_.size(), "---"));
    for (const auto& r : rows_)
      line(r);
    return;
  }
  std::vector<std::size_t> w(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < w.size(); ++i)
      w[i] = std::max(w[i], width(row[i]));
  };
  widen(header_);
  for (const auto& r : rows_)
    widen(r);
  // A column is numeric (right-aligned) when every data cell starts like a number or is a "-" placeholder.
  std::vector<bool> numeric(w.size(), !rows_.empty());
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) {
      const char c = r[i].empty() ? '-' : r[i][0];
      if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.')) numeric[i] = false;
    }
  auto line = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string pad(w[i] - width(cell), ' ');
      if (i) out << "  ";
      out << (numeric[i] && i > 0 ? pad + cell : (i + 1 == w.size() ? cell : cell + pad));
    }
    out << '\n';
  };
  line(header_);
  std::vector<std::string> rule;
  for (auto x : w)
    rule.emplace_back(x, '-');
  line(rule);
  for (const auto& r : rows_)
    line(r);
}

}  // namespace sim::base
