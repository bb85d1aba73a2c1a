// tests/mpi/farm_check.cpp: the MPI task farm on every process of an mpirun job (ctest -L mpi, tests/mpi/mpi_test.sh):
// results in task order on the root (map_root) and everywhere (map_all), work shared by the root and the workers, a
// failing task or poll stopping the farm on every process with its message, and, in mode "early-failure", a process
// that fails before a farm the others entered ending it for them (Session::finish). Prints "ok" or what failed;
// exits 1 on a failed check.
#include "sim/distributed/task_farm.hpp"

#include <chrono>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using sim::distributed::FarmOptions;
using sim::distributed::Group;
using sim::distributed::RemoteTaskError;
using sim::distributed::Session;

int failures = 0;

void expect(bool ok, const std::string& what, const Group& g) {
  if (ok) return;
  ++failures;
  std::cerr << "FAIL (process " << g.rank() << "): " << what << "\n";
}

std::string expected(int i) {
  return std::string(static_cast<std::size_t>(i % 7), 'x') + std::to_string(i * i);
}

/// Runs `farm` expecting it to throw on every process with `needle` in the message.
template <class F>
void expect_stop(const Group& g, const std::string& needle, const F& farm, const std::string& what) {
  try {
    farm();
    expect(false, what + ": the farm did not stop", g);
  } catch (const RemoteTaskError& e) {
    expect(e.message().find(needle) != std::string::npos, what + ": RemoteTaskError " + e.what(), g);
  } catch (const std::exception& e) {
    expect(std::string(e.what()).find(needle) != std::string::npos, what + ": " + e.what(), g);
  }
}

void basic(const Group& g) {
  const int n = 203;
  const auto root = g.map_root(n, [](int i) { return expected(i); });
  if (g.is_root()) {
    expect(static_cast<int>(root.size()) == n, "map_root: n results on the root", g);
    for (int i = 0; i < n && i < static_cast<int>(root.size()); ++i)
      expect(root[static_cast<std::size_t>(i)] == expected(i), "map_root: result " + std::to_string(i), g);
  } else {
    expect(root.empty(), "map_root: nothing on a worker", g);
  }
  const auto all = g.map_all(n, [](int i) { return expected(i); });
  expect(static_cast<int>(all.size()) == n, "map_all: n results everywhere", g);
  for (int i = 0; i < n && i < static_cast<int>(all.size()); ++i)
    expect(all[static_cast<std::size_t>(i)] == expected(i), "map_all: result " + std::to_string(i), g);

  // Who computed what (a result that names its process: a check only, real tasks depend on i alone).
  int progress_calls = 0;
  FarmOptions o;
  o.progress = [&](int done, int total) {
    ++progress_calls;
    expect(done >= 1 && done <= total && total == 40, "progress within the tasks", g);
  };
  const auto who = g.map_all(
      40,
      [&g](int) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return std::to_string(g.rank());
      },
      o);
  const std::set<std::string> ranks(who.begin(), who.end());
  expect(ranks.size() >= 2, "the work is shared: " + std::to_string(ranks.size()) + " process(es) computed", g);
  expect(ranks.count("0") == 1, "the root computes too", g);
  if (g.is_root()) expect(progress_calls > 0, "progress reported on the root", g);

  expect_stop(
      g, "task 17 failed",
      [&] {
        g.map_root(60, [](int i) {
          if (i == 17) throw std::runtime_error("task 17 failed");
          return expected(i);
        });
      },
      "a failing task");
  FarmOptions cancel;
  cancel.poll = [&g] {
    if (g.rank() == g.size() - 1) throw std::runtime_error("cancelled on the last process");
  };
  expect_stop(
      g, "cancelled on the last process",
      [&] {
        g.map_all(
            50,
            [](int i) {
              std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the last process joins before the end
              return expected(i);
            },
            cancel);
      },
      "a poll that throws");
  const auto after = g.map_all(5, [](int i) { return expected(i); });
  expect(after.size() == 5 && after[4] == expected(4), "a farm after failed ones works", g);
  expect(g.map_root(0, [](int) { return std::string("never"); }).empty(), "no tasks", g);
}

}  // namespace

int main(int argc, char** argv) {
  const Session session;
  const Group& g = session.group();
  const std::string mode = argc > 1 ? argv[1] : "basic";
  if (g.size() < 2) {
    std::cerr << "farm_check: run me under mpirun -np 2 or more\n";
    return 1;
  }
  if (mode == "basic") {
    basic(g);
    const auto end = session.finish(0, "", 4);
    expect(end.code == 0 && end.failed_rank == -1, "a clean end", g);
  } else if (mode == "early-failure") {
    // Process 1 fails before the farm the others enter: they stop with its message, then all end with its code.
    if (g.rank() == 1) {
      const auto end = session.finish(2, "error: failed before the farm\n", 4);
      expect(end.code == 2, "the failed process keeps its code", g);
    } else {
      expect_stop(
          g, "failed before the farm", [&] { g.map_root(30, [](int i) { return expected(i); }); },
          "a process failed before the farm");
      const auto end = session.finish(4, "", 4);
      expect(end.code == 4, "own code after a stopped farm", g);
    }
  } else if (mode == "late-failure") {
    // Process 1 fails after every farm; the others succeeded: all end with its code, the root learns its message.
    const auto all = g.map_all(20, [](int i) { return expected(i); });
    expect(all.size() == 20, "the farm before the failure", g);
    const int code = g.rank() == 1 ? 3 : 0;
    const auto end = session.finish(code, g.rank() == 1 ? "error: failed after the farm\n" : "", 4);
    expect(end.code == 3, "every process ends with the failed process's code", g);
    if (g.is_root())
      expect(end.failed_rank == 1 && end.message.find("failed after the farm") != std::string::npos,
             "the root learns who failed and why", g);
  } else {
    std::cerr << "farm_check: unknown mode " << mode << "\n";
    return 1;
  }
  if (failures == 0 && g.is_root()) std::cout << "ok: farm_check " << mode << " on " << g.size() << " processes\n";
  return failures == 0 ? 0 : 1;
}
