// sim/importers/megatron_args.cpp: the table of Megatron-LM arguments trainsim reads (names, kinds and defaults follow
// megatron/training/arguments.py, core_r0.9+, and Megatron-DeepSpeed's additions) and argparse's integer reading.
#include "sim/importers/megatron_args.hpp"

#include "sim/importers/draft.hpp"

#include <cctype>
#include <map>

namespace sim::importers::megatron {

const std::vector<FlagSpec>& flag_specs() {
  static const std::vector<FlagSpec> specs = {
      {"tensor-model-parallel-size", Kind::Int, "parallel.tp"},
      {"pipeline-model-parallel-size", Kind::Int, "parallel.pp"},
      {"context-parallel-size", Kind::Int, "parallel.cp"},
      {"expert-model-parallel-size", Kind::Int, "parallel.ep"},
      {"expert-tensor-parallel-size", Kind::Int, "parallel.expert_tp"},
      {"virtual-pipeline-model-parallel-size", Kind::Int, "parallel.vpp"},
      {"num-layers-per-virtual-pipeline-stage", Kind::Int, nullptr},
      {"num-layers", Kind::Int, "model.layers"},
      {"hidden-size", Kind::Int, "model.hidden"},
      {"ffn-hidden-size", Kind::Int, "model.ffn_hidden"},
      {"num-attention-heads", Kind::Int, "model.heads"},
      {"num-query-groups", Kind::Int, nullptr},
      {"group-query-attention", Kind::Bool, nullptr},
      {"seq-length", Kind::Int, "training.seq_len"},
      {"max-position-embeddings", Kind::Int, "model.max_seq_len"},
      {"micro-batch-size", Kind::Int, "parallel.micro_batch"},
      {"global-batch-size", Kind::Int, "parallel.global_batch"},
      {"train-iters", Kind::Int, nullptr, {}, 1, 1'000'000'000'000'000},
      {"train-samples", Kind::Int, nullptr, {}, 1, 1'000'000'000'000'000},
      {"rampup-batch-size", Kind::Int, nullptr, {}, 3, 1'000'000'000'000'000},
      {"checkpoint-activations", Kind::Bool, nullptr},
      {"kv-channels", Kind::Int, nullptr},
      {"use-megatron-fsdp", Kind::Bool, nullptr},
      {"use-torch-fsdp2", Kind::Bool, nullptr},
      {"data-parallel-sharding-strategy",
       Kind::Choice,
       nullptr,
       {"no_shard", "optim", "optim_grads", "optim_grads_params"}},
      {"outer-dp-sharding-strategy", Kind::Choice, nullptr, {"no_shard", "optim"}},
      {"grad-reduce-in-bf16", Kind::Bool, nullptr},
      {"moe-layer-freq", Kind::Text, nullptr},
      {"moe-enable-deepep", Kind::Bool, nullptr},
      {"moe-expert-capacity-factor", Kind::Text, nullptr},
      {"moe-pad-expert-input-to-capacity", Kind::Bool, nullptr},
      {"moe-router-force-load-balancing", Kind::Bool, nullptr},
      {"tp-comm-overlap", Kind::Bool, nullptr},
      {"overlap-moe-expert-parallel-comm", Kind::Bool, nullptr},
      {"overlap-param-gather", Kind::Bool, nullptr},
      {"overlap-grad-reduce", Kind::Bool, nullptr},
      {"transformer-impl", Kind::Text, nullptr},
      {"deepspeed", Kind::Bool, nullptr},  // Megatron-DeepSpeed: DeepSpeed's engine reduces the gradients
      {"cp-comm-type", Kind::Text, nullptr, {}, -1},
      {"moe-shared-expert-intermediate-size", Kind::Int, nullptr},
      {"make-vocab-size-divisible-by", Kind::Int, nullptr},
      {"quick-geglu", Kind::Bool, nullptr},
      {"multi-latent-attention", Kind::Bool, nullptr},
      {"q-lora-rank", Kind::Int, nullptr},
      {"kv-lora-rank", Kind::Int, nullptr},
      {"qk-head-dim", Kind::Int, nullptr},
      {"qk-pos-emb-head-dim", Kind::Int, nullptr},
      {"v-head-dim", Kind::Int, nullptr},
      {"qk-layernorm", Kind::Bool, nullptr},
      {"mtp-num-layers", Kind::Int, nullptr},
      {"save", Kind::Text, nullptr, {}, 1, 1'000'000'000, true},  // the checkpoint directory: saving or not
      {"save-interval", Kind::Int, nullptr},
      {"attention-dropout", Kind::Text, nullptr},
      {"hidden-dropout", Kind::Text, nullptr},
      {"attention-backend", Kind::Choice, nullptr, {"auto", "flash", "fused", "unfused", "local"}},
      {"use-flash-attn", Kind::Bool, nullptr},
      {"pipeline-model-parallel-layout", Kind::Text, nullptr},
      {"decoder-first-pipeline-num-layers", Kind::Int, nullptr},
      {"decoder-last-pipeline-num-layers", Kind::Int, nullptr},
      {"account-for-embedding-in-pipeline-split", Kind::Bool, nullptr},
      {"account-for-loss-in-pipeline-split", Kind::Bool, nullptr},
      {"recompute-modules", Kind::Text, nullptr, {}, -1},
      {"moe-shared-expert-overlap", Kind::Bool, nullptr},
      // Megatron-DeepSpeed's MoE (megatron/arguments.py there: --topk default 1, --expert-interval default 2, token
      // dropping at --moe-train-capacity-factor 1.0 unless --disable-moe-token-dropping) and its Ulysses sequence
      // parallelism.
      {"topk", Kind::Int, nullptr},
      {"expert-interval", Kind::Int, nullptr},
      {"moe-expert-parallel-size", Kind::Int, "parallel.ep"},
      {"moe-train-capacity-factor", Kind::Text, nullptr},
      {"disable-moe-token-dropping", Kind::Bool, nullptr},
      {"ds-sequence-parallel-size", Kind::Int, nullptr},
      // Offloading to the CPU (Megatron-Core's optimizer and activation offload): refused, as the other importers do.
      {"optimizer-cpu-offload", Kind::Bool, nullptr},
      {"cpu-offloading", Kind::Bool, nullptr},
      {"optimizer", Kind::Text, nullptr},
      {"recompute-granularity", Kind::Choice, nullptr, {"full", "selective"}},
      {"recompute-activations", Kind::Bool, nullptr},
      {"recompute-method", Kind::Choice, nullptr, {"uniform", "block"}},
      {"recompute-num-layers", Kind::Int, nullptr},
      {"sequence-parallel", Kind::Bool, nullptr},
      {"use-distributed-optimizer", Kind::Bool, nullptr},
      {"num-distributed-optimizer-instances", Kind::Int, nullptr},
      {"bf16", Kind::Bool, nullptr},
      {"fp16", Kind::Bool, nullptr},
      {"fp8-format", Kind::Choice, nullptr, {"e4m3", "hybrid"}},
      {"fp8-recipe", Kind::Choice, nullptr, {"tensorwise", "delayed", "mxfp8", "blockwise"}},
      {"swiglu", Kind::Bool, nullptr},
      {"squared-relu", Kind::Bool, nullptr},
      // Megatron-DeepSpeed spells the norms in lower case (its arguments.py: choices layernorm, rmsnorm).
      {"normalization", Kind::Choice, nullptr, {"LayerNorm", "RMSNorm", "layernorm", "rmsnorm"}},
      {"position-embedding-type", Kind::Choice, nullptr, {"learned_absolute", "rope", "none"}},
      {"use-rotary-position-embeddings", Kind::Bool, nullptr},  // legacy spelling of rope (Megatron-DeepSpeed too)
      {"num-key-value-heads", Kind::Int, nullptr},              // Megatron-DeepSpeed's grouped-query heads
      {"encoder-num-layers", Kind::Int, nullptr},               // Megatron-LM: num_layers when --num-layers is absent
      {"encoder-seq-length", Kind::Int, nullptr},               // Megatron-LM: seq_length when --seq-length is absent
      {"tokenizer-type", Kind::Text, nullptr},
      {"hybrid-attention-ratio", Kind::Text, nullptr},  // Mamba hybrids: refused
      {"hybrid-mlp-ratio", Kind::Text, nullptr},
      {"hybrid-override-pattern", Kind::Text, nullptr},
      {"untie-embeddings-and-output-weights", Kind::Bool, nullptr},
      {"disable-bias-linear", Kind::Bool, nullptr},
      {"num-experts", Kind::Int, "model.moe.experts"},
      {"moe-router-topk", Kind::Int, "model.moe.top_k"},
      {"moe-router-num-groups", Kind::Int, "model.moe.router_groups"},  // group-limited routing
      {"moe-router-group-topk", Kind::Int, "model.moe.router_group_topk"},
      {"moe-ffn-hidden-size", Kind::Int, "model.moe.ffn_hidden"},
      {"padded-vocab-size", Kind::Int, "model.vocab"},
      {"pad-vocab-size-to", Kind::Int, "model.vocab"},  // Megatron-DeepSpeed
      {"zero-stage", Kind::Text, nullptr},              // Megatron-DeepSpeed
      {"vocab-size", Kind::Int, nullptr},
      // torchrun's launcher flags (both spellings are accepted by torchrun); deepspeed's launcher
      {"nproc-per-node", Kind::Int, "cluster.gpus_per_node"},
      {"nnodes", Kind::Int, nullptr},
      {"num-gpus", Kind::Int, "cluster.gpus_per_node"},
      {"num-nodes", Kind::Int, nullptr},
  };
  return specs;
}

std::string settles(const FlagSpec& s) {
  if (s.path) return s.path;
  const std::map<std::string, std::string> derived = {{"num-layers-per-virtual-pipeline-stage", "parallel.vpp"},
                                                      {"num-query-groups", "model.kv_heads"},
                                                      {"num-key-value-heads", "model.kv_heads"},
                                                      {"topk", "model.moe.top_k"},
                                                      {"expert-interval", "model.moe.layer_pattern"},
                                                      {"moe-train-capacity-factor", "training.moe_capacity_factor"},
                                                      {"encoder-num-layers", "model.layers"},
                                                      {"encoder-seq-length", "training.seq_len"},
                                                      {"tokenizer-type", "model.vocab"},
                                                      {"cp-comm-type", "parallel.cp_comm_type"},
                                                      {"train-iters", "training.tokens"},
                                                      {"save-interval", "reliability.checkpoint.interval"},
                                                      {"train-samples", "training.tokens"},
                                                      {"nnodes", "cluster.gpus"},
                                                      {"recompute-granularity", "parallel.recompute"},
                                                      {"fp8-format", "training.dtype"},
                                                      {"normalization", "model.norm"},
                                                      {"position-embedding-type", "model.position_embedding"}};
  auto it = derived.find(s.name);
  return it == derived.end() ? std::string() : it->second;
}

const FlagSpec* find_spec(const std::string& normalized) {
  for (const auto& s : flag_specs())
    if (normalized == s.name) return &s;
  return nullptr;
}

std::string join(const std::vector<const char*>& items) {
  std::string out;
  for (const auto* c : items)
    out += (out.empty() ? "" : ", ") + std::string(c);
  return out;
}

std::optional<std::int64_t> python_int(std::string text) {
  for (std::size_t i = 1; i + 1 < text.size(); ++i)
    if (text[i] == '_' && std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(text[i + 1])))
      text.erase(i, 1);
  return parse_integer(text);
}

}  // namespace sim::importers::megatron
