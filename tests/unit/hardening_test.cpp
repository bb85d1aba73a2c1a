// Issue 22's regression tests for the writer, the reader and the escaping function: outputs that never destroy
// (links, devices, planted temporary names, a full device), report folders that change as one with one writer,
// inputs that cannot block or fill memory (FIFO, /dev/zero, oversized, NUL, UTF-16), parsers with depth limits,
// and text made inert for terminals and CI logs.
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/input_file.hpp"
#include "sim/base/json_reader.hpp"
#include "sim/base/printable.hpp"
#include "sim/importers/toml.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using sim::base::ConfigError;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The message of the ConfigError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string entries(const fs::path& dir) {
  std::string out;
  for (const auto& e : fs::directory_iterator(dir))
    out += e.path().filename().string() + " ";
  return out;
}

// ---- the writer --------------------------------------------------------------------------------------------------

TEST(OutputWriter, ReplacesARegularFileWholeAndLeavesNoTemporaryFile) {
  support::TempDir d;
  const fs::path p = d.write("out.json", "old");
  sim::base::write_file_atomic(p.string(), "new");
  EXPECT_EQ(slurp(p), "new");
  EXPECT_EQ(entries(d.path()), "out.json ");
}

TEST(OutputWriter, RefusesASymbolicLinkAndLeavesItsTargetAlone) {
  support::TempDir d;
  const fs::path target = d.write("precious", "keep");
  fs::create_symlink(target, d.path() / "link");
  const std::string e = error_of([&] { sim::base::write_file_atomic((d.path() / "link").string(), "x"); });
  EXPECT_NE(e.find("symbolic link"), std::string::npos) << e;
  EXPECT_EQ(slurp(target), "keep");
  EXPECT_TRUE(fs::is_symlink(d.path() / "link"));
}

TEST(OutputWriter, NeverFollowsALinkPlantedAtTheOldTemporaryName) {
  // The old writer used .NAME.tmp<PID>: anyone who could write the folder could point it anywhere.
  support::TempDir d;
  const fs::path target = d.write("precious", "keep");
  fs::create_symlink(target, d.path() / (".out.json.tmp" + std::to_string(::getpid())));
  sim::base::write_file_atomic((d.path() / "out.json").string(), "result");
  EXPECT_EQ(slurp(target), "keep");
  EXPECT_EQ(slurp(d.path() / "out.json"), "result");
}

TEST(OutputWriter, WritesCharacterDevicesInPlaceAndReportsAFullOne) {
  sim::base::write_file_atomic("/dev/null", "discarded");
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must stay a device";
  const std::string e = error_of([] { sim::base::write_file_atomic("/dev/full", "x"); });
  EXPECT_NE(e.find("No space left"), std::string::npos) << e;
  ASSERT_EQ(::lstat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputWriter, RefusesFifosDirectoriesAndEmptyNamesWithoutBlocking) {
  support::TempDir d;
  const auto fifo = d.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { sim::base::write_file_atomic(fifo.string(), "x"); }).find("FIFO"), std::string::npos);
  EXPECT_NE(error_of([&] { sim::base::write_file_atomic(d.path().string(), "x"); }).find("directory"),
            std::string::npos);
  EXPECT_NE(error_of([] { sim::base::write_file_atomic("", "x"); }).find("empty"), std::string::npos);
}

TEST(OutputFolder, ReplacesTheFourFilesAsOneAndKeepsTheOtherEntries) {
  support::TempDir d;
  const auto dir = d.path() / "report";
  fs::create_directories(dir);
  std::ofstream(dir / "report.html") << "old";
  std::ofstream(dir / "notes.txt") << "mine";
  const sim::base::FolderLock lock(dir.string());
  const auto written = sim::base::write_file_set(dir.string(), {{"report.html", "new"}, {"result.json", "{}"}});
  EXPECT_EQ(written.size(), 2U);
  EXPECT_EQ(slurp(dir / "report.html"), "new");
  EXPECT_EQ(slurp(dir / "result.json"), "{}");
  EXPECT_EQ(slurp(dir / "notes.txt"), "mine") << "entries trainsim did not write move with the folder";
  EXPECT_EQ(entries(d.path()), "report ") << "no hidden folder left beside it";
}

TEST(OutputFolder, ASecondWriterIsRefused) {
  support::TempDir d;
  const auto dir = (d.path() / "report").string();
  const sim::base::FolderLock first(dir);
  const std::string e = error_of([&] { const sim::base::FolderLock second(dir); });
  EXPECT_NE(e.find("another trainsim process is writing"), std::string::npos) << e;
}

