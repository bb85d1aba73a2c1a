// The layer rule (DESIGN.md "Architecture") as a test: every `#include "..."` line under sim/, reports/ and calibrate/
// names a folder the includer may depend on, as tests/data/layers.txt lists them. An include that reaches up a layer,
// sideways to a peer, or to a folder the data does not name fails with its file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = TRAINSIM_SOURCE_DIR;

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

/// tests/data/layers.txt: layer lines (top first) and, for folders outside the picture, explicit lists.
struct Layers {
  std::vector<std::vector<std::string>> lines;         // as written, top first
  std::map<std::string, int> level;                    // folder -> line index counted from the bottom (base = 0)
  std::map<std::string, std::set<std::string>> lists;  // "calibrate/fit" -> folders it may include

  static Layers parse(std::istream& in) {
    Layers l;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      if (const auto colon = line.find(':'); colon != std::string::npos) {
        auto& allowed = l.lists[line.substr(0, colon)];
        for (auto& w : words(line.substr(colon + 1)))
          allowed.insert(w);
        continue;
      }
      l.lines.push_back(words(line));
    }
    for (std::size_t i = 0; i < l.lines.size(); ++i)
      for (const auto& f : l.lines[i])
        l.level[f] = static_cast<int>(l.lines.size() - 1 - i);
    return l;
  }

  /// Empty when `from` may include `to`, else why not.
  std::string violation(const std::string& from, const std::string& to) const {
    const auto list = lists.find(from);
    const auto f = level.find(from);
    if (list == lists.end() && f == level.end()) return "folder '" + from + "' is not in tests/data/layers.txt";
    if (from == to || to == "base") return {};
    if (list != lists.end()) {
      if (list->second.contains(to)) return {};
      return "'" + to + "' is not among the folders " + from + " may include (tests/data/layers.txt)";
    }
    const auto t = level.find(to);
    if (t == level.end()) return "'" + to + "' is not a folder of the layer picture (tests/data/layers.txt)";
    if (t->second == f->second) return "'" + to + "' is a peer of " + from + " (same layer line)";
    if (t->second > f->second) return "'" + to + "' is above " + from + " (upward include)";
    return {};
  }
};

Layers load_layers() {
  std::ifstream in(kSource / "tests/data/layers.txt");
  EXPECT_TRUE(in) << "cannot read tests/data/layers.txt";
  return Layers::parse(in);
}

/// The folder a repository path belongs to: "sim/cli/app.cpp" -> "cli", "calibrate/fit/x.hpp" -> "calibrate/fit",
/// "reports/html.cpp" -> "reports"; empty for anything else (a third-party or relative include).
std::string folder_of(const std::string& path) {
  const auto first = path.find('/');
  if (first == std::string::npos) return {};
  const std::string top = path.substr(0, first);
  if (top == "reports") return "reports";
  const auto second = path.find('/', first + 1);
  if (second == std::string::npos) return {};
  if (top == "sim") return path.substr(first + 1, second - first - 1);
  if (top == "calibrate") return path.substr(0, second);
  return {};
}

struct Include {
  std::string file;  // repository-relative
  int line = 0;
  std::string target;
};

/// Every `#include "..."` of the C++, CUDA and template sources under the three trees.
std::vector<Include> project_includes(const fs::path& root) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  static const std::set<std::string> kExtensions = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".in"};
  std::vector<Include> out;
  for (const char* tree : {"sim", "reports", "calibrate"}) {
    if (!fs::exists(root / tree)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / tree)) {
      if (!e.is_regular_file() || !kExtensions.contains(e.path().extension().string())) continue;
      std::ifstream in(e.path());
      int n = 0;
      std::smatch m;
      for (std::string line; std::getline(in, line);) {
        ++n;
        if (std::regex_search(line, m, kInclude))
          out.push_back({fs::relative(e.path(), root).generic_string(), n, m[1].str()});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Include& a, const Include& b) { return std::tie(a.file, a.line) < std::tie(b.file, b.line); });
  return out;
}

