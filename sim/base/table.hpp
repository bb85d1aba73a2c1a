// sim/base/table.hpp: plain-text tables with aligned columns for terminal output.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace sim::base {

/// A number with `digits` decimals ("%.*f"), for table cells and one-line summaries.
std::string fmt(double v, int digits);
/// A fraction as a percentage with one decimal: 0.4213 -> "42.1%".
std::string pct(double fraction);

/// How every Table prints: aligned text (the terminal), a GitHub-flavoured Markdown table, or CSV (RFC 4180 quoting),
/// as `--format table|md|csv` asks; one setting for the process.
enum class TableStyle { Text, Markdown, Csv };

class Table {
 public:
  static void set_style(TableStyle style);
  static TableStyle style();
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  /// Cells are made inert for a terminal (base::printable): a name from an input cannot move the cursor or start a
  /// CI workflow command.
  void add(std::vector<std::string> row);
  /// Right-aligns numeric columns (every cell starts like a number), left-aligns the rest, two spaces apart.
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace sim::base
