// calibrate/bench/measure_main.cpp: entry point of the standalone `trainsim-calibrate` built from calibrate/bench alone
// (GPU nodes without CLI11): only `measure`, with the same options and exit codes as the full tool.
#include "calibrate/bench/measure.hpp"
#include "sim/base/errors.hpp"

#include <charconv>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: trainsim-calibrate measure [--quick] --out FILE [--scope nvlink|network] [--only gemm,hbm,collectives]\n"
    "                                  [--gpus N]\n"
    "This build has only `measure`; `import` and `fit` are in the full trainsim build (see calibrate/README.md).\n";

int usage_error(const std::string& what) {
  std::cerr << "error: " << what << "\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "measure") return usage_error("unknown command \"" + args[0] + "\"");
  calibrate::bench::MeasureOptions o;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--out" || a == "--scope" || a == "--only" || a == "--gpus") {
      const std::string* v = value();
      if (!v) return usage_error(a + " needs a value");
      if (a == "--out") o.out = *v;
      if (a == "--scope") {
        if (*v != "nvlink" && *v != "network")
          return usage_error("--scope: \"" + *v + "\"; expected nvlink or network");
        o.scope = *v;
      }
      if (a == "--only") {
        o.gemm = v->find("gemm") != std::string::npos;
        o.hbm = v->find("hbm") != std::string::npos;
        o.collectives = v->find("collectives") != std::string::npos;
        if (!o.gemm && !o.hbm && !o.collectives) return usage_error("--only: expected gemm, hbm and/or collectives");
      }
      if (a == "--gpus") {
        const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), o.gpus);
        if (ec != std::errc() || end != v->data() + v->size() || v->empty())
          return usage_error("--gpus: \"" + *v + "\" is not a whole number");
        if (o.gpus < 1) return usage_error("--gpus: expected at least 1");
      }
    } else {
      return usage_error("unknown option \"" + a + "\"");
    }
  }
  if (o.out.empty()) return usage_error("--out FILE is required");
  try {
    const auto s = calibrate::bench::measure(o, std::cerr);
    for (const auto& n : s.notes)
      std::cerr << "note: " << n << '\n';
    std::cout << "wrote " << (s.gemm + s.hbm + s.collectives) << " measurements to " << o.out << " (" << s.gemm
              << " GEMM, " << s.hbm << " memory-bound, " << s.collectives << " collective over " << s.ranks
              << " GPUs) on " << s.device << " in " << static_cast<long>(s.seconds) << " s\n";
    return 0;
  } catch (const calibrate::bench::NoDevice& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const calibrate::bench::BenchFailure& e) {
    std::cerr << "error: measure: " << e.what() << '\n';
    return 1;
  } catch (const sim::base::ConfigError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a trainsim bug): " << e.what() << '\n';
    return 4;
  }
}
