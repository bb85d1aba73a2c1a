// sim/importers/megatron_args.cpp: the table of Megatron-LM arguments trainsim reads (names, kinds and defaults follow
// megatron/training/arguments.py, core_r0.9+, and Megatron-DeepSpeed's additions) and argparse's integer reading.
#include "sim/importers/megatron_args.hpp"

#include "sim/importers/draft.hpp"

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

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
      {"num-virtual-stages-per-pipeline-rank", Kind::Int, "parallel.vpp"},
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
      {"train-tokens", Kind::Int, nullptr, {}, 1, 1'000'000'000'000'000'000},  // Megatron-DeepSpeed
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
      {"accumulate-allreduce-grads-in-fp32", Kind::Bool, nullptr},
      {"use-precision-aware-optimizer", Kind::Bool, nullptr},
      {"fp8-param-gather", Kind::Bool, nullptr},
      {"main-grads-dtype", Kind::Choice, nullptr, {"fp32", "bf16"}},
      {"main-params-dtype", Kind::Choice, nullptr, {"fp32", "fp16"}},
      {"exp-avg-dtype", Kind::Choice, nullptr, {"fp32", "fp16", "bf16", "fp8"}},
      {"exp-avg-sq-dtype", Kind::Choice, nullptr, {"fp32", "fp16", "bf16", "fp8"}},
      {"moe-layer-freq", Kind::Text, nullptr},
      {"moe-enable-deepep", Kind::Bool, nullptr},
      {"moe-token-dispatcher-type", Kind::Choice, nullptr, {"allgather", "alltoall", "flex", "alltoall_seq"}},
      {"moe-expert-capacity-factor", Kind::Text, nullptr},
      {"moe-pad-expert-input-to-capacity", Kind::Bool, nullptr},
      {"moe-router-force-load-balancing", Kind::Bool, nullptr},
      {"cross-entropy-loss-fusion", Kind::Bool, nullptr},
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
      {"use-flash-attn-v1", Kind::Bool, nullptr},  // Megatron-DeepSpeed's FlashAttention flags
      {"use-flash-attn-v2", Kind::Bool, nullptr},
      {"use-flash-attn-triton", Kind::Bool, nullptr},
      {"pipeline-model-parallel-layout", Kind::Text, nullptr},
      {"decoder-first-pipeline-num-layers", Kind::Int, nullptr},
      {"decoder-last-pipeline-num-layers", Kind::Int, nullptr},
      {"account-for-embedding-in-pipeline-split", Kind::Bool, nullptr},
      {"account-for-loss-in-pipeline-split", Kind::Bool, nullptr},
      {"pp-partition-method", Kind::Text, nullptr},  // Megatron-DeepSpeed's pipeline split
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
      {"position-embedding-type", Kind::Choice, nullptr, {"learned_absolute", "rope"}},
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
      {"add-qkv-bias", Kind::Bool, nullptr},
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
  // An unreadable GPUs-per-node count only matters for the GPU count: --gpus settles it (the node size is then the
  // hardware profile's). Found by a user trial: --gpus 64 left `--nproc_per_node $(python3 -c ...)` unresolved.
  if (std::string_view(s.name) == "nproc-per-node" || std::string_view(s.name) == "num-gpus") return "cluster.gpus";
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
                                                      {"train-tokens", "training.tokens"},
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

bool slurm_option_takes_value(std::string_view flag) {
  static const std::set<std::string_view> kValued{"-N",
                                                  "-n",
                                                  "-p",
                                                  "-A",
                                                  "-t",
                                                  "-J",
                                                  "-o",
                                                  "-e",
                                                  "-c",
                                                  "-G",
                                                  "-w",
                                                  "-x",
                                                  "--nodes",
                                                  "--ntasks",
                                                  "--ntasks-per-node",
                                                  "--gpus-per-node",
                                                  "--gres",
                                                  "--partition",
                                                  "--account",
                                                  "--time",
                                                  "--job-name",
                                                  "--output",
                                                  "--error",
                                                  "--cpus-per-task",
                                                  "--gpus",
                                                  "--container-image",
                                                  "--container-mounts",
                                                  "--container-name",
                                                  "--container-workdir",
                                                  "--mpi",
                                                  "--export",
                                                  "--mem",
                                                  "--qos",
                                                  "--nodelist",
                                                  "--exclude",
                                                  "--dependency",
                                                  "--gpus-per-task",
                                                  "--cpu-bind",
                                                  "--distribution",
                                                  "--reservation"};
  return kValued.contains(flag);
}

