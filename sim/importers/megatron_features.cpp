// sim/importers/megatron_features.cpp: Megatron-LM flags for model and training features beyond the classic GPT
// layer, into the scenario's model, parallel and training fields. Flag meanings and defaults follow
// megatron/training/arguments.py and megatron/core/transformer/transformer_config.py (core_r0.12+).
#include "sim/importers/megatron_args.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace sim::importers::megatron {
namespace {

/// --moe-layer-freq as Megatron-LM reads it: an integer N (every N-th layer, layer 0 first) or a Python list
/// expression of 0/1 per layer, written as concatenated, repeated lists ("([0]*3+[1]*58)", "[1,0,1,0]").
std::optional<std::vector<std::int64_t>> layer_pattern(std::string text, std::string& why) {
  // Quotes left from a launcher's second shell ("'([1]*48)'") and spaces are not part of the expression.
  std::erase_if(text,
                [](char ch) { return std::isspace(static_cast<unsigned char>(ch)) != 0 || ch == '\'' || ch == '"'; });
  while (text.size() >= 2 && text.front() == '(' && text.back() == ')')
    text = text.substr(1, text.size() - 2);
  std::vector<std::int64_t> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '[') {
      why = "expected [0/1, ...] lists joined by + and repeated by *";
      return std::nullopt;
    }
    const auto close = text.find(']', i);
    if (close == std::string::npos) {
      why = "a [ without its ]";
      return std::nullopt;
    }
    std::vector<std::int64_t> part;
    for (std::size_t a = i + 1; a < close;) {
      const auto b = std::min(text.find(',', a), close);
      const auto v = parse_integer(text.substr(a, b - a));
      if (!v || (*v != 0 && *v != 1)) {
        why = "list entries must be 0 (dense) or 1 (MoE)";
        return std::nullopt;
      }
      part.push_back(*v);
      a = b + 1;
    }
    i = close + 1;
    std::int64_t times = 1;
    if (i < text.size() && text[i] == '*') {
      std::size_t e = i + 1;
      while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e])))
        ++e;
      const auto n = parse_integer(text.substr(i + 1, e - i - 1));
      if (!n || *n < 1 || *n > 100'000) {
        why = "a repeat count must be 1..100000";
        return std::nullopt;
      }
      times = *n;
      i = e;
    }
    if (out.size() + part.size() * static_cast<std::size_t>(times) > 100'000) {
      why = "more than 100000 layers";
      return std::nullopt;
    }
    for (std::int64_t k = 0; k < times; ++k)
      out.insert(out.end(), part.begin(), part.end());
    if (i < text.size() && text[i] == '+') ++i;
  }
  if (out.empty()) why = "an empty list";
  return out.empty() ? std::nullopt : std::optional(out);
}

