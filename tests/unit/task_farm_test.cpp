// The task farm as one process runs it (a build without MPI, or a process that mpirun did not start): every task
// once, results in task order, progress and polls, a failing task or poll stops it. The MPI farm is tested by
// tests/mpi (ctest -L mpi).
#include "sim/distributed/task_farm.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace sim::distributed {
namespace {

TEST(TaskFarm, AloneRunsEveryTaskOnceAndReturnsResultsInTaskOrder) {
  const Group alone;
  EXPECT_EQ(alone.size(), 1);
  EXPECT_TRUE(alone.is_root());
  std::vector<int> ran;
  std::vector<int> progress;
  int polls = 0;
  FarmOptions o;
  o.poll = [&] { ++polls; };
  o.progress = [&](int done, int total) {
    EXPECT_EQ(total, 5);
    progress.push_back(done);
  };
  const auto results = alone.map_root(
      5,
      [&](int i) {
        ran.push_back(i);
        return "r" + std::to_string(i * i);
      },
      o);
  EXPECT_EQ(results, (std::vector<std::string>{"r0", "r1", "r4", "r9", "r16"}));
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(progress, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(polls, 5);
  EXPECT_EQ(alone.map_all(3, [](int i) { return std::string(static_cast<std::size_t>(i), 'x'); }),
            (std::vector<std::string>{"", "x", "xx"}));
  EXPECT_TRUE(alone.map_root(0, [](int) { return std::string("never"); }).empty());
}

TEST(TaskFarm, AFailingTaskOrPollStopsTheFarm) {
  const Group alone;
  int ran = 0;
  EXPECT_THROW(alone.map_root(10,
                              [&](int i) {
                                ++ran;
                                if (i == 3) throw std::runtime_error("task 3 failed");
                                return std::string();
                              }),
               std::runtime_error);
  EXPECT_EQ(ran, 4);
  FarmOptions o;
  o.poll = [] { throw std::range_error("cancelled"); };
  EXPECT_THROW(alone.map_all(
                   2, [](int) { return std::string(); }, o),
               std::range_error);
}

TEST(TaskFarm, AProcessThatMpirunDidNotStartIsAlone) {
  const Session session;  // the unit tests run without mpirun
  EXPECT_EQ(session.group().size(), 1);
  EXPECT_EQ(session.group().local_size(), 1);
  const JobEnd end = session.finish(3, "error: something\n", 4);
  EXPECT_EQ(end.code, 3);
  EXPECT_EQ(end.failed_rank, -1);
}

TEST(TaskFarm, RemoteFailuresNameTheProcess) {
  const RemoteTaskError e(3, "scenarios/x.json: cannot open");
  EXPECT_EQ(e.rank(), 3);
  EXPECT_EQ(e.message(), "scenarios/x.json: cannot open");
  EXPECT_STREQ(e.what(), "process 3: scenarios/x.json: cannot open");
}

}  // namespace
}  // namespace sim::distributed
