// tests/support/temp_dir.hpp: a per-test scratch directory, removed afterwards.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <unistd.h>

namespace support {

class TempDir {
 public:
  TempDir() {
    auto base = std::filesystem::temp_directory_path();
    for (int i = 0;; ++i) {
      path_ = base / ("trainsim-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) + "-" +
                      std::to_string(i));
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// Writes `text` to `name` inside the directory and returns the full path.
  std::string write(const std::string& name, std::string_view text) const {
    auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  static int& counter() {
    static int n = 0;  // test-local uniqueness only
    return n;
  }
  std::filesystem::path path_;
};

}  // namespace support
