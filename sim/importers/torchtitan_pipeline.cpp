// sim/importers/torchtitan_pipeline.cpp: TorchTitan's pipeline schedule and its split of the layers over the
// (virtual) stages, for the TorchTitan importer (torchtitan.cpp). Seam: the reader of the file's other sections.
#include "sim/importers/torchtitan_reader.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace sim::importers::titan {

using Type = TomlValue::Type;

/// TorchTitan's split of the layers over pipeline stages (torchtitan/distributed/pipeline_parallel.py,
/// generate_llm_fqn_per_model_part, input_weight = output_weight = 1): the embedding and the output count as a
/// layer each, the L + 2 spread evenly with the remainder on the first stages, the first and last stage's transformer
/// layers one fewer. trainsim's own default is an even split of the layers, which differs (and refuses a count the
/// stages do not divide). Under Interleaved1F1B over the virtual stages, in model order (rank = stage mod pp).
void Reader::pipeline_split(std::int64_t pp, const TomlValue* par) {
  const auto* sched = out_.draft.find("parallel.schedule");
  const std::string s = sched ? std::get<std::string>(sched->value) : "1f1b";
  std::int64_t stages = pp;
  if (interleaved_) {
    // Stages per rank: 2 by default for a looped schedule, else ceil((L + 2) / pipeline_parallel_layers_per_stage)
    // virtual stages (torchtitan/distributed/pipeline_parallel.py, pipeline_llm).
    const TomlValue* lps = par ? par->get("pipeline_parallel_layers_per_stage") : nullptr;
    if (lps) used("parallelism", "pipeline_parallel_layers_per_stage");
    std::optional<std::int64_t> vpp;
    if (!lps) {
      vpp = 2;
      out_.draft.put("parallel.vpp", std::int64_t{2}, *interleaved_ + " (TorchTitan's default: 2 stages per rank)",
                     true);
    } else if (lps->type == Type::Integer && lps->integer > 0 && model_layers_) {
      const std::int64_t virtual_stages = (*model_layers_ + 2 + lps->integer - 1) / lps->integer;
      if (virtual_stages % pp == 0 && virtual_stages / pp >= 2) {
        vpp = virtual_stages / pp;
        out_.draft.put("parallel.vpp", *vpp,
                       origin_ + " [parallelism] pipeline_parallel_layers_per_stage (ceil((layers + 2) / " +
                           std::to_string(lps->integer) + ") virtual stages over pp " + std::to_string(pp) + ")");
      }
    }
    if (!vpp) {
      out_.unresolved.push_back({*interleaved_,
                                 "Interleaved1F1B: the stages per rank follow from the model's layers and "
                                 "pipeline_parallel_layers_per_stage; give --set parallel.vpp=V",
                                 "parallel.vpp"});
      return;
    }
    stages = pp * *vpp;
  }
  if (pp < 2 || !model_layers_ || s == "dualpipev") return;
  const std::int64_t layers = *model_layers_, effective = layers + 2;
  const std::int64_t base = effective / stages, extra = effective % stages;
  if (base < 2) return;  // TorchTitan refuses it (a weight above the layers per stage): the layout rules will
  std::vector<std::int64_t> split;
  std::int64_t left = layers;
  for (std::int64_t i = 0; i < stages; ++i) {
    std::int64_t n = base + (i < extra ? 1 : 0) - (i == 0 || i == stages - 1 ? 1 : 0);
    n = std::min(n, left);
    split.push_back(n);
    left -= n;
  }
  if (left != 0) return;
  out_.draft.put("parallel.layers_per_stage", split,
                 origin_ +
                     " [parallelism] pipeline_parallel_degree (TorchTitan's split: embedding and output "
                     "counted as a layer each)");
}

void Reader::schedule(const TomlValue* par, std::int64_t pp) {
  auto s = text("parallelism", par, "pipeline_parallel_schedule");
  if (!s) return;
  if (pp == 1) {  // TorchTitan builds no pipeline with one stage: the schedule is not used
    out_.notes.push_back(
        {origin_ + " [parallelism] pipeline_parallel_schedule", *s + ": not used with pipeline_parallel_degree 1"});
    return;
  }
  const std::map<std::string, std::string> known = {
      {"1F1B", "1f1b"},
      {"GPipe", "gpipe"},
      {"Interleaved1F1B", "interleaved"},
      {"DualPipeV", "dualpipev"}};  // torch.distributed.pipelining's ScheduleDualPipeV: two stages per rank
  const int line = par->get("pipeline_parallel_schedule")->line;
  if (auto it = known.find(*s); it != known.end()) {
    out_.draft.put("parallel.schedule", it->second, origin_ + " [parallelism] pipeline_parallel_schedule");
    if (it->second == "interleaved")
      interleaved_ = origin_ + ":" + std::to_string(line) + " pipeline_parallel_schedule";
  } else {
    out_.unresolved.push_back({origin_ + ":" + std::to_string(line) + " pipeline_parallel_schedule",
                               "\"" + *s + "\" is not modelled; trainsim has 1F1B, GPipe, Interleaved1F1B, " +
                                   "DualPipeV (and zb-h1); give --set parallel.schedule=NAME",
                               "parallel.schedule"});
  }
}

}  // namespace sim::importers::titan
