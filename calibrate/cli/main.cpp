// calibrate/cli/main.cpp: process entry point of trainsim-calibrate; hands the arguments to the CLI.
#include "calibrate/cli/app.hpp"
#include "sim/cli/app.hpp"

#include <exception>
#include <iostream>
#include <new>

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return calibrate::cli::run(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return sim::cli::kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a trainsim bug): " << e.what() << "\n";
    return sim::cli::kExitInternal;
  }
}
