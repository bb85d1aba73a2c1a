// The progress bar's rate and ETA (sim/cli/common.hpp), on a clock the test steps by hand.
#include "sim/cli/common.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sim::cli