/// "file:line: #include "x": why" for each include that breaks the rule.
std::vector<std::string> violations(const Layers& layers, const std::vector<Include>& includes) {
  std::vector<std::string> out;
  for (const auto& inc : includes) {
    const std::string from = folder_of(inc.file);
    const std::string to = folder_of(inc.target);
    std::string why;
    if (to.empty())
      why = "not a path from the repository root (sim/FOLDER/..., reports/..., calibrate/FOLDER/...)";
    else
      why = layers.violation(from, to);
    if (!why.empty())
      out.push_back(inc.file + ":" + std::to_string(inc.line) + ": #include \"" + inc.target + "\": " + why);
  }
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines)
    s += l + "\n";
  return s;
}

TEST(LayersTest, EveryIncludeUnderSimReportsAndCalibrateKeepsTheLayerRule) {
  const auto layers = load_layers();
  const auto includes = project_includes(kSource);
  ASSERT_GT(includes.size(), 300u) << "the scan found too few includes to be reading the sources";
  const auto bad = violations(layers, includes);
  EXPECT_TRUE(bad.empty()) << bad.size() << " include(s) break the layer rule (DESIGN.md \"Architecture\"):\n"
                           << joined(bad);
}

TEST(LayersTest, FailsOnAnUpwardSidewaysOrUnlistedInclude) {
  const auto layers = load_layers();
  const std::vector<Include> injected = {
      {"sim/engine/event.hpp", 3, "sim/cli/app.hpp"},                  // upward
      {"sim/reliability/run_trial.cpp", 4, "sim/cost/cost.hpp"},       // peer on the same line
      {"sim/workload/params.cpp", 5, "params_local.hpp"},              // not from the repository root
      {"sim/newfolder/x.cpp", 6, "sim/base/units.hpp"},                // a folder the data does not name
      {"calibrate/fit/fit_gemm.cpp", 7, "sim/scenario/scenario.hpp"},  // outside calibrate/fit's list
      {"sim/execution/step_sim.cpp", 8, "sim/engine/simulator.hpp"},   // allowed: downward
  };
  const auto bad = violations(layers, injected);
  ASSERT_EQ(bad.size(), 5u) << joined(bad);
  EXPECT_NE(bad[0].find("upward"), std::string::npos) << bad[0];
  EXPECT_NE(bad[1].find("peer"), std::string::npos) << bad[1];
  EXPECT_NE(bad[2].find("not a path from the repository root"), std::string::npos) << bad[2];
  EXPECT_NE(bad[3].find("'newfolder' is not in"), std::string::npos) << bad[3];
  EXPECT_NE(bad[4].find("not among the folders calibrate/fit may include"), std::string::npos) << bad[4];
}

// The data file is the picture: same lines, same folders, where DESIGN.md is found beside the project.
TEST(LayersTest, DataMatchesTheDesignPicture) {
  std::ifstream in(kSource / "../shared/DESIGN.md");
  if (!in) GTEST_SKIP() << "../shared/DESIGN.md not found beside the project";
  std::vector<std::string> picture;
  bool in_section = false, in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) in_section = line == "## Architecture";
    if (!in_section) continue;
    if (line.starts_with("```")) {
      if (in_block) break;
      in_block = true;
      continue;
    }
    if (in_block) picture.push_back(line);
  }
  const auto layers = load_layers();
  ASSERT_EQ(picture.size(), layers.lines.size()) << "DESIGN.md's picture and tests/data/layers.txt differ in lines";
  for (std::size_t i = 0; i < picture.size(); ++i) {
    const auto w = words(picture[i]);
    // The picture's line starts with its folders; the rest is the description.
    for (std::size_t k = 0; k < layers.lines[i].size(); ++k)
      EXPECT_TRUE(k < w.size() && w[k] == layers.lines[i][k])
          << "line " << i + 1 << ": data has '" << layers.lines[i][k] << "', DESIGN.md has \"" << picture[i] << "\"";
  }
}

}  // namespace
