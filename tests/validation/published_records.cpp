// tests/validation/published_records.cpp: published run records -> scenarios and reference step times.
//
// Seams: (1) source families and their framework defaults (the shared README's list; published_records_defaults.cpp),
// (2) the record's model, cluster and layout as scenario JSON (here, with the defaults of (1)), (3) the reference step
// time by the source's own convention (published_records_reference.cpp).
#include "tests/validation/published_records.hpp"
#include "tests/validation/published_records_convert.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace validation {
namespace {

using conversion::contains;
using conversion::dtype_of;
using conversion::Family;
using conversion::family_of;
using conversion::get;
using conversion::hardware_of;
using conversion::is_null;
using conversion::lower;
using conversion::model_of;
using conversion::modelzoo_command;
using conversion::ModelZooCommand;
using conversion::nemotron_of;
using conversion::recompute_of;
using conversion::reference_of;
using nlohmann::json;

// ---- (2) record -> scenario -----------------------------------------------------------------------------------------

Record convert(const json& r) {
  Record out;
  out.id = r.at("id").get<std::string>();
  const Family* fam = family_of(r);
  out.family = fam->name;
  if (fam->inferred) out.assumptions.push_back(fam->inferred);
  auto hw = hardware_of(r, out.assumptions);
  if (!hw) {
    out.refusal = "no built-in hardware profile for " + r.at("hardware").at("gpu").get<std::string>();
    return out;
  }
  out.hardware = hw->profile;
  out.generation = hw->generation;
  const json& p = r.at("parallel");
  const json& m = r.at("model");
  const int gpus = r.at("hardware").at("num_gpus").get<int>();
  const ModelZooCommand zoo = modelzoo_command(r, *fam);
  int tp = get<int>(p, "tp").value_or(0), pp = get<int>(p, "pp").value_or(zoo.pp);
  const int cp = get<int>(p, "cp").value_or(1);
  // The Megatron-LM README's strong-scaling runs (GPT-3 177B from 96 to 4,608 H100s) publish no layout; its
  // weak-scaling table runs the same model, on the same cluster and software, at TP 8 PP 6.
  if (std::string(fam->name) == "megatron-readme" && tp == 0 && pp == 0 &&
      r.value("id", std::string()).rfind("mcore_h100_strong_gpt3_177B", 0) == 0) {
    tp = 8;
    pp = 6;
    out.assumptions.push_back(
        "TP 8 PP 6, the layout of the README's weak-scaling row of the same 177B model (the "
        "strong-scaling runs publish none)");
  }
  if (tp == 0 || pp == 0) {
    out.refusal = "the record does not give the layout (parallel.tp or parallel.pp is null)";
    return out;
  }
  std::optional<int> seq = get<int>(m, "seq_len");
  if (!seq) {
    if (std::string(fam->name) != "torchtitan") {
      out.refusal = "the record does not give the sequence length";
      return out;
    }
    seq = 8192;
    out.assumptions.push_back("seq_len 8192 (TorchTitan's llama3 train configs at the benchmarked commit)");
  }
  const int dp = gpus / (tp * pp * cp);
  int mb = get<int>(p, "micro_batch").value_or(zoo.micro_batch);
  // TorchTitan's pipelined rows: torchtitan splits each pipeline's batch into as many micro-batches as there are
  // pipeline stages unless told otherwise ("The default value will be the number of pipeline stages, if unspecified",
  // its pipeline_parallel_microbatches option), so the micro-batch follows the stages (set below, once vpp is known).
  const bool torchtitan_pp = mb == 0 && pp > 1 && std::string(fam->name) == "torchtitan";
  if (mb == 0 && !torchtitan_pp) {
    mb = 1;
    out.assumptions.push_back("micro-batch 1 (not published)");
  }
  std::optional<int> gb = get<int>(p, "global_batch");
  if (!gb) {
    // TorchTitan's CP rows: "local batch size 8"/"1", one per data-parallel rank.
    const std::string notes = r.value("notes", std::string());
    const int local = notes.find("Local batch size 8") != std::string::npos ? 8 : 1;
    gb = local * dp;
    out.assumptions.push_back("global batch = local batch x dp (the record's notes)");
  }
  json model = model_of(m, *fam, out.assumptions, out.refusal);
  if (!out.refusal.empty()) return out;

  int vpp = get<int>(p, "virtual_stages").value_or(zoo.vpp > 0 ? zoo.vpp : 1);
  // TorchTitan's interleaved rows name the schedule but not its stages per rank: torchtitan's generate_split_points
  // (torchtitan/parallelisms/pipelining_utils.py of late 2024) takes 2 for a multi-stage schedule "if no pipeline
  // split is specified", as the memory scenarios of the same table assume.
  if (std::string(fam->name) == "torchtitan" && is_null(p, "virtual_stages") && pp > 1 &&
      contains(r.value("notes", std::string()), "interleaved 1f1b")) {
    vpp = 2;
    out.assumptions.push_back("2 stages per rank (torchtitan's default for an interleaved schedule without a split)");
  }
  if (torchtitan_pp) {
    const int local = *gb / dp;
    mb = local % (pp * vpp) == 0 ? local / (pp * vpp) : 1;
    out.assumptions.push_back("micro-batch " + std::to_string(mb) + " (torchtitan's default: the pipeline's batch of " +
                              std::to_string(local) + " in as many micro-batches as stages, " +
                              std::to_string(pp * vpp) + ")");
  }
  if (!zoo.source.empty()) out.assumptions.push_back(zoo.source);
  // The Megatron-LM README's runs overlap "pipeline-parallel communication (enabled by default)", which Megatron-LM
  // does only on the interleaved schedule (arguments.py: "Overlap P2P communication is disabled if not using the
  // interleaved schedule"), so the rows with pipeline parallelism interleaved; the table gives no virtual-stage count,
  // and NVIDIA's GPT-3 recipe of the time sets it "to maximum", one layer per virtual stage
  // (NeMo-Framework-Launcher launcher_scripts/conf/training/gpt3/175b.yaml at 056a90ed:
  // virtual_pipeline_model_parallel_size 12 for 96 layers on 8 stages).
  const int model_layers = get<int>(model, "layers").value_or(0);  // as model_of filled it in
  if (std::string(fam->name) == "megatron-readme" && pp > 1 && vpp == 1 && model_layers > 0 && model_layers % pp == 0) {
    vpp = model_layers / pp;
    out.assumptions.push_back("interleaved, one layer per virtual stage (vpp " + std::to_string(vpp) +
                              "): the README overlaps pipeline communication, which Megatron-LM does only when "
                              "interleaving, and NVIDIA's GPT-3 recipe sets vpp to its maximum");
  }
  // Llama 3's interleaved schedule (Sec. 3.3.2, "Pipeline parallelism improvements") names no virtual-stage count,
  // but fixes it: the first and last stages each hold one Transformer layer fewer, "the first model chunk on the first
  // stage has only the embedding, and the last model chunk on the last stage has only output projection and loss
  // calculation". A chunk that lost one layer and kept none holds one layer: one layer (or the embedding, or the
  // loss) per virtual stage, (126 + 2) / 16 = 8 per rank.
  if (std::string(fam->name) == "llama3-paper" && pp > 1 && vpp == 1) {
    if (model_layers <= 0 || (model_layers + 2) % pp != 0) {
      out.refusal = "Meta's interleaved schedule with one layer per virtual stage does not divide " +
                    std::to_string(model_layers) + " + 2 layers over " + std::to_string(pp) + " ranks";
      return out;
    }
    vpp = (model_layers + 2) / pp;
    out.assumptions.push_back(
        "one layer per virtual stage, vpp " + std::to_string(vpp) +
        " (Llama 3 Sec. 3.3.2: the first and last stages' end chunks hold only the embedding and the loss)");
  }
  json par;
  par["tp"] = tp;
  par["pp"] = pp;
  par["dp"] = dp;
  par["cp"] = cp;
  par["ep"] = get<int>(p, "ep").value_or(zoo.ep > 0 ? zoo.ep : 1);
  // Megatron-MoE-ModelZoo rows state their expert tensor parallelism (measured.extra.expert_tp).
  if (r.at("measured").contains("extra") && r.at("measured").at("extra").is_object())
    if (auto etp = get<int>(r.at("measured").at("extra"), "expert_tp")) par["expert_tp"] = *etp;
  // The ModelZoo rows name their dispatcher in the notes ("DeepEP" or "all-to-all dispatcher").
  if ((r.value("notes", std::string()).find("DeepEP") != std::string::npos || zoo.deepep) && par["ep"].get<int>() > 1)
    par["moe_dispatcher"] = "deepep";
  // "+1F1B A2A overlap": Megatron-Core's --overlap-moe-expert-parallel-comm (the ModelZoo's DeepSeek-V3 and Qwen3
  // best-practice commands pair it with --delay-wgrad-compute).
  if (r.value("notes", std::string()).find("A2A overlap") != std::string::npos && par["ep"].get<int>() > 1)
    par["ep_comm_overlap"] = true;
  if (std::string(fam->name) == "megatron-moe-modelzoo" && !par.contains("expert_tp") && tp > 1) {
    // The ModelZoo's rows that state it all run expert_tp 1 (MoE parallel folding); without it ep = 32 would not fit
    // in tp*dp*cp = 32 on the long-context GB200 row.
    par["expert_tp"] = 1;
    out.assumptions.push_back(
        "expert_tp 1 (the Megatron-MoE-ModelZoo rows that state it all use MoE parallel folding)");
  }
  par["vpp"] = vpp;
  par["schedule"] = vpp > 1 ? "interleaved" : "1f1b";
  const bool sp = get<bool>(p, "sequence_parallel").value_or(tp > 1 && (fam->megatron_like || fam->fsdp_like));
  par["sequence_parallel"] = sp;
  int zero = get<int>(p, "zero_stage").value_or(fam->fsdp_like ? 3 : 0);
  if (get<bool>(p, "fsdp").value_or(false) && is_null(p, "zero_stage")) zero = 3;
  // TorchTitan's FSDP under pipeline parallelism keeps each stage's weights gathered from the first micro-batch's
  // forward to the last one's backward (reshard_after_forward "default" = not pp_enabled; the pipeline schedule sets
  // reshard_after_backward and gradient sync only for the last micro-batch: torch/distributed/pipelining/stage.py,
  // backward_maybe_with_nosync): one gather and one reduce-scatter per step, bf16 weights and fp32 gradients whole,
  // optimizer states sharded, which is ZeRO-1 (as docs/memory-validation.md's TorchTitan scenarios state).
  if (std::string(fam->name) == "torchtitan" && zero == 3 && pp > 1) {
    zero = 1;
    out.assumptions.push_back(
        "FSDP under pipeline parallelism gathers once per step (TorchTitan: no reshard between "
        "micro-batches): zero_stage 1");
  }
  par["zero_stage"] = zero;
  if (fam->megatron_like && zero == 0) {
    const bool distopt =
        get<bool>(p, "distributed_optimizer")
            .value_or(std::string(fam->name) != "megatron-sc21" && std::string(fam->name) != "korthikanti22");
    par["distributed_optimizer"] = distopt;
  }
  // A ModelZoo command's --recompute-modules decide it below (no "framework default" assumption beside them).
  if (zoo.recompute_modules.empty()) par["recompute"] = recompute_of(p, m, *fam, out.assumptions);
  // llm-foundry runs PyTorch FSDP through MosaicML Composer, whose FSDP config defaults backward_prefetch to
  // BACKWARD_POST (composer/trainer/dist_strategy.py of 2023: `fsdp_config.get('backward_prefetch',
  // 'BACKWARD_POST')`; composer/utils/parallelism.py FSDPConfig at 008dac709c5da87a4d3e425fea6743c992fc5331), which
  // llm-foundry's benchmark sweep does not override (scripts/train/benchmarking/submit_benchmarks.py).
  if (std::string(fam->name) == "llm-foundry" && zero == 3) {
    par["backward_prefetch"] = "post";
    out.assumptions.push_back("FSDP backward prefetch BACKWARD_POST (Composer's default)");
  }
  // Megatron-Core's selective modules as the ModelZoo writes them ("selective (norm, act)") or as its commands pass
  // them (--recompute-modules).
  std::vector<std::string> modules = zoo.recompute_modules;
  if (modules.empty() && std::string(fam->name) == "megatron-moe-modelzoo") {
    const std::string text = get<std::string>(p, "recompute").value_or("");
    if (contains(text, "norm")) modules.push_back("layernorm");
    if (contains(text, "act")) modules.push_back("moe_act");
  }
  if (!modules.empty()) {
    par["recompute"] = "selective";
    par["recompute_modules"] = modules;
  }
  // Communication overlap the sources state: the Megatron-LM README's weak-scaling rows name --tp-comm-overlap and
  // --overlap-param-gather in their notes; the DGX Cloud recipes run NeMo 2's performance recipes, whose
  // MegatronCommOverlapCallback sets tp_comm_overlap with the userbuffers configs named for these models (NVIDIA NeMo
  // nemo/collections/llm/recipes/llama31_405b.py and tp_overlap_configs/userbuffers.py at 0594a700) and overlaps the
  // distributed optimizer's parameter gather; NeMo 24.07's launcher configs overlap the parameter gather
  // (optim.overlap_param_sync: true) but not TP (ub_tp_comm_overlap: false; NeMo-Framework-Launcher
  // launcher_scripts/conf/training/llama/llama2_70b.yaml at 0446d2c0).
  const std::string fam_name = fam->name;
  const std::string notes_text = r.value("notes", std::string());
  const bool readme_overlap = notes_text.find("--tp-comm-overlap") != std::string::npos;
  // The Megatron-MoE-ModelZoo's launcher adds --tp-comm-overlap to every BF16 run ("if [[ ${PR} == "bf16" ]]",
  // sbatch_benchmarking.sh, stored version at 38ce2ed2); its FP8/MXFP8 branches do not.
  const bool zoo_overlap = fam_name == "megatron-moe-modelzoo" && lower(r.value("precision", std::string())) == "bf16";
  if ((readme_overlap || zoo_overlap || fam_name == "dgxc-benchmarking") && tp > 1 && sp) {
    par["tp_comm_overlap"] = true;
    out.assumptions.push_back("TP communication overlapped with the GEMMs (--tp-comm-overlap)");
  }
  // TorchTitan's async TP rows (the June 2025 report's asyncTP rows and December 2024's "2D + AsyncTP", all compiled):
  // PyTorch's micro-pipelined TP, as the TorchTitan importer reads enable_async_tensor_parallel.
  if (fam_name == "torchtitan" && tp > 1 && sp &&
      (notes_text.find("asyncTP") != std::string::npos || notes_text.find("AsyncTP") != std::string::npos)) {
    par["tp_comm_overlap"] = true;
    par["tp_comm_overlap_method"] = "async_tp";
    out.assumptions.push_back("PyTorch's async TP (tp_comm_overlap_method async_tp)");
  }
  if (readme_overlap || notes_text.find("--overlap-param-gather") != std::string::npos ||
      fam_name == "dgxc-benchmarking" || fam_name == "nemo-24.07")
    par["overlap_param_gather"] = true;
  // Layer counts that do not divide the (virtual) stages: Megatron-LM counts the embedding and the loss as a layer each
  // (--account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split), which the NVIDIA recipes for
  // Llama 3.1 405B (126 + 2 = 128) and the Megatron-MoE-ModelZoo Qwen3 configs (94 + 2 = 96) rely on; TorchTitan's
  // 405B split likewise gives the first and last stages one layer fewer.
  const int layers = model_layers;
  if (layers % (pp * vpp) != 0 && (layers + 2) % (pp * vpp) == 0 && pp > 1) {
    par["account_for_embedding_in_pipeline_split"] = true;
    par["account_for_loss_in_pipeline_split"] = true;
    out.assumptions.push_back("embedding and loss counted as a pipeline layer each (" + std::to_string(layers) +
                              " + 2 layers over " + std::to_string(pp * vpp) + " stages)");
  }
  // TorchTitan's context parallelism is PyTorch's context_parallel with its default rotate method, "allgather"
  // (torchtitan's context_parallel_rotate_method): each rank gathers the whole sequence's keys and values.
  if (fam_name == "torchtitan" && cp > 1) {
    par["cp_comm_type"] = "all_gather";
    out.assumptions.push_back("keys and values all-gathered (TorchTitan's default context_parallel_rotate_method)");
  }
  // Llama 3's context parallelism all-gathers the keys and values (Sec. 3.3.2; the record's notes).
  if (fam_name == "llama3-paper" && cp > 1) {
    par["cp_comm_type"] = "all_gather";
    out.assumptions.push_back("keys and values all-gathered (Llama 3 Sec. 3.3.2)");
  }
  par["micro_batch"] = mb;
  par["global_batch"] = *gb;

  json sc;
  sc["schema"] = "trainsim.scenario/1";
  sc["name"] = out.id;
  sc["model"] = model;
  sc["hardware"] = out.hardware;
  json cluster;
  cluster["gpus"] = gpus;
  if (auto gpn = get<int>(r.at("hardware"), "gpus_per_node")) cluster["gpus_per_node"] = *gpn;
  // The DGX Cloud recipes export NCCL_NVLS_ENABLE=0 ("Disable NVLink SHARP to save memory": NVIDIA
  // dgxc-benchmarking llama3.1/llama31_utils.py at 741c886025a7665a1d690c05ff12ac29c1be7252).
  if (fam_name == "dgxc-benchmarking") cluster["network"]["nvls"] = false;
  // NVIDIA's runs on GB200 / GB300 NVL72 keep every expert-parallel group inside an NVLink domain ("on the GB200 NVL72
  // system, all EP communication is within the NVLink domain", NVIDIA/Megatron-LM docs/discussions/
  // deepseek-v3-gb200-optimization at 1d9edcf8, Sec. 2.2.1, of EP32 on 256 GPUs), which with power-of-two groups
  // means 64 of each 72-GPU domain; filling 72 first would split some ranks' groups over two domains.
  if ((out.hardware == "gb200-nvl72" || out.hardware == "gb300-nvl72") && gpus > 64) {
    cluster["nvlink_domain"] = 64;
    out.assumptions.push_back(
        "64 GPUs per NVL72 domain (NVIDIA's GB200 write-up: all EP communication within the NVLink domain)");
  }
  sc["cluster"] = cluster;
  sc["parallel"] = par;
  json training;
  training["seq_len"] = *seq;
  const std::string family = fam->name;
  if (family == "megatron-sc21" || family == "korthikanti22") {
    // Megatron-LM of 2021-22: unfused softmax attention, dropout 0.1 (arguments.py defaults of the time), as the
    // papers' activation-memory formulas count them (Korthikanti et al. 2022, Sec. 4).
    training["fused_attention"] = false;
    training["attention_dropout"] = 0.1;
    training["hidden_dropout"] = 0.1;
  } else if (family == "llm-foundry") {
    // MPT with FlashAttention and no dropout (attn_config attn_impl flash / triton, attn_pdrop and resid_pdrop 0 in
    // llm-foundry's pretrain yamls): trainsim's defaults, stated here beside its learned positions.
    training["fused_attention"] = true;
  } else if (family == "megatron-readme" ||
             (family == "nemo-24.07" && model.value("position_embedding", "") == "learned")) {
    // GPT models: Megatron-LM's --attention-dropout / --hidden-dropout defaults (0.1), which NeMo's GPT-3 configs
    // keep (launcher_scripts/conf/training/gpt3/5b.yaml); attention fused by Transformer Engine.
    training["attention_dropout"] = 0.1;
    training["hidden_dropout"] = 0.1;
    out.assumptions.push_back("dropout 0.1 (Megatron-LM's and NeMo GPT-3's defaults)");
  }
  training["dtype"] = dtype_of(r);
  if (const auto* n = nemotron_of(model.value("name", "")); n && n->bf16_grads) {
    training["main_grads"] = "bf16";
    out.assumptions.push_back("bf16 gradients (optim.grad_sync_dtype in the model's NeMo config)");
  }
  // DGX Cloud's runs reduce their gradients in bf16. For FP8 the recipe's script says so ("if
  // args.compute_dtype.lower() == 'fp8': recipe.trainer.plugins = bf16_with_fp8_mixed();
  // recipe.trainer.plugins.grad_reduce_in_fp32 = False", dgxc-benchmarking llama3.1/pretrain_llama31.py at
  // 741c886025a7665a1d690c05ff12ac29c1be7252). For BF16 the script keeps NeMo's fp32 setting, but the release's
  // published logs measure bf16 gradients: the Nemotron4 15B BF16 log (nemotron/README.md at dc1028f6, a recipe that
  // also sets grad_reduce_in_fp32=True) holds 34.47e9 B between steps, which bf16 weights and fp32 gradients alone
  // would exceed (46.8e9 B), and the Llama 3.1 8B log (llama3.1/README.md at 741c886) 44.27e9 B, bf16 weights and
  // gradients and the sharded optimizer (scenarios/validation/memory/dgxc_*; PublishedMemory.NemoLogs*).
  if (fam_name == "dgxc-benchmarking") {
    training["main_grads"] = "bf16";
    out.assumptions.push_back(dtype_of(r) == "fp8"
                                  ? "bf16 gradients (grad_reduce_in_fp32 = False for FP8 in the recipe's script)"
                                  : "bf16 gradients (as the release's published BF16 memory logs measure)");
  }
  // Meta's Llama 3 pre-training (arXiv:2407.21783, 2024-07-31) ran before FlashAttention-3 was published
  // (arXiv:2407.08608, 2024-07-11), on Meta's stack of the time, whose fused attention was FlashAttention-2: xFormers'
  // memory_efficient_attention has dispatched to it by default since 0.0.21, and 0.0.23 added FlashAttention 2.3.6 with
  // the block-diagonal causal masks that document masking needs (facebookresearch/xformers CHANGELOG.md at 36f15721).
  if (fam_name == "llama3-paper") {
    training["attention_kernel"] = "flash2";
    out.assumptions.push_back(
        "FlashAttention-2-class attention kernel (Meta's 2024 stack; FlashAttention-3 was published after "
        "pre-training)");
  }
  // Megatron-LM's loss is its unfused vocab_parallel_cross_entropy unless --cross-entropy-loss-fusion
  // (megatron/core/model_parallel_config.py: cross_entropy_loss_fusion False); NeMo's and Megatron-Bridge's configs
  // (GPTConfig: True), the DGX Cloud recipes built on them and the ModelZoo's configs (--cross-entropy-loss-fusion)
  // fuse it. The runs of Megatron-LM itself, and other sources' runs that name it but not NeMo or Megatron-Bridge.
  const std::string source = r.at("source").at("paper").get<std::string>() + " " + r.value("notes", std::string());
  if (family == "megatron-sc21" || family == "korthikanti22" || family == "megatron-readme" ||
      family == "megatron-moe" ||
      (family == "other-megatron" && !contains(source, "nemo") && !contains(source, "bridge"))) {
    training["cross_entropy"] = "unfused";
    out.assumptions.push_back("Megatron-LM's unfused loss (its default: no --cross-entropy-loss-fusion)");
  }
  if (fam->fsdp_like && std::string(fam->name) != "llama3-paper") {
    // TorchTitan runs PyTorch SDPA (its flash backend is FlashAttention-2). llm-foundry's MPT runs Tri Dao's Triton
    // FlashAttention: its benchmark script's default (submit_benchmarks.py: --attn_impl default 'triton', llm-foundry
    // at 12a631913c786ac70e33e42047d2eae6f443ee69), and the only fused kernel MPT ran with the ALiBi its configs use
    // ("alibi only implemented with torch and triton attention", llmfoundry/models/mpt/configuration_mpt.py of 2023).
    if (family == "llm-foundry") {
      training["attention_kernel"] = "triton";
      out.assumptions.push_back("Triton FlashAttention (attn_impl: triton, MPT with ALiBi)");
    } else {
      training["attention_kernel"] = "flash2";
      out.assumptions.push_back("FlashAttention-2-class attention kernel (PyTorch SDPA)");
    }
    // TorchTitan rows that name their technique without torch.compile ran PyTorch eager kernels.
    const std::string notes = r.value("notes", std::string());
    if (family == "torchtitan" && notes.find("Technique:") != std::string::npos &&
        notes.find("torch.compile") == std::string::npos)
      training["kernels"] = "eager";
    // TorchTitan's loss: PyTorch's cross_entropy on an fp32 copy of the logits (its train.py loss_fn).
    if (family == "torchtitan") training["cross_entropy"] = "upcast";
    // TorchTitan's DTensor tensor parallelism: the column-parallel linears save their all-gathered input.
    if (family == "torchtitan") training["sp_saved_inputs"] = "gathered";
    // TorchTitan's sequence parallelism shards [batch, sequence, hidden] activations on dimension 1 (DTensor's
    // Shard(1), torchtitan/models/llama3/infra/parallelize.py): each all-gather and reduce-scatter is rearranged by a
    // copy when a micro-batch holds more than one sequence.
    if (family == "torchtitan") training["sp_layout"] = "batch_first";
    // TorchTitan's Llama repeats the key/value heads before SDPA (repeat_kv, torchtitan/models/llama/model.py at
    // 0199cbc1): its context parallelism moves one key/value head per query head.
    if (family == "torchtitan") training["attention_kv"] = "repeated";
    // TorchTitan's FSDP2 keeps the sharded parameters in fp32, the optimizer's master (MixedPrecisionPolicy casts to
    // bf16 only for the all-gather), as its importer writes.
    if (family == "torchtitan") training["master_weights"] = "params";
  }
  if (dtype_of(r) == "fp8") {
    // Transformer Engine's delayed scaling is the Megatron-Core / NeMo default; torchao.float8 (TorchTitan) scales
    // dynamically ("tensorwise" by default, or "rowwise"); Blackwell MXFP8 scales per 32-element block.
    const std::string prec = lower(r.value("precision", std::string()));
    const char* recipe = prec.find("rowwise") != std::string::npos ? "rowwise"
                         : prec.find("mxfp8") != std::string::npos ? "mxfp8"
                         : prec.find("float8") != std::string::npos || prec.find("tensorwise") != std::string::npos
                             ? "tensorwise"
                             : "delayed";
    training["fp8_recipe"] = recipe;
  }
  sc["training"] = training;
  if (std::string(fam->name) == "megatron-sc21" && zero == 3) {
    // SC21's ZeRO-3 rows ran DeepSpeed, which gathers parameters per submodule and keeps at most
    // stage3_max_live_parameters of them (default 1e9: DeepSpeed's configuration docs, zero_optimization) gathered.
    sc["memory"]["zero3_live_params"] = 1e9;
    out.assumptions.push_back("DeepSpeed's default stage3_max_live_parameters (1e9 gathered parameters at most)");
  }
  // TorchTitan's pipeline runs on PyTorch's pipelining runtime, which allocates a receive buffer per micro-batch
  // (torch/distributed/pipelining/stage.py, _prepare_backward_infra).
  if (family == "torchtitan" && pp > 1) sc["memory"]["pipeline_buffers"] = "per_micro_batch";
  out.scenario = sc.dump();
  reference_of(r, out, gpus, *gb, *seq);
  if (!out.refusal.empty()) out.scenario.clear();
  return out;
}

/// convert(), with a record that does not follow the shared schema (a field missing or of another type) listed as
/// not expressible with what was wrong, not thrown: one odd record does not hide the others' results.
Record convert_listed(const json& r) {
  try {
    return convert(r);
  } catch (const json::exception& e) {
    Record out;
    out.id = r.is_object() && r.contains("id") && r.at("id").is_string() ? r.at("id").get<std::string>() : "(no id)";
    out.family = "unknown";
    out.refusal = std::string("the record does not follow the shared schema (") + e.what() + ")";
    return out;
  }
}

}  // namespace

