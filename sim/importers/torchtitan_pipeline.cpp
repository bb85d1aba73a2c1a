// sim/importers/torchtitan_pipeline.cpp: TorchTitan's pipeline schedule, its split of the layers over the (virtual)
// stages and the layer-selective checkpointing that counts blocks over them, for the TorchTitan importer
// (torchtitan.cpp). Seam: the reader of the file's other sections.
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

/// TorchTitan's layer-selective checkpointing (selective_ac_option N): a block is checkpointed when the running
/// count of blocks is a multiple of N (torchtitan's apply_ac: "if not ac_freq or ptd_checkpoint_wrapper._count %
/// ac_freq == 0"; 0 checkpoints every block), one in N of the blocks a process builds, all its virtual stages
/// together. trainsim's full recomputation by the block method recomputes the first n layers of each virtual stage:
/// n = (the busiest rank's blocks / N) / vpp, rounded down (fewer recomputed: the memory errs high). It was read as
/// every layer recomputed, with a note calling that an upper bound; for memory it was a lower bound (a user trial:
/// Qwen3-32B with N = 2 on 8 GPUs fitted at 86.8 GiB; 140.8 GiB as run).
void Reader::layer_selective_checkpointing(Draft& d) {
  if (!layer_sac_) return;
  const auto& [every, where] = *layer_sac_;
  if (every == 0) {
    d.put("parallel.recompute", std::string("full"), where + ": every block");
    return;
  }
  const std::int64_t pp = d.integer("parallel.pp").value_or(1), vpp = d.integer("parallel.vpp").value_or(1);
  // The busiest pipeline rank's blocks: its virtual stages r, r + pp, ... of the split, or an even share.
  std::int64_t per_rank = model_layers_ ? (*model_layers_ + pp - 1) / pp : 0;
  if (const auto* f = d.find("parallel.layers_per_stage")) {
    const auto& split = std::get<std::vector<std::int64_t>>(f->value);
    per_rank = 0;
    for (std::int64_t r = 0; r < pp; ++r) {
      std::int64_t held = 0;
      for (std::size_t i = static_cast<std::size_t>(r); i < split.size(); i += static_cast<std::size_t>(pp))
        held += split[i];
      per_rank = std::max(per_rank, held);
    }
  }
  if (!model_layers_) {
    d.put("parallel.recompute", std::string("full"), where);
    out_.notes.push_back({where, "one block in every " + std::to_string(every) +
                                     " checkpointed; with the model not known, every layer is recomputed (full): "
                                     "time an upper bound, memory a lower bound; give --set "
                                     "parallel.recompute_method=block --set parallel.recompute_num_layers=N"});
    return;
  }
  const std::int64_t n = per_rank / every / std::max<std::int64_t>(vpp, 1);
  if (n == 0) {
    d.put("parallel.recompute", std::string("none"), where);
    out_.notes.push_back({where, "one block in every " + std::to_string(every) + " of a rank's " +
                                     std::to_string(per_rank) +
                                     " checkpointed, fewer than one per virtual stage: "
                                     "taken as none (memory errs high)"});
    return;
  }
  d.put("parallel.recompute", std::string("full"), where);
  d.put("parallel.recompute_method", std::string("block"), where);
  d.put("parallel.recompute_num_layers", n,
        where + ": " + std::to_string(n) + " layers of each virtual stage (" + std::to_string(per_rank) +
            " blocks on the busiest rank)");
}

}  // namespace sim::importers::titan