// A signal that ends the process without unwinding (Ctrl-C before any result) removes the folders the live lock made
// while they are empty, as the lock's destructor would; a user trial found an early Ctrl-C left the empty folder.
TEST(OutputFolder, ASignalBeforeAnyResultRemovesTheFoldersTheLockMade) {
  support::TempDir d;
  {
    const sim::base::FolderLock lock((d.path() / "a" / "b").string());
    ASSERT_TRUE(fs::exists(d.path() / "a" / "b"));
    sim::base::remove_created_folders_after_signal();
    EXPECT_FALSE(fs::exists(d.path() / "a")) << "both folders it created";
  }
  {
    const sim::base::FolderLock lock((d.path() / "c").string());
    std::ofstream(d.path() / "c" / "mine") << "x";
    sim::base::remove_created_folders_after_signal();
    EXPECT_TRUE(fs::exists(d.path() / "c" / "mine")) << "a folder with a file stays";
  }
  sim::base::remove_created_folders_after_signal();  // no lock alive: nothing to do
  EXPECT_TRUE(fs::exists(d.path() / "c"));
}

TEST(OutputFolder, RefusesLinksAndParentNames) {
  support::TempDir d;
  fs::create_directories(d.path() / "real");
  fs::create_directory_symlink(d.path() / "real", d.path() / "link");
  EXPECT_NE(error_of([&] { const sim::base::FolderLock l((d.path() / "link").string()); }).find("symbolic link"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::base::write_file_set((d.path() / "..").string(), {}); }).find("parent"),
            std::string::npos);
}

// A user trial: a relative output path through a linked parent folder (a checkout's `reports -> /elsewhere`, then
// `--out reports/pr123`) wrote outside the workspace. Refused for files and folders; an absolute path is as typed.
TEST(OutputFolder, ARelativePathThroughALinkedParentIsRefused) {
  support::TempDir d;
  fs::create_directories(d.path() / "outside");
  fs::create_directory_symlink(d.path() / "outside", d.path() / "reports");
  const fs::path cwd = fs::current_path();
  fs::current_path(d.path());
  const std::string file = error_of([] { sim::base::write_file_atomic("reports/t.json", "{}"); });
  const std::string folder = error_of([] { const sim::base::FolderLock l("reports/pr123"); });
  fs::create_directories(d.path() / "real");
  sim::base::write_file_atomic("./real/a.json", "{}");  // no link on the way: written
  fs::current_path(d.path() / "real");
  sim::base::write_file_atomic("../b.json", "{}");
  fs::current_path(cwd);
  EXPECT_TRUE(fs::exists(d.path() / "real" / "a.json"));
  EXPECT_TRUE(fs::exists(d.path() / "b.json"));
  EXPECT_NE(file.find("reports/t.json: its folder reports is a symbolic link"), std::string::npos) << file;
  EXPECT_NE(folder.find("reports/pr123: its folder reports is a symbolic link"), std::string::npos) << folder;
  EXPECT_TRUE(fs::is_empty(d.path() / "outside")) << "nothing written through the link";
  sim::base::write_file_atomic((d.path() / "reports" / "abs.json").string(), "{}");
  EXPECT_TRUE(fs::exists(d.path() / "outside" / "abs.json")) << "an absolute path is taken as typed";
}

// ---- the reader --------------------------------------------------------------------------------------------------

TEST(InputReader, RefusesWhatCouldBlockOrNeverEnd) {
  support::TempDir d;
  const auto fifo = d.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { sim::base::read_input_file(fifo.string(), "a scenario file"); }).find("FIFO"),
            std::string::npos);
  EXPECT_NE(error_of([] { sim::base::read_input_file("/dev/zero", "a scenario file"); }).find("character device"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::base::read_input_file(d.path().string(), "a scenario file"); }).find("directory"),
            std::string::npos);
}

TEST(InputReader, RefusesOversizedNulAndUtf16Files) {
  support::TempDir d;
  const fs::path big = d.write("big", std::string(2000, 'a'));
  EXPECT_NE(error_of([&] { sim::base::read_input_file(big.string(), "a log", 1000); }).find("larger than 1000 bytes"),
            std::string::npos);
  const fs::path nul = d.write("nul", std::string("{}\0{}", 5));
  EXPECT_NE(error_of([&] { sim::base::read_input_file(nul.string(), "a log"); }).find("NUL byte at offset 2"),
            std::string::npos);
  const fs::path utf16 = d.write("utf16", std::string("\xff\xfe{\0}\0", 6));
  EXPECT_NE(error_of([&] { sim::base::read_input_file(utf16.string(), "a log"); }).find("UTF-16"), std::string::npos);
  EXPECT_EQ(sim::base::read_input_file(big.string(), "a log"), std::string(2000, 'a'));
}

