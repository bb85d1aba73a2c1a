// sim/parallel/parallel_config.cpp: strict parsing of the parallel section.
#include "sim/parallel/parallel_config.hpp"

#include <algorithm>
#include <array>

namespace sim::parallel {

using base::Range;

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None:
      return "none";
    case Recompute::Selective:
      return "selective";
    case Recompute::Full:
      return "full";
  }
  return "?";
}

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::GPipe:
      return "gpipe";
    case Schedule::OneFOneB:
      return "1f1b";
    case Schedule::Interleaved:
      return "interleaved";
    case Schedule::ZeroBubbleH1:
      return "zb-h1";
  }
  return "?";
}

ParallelConfig ParallelConfig::parse(base::JsonReader& in) {
  ParallelConfig p;
  const Range dim = Range::at_least(1);
  in.optional("tp", p.tp, dim);
  in.optional("pp", p.pp, dim);
  int dp = 0;
  if (in.optional("dp", dp, dim)) p.dp = dp;
  in.optional("cp", p.cp, dim);
  in.optional("ep", p.ep, dim);
  in.optional("vpp", p.vpp, dim);
  in.optional("sequence_parallel", p.sequence_parallel);
  in.optional("zero_stage", p.zero_stage, Range::between(0, 3));
  in.optional("distributed_optimizer", p.distributed_optimizer);
  std::string recompute;
  if (in.optional_enum("recompute", recompute, {"none", "selective", "full"})) {
    for (auto r : {Recompute::None, Recompute::Selective, Recompute::Full})
      if (recompute == to_string(r)) p.recompute = r;
  }
  in.optional("micro_batch", p.micro_batch, dim);
  in.required("global_batch", p.global_batch, dim);
  std::string schedule;
  if (p.vpp > 1) p.schedule = Schedule::Interleaved;
  if (in.optional_enum("schedule", schedule, {"gpipe", "1f1b", "interleaved", "zb-h1"})) {
    for (auto s : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZeroBubbleH1})
      if (schedule == to_string(s)) p.schedule = s;
    if (p.schedule == Schedule::OneFOneB && p.vpp > 1) p.schedule = Schedule::Interleaved;
  }
  in.optional("layers_per_stage", p.layers_per_stage, Range::at_least(0));
  if (in.optional("order", p.order)) {
    std::array<std::string, 4> parts;
    std::size_t start = 0;
    int n = 0;
    bool ok = true;
    while (ok) {
      const auto dash = p.order.find('-', start);
      if (n == 4) {
        ok = false;
        break;
      }
      parts[n++] = p.order.substr(start, dash == std::string::npos ? std::string::npos : dash - start);
      if (dash == std::string::npos) break;
      start = dash + 1;
    }
    std::array<std::string, 4> sorted = parts;
    std::sort(sorted.begin(), sorted.end());
    if (!ok || n != 4 || sorted != std::array<std::string, 4>{"cp", "dp", "pp", "tp"})
      in.error("order", "\"" + p.order + "\" is not a placement order; write the four dimensions tp, cp, dp, pp " +
                            "innermost first, joined by '-', e.g. \"tp-cp-dp-pp\"");
  }
  in.finish();
  if (p.schedule == Schedule::Interleaved && p.vpp < 2)
    in.error("schedule", "\"interleaved\" needs vpp >= 2 virtual stages per rank");
  return p;
}

}  // namespace sim::parallel
