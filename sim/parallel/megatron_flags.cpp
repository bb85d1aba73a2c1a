// sim/parallel/megatron_flags.cpp: Megatron-LM argument form of a configuration (the inverse of the importer).
#include "sim/parallel/megatron_flags.hpp"

#include "sim/parallel/pipeline_layout.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace sim::parallel {

MegatronArgs megatron_args(const ParallelConfig& config, const Layout& layout, const workload::ModelSpec& model,
                           int seq_len, hardware::Dtype dtype, std::string_view fp8_recipe,
                           const MemoryOptions* training) {
  MegatronArgs args;
  std::vector<std::string>& comments = args.notes;
  std::vector<std::string>* section = &args.parallel;  // where flag() and add() write: parallel, then model
  auto add = [&](std::string f) { section->push_back(std::move(f)); };
  auto flag = [&](const std::string& name, long long value) { add(name + " " + std::to_string(value)); };
  const auto n = [](long long v) { return std::to_string(v); };

  comments.push_back("data-parallel size " + n(layout.dp) + " = " + n(layout.gpus()) + " GPUs / (tp " + n(layout.tp) +
                     " x pp " + n(layout.pp) + " x cp " + n(layout.cp) +
                     "): Megatron-LM derives it from the world size");
  flag("--tensor-model-parallel-size", layout.tp);
  flag("--pipeline-model-parallel-size", layout.pp);
  if (layout.cp > 1) flag("--context-parallel-size", layout.cp);
  if (layout.cp > 1 && config.cp_comm_type != CpCommType::P2p)
    add(std::string("--cp-comm-type ") + to_string(config.cp_comm_type));
  if (layout.ep > 1) flag("--expert-model-parallel-size", layout.ep);
  if (layout.expert_tp > 0 && layout.expert_tp != layout.tp) flag("--expert-tensor-parallel-size", layout.expert_tp);
  if (layout.ep > 1 && config.moe_dispatcher == MoeDispatcher::DeepEp) {
    add("--moe-token-dispatcher-type flex");
    add("--moe-enable-deepep");
  }
  if (layout.ep > 1 && config.moe_dispatch_fp8)
    comments.push_back(
        "moe_dispatch_dtype fp8: the MoE dispatch in FP8 (DeepSeek-V3's recipe) is not written as a "
        "flag here; check what your Megatron-LM and DeepEP versions dispatch");

  // Pipeline split: the scenario's own layout string; else even virtual stages by layer count; an uneven split by
  // first/last stage sizes when only those differ (Megatron-Core's --decoder-first/last-pipeline-num-layers); else the
  // layout string that writes it (--pipeline-model-parallel-layout, which sets the virtual stages too).
  const auto& per = layout.layers_per_stage;
  const bool even = !per.empty() && std::all_of(per.begin(), per.end(), [&](int l) { return l == per.front(); });
  const bool accounted = config.account_for_embedding || config.account_for_loss;
  const bool middle_even = layout.vpp == 1 && per.size() > 2 &&
                           std::all_of(per.begin() + 1, per.end() - 1, [&](int l) { return l == per[1]; });
  // DualPipeV's two chunks are not Megatron-LM's virtual stages, nor placed as its layout places them (round robin,
  // the loss on the last rank): no pipeline-split flag describes its V (the schedule is noted below).
  const bool dualpipe = config.schedule == Schedule::DualPipeV;
  if (!dualpipe && (config.from_layout || (!even && !per.empty() && !accounted && !middle_even))) {
    add("--pipeline-model-parallel-layout \"" + pipeline_layout_text(per, model.mtp_layers) + "\"");
  } else if (!dualpipe) {
    const bool interleaved = layout.vpp > 1;
    if (interleaved && accounted) {
      // Layers per virtual stage with the embedding and loss counted as layers.
      flag("--num-layers-per-virtual-pipeline-stage", per.size() > 2 ? per[1] : per.front() + 1);
    } else if (interleaved) {
      if (even) {
        flag("--num-layers-per-virtual-pipeline-stage", per.front());
      } else {
        flag("--virtual-pipeline-model-parallel-size", layout.vpp);
      }
    }
    // With the embedding and loss accounted for, those flags give the short first and last stages themselves;
    // Megatron-Core refuses --decoder-first/last-pipeline-num-layers beside them ("cannot be set at the same time
    // with account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split", TransformerConfig; a
    // user trial found the planner printing both).
    if (!accounted && !even && middle_even && per.front() != per[1])
      flag("--decoder-first-pipeline-num-layers", per.front());
    if (!accounted && !even && middle_even && per.back() != per[1])
      flag("--decoder-last-pipeline-num-layers", per.back());
  }
  if (dualpipe)
    comments.push_back(
        "schedule dualpipev: no Megatron-LM flag runs DeepSeek's DualPipe or places two chunks per rank "
        "in its V; these flags give the parallel sizes only");
  if (config.schedule == Schedule::GPipe || config.schedule == Schedule::ZeroBubbleH1)
    comments.push_back(std::string("schedule ") + to_string(config.schedule) +
                       ": Megatron-LM runs 1F1B (interleaved with virtual stages); no flag selects this schedule");
  if (config.order != "tp-cp-dp-pp")
    comments.push_back("rank order " + config.order + " (innermost first): Megatron-LM's order is tp-cp-ep-dp-pp");

  if (config.sequence_parallel && layout.tp > 1) add("--sequence-parallel");
  if (config.tp_comm_overlap && config.sequence_parallel && layout.tp > 1) add("--tp-comm-overlap");
  if (config.ep_comm_overlap && layout.ep > 1) add("--overlap-moe-expert-parallel-comm");
  // Sharding: the distributed optimizer is ZeRO-1; ZeRO-2 and -3 are Megatron-FSDP's strategies optim_grads and
  // optim_grads_params (arguments.py --use-megatron-fsdp --data-parallel-sharding-strategy, which Megatron-Core's
  // FSDP documentation pairs with --use-distributed-optimizer).
  const int sharding = std::max(config.zero_stage, config.distributed_optimizer ? 1 : 0);
  if (sharding >= 1) add("--use-distributed-optimizer");
  if (sharding >= 1 && config.overlap_param_gather) add("--overlap-param-gather");
  // Gradient buckets reduced during the backward: trainsim's default, which Megatron-LM leaves off.
  if (config.overlap_grad_reduce && sharding < 3 && layout.dp * layout.cp > 1) add("--overlap-grad-reduce");
  if (sharding >= 2) {
    add("--use-megatron-fsdp");
    add(std::string("--data-parallel-sharding-strategy ") + (sharding == 2 ? "optim_grads" : "optim_grads_params"));
  }
  // Hybrid sharding: Megatron-Core's distributed optimizer instances, dp / dp_shard groups of consecutive ranks (the
  // importer's reading, inverted).
  if (sharding >= 1 && config.dp_shard > 0 && config.dp_shard < layout.dp)
    flag("--num-distributed-optimizer-instances", layout.dp / config.dp_shard);
  if (config.recompute == Recompute::Selective) {
    add("--recompute-granularity selective");
    if (config.recompute_modules != kRecomputeCoreAttn) {
      std::string list;
      for (const auto& name : recompute_module_names(config.recompute_modules))
        list += " " + name;
      add("--recompute-modules" + list);
    }
  } else if (config.recompute == Recompute::Op) {
    comments.push_back(
        "recompute \"op\": PyTorch per-operator checkpointing (TorchTitan's selective_ac_option \"op\") has no "
        "Megatron-LM flag; --recompute-granularity selective --recompute-modules layernorm mlp is the nearest");
  } else if (config.recompute == Recompute::Full) {
    add("--recompute-granularity full");
    add(std::string("--recompute-method ") + to_string(config.recompute_method));
    flag("--recompute-num-layers", config.recompute_num_layers);
  }
  if (config.account_for_embedding) add("--account-for-embedding-in-pipeline-split");
  if (config.account_for_loss) add("--account-for-loss-in-pipeline-split");
  flag("--micro-batch-size", layout.micro_batch);
  flag("--global-batch-size", static_cast<long long>(layout.micro_batch) * layout.micro_batches * layout.dp);

  section = &args.model;
  flag("--seq-length", seq_len);
  flag("--max-position-embeddings", std::max(model.max_seq_len, seq_len));

  flag("--num-layers", model.layers);
  flag("--hidden-size", model.hidden);
  flag("--ffn-hidden-size", model.ffn_hidden);
  flag("--num-attention-heads", model.heads);
  if (model.kv_heads != model.heads) {
    add("--group-query-attention");
    flag("--num-query-groups", model.kv_heads);
  }
  if (model.activation == workload::Activation::SwiGlu) add("--swiglu");
  if (model.activation == workload::Activation::Relu2) add("--squared-relu");
  if (model.activation == workload::Activation::GeGlu)
    comments.push_back("gated GELU MLP: Megatron-LM has no flag (--swiglu is the SiLU gate)");
  if (model.kv_channels > 0) flag("--kv-channels", model.kv_channels);
  add(std::string("--normalization ") + (model.norm == workload::Norm::RmsNorm ? "RMSNorm" : "LayerNorm"));
  add(std::string("--position-embedding-type ") +
      (model.position_embedding == workload::PositionEmbedding::Rope ? "rope" : "learned_absolute"));
  if (!model.tied_embeddings) add("--untie-embeddings-and-output-weights");
  if (!model.bias) add("--disable-bias-linear");
  if (model.qkv_bias && !model.bias) add("--add-qkv-bias");
  flag("--vocab-size", model.vocab);
  // Megatron-LM pads --vocab-size to a multiple of --make-vocab-size-divisible-by (default 128) x tp
  // (_vocab_size_with_padding); a divisor that keeps this vocabulary exact is written when 128 would not.
  if (model.vocab % config.tp == 0) {
    const int divisor = std::gcd(model.vocab / config.tp, 128);
    if (divisor != 128) flag("--make-vocab-size-divisible-by", divisor);
  }
  if (model.qk_norm) add("--qk-layernorm");
  if (model.mla) {  // Megatron-Core's MLATransformerConfig names (megatron/training/arguments.py, _add_mla_args)
    add("--multi-latent-attention");
    if (model.mla->q_lora_rank > 0) flag("--q-lora-rank", model.mla->q_lora_rank);
    flag("--kv-lora-rank", model.mla->kv_lora_rank);
    flag("--qk-head-dim", model.mla->qk_nope_head_dim);
    flag("--qk-pos-emb-head-dim", model.mla->qk_rope_head_dim);
    flag("--v-head-dim", model.mla->v_head_dim);
  }
  if (model.moe) {
    flag("--num-experts", model.moe->experts);
    flag("--moe-router-topk", model.moe->top_k);
    flag("--moe-ffn-hidden-size", model.moe->ffn_hidden);
    if (model.moe->shared_experts > 0) flag("--moe-shared-expert-intermediate-size", model.shared_expert_ffn());
    if (model.moe_layers() < model.layers) {
      // Dense layers among the MoE ones: every N-th layer, or the per-layer list as runs ("([0]*3+[1]*58)").
      if (model.moe->layer_pattern.empty() && model.moe->first_k_dense == 0) {
        flag("--moe-layer-freq", model.moe->layer_freq);
      } else {
        std::string runs;
        for (int l = 0; l < model.layers;) {
          int run = 1;
          while (l + run < model.layers && model.is_moe_layer(l + run) == model.is_moe_layer(l))
            ++run;
          runs +=
              (runs.empty() ? "" : "+") + std::string(model.is_moe_layer(l) ? "[1]*" : "[0]*") + std::to_string(run);
          l += run;
        }
        add("--moe-layer-freq \"(" + runs + ")\"");
      }
    }
    if (model.moe->router_groups > 0) {
      flag("--moe-router-num-groups", model.moe->router_groups);
      flag("--moe-router-group-topk", model.moe->router_group_topk);
    }
  }
  if (model.mtp_layers > 0) flag("--mtp-num-layers", model.mtp_layers);
  if (training != nullptr) {
    // Megatron-LM's dropout defaults are 0.1 (arguments.py --attention-dropout, --hidden-dropout); the attention is
    // fused unless --attention-backend unfused; gradients are reduced in fp32 unless --grad-reduce-in-bf16 (the
    // importer's readings, inverted).
    auto probability = [](double p) {
      std::string t = std::to_string(p);
      while (t.size() > 3 && t.back() == '0')
        t.pop_back();
      return t;
    };
    add("--attention-dropout " + probability(training->attention_dropout));
    add("--hidden-dropout " + probability(training->hidden_dropout));
    if (!training->fused_attention) add("--attention-backend unfused");
    // The loss: fused only with --cross-entropy-loss-fusion (the importer reads its absence as "unfused").
    if (training->cross_entropy == workload::CrossEntropy::Fused) add("--cross-entropy-loss-fusion");
    // Megatron-LM reduces fp16's gradients in fp16 unless --accumulate-allreduce-grads-in-fp32, bf16's in fp32 unless
    // --grad-reduce-in-bf16 (arguments.py forces the first for bf16).
    if (dtype == hardware::Dtype::Fp16 && training->fp32_main_grads)
      add("--accumulate-allreduce-grads-in-fp32");
    else if (dtype != hardware::Dtype::Fp16 && !training->fp32_main_grads)
      add("--grad-reduce-in-bf16");
    // The precision-aware optimizer's dtypes (MemoryOptions::main_params): fp32 remainders are its default.
    using MO = MemoryOptions;
    const bool aware = training->main_params != MO::MainParams::Fp32 || training->exp_avg != MO::Moment::Fp32 ||
                       training->exp_avg_sq != MO::Moment::Fp32;
    if (aware && training->master_weights == MO::MasterWeights::Separate) {
      add("--use-precision-aware-optimizer");
      if (training->main_params == MO::MainParams::Fp16) add("--main-params-dtype fp16");
      if (training->exp_avg != MO::Moment::Fp32) add("--exp-avg-dtype " + std::string(MO::name(training->exp_avg)));
      if (training->exp_avg_sq != MO::Moment::Fp32)
        add("--exp-avg-sq-dtype " + std::string(MO::name(training->exp_avg_sq)));
    }
  }
  switch (dtype) {
    case hardware::Dtype::Bf16:
      add("--bf16");
      break;
    case hardware::Dtype::Fp16:
      add("--fp16");
      break;
    case hardware::Dtype::Fp8:
      add("--bf16");
      add("--fp8-format hybrid");
      // megatron/training/arguments.py: --fp8-recipe {tensorwise, delayed, mxfp8, blockwise}, default delayed.
      if (fp8_recipe == "rowwise")
        comments.push_back("fp8_recipe rowwise: torchao's recipe; Megatron-LM's --fp8-recipe has no row-wise scaling");
      else if (fp8_recipe != "delayed")
        add("--fp8-recipe " + std::string(fp8_recipe));
      break;
    default:
      comments.push_back(std::string("dtype ") + hardware::to_string(dtype) +
                         ": Megatron-LM keeps fp32 parameters without --bf16/--fp16; no flag for this precision");
  }

  return args;
}

std::string megatron_flags(const ParallelConfig& config, const Layout& layout, const workload::ModelSpec& model,
                           int seq_len, hardware::Dtype dtype, std::string_view fp8_recipe,
                           const MemoryOptions* training) {
  const MegatronArgs args = megatron_args(config, layout, model, seq_len, dtype, fp8_recipe, training);
  std::vector<std::string> flags = args.parallel;
  flags.insert(flags.end(), args.model.begin(), args.model.end());
  std::string out;
  for (const auto& c : args.notes)
    out += "# " + c + "\n";
  for (std::size_t i = 0; i < flags.size(); ++i)
    out += flags[i] + (i + 1 < flags.size() ? " \\\n" : "\n");
  return out;
}

std::string megatron_parallel_line(const MegatronArgs& args) {
  std::string out;
  for (const auto& f : args.parallel)
    out += (out.empty() ? "" : " ") + f;
  return out;
}

}  // namespace sim::parallel
