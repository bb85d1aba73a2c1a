// sim/base/table.hpp: plain-text tables with aligned columns for terminal output.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace sim::base {

class Table {
 public:
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
