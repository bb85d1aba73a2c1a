// sim/cli/main.cpp: process entry point; hands the arguments to the CLI and returns its exit code.
#include "sim/cli/app.hpp"
#include "sim/cli/interrupt.hpp"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  sim::cli::install_interrupt_handlers();
  try {
    return sim::cli::run(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return sim::cli::kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a trainsim bug): " << e.what() << "\n";
    return sim::cli::kExitInternal;
  }
}
