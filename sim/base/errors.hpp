// sim/base/errors.hpp: user-facing error types; a ConfigError carries every problem found in one input.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::base {

/// One problem in one input: where (file and JSON path) and what (found vs accepted).
struct Diagnostic {
  std::string file;     // "scenarios/default.json", "--set", "<inline>"
  std::string path;     // JSON pointer, "/parallel/tp"; empty for the whole file
  std::string message;  // "expected an integer, found \"8\" (a string)"

  /// "scenarios/default.json: /parallel/tp: expected an integer, found "8" (a string)"
  std::string to_string() const;
};

/// Collects diagnostics while an input is read, so that one pass reports every problem.
class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  void add(std::string path, std::string message) { items_.push_back({file_, std::move(path), std::move(message)}); }
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  bool empty() const { return items_.empty(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  const std::string& file() const { return file_; }
  /// Throws one ConfigError listing everything collected so far, if anything was.
  void throw_if_any() const;

 private:
  std::string file_;
  std::vector<Diagnostic> items_;
};

/// Invalid input: exit code 2. what() is every diagnostic, one per line.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> items);
  ConfigError(std::string file, std::string path, std::string message);
  const std::vector<Diagnostic>& items() const { return items_; }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace sim::base