std::optional<double> number(const std::string& text) {
  std::size_t used = 0;
  try {
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<double> fraction(const std::string& text) {
  const auto v = number(text);
  return v && *v >= 0 && *v < 1 ? v : std::nullopt;
}

/// Megatron-Core's precision-aware optimizer (megatron/core/optimizer/optimizer_config.py, OptimizerConfig): without
/// --use-precision-aware-optimizer every one of its dtypes must be fp32; with it (TransformerEngine's FusedAdam, which
/// needs the distributed optimizer) the master is kept as 16-bit remainders of the bf16 weights unless
/// --main-params-dtype fp16 (store_param_remainders, set by get_megatron_optimizer for TransformerEngine >= 2.1), and
/// --main-grads-dtype bf16 keeps the main gradients in bf16 (arguments.py then reduces them in bf16).
void precision_aware_optimizer(const Context& c) {
  Draft& d = c.out.draft;
  const Given* aware = c.given("use-precision-aware-optimizer");
  const char* flags[] = {"main-grads-dtype", "main-params-dtype", "exp-avg-dtype", "exp-avg-sq-dtype"};
  if (!aware) {
    for (const char* flag : flags)
      if (const Given* g = c.given(flag); g && g->value != "fp32")
        c.error(g->line, g->flag + " " + g->value +
                             ": Megatron-Core takes a dtype other than fp32 only with --use-precision-aware-optimizer "
                             "(OptimizerConfig asserts it); not imported");
    return;
  }
  if (!c.given("use-distributed-optimizer")) {
    c.error(aware->line, aware->flag +
                             ": Megatron-Core runs it only with --use-distributed-optimizer "
                             "(OptimizerConfig asserts it), which the file does not give; not imported");
    return;
  }
  const Given* main = c.given("main-params-dtype");
  const bool fp16_main = main && main->value == "fp16";
  // The remainders complete bf16 weights; FP8 parameters (--fp8-param-gather) keep a whole fp32 master.
  const bool remainders = !fp16_main && c.given("bf16") && !c.given("fp8-param-gather");
  d.put("training.main_params",
        std::string(fp16_main    ? "fp16"
                    : remainders ? "fp32_remainders"
                                 : "fp32"),
        main ? where(c, *main) : where(c, *aware));
  if (remainders)
    c.out.notes.push_back({where(c, *aware),
                           "the fp32 master is kept as the 16 bits the bf16 weights lack "
                           "(TransformerEngine >= 2.1's store_param_remainders, Megatron-Core's "
                           "default): training.main_params \"fp32_remainders\", 2 bytes"});
  for (const auto& [flag, path] :
       {std::pair{"exp-avg-dtype", "training.exp_avg"}, std::pair{"exp-avg-sq-dtype", "training.exp_avg_sq"}})
    if (const Given* g = c.given(flag)) d.put(path, g->value, where(c, *g));
  if (const Given* g = c.given("main-grads-dtype"); g && g->value == "bf16")
    d.put("training.main_grads", std::string("bf16"), where(c, *g));
}

}  // namespace

void apply_architecture_features(const Context& c) {
  Draft& d = c.out.draft;
  // Mamba hybrids (pretrain_mamba.py's --hybrid-attention-ratio, --hybrid-mlp-ratio, --hybrid-override-pattern turn
  // layers into Mamba state-space blocks): not the transformer layers trainsim models.
  for (const char* flag : {"hybrid-attention-ratio", "hybrid-mlp-ratio", "hybrid-override-pattern"})
    if (const Given* g = c.given(flag))
      c.error(g->line, g->flag + " " + g->value +
                           ": Mamba hybrid layers are not modelled (trainsim models transformer layers, dense or "
                           "MoE); not imported");
  // Head dimension (--kv-channels; Megatron-LM's default is hidden / heads). Multi-latent attention sizes its heads
  // by its own flags and does not read it (megatron/core/transformer/multi_latent_attention.py: qk_head_dim,
  // qk_pos_emb_head_dim, v_head_dim), while DeepSeek launch scripts pass --kv-channels 128 beside them.
  if (const Given* g = c.given("kv-channels")) {
    if (c.given("multi-latent-attention")) {
      c.out.notes.push_back({where(c, *g),
                             "not read with --multi-latent-attention, whose head sizes are --qk-head-dim, "
                             "--qk-pos-emb-head-dim and --v-head-dim, as Megatron-Core has it"});
    } else if (auto kv = python_int(g->value)) {
      d.put("model.head_dim", *kv, where(c, *g));
    }
  }
  // Multi-latent attention (DeepSeek-V2/V3): Megatron-Core's MLATransformerConfig defaults q_lora_rank None (a full
  // query projection), kv_lora_rank 32, qk_head_dim 128, qk_pos_emb_head_dim 64, v_head_dim 128.
  if (const Given* g = c.given("multi-latent-attention")) {
    auto rank = [&](const char* flag, const char* path, std::int64_t dflt) {
      if (const Given* v = c.given(flag)) {
        if (auto n = python_int(v->value)) d.put(path, *n, where(c, *v));
      } else {
        d.put(path, dflt, where(c, *g) + " (Megatron-Core default --" + flag + " " + std::to_string(dflt) + ")", true);
      }
    };
    rank("q-lora-rank", "model.mla.q_lora_rank", 0);
    rank("kv-lora-rank", "model.mla.kv_lora_rank", 32);
    rank("qk-head-dim", "model.mla.qk_nope_head_dim", 128);
    rank("qk-pos-emb-head-dim", "model.mla.qk_rope_head_dim", 64);
    rank("v-head-dim", "model.mla.v_head_dim", 128);
  } else {
    for (const char* f : {"q-lora-rank", "kv-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "v-head-dim"})
      if (const Given* r = c.given(f))
        c.out.notes.push_back({where(c, *r), "read only with --multi-latent-attention, as Megatron-LM does"});
  }
  // Dense and MoE layers.
  if (const Given* g = c.given("moe-layer-freq"); g && d.has("model.moe.experts")) {
    if (auto n = python_int(g->value); n && *n >= 1) {
      d.put("model.moe.layer_freq", *n, where(c, *g));
    } else {
      std::string why;
      if (auto pattern = layer_pattern(g->value, why)) {
        d.put("model.moe.layer_pattern", *pattern, where(c, *g));
      } else {
        c.error(g->line, g->flag + " " + g->value + ": " + why +
                             "; Megatron-LM takes an integer or a list such as "
                             "\"([0]*3+[1]*58)\"");
      }
    }
  }
  // DeepEP dispatch (--moe-token-dispatcher-type flex --moe-enable-deepep): tokens cross the network once per node.
  if (const Given* g = c.given("moe-enable-deepep"))
    d.put("parallel.moe_dispatcher", std::string("deepep"), where(c, *g));
  // Megatron-LM's dispatcher (--moe-token-dispatcher-type, default "allgather"): trainsim times all-to-all and DeepEP.
  // Found by a user trial: the flag was listed as ignored and MoE scripts without it were timed as all-to-all.
  if (d.has("model.moe.experts") && !c.given("moe-enable-deepep")) {
    const Given* g = c.given("moe-token-dispatcher-type");
    const std::string type = g ? g->value : "allgather";
    if (type != "alltoall")
      c.out.not_modelled.push_back(
          {g ? where(c, *g) : c.origin,
           (g ? g->flag + " " + type
              : std::string("no --moe-token-dispatcher-type: Megatron-LM's default, allgather")) +
               ": not modelled: trainsim times the dispatch as all-to-all (parallel.moe_dispatcher \"alltoall\") or "
               "DeepEP; the estimate is an all-to-all run's"});
  }
  // Communication overlap: Transformer Engine's userbuffers for the sequence-parallel collectives, and the distributed
  // optimizer's parameter all-gather under the next forward.
  if (const Given* g = c.given("tp-comm-overlap")) d.put("parallel.tp_comm_overlap", true, where(c, *g));
  // Under Megatron-FSDP (ZeRO-3) the flag prefetches each unit's gather, which the ZeRO-3 model times by its units
  // (parallel.overlap_param_gather is the distributed optimizer's, zero_stage 1-2).
  if (const Given* g = c.given("overlap-param-gather")) {
    if (c.lookup("parallel.zero_stage").value_or(0) >= 3)
      c.out.notes.push_back({where(c, *g), g->flag + ": Megatron-FSDP's gathers are timed per unit (zero_stage 3), "
                                                     "overlapped as its prefetch does"});
    else
      d.put("parallel.overlap_param_gather", true, where(c, *g));
  }
  // Gradient reduction during the backward: only with --overlap-grad-reduce (arguments.py, off by default; without
  // it finalize_model_grads starts every bucket's collective after the last backward). ZeRO-3 / FSDP reduces each
  // unit as its backward ends, and under Megatron-DeepSpeed DeepSpeed's engine (its config's overlap_comm) does.
  if (const Given* g = c.given("overlap-grad-reduce")) {
    d.put("parallel.overlap_grad_reduce", true, where(c, *g));
  } else if (c.lookup("parallel.zero_stage").value_or(0) < 3) {
    // Megatron-DeepSpeed: DeepSpeed's engine reduces, as its config's overlap_comm says (default false for stages 0-2;
    // stage 0 always after the backward). The config is not read here: its default is taken (a user trial found the
    // scenario default, overlapped, on a --zero-stage=0 script).
    const bool mds = c.given("zero-stage") || c.given("deepspeed");
    d.put("parallel.overlap_grad_reduce", false,
          c.origin + (mds ? " (Megatron-DeepSpeed below ZeRO-3: DeepSpeed's default overlap_comm false; its config is "
                            "not read, --set parallel.overlap_grad_reduce=true if it sets overlap_comm)"
                          : " (no --overlap-grad-reduce: Megatron-LM reduces the gradients after the backward)"),
          true);
  }
  // MoE all-to-alls beside another micro-batch's compute (Megatron-Core's combined 1F1B, execution/ep_overlap.hpp).
  if (const Given* g = c.given("overlap-moe-expert-parallel-comm"))
    d.put("parallel.ep_comm_overlap", true, where(c, *g));
  // Context parallelism's key/value exchange (--cp-comm-type, one type or one per layer, handed to Transformer
  // Engine): "p2p" (the default ring) and "all_gather" (Megatron-LM's help spells it "allgather") are modelled; the
  // all-to-all types are not.
  if (const Given* g = c.given("cp-comm-type")) {
    std::string type;
    bool mixed = false;
    for (std::size_t a = 0, b = 0; a <= g->value.size(); a = b + 1) {
      b = std::min(g->value.find(' ', a), g->value.size());
      if (b <= a) continue;
      std::string t = g->value.substr(a, b - a);
      if (t == "allgather") t = "all_gather";
      mixed = mixed || (!type.empty() && t != type);
      type = t;
    }
    if (mixed) {
      c.error(g->line,
              g->flag + " " + g->value + ": a type per layer is not modelled; trainsim takes one type for every layer");
    } else if (type == "p2p" || type == "all_gather") {
      d.put("parallel.cp_comm_type", type, where(c, *g));
    } else {
      c.error(g->line,
              g->flag + " " + g->value + ": \"" + type + "\" is not modelled; accepted: p2p, all_gather (allgather)");
    }
  }
  // Shared experts: one shared MLP of --moe-shared-expert-intermediate-size (Megatron-Core's SharedExpertMLP). When it
  // is a multiple of the routed width it is written as that many routed-width shared experts (the same parameters and
  // FLOPs, and what `step --explain` writes back).
  if (const Given* g = c.given("moe-shared-expert-intermediate-size")) {
    const auto size = python_int(g->value);
    const auto expert = c.lookup("model.moe.ffn_hidden");
    if (size && expert && *size % *expert == 0) {
      d.put("model.moe.shared_experts", *size / *expert,
            where(c, *g) + " / --moe-ffn-hidden-size " + std::to_string(*expert) + " (expert-width shared experts)");
    } else if (size) {
      d.put("model.moe.shared_experts", std::int64_t{1}, where(c, *g) + " (one shared expert)");
      d.put("model.moe.shared_ffn_hidden", *size, where(c, *g));
    }
  }
  if (const Given* g = c.given("quick-geglu")) d.put("model.activation", std::string("geglu"), where(c, *g));
  if (const Given* g = c.given("qk-layernorm")) d.put("model.qk_norm", true, where(c, *g));
  if (const Given* g = c.given("mtp-num-layers"))
    if (auto n = python_int(g->value)) d.put("model.mtp_layers", *n, where(c, *g));
}

void apply_megatron_deepspeed_moe(const Context& c) {
  Draft& d = c.out.draft;
  const bool mds = c.given("deepspeed") || c.given("topk") || c.given("expert-interval") ||
                   c.given("moe-train-capacity-factor") || c.given("disable-moe-token-dropping") ||
                   c.given("moe-expert-parallel-size");
  const auto experts = d.integer("model.moe.experts");
  if (!mds || !experts || *experts < 2) {
    for (const char* flag : {"topk", "expert-interval", "moe-train-capacity-factor", "disable-moe-token-dropping"})
      if (const Given* g = c.given(flag)) c.out.notes.push_back({where(c, *g), "ignored: the model has no experts"});
    return;
  }
  const std::string dflt = c.origin + " (Megatron-DeepSpeed default";
  // Megatron-DeepSpeed's top-k gate (deepspeed.moe.layer.MoE's k).
  if (const Given* g = c.given("topk")) {
    if (auto k = python_int(g->value)) d.put("model.moe.top_k", *k, where(c, *g));
  } else if (!d.has("model.moe.top_k")) {
    d.put("model.moe.top_k", std::int64_t{1}, dflt + " --topk 1)", true);
  }
  // Experts on every expert_interval-th layer, counting from 1 (megatron/model/transformer.py,
  // get_num_experts_per_layer: layer_num % expert_interval == 0).
  const Given* interval_flag = c.given("expert-interval");
  const std::int64_t interval = interval_flag ? python_int(interval_flag->value).value_or(2) : 2;
  if (const auto layers = d.integer("model.layers"); layers && interval > 1) {
    std::vector<std::int64_t> pattern(static_cast<std::size_t>(*layers), 0);
    for (std::int64_t i = 0; i < *layers; ++i)
      pattern[static_cast<std::size_t>(i)] = (i + 1) % interval == 0 ? 1 : 0;
    d.put("model.moe.layer_pattern", pattern,
          interval_flag ? where(c, *interval_flag) + " (one layer in every " + std::to_string(interval) +
                              ", the last of each group)"
                        : dflt + " --expert-interval 2: every second layer)",
          !interval_flag);
  }
  // Token dropping: DeepSpeed's top-k gate drops what exceeds capacity_factor x tokens / experts (min_capacity 4).
  if (const Given* g = c.given("disable-moe-token-dropping")) {
    c.out.notes.push_back({where(c, *g), "dropless routing"});
  } else if (const Given* f = c.given("moe-train-capacity-factor")) {
    const auto v = number(f->value);
    if (!v || *v < 0.01 || *v > 64)
      c.error(f->line, f->flag + ": \"" + f->value + "\" is not a capacity factor trainsim takes (0.01 to 64)");
    else
      d.put("training.moe_capacity_factor", *v, where(c, *f));
  } else {
    d.put("training.moe_capacity_factor", 1.0, dflt + " --moe-train-capacity-factor 1.0: tokens dropped)", true);
  }
}

void apply_virtual_pipeline(const Context& c) {
  const Given* g = c.given("num-layers-per-virtual-pipeline-stage");
  if (!g) return;
  if (const Given* n = c.given("num-virtual-stages-per-pipeline-rank")) {
    c.error(n->line, n->flag + " and " + g->flag + " cannot both be given (Megatron-LM refuses them together)");
    return;
  }
  for (const char* uneven : {"decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers"})
    if (const Given* u = c.given(uneven)) {
      c.error(g->line, g->flag + " with " + u->flag +
                           ": Megatron-LM asks for --num-virtual-stages-per-pipeline-rank with uneven pipeline stages");
      return;
    }
  // Megatron-LM's validate_args (megatron/training/arguments.py): the layers, plus one for each of
  // --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split, split evenly over the pipeline
  // ranks, and a rank's layers into virtual stages of N: vpp = (layers + accounted) / pp / N. Without the accounted
  // layers, a 94-layer Qwen3-235B with both flags (96 over PP 8, N 3) was refused (a user trial).
  const auto per = python_int(g->value);
  const auto layers = c.lookup("model.layers");
  const auto pp = c.lookup("parallel.pp");
  if (!layers) {
    c.out.unresolved.push_back({where(c, *g),
                                "needs the number of layers (--num-layers or a model config) to derive the virtual "
                                "pipeline size",
                                "parallel.vpp"});
    return;
  }
  if (!per || !pp || *per < 1 || *pp < 1) return;
  std::int64_t counted = *layers;
  std::string accounted;
  for (const char* f : {"account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split"})
    if (c.given(f)) {
      ++counted;
      accounted += std::string(accounted.empty() ? " + 1 for " : " and 1 for ") + "--" + f;
    }
  const std::string split = std::to_string(*layers) + " layers" + accounted;
  if (counted % *pp != 0 || (counted / *pp) % *per != 0) {
    c.error(g->line, g->flag + " " + g->value + ": " + split + " do not split into pipeline size " +
                         std::to_string(*pp) + " x " + g->value +
                         " layers per virtual stage (Megatron-LM requires it)");
    return;
  }
  c.out.draft.put("parallel.vpp", counted / *pp / *per,
                  where(c, *g) + " ((layers" + (accounted.empty() ? "" : " + accounted") + ") / (pp x this))");
}

void apply_training_features(const Context& c) {
  Draft& d = c.out.draft;
  // Offloading to the CPU changes the step (host transfers) and memory, and is not modelled: refused, as the
  // DeepSpeed and TorchTitan importers refuse theirs. Pai-Megatron-Patch's --optimizer hybridadam offloads too.
  for (const char* flag : {"optimizer-cpu-offload", "cpu-offloading"})
    if (const Given* g = c.given(flag))
      c.error(g->line, g->flag +
                           ": offloading to the CPU is not modelled (its host transfers and the memory they "
                           "free); not imported");
  if (const Given* g = c.given("optimizer"); g && g->value == "hybridadam")
    c.error(g->line, g->flag + " hybridadam: an optimizer offloaded to the CPU is not modelled; not imported");
  // trainsim's memory, checkpoints and optimizer step are Adam's (two fp32 moments beside the master weights).
  if (const Given* g = c.given("optimizer"); g && g->value == "sgd")
    c.error(g->line, g->flag +
                         " sgd: trainsim models Adam's states (two moments per parameter); SGD's one "
                         "momentum buffer is not modelled; not imported");
  // Anything else is not an optimizer Megatron-LM builds (its arguments.py: choices adam, sgd); it was taken as Adam
  // without a word (a user trial: Pai-Megatron-Patch's --optimizer cpu-adam).
  // Forks' names for the same AdamW (an Ascend fork's fused_adam; adamw) keep its two moments: read as adam, noted.
  if (const Given* g = c.given("optimizer"); g && (g->value == "adamw" || g->value == "fused_adam"))
    c.out.notes.push_back({where(c, *g), g->value + ": Adam's states (two fp32 moments per parameter)"});
  if (const Given* g = c.given("optimizer"); g && g->value != "adam" && g->value != "sgd" && g->value != "hybridadam" &&
                                             g->value != "adamw" && g->value != "fused_adam")
    c.error(g->line, g->flag + " " + g->value +
                         ": not an optimizer trainsim models; accepted: adam (Megatron-LM's AdamW, two fp32 moments "
                         "per parameter; forks' adamw and fused_adam); sgd and CPU-offloaded ones (hybridadam, "
                         "cpu-adam) are not modelled");
  // Megatron-LM asserts not (args.fp16 and args.bf16) (megatron/training/arguments.py).
  if (const Given* h = c.given("fp16"); h && c.given("bf16"))
    c.error(h->line, h->flag + " beside " + c.given("bf16")->flag +
                         ": Megatron-LM refuses both at once; keep the one the run used");
  // Megatron-DeepSpeed's Ulysses sequence parallelism splits the data-parallel ranks; trainsim has no such layout.
  if (const Given* g = c.given("ds-sequence-parallel-size"); g && python_int(g->value).value_or(1) > 1)
    c.error(g->line, g->flag + " " + g->value +
                         ": DeepSpeed-Ulysses sequence parallelism (all-to-all over heads) is not modelled; "
                         "not imported");
  if (const Given* g = c.given("moe-shared-expert-overlap"))
    c.out.ignored.push_back({where(c, *g),
                             "not modelled: the shared experts run on the compute stream, not beside "
                             "the dispatcher's communication"});
  // Checkpoints: Megatron-LM saves every --save-interval iterations into --save (arguments.py; without --save it saves
  // nothing): the run level times that policy instead of Daly's optimum, and its summary prints the optimum beside it.
  if (const Given* g = c.given("save-interval")) {
    const auto n = python_int(g->value);
    if (!n || *n < 1 || *n > 1'000'000'000) {
      c.error(g->line, g->flag + ": \"" + g->value + "\" is not a number of iterations (1 to 1e9)");
    } else if (!c.given("save")) {
      c.out.notes.push_back({where(c, *g),
                             "ignored: without --save Megatron-LM writes no checkpoint; trainsim "
                             "keeps Daly's optimum (reliability.checkpoint.interval \"auto\")"});
    } else {
      d.put("reliability.checkpoint.interval", std::to_string(*n) + (*n == 1 ? " step" : " steps"), where(c, *g));
      c.out.notes.push_back({where(c, *g), "checkpoints every " + std::to_string(*n) +
                                               " iterations, as the script saves; `trainsim run` prints Daly's "
                                               "optimum beside it (\"auto\" uses the optimum)"});
    }
  }
  // Main gradients: fp32 by default (16-bit under --fp16); --grad-reduce-in-bf16 keeps and reduces them in bf16,
  // --accumulate-allreduce-grads-in-fp32 in fp32 (what bf16 forces; fp16's way to fp32).
  if (const Given* g = c.given("grad-reduce-in-bf16")) d.put("training.main_grads", std::string("bf16"), where(c, *g));
  if (const Given* g = c.given("accumulate-allreduce-grads-in-fp32"))
    d.put("training.main_grads", std::string("fp32"), where(c, *g));
  precision_aware_optimizer(c);
  if (const Given* g = c.given("fp8-param-gather"))
    c.out.not_modelled.push_back({where(c, *g), g->flag + ": not modelled: FP8 parameters (no bf16 copy, gathered in "
                                                          "FP8) are counted in bf16 and gathered in 16 bits"});
  // Dropout: Megatron-LM's default is 0.1 for both (arguments.py).
  for (const auto& [flag, path] : {std::pair{"attention-dropout", "training.attention_dropout"},
                                   std::pair{"hidden-dropout", "training.hidden_dropout"}}) {
    if (const Given* g = c.given(flag)) {
      if (auto v = fraction(g->value)) {
        d.put(path, *v, where(c, *g));
      } else {
        c.error(g->line, g->flag + ": \"" + g->value + "\" is not a probability in [0, 1)");
      }
    } else if (c.given("num-layers")) {
      // Read as Megatron-LM reads the file (found by a user trial: trainsim's scenario default, 0, was written).
      d.put(path, 0.1, c.origin + " (no --" + flag + ": Megatron-LM's default)");
      c.out.notes.push_back({c.origin, "no --" + std::string(flag) + ": Megatron-LM's default, 0.1"});
    }
  }
  // Token dropping (Megatron-Core: dropless unless --moe-expert-capacity-factor is given; padding to the capacity needs
  // it, as TransformerConfig checks).
  if (const Given* g = c.given("moe-expert-capacity-factor")) {
    const auto v = number(g->value);
    if (!v || *v < 0.01 || *v > 64)
      c.error(g->line, g->flag + ": \"" + g->value + "\" is not a capacity factor trainsim takes (0.01 to 64)");
    else if (d.has("model.moe.experts"))
      d.put("training.moe_capacity_factor", *v, where(c, *g));
    else
      c.out.notes.push_back({where(c, *g), "ignored: the model has no experts"});
  }
  if (const Given* g = c.given("moe-pad-expert-input-to-capacity")) {
    if (!c.given("moe-expert-capacity-factor"))
      c.error(g->line,
              g->flag + " pads to the capacity --moe-expert-capacity-factor sets, which the file does not give");
    else if (d.has("training.moe_capacity_factor"))
      d.put("training.moe_pad_to_capacity", true, where(c, *g));
  }
  // Forced load balancing (benchmark recipes: the router sends every expert the same tokens) is what
  // training.moe_imbalance 1 describes; stated, `trainsim step` no longer says that routing was taken as balanced.
  if (const Given* g = c.given("moe-router-force-load-balancing")) {
    if (d.has("model.moe.experts"))
      d.put("training.moe_imbalance", 1.0, where(c, *g) + " (balanced routing)");
    else
      c.out.notes.push_back({where(c, *g), "ignored: the model has no experts"});
  }
  // Attention backend: unfused and local store the attention scores (Korthikanti's 5as/h term); the others do not.
  // --transformer-impl local builds Megatron-Core's own layers (gpt_layer_specs.py get_gpt_layer_local_spec), whose
  // core attention is its DotProductAttention (baddbmm, softmax, bmm: the scores stored) whatever the backend says;
  // with --use-flash-attn, the legacy models' flag, the attention is taken as fused as that flag says.
  const Given* impl = c.given("transformer-impl");
  if (impl && impl->value == "local" && !c.given("use-flash-attn")) {
    d.put("training.fused_attention", false, where(c, *impl) + " (Megatron-Core's DotProductAttention, unfused)");
    if (const Given* g = c.given("attention-backend"); g && g->value != "unfused" && g->value != "local")
      c.out.notes.push_back({where(c, *g), "not read with --transformer-impl local, whose attention is unfused"});
  } else if (const Given* g = c.given("attention-backend"))
    d.put("training.fused_attention", g->value != "unfused" && g->value != "local", where(c, *g));
  else if (const Given* f = c.given("use-flash-attn"))
    d.put("training.fused_attention", true, where(c, *f));
  else if (const Given* v = c.given("use-flash-attn-v2")   ? c.given("use-flash-attn-v2")
                            : c.given("use-flash-attn-v1") ? c.given("use-flash-attn-v1")
                                                           : c.given("use-flash-attn-triton"))
    d.put("training.fused_attention", true, where(c, *v));
  else if (const Given* ds = c.given("deepspeed"))
    // Megatron-DeepSpeed's ParallelAttention runs FlashAttention only with --use-flash-attn-v1, -v2 or -triton, else
    // its unfused CoreAttention (megatron/model/transformer.py there). Found by a user trial: fused was assumed.
    d.put("training.fused_attention", false,
          where(c, *ds) + " (Megatron-DeepSpeed without --use-flash-attn-*: unfused CoreAttention)");
  // The loss: Megatron-LM runs its unfused vocab_parallel_cross_entropy unless --cross-entropy-loss-fusion
  // (megatron/core/model_parallel_config.py: cross_entropy_loss_fusion defaults to False); both of its fused
  // implementations (--cross-entropy-fusion-impl native, te) are "fused".
  if (const Given* g = c.given("cross-entropy-loss-fusion"))
    d.put("training.cross_entropy", std::string("fused"), where(c, *g));
  else
    d.put("training.cross_entropy", std::string("unfused"),
          c.origin + " (Megatron-LM's default loss: no --cross-entropy-loss-fusion)", true);
  // Recomputation details.
  if (const Given* g = c.given("recompute-method")) d.put("parallel.recompute_method", g->value, where(c, *g));
  if (const Given* g = c.given("recompute-num-layers"))
    if (auto n = python_int(g->value)) d.put("parallel.recompute_num_layers", *n, where(c, *g));
  if (const Given* g = c.given("recompute-modules")) {
    std::vector<std::string> modules;
    for (std::size_t a = 0, b = 0; a <= g->value.size(); a = b + 1) {
      b = std::min(g->value.find(' ', a), g->value.size());
      if (b > a) modules.push_back(g->value.substr(a, b - a));
    }
    d.put("parallel.recompute_modules", modules, where(c, *g));
  }
  // Uneven pipeline stages: Megatron-Core's layout string (checked when the scenario loads: pipeline_layout.hpp), or
  // first/last stage sizes, or the embedding and loss counted as layers.
  if (const Given* g = c.given("pipeline-model-parallel-layout"))
    d.put("parallel.pipeline_layout", g->value, where(c, *g));
  if (const Given* g = c.given("decoder-first-pipeline-num-layers"))
    if (auto n = python_int(g->value)) d.put("parallel.first_stage_layers", *n, where(c, *g));
  if (const Given* g = c.given("decoder-last-pipeline-num-layers"))
    if (auto n = python_int(g->value)) d.put("parallel.last_stage_layers", *n, where(c, *g));
  if (const Given* g = c.given("account-for-embedding-in-pipeline-split"))
    d.put("parallel.account_for_embedding_in_pipeline_split", true, where(c, *g));
  if (const Given* g = c.given("account-for-loss-in-pipeline-split"))
    d.put("parallel.account_for_loss_in_pipeline_split", true, where(c, *g));
  // Megatron-DeepSpeed's pipeline split (DeepSpeed PipelineModule's partition_method, lower-cased; "type:REGEX"
  // balances the layers whose class names the pattern matches, case-insensitively). Its default "type:transformer"
  // counts the transformer layers alone; adding "embedding" counts "the first and last embedding layers" as well
  // (megatron/model/gpt_model.py's comment): with tied embeddings both ends of its GPTModelPipe are EmbeddingPipe,
  // which is Megatron-LM's embedding and loss accounted for; untied, the output layer is an LMHeadPipe the pattern does
  // not match, and only the embedding counts. Other methods (uniform, parameters) split by rules trainsim does not
  // follow: the split is asked for (the per-stage layer counts DeepSpeed prints at start-up).
  if (const Given* g = c.given("pp-partition-method")) {
    std::string m = g->value;
    std::transform(m.begin(), m.end(), m.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (m == "type:transformer|embedding" || m == "type:embedding|transformer") {
      d.put("parallel.account_for_embedding_in_pipeline_split", true, where(c, *g));
      if (!c.given("untie-embeddings-and-output-weights"))
        d.put("parallel.account_for_loss_in_pipeline_split", true, where(c, *g));
    } else if (m != "type:transformer") {
      c.out.unresolved.push_back({where(c, *g),
                                  "\"" + g->value +
                                      "\": this split of the layers over the pipeline stages is not modelled "
                                      "(modelled: type:transformer, the default, and type:transformer|embedding); "
                                      "give the layers of each stage",
                                  "parallel.layers_per_stage"});
    }
  }
}

}  // namespace sim::importers::megatron
