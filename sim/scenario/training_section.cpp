// sim/scenario/training_section.cpp: the scenario's `training` section (internal to sim/scenario; scenario.cpp calls
// it after the model, hardware, cluster and parallel sections, whose values its checks read).
#include "sim/scenario/training_section.hpp"

#include "sim/base/quantity.hpp"
#include "sim/reliability/run_inputs.hpp"

#include <cmath>
#include <string>

namespace sim::scenario::detail {

using base::JsonReader;
using base::Range;

namespace {

/// training.main_params, training.exp_avg, training.exp_avg_sq: the dtypes of the separate master copy and of Adam's
/// two moments (parallel::MemoryOptions::main_params; Megatron-Core's precision-aware optimizer).
void optimizer_state_dtypes(JsonReader& t, Scenario& s) {
  using MO = parallel::MemoryOptions;
  MO& mo = s.memory;
  const bool separate = mo.master_weights == MO::MasterWeights::Separate;
  std::size_t main = 0;
  if (t.optional_enum("main_params", main, MO::kMainParamsNames)) {
    if (!separate)
      t.error("main_params",
              "is the dtype of a separate master copy, but training.master_weights is not "
              "\"separate\" (the parameters are the master there); drop it");
    mo.main_params = static_cast<MO::MainParams>(main);
    // The remainders complete bf16 weights to fp32 (TransformerEngine's FusedAdam store_param_remainders).
    if (mo.main_params == MO::MainParams::Fp32Remainders && s.training.dtype != hardware::Dtype::Bf16 &&
        s.training.dtype != hardware::Dtype::Fp8)
      t.error("main_params", "\"fp32_remainders\" stores the 16 bits bf16 weights lack, but training.dtype is \"" +
                                 std::string(hardware::to_string(s.training.dtype)) + "\"; use \"fp32\" or \"fp16\"");
  }
  for (const char* key : {"exp_avg", "exp_avg_sq"}) {
    std::size_t dtype = 0;
    if (!t.optional_enum(key, dtype, MO::kMomentNames)) continue;
    const auto moment = static_cast<MO::Moment>(dtype);
    if (!separate && moment != MO::Moment::Fp32)
      t.error(key,
              "sets the dtype of a separate optimizer's moments (training.master_weights \"separate\"); "
              "with master_weights \"params\" they are fp32, with \"none\" 16-bit; drop it");
    (std::string(key) == "exp_avg" ? mo.exp_avg : mo.exp_avg_sq) = moment;
  }
}

}  // namespace

void parse_training(JsonReader& t, Scenario& s, bool have_model, bool have_hardware) {
  t.required("seq_len", s.training.seq_len, Range::at_least(1));
  base::Count tokens;
  base::Time duration;
  const bool has_tokens = t.optional("tokens", tokens);
  const bool has_duration = t.optional("duration", duration);
  if (has_tokens) s.training.tokens = tokens;
  if (has_duration) s.training.duration = duration;
  // The run level's range (a user trial: 250 years passed step and validate, then run blamed "/work/window").
  if (has_duration && duration.seconds() > reliability::kMaxHorizonS)
    t.error("duration", std::to_string(static_cast<long long>(std::ceil(duration.days()))) +
                            " days is beyond the simulator's range of 200 years (" +
                            std::to_string(static_cast<long long>(reliability::kMaxHorizonS / 86400.0)) + " days)");
  // A run trains whole steps (a review: "0.5" and "1" tokens ran one step of 8.4M without a word).
  const double step_tokens = static_cast<double>(s.parallel.global_batch) * s.training.seq_len;
  if (has_tokens && step_tokens > 0 && tokens.n < step_tokens)
    t.error("tokens", base::format_count(tokens) + " tokens is less than one step's " +
                          base::format_count(base::Count{step_tokens}) +
                          " (parallel.global_batch x training.seq_len); a run trains whole steps: give at least that");
  if (t.has("tokens") && t.has("duration"))
    t.error("give either \"tokens\" (train until done) or \"duration\" (a fixed window), not both");
  std::string dtype;
  if (t.optional_enum("dtype", dtype, {"fp32", "tf32", "bf16", "fp16", "fp8", "fp4"})) {
    s.training.dtype = *hardware::dtype_from_string(dtype);
    if (have_hardware && !s.hardware.gpu.peak_for(s.training.dtype))
      t.error("dtype", "\"" + dtype + "\" is not supported by " + s.hardware.name + " (no peak rate in its profile)");
  }
  if (s.parallel.moe_dispatch_fp8 && s.training.dtype != hardware::Dtype::Fp8 &&
      s.training.dtype != hardware::Dtype::Fp4)
    t.error("dtype", std::string("is \"") + hardware::to_string(s.training.dtype) +
                         "\", but parallel.moe_dispatch_dtype is \"fp8\", which sends the FP8 inputs of FP8 expert "
                         "GEMMs; set dtype \"fp8\" or drop moe_dispatch_dtype");
  std::string kernel;
  if (t.optional_enum("attention_kernel", kernel, {"fused", "flash2", "triton"}))
    s.training.attention_kernel = kernel == "flash2"   ? hardware::AttentionKernel::Flash2
                                  : kernel == "triton" ? hardware::AttentionKernel::Triton
                                                       : hardware::AttentionKernel::Fused;
  std::string kernels;
  if (t.optional_enum("kernels", kernels, {"fused", "eager"})) s.training.eager_kernels = kernels == "eager";
  std::string kv;
  if (t.optional_enum("attention_kv", kv, {"grouped", "repeated"})) s.training.repeated_kv = kv == "repeated";
  s.memory.repeated_kv = s.training.repeated_kv;
  std::string sp_layout;
  if (t.optional_enum("sp_layout", sp_layout, {"seq_first", "batch_first"}))
    s.training.sp_batch_first = sp_layout == "batch_first";
  std::string recipe;
  if (t.optional_enum("fp8_recipe", recipe, {"delayed", "tensorwise", "rowwise", "blockwise", "mxfp8"})) {
    s.training.fp8_recipe = recipe;
    s.training.fp8_scaling = recipe == "delayed"   ? workload::Fp8Scaling::Delayed
                             : recipe == "rowwise" ? workload::Fp8Scaling::Rowwise
                                                   : workload::Fp8Scaling::Current;
    if (s.training.dtype != hardware::Dtype::Fp8 && s.training.dtype != hardware::Dtype::Fp4)
      t.error("fp8_recipe", "\"" + recipe + "\" is an FP8 recipe, but training.dtype is \"" +
                                hardware::to_string(s.training.dtype) + "\"; set dtype \"fp8\" or drop fp8_recipe");
    // MX block scaling (OCP Microscaling, 32-element blocks) is a format of Blackwell's fifth-generation tensor cores,
    // which also bring FP4 (NVIDIA Blackwell architecture technical brief); a GPU whose profile has no FP4 peak
    // (Hopper, Ampere) has neither.
    else if (recipe == "mxfp8" && have_hardware && !s.hardware.gpu.peak_for(hardware::Dtype::Fp4))
      t.error("fp8_recipe", "\"mxfp8\" scales in 32-element blocks in Blackwell's tensor cores; " +
                                s.hardware.gpu.model +
                                " has none (its profile has no FP4 peak): use \"delayed\", \"tensorwise\", "
                                "\"rowwise\" or \"blockwise\"");
  }
  base::Count critical;
  if (t.optional("critical_batch", critical)) s.training.critical_batch = critical;
  parallel::MemoryOptions& mo = s.memory;
  t.optional("fused_attention", mo.fused_attention);
  t.optional("attention_dropout", mo.attention_dropout, Range::between(0.0, 0.99));
  t.optional("hidden_dropout", mo.hidden_dropout, Range::between(0.0, 0.99));
  std::string grads;
  if (t.optional_enum("main_grads", grads, {"fp32", "bf16"}))
    mo.fp32_main_grads = grads == "fp32";
  else if (s.training.dtype == hardware::Dtype::Fp16)
    // Megatron-LM keeps and reduces fp16 training's gradients in fp16 unless --accumulate-allreduce-grads-in-fp32
    // (its default false; it forces it only for bf16, arguments.py), as the 2021-22 runs of Narayanan et al. and
    // Korthikanti et al. did: memory and the reduction's bytes both 16-bit.
    mo.fp32_main_grads = false;
  const bool low_precision = s.training.dtype == hardware::Dtype::Fp8 || s.training.dtype == hardware::Dtype::Fp4;
  if (t.optional("fp8_weight_copies", mo.fp8_weight_copies) && mo.fp8_weight_copies && !low_precision)
    t.error("fp8_weight_copies", "true keeps FP8 copies of the weights for FP8 GEMMs, but training.dtype is \"" +
                                     std::string(hardware::to_string(s.training.dtype)) +
                                     "\"; set dtype \"fp8\" or drop it");
  std::string master;
  if (t.optional_enum("master_weights", master, {"separate", "params", "none"}))
    mo.master_weights = master == "params" ? parallel::MemoryOptions::MasterWeights::Params
                        : master == "none" ? parallel::MemoryOptions::MasterWeights::None
                                           : parallel::MemoryOptions::MasterWeights::Separate;
  // fp32 / tf32 training stores its tensors in fp32 (hardware::tensor_bytes), and its fp32 parameters are their own
  // master: no 16-bit copy beside a master, no pure 16-bit state.
  mo.element_bytes = hardware::tensor_bytes(s.training.dtype);
  if (mo.element_bytes > 2) {
    if (t.has("master_weights") && mo.master_weights != parallel::MemoryOptions::MasterWeights::Params)
      t.error("master_weights", "\"" + master + "\" describes 16-bit weights, but training.dtype is \"" +
                                    hardware::to_string(s.training.dtype) +
                                    "\", whose fp32 parameters are their own master: use \"params\" or leave it out");
    mo.master_weights = parallel::MemoryOptions::MasterWeights::Params;
  }
  if (mo.master_weights == parallel::MemoryOptions::MasterWeights::None) {
    // Pure 16-bit training keeps and reduces 16-bit gradients.
    if (t.has("main_grads") && mo.fp32_main_grads)
      t.error("main_grads", "\"fp32\" contradicts master_weights \"none\" (no fp32 state at all); leave it out");
    mo.fp32_main_grads = false;
  }
  optimizer_state_dtypes(t, s);
  if (t.optional("optimizer_in_backward", mo.optimizer_in_backward) && mo.optimizer_in_backward) {
    // TorchTitan's build_optimizers refuses pipeline and expert parallelism with it; with FSDP each gradient is
    // final once its reduce-scatter lands, and stepping in every micro-batch's backward would not accumulate.
    const auto& pc = s.parallel;
    const long long gpus = s.cluster.gpus;
    const long long model_ranks = static_cast<long long>(pc.tp) * pc.pp * pc.cp;
    const long long dp = pc.dp ? *pc.dp : (gpus > 0 && gpus % model_ranks == 0 ? gpus / model_ranks : 0);
    const long long per_step = static_cast<long long>(pc.micro_batch) * dp;
    // Without data parallelism there is nothing to reduce: each gradient is final when its backward makes it.
    if (pc.zero_stage != 3 && !(dp == 1 && pc.zero_stage == 0))
      t.error(
          "optimizer_in_backward",
          "is modelled with FSDP (parallel.zero_stage 3, or one GPU's worth of data parallelism), which reduces each "
          "parameter's gradient before its step; zero_stage is " +
              std::to_string(pc.zero_stage));
    else if (pc.pp > 1 || pc.ep > 1)
      t.error("optimizer_in_backward",
              "cannot run with pipeline or expert parallelism (TorchTitan refuses both); "
              "pp is " +
                  std::to_string(pc.pp) + ", ep " + std::to_string(pc.ep));
    else if (per_step > 0 && pc.global_batch > per_step)
      t.error("optimizer_in_backward",
              "steps in every backward, so it needs one micro-batch per step: "
              "global_batch " +
                  std::to_string(pc.global_batch) + " is " + std::to_string(pc.global_batch / per_step) +
                  " micro-batches of micro_batch x dp = " + std::to_string(per_step));
  }
  std::string loss;
  if (t.optional_enum("cross_entropy", loss, {"fused", "unfused", "upcast"}))
    mo.cross_entropy = loss == "upcast"    ? workload::CrossEntropy::Upcast
                       : loss == "unfused" ? workload::CrossEntropy::Unfused
                                           : workload::CrossEntropy::Fused;
  std::string saved;
  if (t.optional_enum("sp_saved_inputs", saved, {"sharded", "gathered"})) mo.sp_gathered_inputs = saved == "gathered";
  s.training.moe_imbalance_given = t.optional("moe_imbalance", mo.moe_imbalance, Range::between(1.0, 64.0));
  if (s.training.moe_imbalance_given && have_model && !s.model.moe)
    t.error("moe_imbalance", "applies to models with experts (model.moe); " + s.model.name + " has none");
  if (t.optional("moe_capacity_factor", mo.moe_capacity_factor, Range::between(0.01, 64.0)) && have_model &&
      !s.model.moe)
    t.error("moe_capacity_factor", "applies to models with experts (model.moe); " + s.model.name + " has none");
  if (t.optional("moe_pad_to_capacity", mo.moe_pad_to_capacity) && mo.moe_pad_to_capacity &&
      mo.moe_capacity_factor <= 0)
    t.error("moe_pad_to_capacity",
            "pads each expert's input to its capacity, which needs "
            "training.moe_capacity_factor (Megatron-LM: --moe-expert-capacity-factor)");
  mo.fp8_activations = s.training.dtype == hardware::Dtype::Fp8;
  if (t.optional("fp8_activations", mo.fp8_activations) && mo.fp8_activations && !low_precision)
    t.error("fp8_activations", "true saves the FP8 GEMMs' inputs in FP8, but training.dtype is \"" +
                                   std::string(hardware::to_string(s.training.dtype)) +
                                   "\" (no FP8 GEMMs); set dtype \"fp8\" or drop it");
  const auto spikes = t.kind("loss_spikes");
  if (spikes == JsonReader::Kind::String) {
    std::string none;
    if (t.optional_enum("loss_spikes", none, {"none"})) s.training.loss_spikes.reset();
  } else if (auto ls = t.optional_object("loss_spikes")) {
    LossSpikeConfig& c = s.training.loss_spikes.emplace();
    ls->optional("per_million_steps", c.per_million_steps, Range::at_least(0));
    ls->optional("rollback_steps", c.rollback_steps, Range::at_least(0));
    ls->optional("skip_batches", c.skip_batches, Range::at_least(0));
    ls->optional("detection", c.detection, base::Sign::NonNegative);
    ls->finish();
  }
  t.finish();
}

}  // namespace sim::scenario::detail
