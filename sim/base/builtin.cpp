// sim/base/builtin.cpp: lookup in the table of data files compiled into the binary.
#include "sim/base/builtin.hpp"

namespace sim::base {
namespace detail {
extern const BuiltinFile kBuiltinFiles[];
extern const std::size_t kBuiltinFileCount;
}  // namespace detail

std::span<const BuiltinFile> builtin_files() {
  return {detail::kBuiltinFiles, detail::kBuiltinFileCount};
}

std::optional<std::string_view> builtin_text(std::string_view path) {
  for (const auto& f : builtin_files())
    if (f.path == path) return f.text;
  return std::nullopt;
}

std::vector<std::string> builtin_names(std::string_view folder) {
  std::vector<std::string> out;
  for (const auto& f : builtin_files()) {
    if (f.path.size() <= folder.size() + 1 || !f.path.starts_with(folder) || f.path[folder.size()] != '/') continue;
    std::string_view stem = f.path.substr(folder.size() + 1);
    if (stem.find('/') != std::string_view::npos || !stem.ends_with(".json")) continue;
    out.emplace_back(stem.substr(0, stem.size() - 5));
  }
  return out;
}

}  // namespace sim::base