TEST(InputReader, NamesLinkLoopsAndDanglingLinks) {
  support::TempDir d;
  fs::create_symlink(d.path() / "b", d.path() / "a");
  fs::create_symlink(d.path() / "a", d.path() / "b");
  fs::create_symlink(d.path() / "gone", d.path() / "dangling");
  EXPECT_NE(error_of([&] { sim::base::read_input_file((d.path() / "a").string(), "x"); }).find("loop"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::base::read_input_file((d.path() / "dangling").string(), "x"); }).find("link to a"),
            std::string::npos);
}

// ---- the parsers' depth limits -----------------------------------------------------------------------------------

TEST(DepthLimits, SetRefusesADeepKeyOrValue) {
  auto doc = sim::base::JsonDocument::parse_text("{}", "t");
  std::string key;
  for (int i = 0; i < 50000; ++i)
    key += "a.";
  key += "a";
  EXPECT_NE(error_of([&] { doc.set(key, "1"); }).find("segments"), std::string::npos);
  EXPECT_NE(error_of([&] { doc.set("x", std::string(35000, '[')); }).find("deeper than"), std::string::npos);
  doc.set("a.b.c", "[[1]]");  // a few levels are fine
}

TEST(DepthLimits, TomlRefusesDeepArraysTablesAndKeys) {
  // toml++ bounds arrays and inline tables (TOML_MAX_NESTED_VALUES, set to 64 in sim/importers/toml.cpp); dotted keys,
  // which it does not bound, are refused before parsing.
  EXPECT_NE(error_of([] {
              sim::importers::parse_toml("a = " + std::string(35000, '['), "t.toml");
            }).find("exceeded maximum nested value depth of 64"),
            std::string::npos);
  std::string tables = "a = ";
  for (int i = 0; i < 35000; ++i)
    tables += "{b = ";
  EXPECT_NE(error_of([&] { sim::importers::parse_toml(tables, "t.toml"); }).find("nested value depth of 64"),
            std::string::npos);
  std::string key;
  for (int i = 0; i < 40000; ++i)
    key += "k.";
  EXPECT_NE(error_of([&] { sim::importers::parse_toml(key + "k = 1", "t.toml"); }).find("more than 64 parts"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::importers::parse_toml("[" + key + "k]", "t.toml"); }).find("more than 64 parts"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::importers::parse_toml("a = {" + key + "k = 1}", "t.toml"); }).find("more than 64"),
            std::string::npos);
  EXPECT_NO_THROW(sim::importers::parse_toml("v = \"" + key + "\" # " + key + "\nx.y.z = 1.5", "t.toml"))
      << "dots in strings, comments and numbers are not key parts";
}

// Found by fuzz_importers: toml++ 3.3.0 reached a "cannot happen" branch classifying non-ASCII text outside strings
// (U+00D3 here; UBSan: unreachable program point). Now an error like any other, and non-ASCII inside strings is fine.
TEST(TomlNonAscii, OutsideStringsIsAnErrorInsideIsText) {
  for (const char* bad : {"a = 1 \xc3\x93\n", "a\xc3\xa9 = 1\n", "a = 1 \xe3\x80\x81\n", "a = 1 \xef\xbb\xbe\n"})
    EXPECT_NE(error_of([&] { sim::importers::parse_toml(bad, "t.toml"); }).find("t.toml: line 1:"), std::string::npos)
        << bad;
  EXPECT_EQ(sim::importers::parse_toml("a = \"caf\xc3\xa9 \xe3\x80\x81\" # \xc3\x93\n", "t.toml").get("a")->string,
            "caf\xc3\xa9 \xe3\x80\x81");
}

// ---- the escaping function ---------------------------------------------------------------------------------------

TEST(Printable, EscapesControlsWorkflowCommandsAndBidiOverrides) {
  using sim::base::printable;
  EXPECT_EQ(printable("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(printable("two\nlines\r"), "two\\x0alines\\x0d");
  EXPECT_EQ(printable("::add-mask::x"), "\\x3a:add-mask::x");
  EXPECT_EQ(printable("a::b"), "a::b");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m")
      << "C1 CSI";
  EXPECT_EQ(printable("bidi\xe2\x80\xae"), "bidi\\u202e");
  EXPECT_EQ(printable("\xff\xc0"), "\\xff\\xc0") << "invalid UTF-8";
  EXPECT_EQ(printable("llama3-70b \xc3\xa9\xe2\x82\xac"), "llama3-70b \xc3\xa9\xe2\x82\xac") << "UTF-8 kept";
}

}  // namespace