std::string bf16_twin_id(const std::string& id) {
  const std::pair<const char*, const char*> swaps[] = {
      {"_fp8_tensorwise_", "_bf16_"},  // TorchTitan's async-TP table: fp8_tensorwise_vanillaTP -> bf16_vanillaTP
      {"_fp8_rowwise_", "_bf16_"},     //   and fp8_rowwise_asyncTP -> bf16_asyncTP
      {"_mxfp8_", "_bf16_"},           // Megatron-MoE-ModelZoo's GB200 rows
      {"_fp8_", "_bf16_"},             // DGX Cloud: llama31_70b_fp8_64gpu -> llama31_70b_bf16_64gpu
      {"_float8", ""},                 // TorchTitan's tables: fsdp_torchcompile_float8 -> fsdp_torchcompile
  };
  for (const auto& [fp8, bf16] : swaps)
    if (const auto at = id.find(fp8); at != std::string::npos)
      return id.substr(0, at) + bf16 + id.substr(at + std::string(fp8).size());
  return {};
}

std::string shared_validation_dir() {
  if (const char* env = std::getenv("TRAINSIM_VALIDATION_DIR"); env && *env) return env;
  return std::string(TRAINSIM_SOURCE_DIR) + "/../shared/validation";
}

Record convert_record(const std::string& record_json, bool tflops_only) {
  json r = json::parse(record_json);
  if (tflops_only && r.contains("measured"))
    for (const char* k : {"step_time_s", "tokens_per_s", "tokens_per_s_per_gpu"})
      r["measured"][k] = nullptr;
  return convert_listed(r);
}

