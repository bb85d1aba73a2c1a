// Ctrl-C and SIGTERM during a long run, plan or step: the real binary, as a subprocess, stops promptly with exit code
// 130 and leaves no result and no temporary file behind (DESIGN.md: outputs are written atomically; an interrupted run
// never leaves a half-written report that looks complete).
#include "sim/cli/app.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Stopped {
  int status = 0;             // as waitpid reports it
  double after_signal_s = 0;  // from the signal to the exit
  std::string err;            // the child's stderr
};

/// Starts TRAINSIM_BINARY with `args` in `cwd` (stdout and stderr to files in `logs`), sends `sig` once `ready()`
/// holds (not when the child has exited by then), and waits up to `limit` for it to exit; a child still alive then is
/// killed and reported as status -1.
Stopped interrupt_when(const std::vector<std::string>& args, const fs::path& cwd, const fs::path& logs, int sig,
                       const std::function<bool()>& ready, std::chrono::seconds limit) {
  std::vector<std::string> argv_s = {TRAINSIM_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::string out_path = (logs / "stdout").string(), err_path = (logs / "stderr").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << TRAINSIM_BINARY;
  Stopped s;
  if (rc != 0) return s;

  bool exited = false;
  while (!ready()) {
    if (::waitpid(pid, &s.status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (!exited) ::kill(pid, sig);
  const auto signalled = Clock::now();
  while (!exited) {
    const pid_t done = ::waitpid(pid, &s.status, WNOHANG);
    if (done == pid) break;
    if (Clock::now() - signalled > limit) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &s.status, 0);
      s.status = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  s.after_signal_s = std::chrono::duration<double>(Clock::now() - signalled).count();
  std::ifstream in(err_path);
  std::ostringstream buf;
  buf << in.rdbuf();
  s.err = buf.str();
  return s;
}

/// The same, the signal `delay` after the start.
Stopped interrupt(const std::vector<std::string>& args, const fs::path& cwd, const fs::path& logs, int sig,
                  std::chrono::milliseconds delay, std::chrono::seconds limit) {
  const auto start = Clock::now();
  return interrupt_when(
      args, cwd, logs, sig, [&] { return Clock::now() - start >= delay; }, limit);
}

/// Every regular file below `dir` (none when it does not exist).
std::vector<std::string> files_below(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (!e.is_directory()) out.push_back(fs::relative(e.path(), dir).string());
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += s + " ";
  return out;
}

/// A run of a million trials takes many minutes; the signal arrives about 1.5 s in, during the Monte Carlo loop.
/// The 30 s limit only tells a hang from a stop: the work between two checks of the stop flag is one trial or one
/// configuration (milliseconds in a release build), and the stop takes well under a second (printed below), but a
/// shared CI machine under a sanitizer is slow and noisy, so no test here times it.
void expect_clean_stop(const std::vector<std::string>& args, int sig, const fs::path& cwd, const fs::path& logs) {
  const Stopped s = interrupt(args, cwd, logs, sig, std::chrono::milliseconds(1500), std::chrono::seconds(30));
  ASSERT_NE(s.status, -1) << "still running 30 s after signal " << sig << "; stderr:\n" << s.err;
  ASSERT_TRUE(WIFEXITED(s.status)) << "killed by signal " << (WIFSIGNALED(s.status) ? WTERMSIG(s.status) : 0)
                                   << " instead of exiting; stderr:\n"
                                   << s.err;
  EXPECT_EQ(WEXITSTATUS(s.status), sim::cli::kExitInterrupted) << s.err;
  EXPECT_NE(s.err.find("interrupted"), std::string::npos) << s.err;
  std::printf("[interrupt] signal %d: exit %d after %.3f s\n", sig, WEXITSTATUS(s.status), s.after_signal_s);
}

class Interrupt : public ::testing::TestWithParam<int> {};

TEST_P(Interrupt, RunStopsWithExitCode130AndWritesNothing) {
  support::TempDir cwd, logs;
  const fs::path out = cwd.path() / "out";
  fs::create_directories(out);
  expect_clean_stop(
      {"run", support::kDefaultScenario, "--trials", "1000000", "--out", out.string(), "--progress", "never"},
      GetParam(), cwd.path(), logs.path());
  EXPECT_EQ(joined(files_below(out)), "") << "no result file, complete or partial, and no temporary file";
  EXPECT_EQ(joined(files_below(cwd.path())), "") << "nothing written next to the output directory either";
}

TEST_P(Interrupt, RunStopsInsideOneLongTrial) {
  // A node failure every second (128 nodes: one every 8 ms): each trial runs to the per-trial event budget (ten million
  // events, about half a second), so the signal arrives inside a trial; the trial checks the stop flag itself (issue
  // 22: before, signals were heard only between trials, and a trial could run for tens of minutes).
  support::TempDir cwd, logs;
  expect_clean_stop(
      {"run", support::kDefaultScenario, "--trials", "1000", "--threads", "1", "--progress", "never", "--set",
       R"(reliability.failures={"components": [{"name": "fast", "scope": "node", "mtbf": "1 s",
                         "effect": "crash", "repair": "1 s"}], "replace": true})"},
      GetParam(), cwd.path(), logs.path());
  EXPECT_EQ(joined(files_below(cwd.path())), "");
}

TEST_P(Interrupt, MainJobStopsWithExitCode130AndWritesNoReport) {
  support::TempDir cwd, logs;
  expect_clean_stop({support::kDefaultScenario, "--set", "reliability.trials=1000000", "--progress", "never"},
                    GetParam(), cwd.path(), logs.path());
  EXPECT_EQ(joined(files_below(cwd.path() / "trainsim-out")), "") << "no report folder content";
}

TEST_P(Interrupt, StepAtFullFidelityStopsWithExitCode130) {
  // 131,072 GPUs at full fidelity: tens of seconds of simulation that polls no progress bar.
  support::TempDir cwd, logs;
  expect_clean_stop({"step", support::kDefaultScenario, "--fidelity", "full", "--set", "cluster.gpus=131072", "--set",
                     "parallel.dp=4096", "--set", "parallel.global_batch=16384"},
                    GetParam(), cwd.path(), logs.path());
  EXPECT_EQ(joined(files_below(cwd.path())), "");
}

TEST_P(Interrupt, PlanStopsWithExitCode130) {
  // Every parallel field free and 100,000 run-level trials per finalist: minutes of search.
  support::TempDir cwd, logs;
  expect_clean_stop({"plan", support::kDefaultScenario, "--free", "all", "--trials", "100000", "--progress", "never"},
                    GetParam(), cwd.path(), logs.path());
  EXPECT_EQ(joined(files_below(cwd.path())), "");
}

// A signal once the report is written: the run finishes as it would have (exit 0) and says so, never "stopped before
// writing any result" beside complete files (a user trial got that, exit 130, about one time in two). The signal is
// sent as soon as the last file of the set is there; when the process has exited by then there is nothing to check.
TEST_P(Interrupt, ASignalAfterTheReportIsWrittenLetsTheRunFinish) {
  support::TempDir cwd, logs;
  const fs::path out = cwd.path() / "out";
  const Stopped s = interrupt_when(
      {"run", support::kDefaultScenario, "--trials", "50", "--out", out.string(), "--progress", "never"}, cwd.path(),
      logs.path(), GetParam(),
      [&, start = Clock::now()] {
        return fs::exists(out / "result.csv") || Clock::now() - start > std::chrono::minutes(1);
      },
      std::chrono::seconds(60));
  ASSERT_TRUE(WIFEXITED(s.status)) << s.err;
  EXPECT_EQ(s.err.find("stopped before writing any result"), std::string::npos) << s.err;
  if (WEXITSTATUS(s.status) != 0) {  // only a second signal stops it, and then it says the files are complete
    EXPECT_NE(s.err.find("the files written before it are complete"), std::string::npos) << s.err;
  }
  EXPECT_EQ(WEXITSTATUS(s.status), 0) << s.err;
  for (const char* f : {"report.html", "summary.md", "result.json", "result.csv"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupt, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return p.param == SIGINT ? "Sigint" : "Sigterm";
                         });

}  // namespace
