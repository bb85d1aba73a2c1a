// sim/base/builtin.hpp: the data files compiled into the binary (models, hardware profiles, default scenario).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sim::base {

struct BuiltinFile {
  std::string_view path;  // relative to the repository: "models/llama3-70b.json"
  std::string_view text;
};

std::span<const BuiltinFile> builtin_files();
std::optional<std::string_view> builtin_text(std::string_view path);
/// Names (file stems) of the built-in files in one folder: builtin_names("models") -> {"gpt3-175b", ...}.
std::vector<std::string> builtin_names(std::string_view folder);

}  // namespace sim::base