std::vector<std::string> published_record_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && name.rfind("published_runs", 0) == 0 && name.size() > 5 &&
        name.compare(name.size() - 5, 5, ".json") == 0)
      names.push_back(name);
  }
  for (const char* required : {"published_runs.json", "published_runs_more.json"})
    if (std::find(names.begin(), names.end(), required) == names.end())
      throw std::runtime_error("cannot read " + dir + "/" + required +
                               " (the shared validation folder beside the project)");
  // published_runs.json first (the 18 core runs), then the others by name: a fixed order, whatever the file system's.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const bool ca = a == "published_runs.json", cb = b == "published_runs.json";
    return ca != cb ? ca : a < b;
  });
  return names;
}

namespace {

nlohmann::json read_record_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + " (the shared validation folder beside the project)");
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) throw std::runtime_error(path + ": not valid JSON");
  if (!doc.is_array()) throw std::runtime_error(path + ": expected an array of run records");
  return doc;
}

}  // namespace

std::vector<std::string> published_record_texts(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& file : published_record_files(dir))
    for (const auto& r : read_record_file(dir + "/" + file))
      out.push_back(r.dump());
  return out;
}

std::vector<Record> load_published_records(const std::string& dir) {
  std::vector<Record> out;
  for (const auto& file : published_record_files(dir))
    for (const auto& r : read_record_file(dir + "/" + file)) {
      out.push_back(convert_listed(r));
      out.back().core = file == "published_runs.json";
    }
  return out;
}

}  // namespace validation
