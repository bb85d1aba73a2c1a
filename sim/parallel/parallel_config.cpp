// sim/parallel/parallel_config.cpp: strict parsing of the parallel section.
#include "sim/parallel/parallel_config.hpp"

#include "sim/parallel/pipeline_layout.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <variant>

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
    case Recompute::Op:
      return "op";
  }
  return "?";
}

const char* to_string(RecomputeMethod m) {
  return m == RecomputeMethod::Block ? "block" : "uniform";
}

namespace {

constexpr std::array<const char*, 7> kModuleNames{"core_attn", "layernorm",   "mlp",           "moe",
                                                  "moe_act",   "mla_up_proj", "shared_experts"};

}  // namespace

std::vector<std::string> recompute_module_names(unsigned modules) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kModuleNames.size(); ++i)
    if (modules & (1u << i)) out.emplace_back(kModuleNames[i]);
  return out;
}

const char* to_string(BackwardPrefetch b) {
  switch (b) {
    case BackwardPrefetch::Pre:
      return "pre";
    case BackwardPrefetch::Post:
      return "post";
    case BackwardPrefetch::None:
      return "none";
  }
  return "pre";
}

const char* to_string(CpCommType c) {
  return c == CpCommType::AllGather ? "all_gather" : "p2p";
}

const char* to_string(TpOverlapMethod m) {
  return m == TpOverlapMethod::AsyncTp ? "async_tp" : "userbuffers";
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
    case Schedule::DualPipeV:
      return "dualpipev";
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
  in.optional("expert_tp", p.expert_tp, dim);
  in.optional("vpp", p.vpp, dim);
  std::string layout_text;
  if (in.optional("pipeline_layout", layout_text)) {
    p.from_layout = true;
    const auto parsed = parse_pipeline_layout(layout_text);
    if (const auto* why = std::get_if<std::string>(&parsed)) {
      in.error("pipeline_layout", *why);
    } else {
      const auto& pl = std::get<PipelineLayout>(parsed);
      const auto stages = static_cast<long long>(pl.layers.size());
      if (stages % p.pp != 0) {
        in.error("pipeline_layout", "has " + std::to_string(stages) + " stages, which do not divide over pp = " +
                                        std::to_string(p.pp) + " (Megatron-LM: pp x vpp stages)");
      } else if (in.has("vpp") && stages != static_cast<long long>(p.pp) * p.vpp) {
        in.error("pipeline_layout", "has " + std::to_string(stages) + " stages but pp x vpp = " + std::to_string(p.pp) +
                                        " x " + std::to_string(p.vpp) + " (leave vpp out: the layout sets it)");
      } else {
        p.vpp = static_cast<int>(stages / p.pp);
        p.layers_per_stage = pl.layers;
        p.layout_mtp = pl.mtp;
      }
    }
  }
  in.optional("sequence_parallel", p.sequence_parallel);
  in.optional("zero_stage", p.zero_stage, Range::between(0, 3));
  in.optional("distributed_optimizer", p.distributed_optimizer);
  std::string recompute;
  if (in.optional_enum("recompute", recompute, {"none", "selective", "full", "op"})) {
    for (auto r : {Recompute::None, Recompute::Selective, Recompute::Full, Recompute::Op})
      if (recompute == to_string(r)) p.recompute = r;
  }
  std::string dispatcher;
  if (in.optional_enum("moe_dispatcher", dispatcher, {"alltoall", "deepep"}))
    p.moe_dispatcher = dispatcher == "deepep" ? MoeDispatcher::DeepEp : MoeDispatcher::AllToAll;
  std::string dispatch_dtype;
  if (in.optional_enum("moe_dispatch_dtype", dispatch_dtype, {"bf16", "fp8"}))
    p.moe_dispatch_fp8 = dispatch_dtype == "fp8";
  in.optional("tp_comm_overlap", p.tp_comm_overlap);
  in.optional("ep_comm_overlap", p.ep_comm_overlap);
  std::string overlap_method;
  if (in.optional_enum("tp_comm_overlap_method", overlap_method, {"userbuffers", "async_tp"}))
    p.tp_comm_overlap_method = overlap_method == "async_tp" ? TpOverlapMethod::AsyncTp : TpOverlapMethod::Userbuffers;
  in.optional("overlap_param_gather", p.overlap_param_gather);
  if (in.optional("dp_shard", p.dp_shard, Range::at_least(1))) {
    if (p.zero_stage == 0 && !p.distributed_optimizer)
      in.error("dp_shard",
               "shards ZeRO states over groups of data-parallel ranks: it needs zero_stage >= 1 or "
               "distributed_optimizer");
    else if (p.ep > 1)
      in.error("dp_shard", "is not modelled with expert parallelism (ep = " + std::to_string(p.ep) +
                               "), whose experts shard over their own groups");
  }
  if (in.optional("overlap_grad_reduce", p.overlap_grad_reduce) && !p.overlap_grad_reduce && p.zero_stage == 3)
    in.error("overlap_grad_reduce",
             "false is modelled for zero_stage 0-2; ZeRO-3 / FSDP reduce-scatters each unit's gradients as its "
             "backward ends (leave it out)");
  std::string prefetch;
  if (in.optional_enum("backward_prefetch", prefetch, {"pre", "post", "none"})) {
    for (auto b : {BackwardPrefetch::Pre, BackwardPrefetch::Post, BackwardPrefetch::None})
      if (prefetch == to_string(b)) p.backward_prefetch = b;
  }
  in.optional("zero3_overlap", p.zero3_overlap);
  double engine_gbs = 0;
  if (in.optional("zero3_engine_gbs", engine_gbs, Range::between(0.01, 1e5)))
    p.zero3_engine_bytes_per_s = engine_gbs * 1e9;
  std::string cp_comm;
  if (in.optional_enum("cp_comm_type", cp_comm, {"p2p", "all_gather"}))
    p.cp_comm_type = cp_comm == "all_gather" ? CpCommType::AllGather : CpCommType::P2p;
  std::string method;
  if (in.optional_enum("recompute_method", method, {"uniform", "block"}))
    p.recompute_method = method == "block" ? RecomputeMethod::Block : RecomputeMethod::Uniform;
  in.optional("recompute_num_layers", p.recompute_num_layers, dim);
  std::vector<std::string> modules;
  if (in.optional("recompute_modules", modules)) {
    p.recompute_modules = 0;
    for (const auto& name : modules) {
      const auto it = std::find(kModuleNames.begin(), kModuleNames.end(), name);
      if (it == kModuleNames.end()) {
        in.error("recompute_modules", "\"" + name +
                                          "\" is not a Megatron-Core recompute module; accepted: core_attn, layernorm, "
                                          "mlp, moe, moe_act, mla_up_proj, shared_experts");
        continue;
      }
      p.recompute_modules |= 1u << static_cast<unsigned>(it - kModuleNames.begin());
    }
    if (modules.empty()) in.error("recompute_modules", "is empty; list at least one module, e.g. [\"core_attn\"]");
  }
  in.optional("micro_batch", p.micro_batch, dim);
  in.required("global_batch", p.global_batch, dim);
  std::string schedule;
  if (p.vpp > 1) p.schedule = Schedule::Interleaved;
  if (in.optional_enum("schedule", schedule, {"gpipe", "1f1b", "interleaved", "zb-h1", "dualpipev"})) {
    for (auto s :
         {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZeroBubbleH1, Schedule::DualPipeV})
      if (schedule == to_string(s)) p.schedule = s;
    if (p.schedule == Schedule::OneFOneB && p.vpp > 1) p.schedule = Schedule::Interleaved;
    // DualPipeV always holds two chunks per rank (its V); a layout of 2 x pp stages or no vpp at all says so.
    if (p.schedule == Schedule::DualPipeV && !in.has("vpp") && !p.from_layout) p.vpp = 2;
  }
  if (in.optional("layers_per_stage", p.layers_per_stage, Range::at_least(0)) && p.layers_per_stage.empty())
    in.error("layers_per_stage",
             "is empty; give one layer count per virtual stage (pp*vpp of them, e.g. [20, 20, 20, "
             "20]) or leave it out for an even split");
  in.optional("account_for_embedding_in_pipeline_split", p.account_for_embedding);
  in.optional("account_for_loss_in_pipeline_split", p.account_for_loss);
  in.optional("first_stage_layers", p.first_stage_layers, dim);
  in.optional("last_stage_layers", p.last_stage_layers, dim);
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
  if (p.schedule == Schedule::DualPipeV && p.vpp != 2)
    in.error("schedule",
             "\"dualpipev\" holds exactly 2 chunks per rank (its V), but vpp = " + std::to_string(p.vpp) +
                 (p.from_layout ? " from the pipeline_layout; write 2 x pp stages" : "; set vpp to 2 or leave it out"));
  if (p.schedule == Schedule::DualPipeV && (p.first_stage_layers > 0 || p.last_stage_layers > 0))
    in.error("schedule",
             "\"dualpipev\" puts the first and the last virtual stage on the same rank; first/last_stage_layers "
             "(Megatron-LM's per-rank split) do not apply: write a pipeline_layout or layers_per_stage");
  // Megatron-Core's TransformerConfig refuses these combinations ("recompute_method must be None for selective",
  // "recompute_modules only for selective").
  if (p.recompute != Recompute::Full && (in.has("recompute_method") || in.has("recompute_num_layers")))
    in.error(
        in.has("recompute_method") ? "recompute_method" : "recompute_num_layers",
        std::string("applies to \"recompute\": \"full\" only (Megatron-LM), not \"") + to_string(p.recompute) + "\"");
  if (p.recompute != Recompute::Selective && in.has("recompute_modules"))
    in.error("recompute_modules", std::string("applies to \"recompute\": \"selective\" only (Megatron-Core), not \"") +
                                      to_string(p.recompute) + "\"");
  // Megatron-Core's --overlap-param-gather all-gathers the distributed optimizer's (ZeRO-1/2) updated parameters
  // under the next forward; without sharding nothing is gathered, and ZeRO-3 / FSDP gathers before each use (a user
  // trial: true at zero_stage 0 and 3 changed nothing).
  const int sharding = std::max(p.zero_stage, p.distributed_optimizer ? 1 : 0);
  if (in.has("overlap_param_gather") && p.overlap_param_gather && (sharding < 1 || sharding > 2))
    in.error("overlap_param_gather",
             "applies to the distributed optimizer and ZeRO-2 (zero_stage 1-2), whose updated parameters are "
             "all-gathered after the step; zero_stage " +
                 std::to_string(p.zero_stage) +
                 (sharding == 3 ? " gathers each unit's weights before it runs (memory.zero3_units, backward_prefetch)"
                                : " gathers nothing"));
  // Only ZeRO-3 / FSDP FULL_SHARD gathers weights per unit (again in the backward); elsewhere these keys would be
  // silently ignored.
  const std::pair<const char*, const char*> zero3_only[] = {
      {"backward_prefetch", "says when ZeRO-3 / FSDP FULL_SHARD gathers weights again in the backward"},
      {"zero3_overlap", "describes how ZeRO-3 / FSDP gathers weights and reduce-scatters gradients per unit"},
      {"zero3_engine_gbs", "describes how ZeRO-3 / FSDP gathers weights and reduce-scatters gradients per unit"}};
  for (const auto& [key, what] : zero3_only)
    if (in.has(key) && p.zero_stage < 3)
      in.error(key, std::string(what) + "; it needs \"zero_stage\": 3, not zero_stage " + std::to_string(p.zero_stage));
  // Megatron-LM asserts --sequence-parallel when --tp-comm-overlap is given (megatron/training/arguments.py); with tp 1
  // there is nothing to overlap.
  if (in.has("tp_comm_overlap_method") && !p.tp_comm_overlap)
    in.error("tp_comm_overlap_method",
             "says how tensor-parallel communication is overlapped; it needs "
             "\"tp_comm_overlap\": true");
  if (p.tp_comm_overlap && p.tp > 1 && !p.sequence_parallel)
    in.error("tp_comm_overlap",
             "needs \"sequence_parallel\": true (Megatron-LM overlaps only the sequence-parallel all-gathers and "
             "reduce-scatters with their GEMMs)");
  if (p.from_layout && (in.has("layers_per_stage") || p.account_for_embedding || p.account_for_loss ||
                        p.first_stage_layers > 0 || p.last_stage_layers > 0))
    in.error("pipeline_layout",
             "a layout cannot be combined with layers_per_stage, account_for_*_in_pipeline_split or "
             "first/last_stage_layers (Megatron-LM refuses them together); the layout says it all");
  else if (!p.layers_per_stage.empty() &&
           (p.account_for_embedding || p.account_for_loss || p.first_stage_layers > 0 || p.last_stage_layers > 0))
    in.error("layers_per_stage",
             "an explicit split cannot be combined with account_for_*_in_pipeline_split or first/last_stage_layers "
             "(write the transformer layers of every virtual stage, or use those keys alone)");
  return p;
}

}  // namespace sim::parallel
