// sim/base/errors.cpp: formatting of diagnostics.
#include "sim/base/errors.hpp"

namespace sim::base {
namespace {

std::string join(const std::vector<Diagnostic>& items) {
  std::string out;
  for (const auto& d : items) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}

}  // namespace

std::string Diagnostic::to_string() const {
  std::string out = file;
  if (!path.empty()) out += ": " + path;
  out += ": " + message;
  return out;
}

void Diagnostics::throw_if_any() const {
  if (!items_.empty()) throw ConfigError(items_);
}

ConfigError::ConfigError(std::vector<Diagnostic> items) : std::runtime_error(join(items)), items_(std::move(items)) {}

ConfigError::ConfigError(std::string file, std::string path, std::string message)
    : ConfigError(std::vector<Diagnostic>{{std::move(file), std::move(path), std::move(message)}}) {}

}  // namespace sim::base