std::optional<std::string> stray_word(const std::string& word) {
  char* end = nullptr;
  if (word == "--" || (!word.empty() && (std::strtod(word.c_str(), &end), *end == '\0'))) return std::nullopt;
  const std::string refused = ": argparse refuses it as an unrecognized argument, so Megatron-LM would not start";
  // Unicode dashes that text pasted from web pages and PDFs puts where "--" was (UTF-8 bytes).
  static const std::pair<const char*, const char*> kDashes[] = {{"\xE2\x80\x93", "an en dash (U+2013)"},
                                                                {"\xE2\x80\x94", "an em dash (U+2014)"},
                                                                {"\xE2\x88\x92", "a minus sign (U+2212)"},
                                                                {"\xE2\x80\x90", "a hyphen (U+2010)"},
                                                                {"\xE2\x80\x91", "a non-breaking hyphen (U+2011)"}};
  for (const auto& [bytes, name] : kDashes)
    if (word.starts_with(bytes)) {
      std::string rest = word.substr(std::string_view(bytes).size());
      while (rest.starts_with("-"))
        rest.erase(0, 1);
      return "\"" + word + "\" starts with " + name + ", not \"--\"" + refused + "; write --" + rest;
    }
  if (word.size() > 2 && word[0] == '-' && word[1] != '-' && std::isalpha(static_cast<unsigned char>(word[1])))
    return "\"" + word + "\" has one hyphen, and Megatron-LM's flags take two" + refused + "; write -" + word;
  return "\"" + word + "\" after the training script is neither a flag nor a flag's value" + refused +
         "; remove it, or fix the flag before it";
}

bool shell_operator_word(std::string_view word) {
  std::size_t i = 0;
  while (i < word.size() && word[i] >= '0' && word[i] <= '9')  // a file descriptor: 2>&1, 1>>log
    ++i;
  if (i == word.size()) return false;
  const char c = word[i];
  return c == '>' || c == '<' || (i == 0 && (c == '&' || c == '|' || c == ';'));
}

std::optional<std::string> other_entry_point(const std::string& word) {
  static const std::map<std::string, std::string, std::less<>> kOther = {
      {"pretrain_bert.py", "BERT, an encoder with bidirectional attention"},
      {"pretrain_t5.py", "T5, an encoder-decoder"},
      {"pretrain_mamba.py", "a Mamba (state-space) or hybrid model"},
      {"pretrain_retro.py", "RETRO, a retrieval-augmented model with an encoder"},
      {"pretrain_ict.py", "ICT, a BERT-based retriever"},
      {"pretrain_vlm.py", "a vision-language model"},
      {"pretrain_vision_classify.py", "a vision transformer"},
      {"pretrain_vision_dino.py", "a vision transformer"},
      {"pretrain_vision_inpaint.py", "a vision transformer"}};
  if (word.starts_with("-")) return std::nullopt;
  const auto slash = word.find_last_of('/');
  const std::string base = slash == std::string::npos ? word : word.substr(slash + 1);
  if (auto it = kOther.find(base); it != kOther.end())
    return base + " trains " + it->second +
           "; trainsim models decoder-only (GPT-style) transformers, dense or MoE: not imported";
  // NeMo's Hydra entry points take YAML overrides (model.global_batch_size=4), not Megatron-LM's flags: reading the
  // flags alone gave a batch of 1 and fp32 (found by a user trial).
  const bool hydra = base.starts_with("megatron_") && base.ends_with("_pretraining.py");
  for (const char* section : {"model.", "trainer.", "exp_manager."})
    if (hydra || (word.starts_with(section) && word.find('=') != std::string::npos))
      return "\"" + word +
             "\": NeMo's Hydra launch (YAML config and key=value overrides); trainsim reads Megatron-LM's "
             "command-line flags: write the run as a scenario, or as the Megatron-LM command line NeMo logs; "
             "not imported";
  return std::nullopt;
}

