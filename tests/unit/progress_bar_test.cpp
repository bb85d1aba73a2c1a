// The progress bar's rate and ETA (sim/cli/common.hpp), on a clock the test steps by hand.
#include "sim/cli/common.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>

namespace sim::cli {
namespace {

TEST(ProgressBar, APhaseIsTimedFromTheLastOnesEndAndNoRateIsShownBeforeAQuarterSecond) {
  // Found by a user trial: plan's second phase printed "21/1834 configs, 525000000/s, ETA 0 s", its clock started
  // at its own first report.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0{};
  double now_s = 0;
  std::ostringstream err;
  ProgressBar bar(err, "always", false, "configs");
  bar.use_clock([&] { return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(now_s)); });
  auto line = [&](int done, int total) {
    err.str("");
    bar.update(done, total);
    return err.str();
  };
  EXPECT_NE(line(0, 100).find("0/100 configs, timing"), std::string::npos);
  now_s = 1.0;
  EXPECT_NE(line(50, 100).find("50/100 configs, 50/s, ETA 1 s"), std::string::npos) << err.str();
  now_s = 2.0;
  EXPECT_NE(line(100, 100).find("100/100 configs, 50/s, ETA 0 s"), std::string::npos) << err.str();
  // The next phase began when the first ended: 21 points 1 ms into it are not 21,000 a second.
  bar.then("finalists");
  now_s = 2.001;
  const auto first = line(21, 1834);
  EXPECT_NE(first.find("21/1834 finalists, timing"), std::string::npos) << first;
  now_s = 3.0;
  EXPECT_NE(line(500, 1834).find("500/1834 finalists, 500/s, ETA 3 s"), std::string::npos) << err.str();
}

TEST(ProgressBar, WithoutATerminalALongPhasePrintsALineAMinute) {
  // A user trial: a run of weeks printed nothing in CI (--progress auto, stderr a pipe), like a hang.
  if (::isatty(2) != 0) GTEST_SKIP() << "stderr is a terminal here: auto draws the bar instead";
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0{};
  double now_s = 0;
  std::ostringstream err;
  ProgressBar bar(err, "auto", false, "trials");
  bar.use_clock([&] { return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(now_s)); });
  bar.update(0, 1000);
  now_s = 30;
  bar.update(10, 1000);
  EXPECT_EQ(err.str(), "") << "nothing in the first minute";
  now_s = 60;
  bar.update(20, 1000);
  EXPECT_EQ(err.str(), "progress: 20/1000 trials, 0.33/s, ETA 2940 s\n");
  now_s = 90;
  bar.update(30, 1000);
  EXPECT_EQ(err.str(), "progress: 20/1000 trials, 0.33/s, ETA 2940 s\n") << "then a line a minute";
  now_s = 200;
  bar.update(1000, 1000);
  EXPECT_EQ(err.str().find("1000/1000"), std::string::npos) << "no line at the end";
  // A second phase of the same total (a review): its own clock and unit, not the first phase's.
  bar.then("reruns");
  err.str("");
  bar.update(0, 1000);
  now_s = 230;
  bar.update(10, 1000);
  EXPECT_EQ(err.str(), "") << "a new phase, timed from its own start";
  now_s = 261;
  bar.update(61, 1000);
  EXPECT_EQ(err.str(), "progress: 61/1000 reruns, 1.00/s, ETA 939 s\n");
}

}  // namespace
}  // namespace sim::cli