Unread classify_unread(const std::string& n, std::string& why) {
  // Megatron-LM arguments (megatron/training/arguments.py) that set the optimizer's hyperparameters, data, logging,
  // checkpoint loading, initialisation, the loss scaler or the router's losses: no effect on time or memory.
  static const std::set<std::string, std::less<>> no_effect = {
      "lr", "min-lr", "lr-decay-style", "lr-decay-iters", "lr-decay-samples", "lr-warmup-iters", "lr-warmup-samples",
      "lr-warmup-fraction", "lr-warmup-init", "weight-decay", "weight-decay-incr-style", "start-weight-decay",
      "end-weight-decay", "clip-grad", "adam-beta1", "adam-beta2", "adam-eps", "sgd-momentum", "init-method-std",
      "init-method-xavier-uniform", "seed", "data-path", "train-data-path", "valid-data-path", "test-data-path",
      "data-cache-path", "split", "mock-data", "vocab-file", "merge-file", "tokenizer-model", "load",
      "pretrained-checkpoint", "finetune", "no-load-optim", "no-load-rng", "no-save-optim", "no-save-rng",
      "exit-interval", "exit-duration-in-mins", "exit-signal-handler", "log-interval", "log-params-norm",
      "log-num-zeros-in-grad", "log-throughput", "log-timers-to-tensorboard", "log-validation-ppl-to-tensorboard",
      "log-memory-to-tensorboard", "log-world-size-to-tensorboard", "log-batch-size-to-tensorboard",
      "log-learning-rate-to-tensorboard", "log-loss-scale-to-tensorboard", "log-progress", "timing-log-level",
      "timing-log-option", "tensorboard-dir", "tensorboard-log-interval", "tensorboard-queue-size", "wandb-project",
      "wandb-exp-name", "wandb-save-dir", "eval-iters", "eval-interval", "distributed-backend",
      "distributed-timeout-minutes", "ckpt-format", "use-dist-ckpt", "dist-ckpt-format", "auto-detect-ckpt-format",
      "use-checkpoint-args", "use-mcore-models", "num-workers", "dataloader-type", "norm-epsilon", "layernorm-epsilon",
      "rotary-base", "rotary-percent", "rotary-seq-len-interpolation-factor", "use-rope-scaling", "rope-scaling-factor",
      "attention-softmax-in-fp32", "apply-query-key-layer-scaling", "loss-scale", "initial-loss-scale",
      "min-loss-scale", "loss-scale-window", "hysteresis", "moe-aux-loss-coeff", "moe-z-loss-coeff",
      "moe-router-load-balancing-type", "moe-router-score-function", "moe-router-enable-expert-bias",
      "moe-router-bias-update-rate", "moe-router-topk-scaling-factor", "moe-router-pre-softmax", "moe-router-dtype",
      "moe-token-drop-policy", "moe-input-jitter-eps", "moe-per-layer-logging", "manual-gc", "manual-gc-interval",
      "no-create-attention-mask-in-dataloader", "reset-position-ids", "reset-attention-mask", "eod-mask-loss",
      "calculate-per-token-loss", "check-for-nan-in-loss-and-grad", "no-check-for-nan-in-loss-and-grad",
      "save-retain-interval", "profile", "profile-step-start", "profile-step-end", "use-pytorch-profiler",
      "profile-ranks", "use-cpu-initialization", "deterministic-mode", "yaml-cfg", "bf16-reduced-precision-matmul",
      "fp8-amax-history-len", "fp8-amax-compute-algo", "fp8-margin", "fp8-interval", "rerun-mode", "enable-one-logger",
      "one-logger-project", "one-logger-run-name", "vocab-extra-ids", "data-args-path", "per-split-data-args-path",
      "object-storage-cache-path", "no-mmap-bin-files", "num-dataset-builder-threads", "exit-on-missing-checkpoint",
      "no-initialization", "dist-ckpt-strictness", "ckpt-assume-constant-structure", "ckpt-fully-parallel-load",
      "local-rank", "log-straggler", "disable-straggler-on-startup", "straggler-ctrlr-port", "straggler-minmax-count",
      "use-tokenizer-model-from-checkpoint-args", "override-opt-param-scheduler", "use-checkpoint-opt_param-scheduler",
      "log-memory-interval", "log-device-memory-used", "record-memory-history", "memory-snapshot-path",
      "train-valid-test-split", "no-query-key-layer-scaling", "apply-layernorm-1p", "no-persist-layer-norm",
      "moe-grouped-gemm", "cross-entropy-fusion-impl",
      // torchrun's and DeepSpeed's runner's own: where the
      // processes meet, not what they run
      "node-rank", "master-addr", "master-port", "rdzv-id", "rdzv-backend", "rdzv-endpoint", "rdzv-conf",
      "max-restarts", "monitor-interval", "start-method", "log-dir", "redirects", "tee", "standalone"};
  // Megatron-LM arguments that change the step or memory in ways trainsim does not model.
  static const std::map<std::string, const char*, std::less<>> not_modelled = {
      {"first-last-layers-bf16", "some layers kept in bf16 in an FP8 run are timed as FP8"},
      {"num-layers-at-start-in-bf16", "some layers kept in bf16 in an FP8 run are timed as FP8"},
      {"num-layers-at-end-in-bf16", "some layers kept in bf16 in an FP8 run are timed as FP8"},
      {"no-gradient-accumulation-fusion", "the unfused weight-gradient accumulation is not timed"},
      {"no-masked-softmax-fusion", "an unfused softmax is not timed"},
      {"no-bias-gelu-fusion", "an unfused bias-GeLU is not timed"},
      {"no-bias-swiglu-fusion", "an unfused bias-SwiGLU is not timed"},
      {"no-bias-dropout-fusion", "an unfused bias-dropout-add is not timed"},
      {"no-rope-fusion", "an unfused RoPE is not timed"},
      {"cuda-graph-impl", "CUDA graphs' saved launches are not modelled"},
      {"cuda-graph-scope", "CUDA graphs' saved launches are not modelled"},
      {"enable-cuda-graph", "CUDA graphs' saved launches are not modelled"},
      {"external-cuda-graph", "CUDA graphs' saved launches are not modelled"},
      {"async-save",
       "Megatron-LM's asynchronous checkpoint save: the run level writes synchronously unless "
       "reliability.checkpoint says otherwise"},
      {"empty-unused-memory-level", "emptying PyTorch's cache each iteration is not modelled"},
      {"delay-wgrad-compute", "weight gradients delayed to overlap EP communication are not modelled"},
      {"defer-embedding-wgrad-compute", "the deferred embedding weight gradient is not modelled"},
      {"moe-permute-fusion", "token permutation is timed as its memory traffic, fused or not"},
      {"ddp-bucket-size", "trainsim's buckets are Megatron-Core's default size"},
      {"overlap-p2p-comm", "pipeline transfers are timed as the schedule's send/recv"},
      {"align-grad-reduce", "bucket alignment across pipeline stages is not modelled"},
      {"align-param-gather", "bucket alignment across pipeline stages is not modelled"},
      {"checkpoint-num-layers", "recomputation chunks are timed one layer each"},
      {"moe-router-fusion", "the router is timed as its unfused kernels"},
      {"no-fp8-wgrad", "weight gradients in bf16 are timed in FP8"},
      {"fp8-dot-product-attention", "attention stays bf16 in trainsim's FP8 model"},
      {"fp8-multi-head-attention", "attention stays bf16 in trainsim's FP8 model"},
      {"microbatch-group-size-per-virtual-pipeline-stage",
       "the interleaved schedule runs micro-batches in groups of the pipeline size (Megatron-LM's default)"}};
  // Model-defining spellings of forks (MindSpeed-LLM, Pai-Megatron-Patch), with Megatron-LM's.
  static const std::map<std::string, const char*, std::less<>> fork_spellings = {
      {"multi-head-latent-attention", "--multi-latent-attention"},
      {"qk-rope-head-dim", "--qk-pos-emb-head-dim"},
      {"qk-nope-head-dim", "--qk-head-dim"},
      {"first-k-dense-replace", "--moe-layer-freq (e.g. \"([0]*1+[1]*26)\")"},
      {"n-shared-experts", "--moe-shared-expert-intermediate-size (shared experts x their width)"},
      {"moe-intermediate-size", "--moe-ffn-hidden-size"},
      {"num-query-groups-per-tp", "--num-query-groups"},
      {"config-name", "a Megatron-LM command line (this is a Hydra config: NeMo's YAML is not read)"},
      {"config-path", "a Megatron-LM command line (this is a Hydra config: NeMo's YAML is not read)"}};
  if (no_effect.count(n) != 0) return Unread::NoEffect;
  if (auto it = not_modelled.find(n); it != not_modelled.end()) {
    why = std::string("not modelled: ") + it->second;
    return Unread::NotModelled;
  }
  if (auto it = fork_spellings.find(n); it != fork_spellings.end()) {
    why = std::string("not Megatron-LM's spelling (a fork's); write ") + it->second;
    return Unread::ShapesModel;
  }
  // Words that name the model's shape, the layout or the batch: refused, since a wrong model is worse than none.
  for (const char* word :
       {"expert", "head", "layer", "hidden", "ffn", "intermediate", "latent", "lora", "dense", "vocab", "parallel-size",
        "seq-len", "seq-length", "batch-size", "window", "virtual", "stage"})
    if (n.find(word) != std::string::npos) {
      why =
          "not a Megatron-LM flag trainsim reads, and its name says it may set the model's shape, the layout or "
          "the batch; trainsim cannot tell what it does";
      return Unread::ShapesModel;
    }
  for (const char* word : {"dtype", "precision", "fp8", "fp4", "recompute", "offload", "fusion", "overlap"})
    if (n.find(word) != std::string::npos) {
      why =
          "not read by trainsim; its name says it may change the precision, memory or speed, which the estimate "
          "then does not show";
      return Unread::NotModelled;
    }
  why = "not a Megatron-LM flag trainsim knows: not read; check that it changes neither the model nor the layout";
  return Unread::Unknown;
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
