// sim/importers/deepspeed.cpp: a DeepSpeed JSON config into scenario fields.
//
// Keys follow DeepSpeed's configuration reference (https://www.deepspeed.ai/docs/config-json/): train_batch_size =
// train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel size, DeepSpeed checks it and so do we;
// fp32 when neither bf16 nor fp16 is enabled. "auto" (filled in by the Hugging Face Trainer at run time) is reported
// as unresolved, never guessed.
#include "sim/base/json_reader.hpp"
#include "sim/importers/importers.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace sim::importers {
namespace {

/// A batch key of DeepSpeed's that `key` is a misspelling of (at most two edits), or "".
std::string batch_key_near(const std::string& key) {
  for (const char* k : {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"})
    if (base::edit_distance(key, k) <= 2) return k;
  return "";
}

using base::JsonReader;
using base::Range;
using Kind = JsonReader::Kind;

class DeepSpeedImport {
 public:
  DeepSpeedImport(const std::string& origin, const Draft& known) : origin_(origin), known_(known) {}

  Import run(JsonReader& in) {
    Draft& d = out_.draft;
    std::vector<std::string> ignored;
    for (const auto& k : in.keys()) {
      if (k == "train_batch_size") {
        tbs_ = integer(in, k, Range::at_least(1));
      } else if (k == "train_micro_batch_size_per_gpu") {
        micro_ = integer(in, k, Range::at_least(1));
      } else if (k == "gradient_accumulation_steps") {
        gas_ = integer(in, k, Range::at_least(1));
      } else if (k == "zero_optimization") {
        zero(in);
      } else if (k == "activation_checkpointing") {
        checkpointing(in);
      } else if (k == "bf16" || k == "bfloat16" || k == "fp16") {
        precision(in, k);
      } else if (k == "tensor_parallel" && in.kind(k) == Kind::Object) {
        tensor_parallel(in);
      } else if (k == "data_types" && in.kind(k) == Kind::Object) {
        data_types(in, ignored);
      } else if (k == "communication_data_type") {
        std::string v;
        if (in.optional_enum(k, v, {"fp32", "fp16", "bf16", "bfp16"})) comm_dtype_ = {v, at(in, k)};
      } else if (k == "sequence_parallel_size") {
        // DeepSpeed-Ulysses (Jacobs et al., arXiv:2309.14509): the sequence split over ranks with all-to-alls around
        // attention, which also divides the data-parallel size; trainsim's context parallelism is a ring or an
        // all-gather of keys and values, not Ulysses' head exchange (a tester's trial found it "ignored").
        std::int64_t sp = 1;
        if (in.required(k, sp, Range::at_least(1)) && sp > 1)
          in.error(k, "DeepSpeed-Ulysses sequence parallelism (" + std::to_string(sp) +
                          " ranks) is not modelled: trainsim's context parallelism exchanges keys and values, not "
                          "heads; write the run as a scenario with parallel.cp if a ring fits it");
      } else if (const auto near = batch_key_near(k); !near.empty()) {
        // DeepSpeed skips a key it does not read, so a misspelt batch key leaves the batch to the others (a review:
        // train_batch_sise was listed as ignored, "no effect").
        out_.not_modelled.push_back(
            {at(in, k), "not a DeepSpeed key (DeepSpeed skips it, so the batch comes from the others); \"" + near +
                            "\" misspelt?"});
      } else {
        ignored.push_back(in.path(k));
      }
    }
    if (!ignored.empty()) ignore(ignored);

    const auto file_tp = d.integer("parallel.tp");  // AutoTP's, before the default below
    if (!d.has("parallel.tp")) d.put("parallel.tp", std::int64_t{1}, origin_ + " (DeepSpeed data parallelism)", true);
    d.put("parallel.pp", std::int64_t{1}, origin_ + " (DeepSpeed data parallelism)", true);
    if (micro_) d.put("parallel.micro_batch", *micro_, at(in, "train_micro_batch_size_per_gpu"));
    if (tbs_) d.put("parallel.global_batch", *tbs_, at(in, "train_batch_size"));
    overlap(d);
    if (!dtype_seen_) {
      d.put("training.dtype", std::string("fp32"), origin_ + " (DeepSpeed default: neither bf16 nor fp16 enabled)",
            true);
    }
    // Gradients are reduced in the training dtype unless communication_data_type says otherwise (DeepSpeed's
    // engine.py, communication_data_type: fp16 or bf16 when that precision is enabled). Found by a user trial: the
    // default fp32 reductions doubled the data-parallel traffic of every DeepSpeed import.
    const auto* dtype = d.find("training.dtype");
    const bool sixteen =
        dtype && std::holds_alternative<std::string>(dtype->value) && std::get<std::string>(dtype->value) != "fp32";
    if (comm_dtype_.first == "fp32")
      d.put("training.main_grads", std::string("fp32"), comm_dtype_.second);
    else if (!comm_dtype_.first.empty())
      d.put("training.main_grads", std::string("bf16"), comm_dtype_.second + " (16-bit reductions)");
    else if (sixteen)
      d.put("training.main_grads", std::string("bf16"),
            origin_ + " (DeepSpeed reduces gradients in the training dtype without communication_data_type)");

    bf16_optimizer(d);

    // train_batch_size = micro x accumulation x data-parallel size, when the cluster size is known.
    const auto gpus = known_.integer("cluster.gpus");
    // The layout --set gives counts too (a user trial: --set parallel.tp=2 left the data-parallel size at the GPU
    // count, halving the micro-batch or refusing a valid file).
    const auto tp = file_tp.value_or(known_.integer("parallel.tp").value_or(1));
    const auto pp = known_.integer("parallel.pp").value_or(1);
    const auto cp = known_.integer("parallel.cp").value_or(1);
    const std::int64_t dp = gpus && *gpus % (tp * pp * cp) == 0 ? *gpus / (tp * pp * cp) : 0;  // 0: unknown
    if (tbs_ && micro_ && gas_ && dp > 0 && *tbs_ != *micro_ * *gas_ * dp) {
      in.error("train_batch_size", std::to_string(*tbs_) + " is not train_micro_batch_size_per_gpu x " +
                                       "gradient_accumulation_steps x data-parallel size = " + std::to_string(*micro_) +
                                       " x " + std::to_string(*gas_) + " x " + std::to_string(dp) + " = " +
                                       std::to_string(*micro_ * *gas_ * dp) + " (DeepSpeed rejects it too)");
    } else if (!tbs_ && micro_ && gas_ && dp > 0) {
      d.put("parallel.global_batch", *micro_ * *gas_ * dp,
            origin_ + " train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel size");
    } else if (!tbs_ && micro_ && gas_) {
      out_.unresolved.push_back({origin_,
                                 "no train_batch_size: it is micro x accumulation x data-parallel size; "
                                 "give --gpus N to derive it",
                                 "parallel.global_batch"});
    }
    // What DeepSpeed derives when the file leaves some out (runtime/config.py, _set_batch_related_parameters): the
    // accumulation steps default to 1 beside one batch size, and the missing batch size follows from the other two.
    if (tbs_ && !micro_) {
      const std::int64_t steps = gas_.value_or(1);
      if (dp > 0 && *tbs_ % (steps * dp) == 0) {
        d.put("parallel.micro_batch", *tbs_ / (steps * dp),
              origin_ + " train_batch_size / (" + (gas_ ? "gradient_accumulation_steps" : "1 accumulation step") +
                  " x data-parallel size), as DeepSpeed derives it");
      } else if (dp > 0) {
        in.error("train_batch_size", std::to_string(*tbs_) + " does not divide into " + std::to_string(steps) +
                                         " accumulation step(s) x " + std::to_string(dp) +
                                         " data-parallel ranks (DeepSpeed rejects it too)");
      } else {
        out_.unresolved.push_back({origin_,
                                   "no train_micro_batch_size_per_gpu: DeepSpeed takes train_batch_size / "
                                   "(accumulation x data-parallel size); give --gpus N to derive it",
                                   "parallel.micro_batch"});
      }
    } else if (!tbs_ && micro_ && !gas_) {
      if (dp > 0)
        d.put("parallel.global_batch", *micro_ * dp,
              origin_ +
                  " train_micro_batch_size_per_gpu x data-parallel size (1 accumulation step, DeepSpeed's "
                  "default)",
              true);  // a default: it settles nothing the file gives unreadably ("auto")
      else
        out_.unresolved.push_back({origin_,
                                   "no train_batch_size: it is micro x data-parallel size (1 accumulation step); "
                                   "give --gpus N to derive it",
                                   "parallel.global_batch"});
    }
    return std::move(out_);
  }

 private:
  std::string at(const JsonReader& in, std::string_view key) const { return origin_ + " " + in.path(key); }

  /// An integer, or "auto" (unresolved); anything else is an error naming the JSON path.
  std::optional<std::int64_t> integer(JsonReader& in, const std::string& key, Range r) {
    if (in.kind(key) == Kind::String) {
      std::string s;
      in.required(key, s);
      if (s == "auto") {
        out_.unresolved.push_back(
            {at(in, key),
             "\"auto\" is filled in at run time by the Hugging Face Trainer; give --set " + settles(key) + "=N",
             settles(key)});
      } else {
        in.error(key, "expected an integer or \"auto\", found \"" + s + "\" (a string)");
      }
      return std::nullopt;
    }
    std::int64_t v = 0;
    if (in.required(key, v, r)) return v;
    return std::nullopt;
  }

  static std::string settles(const std::string& key) {
    if (key == "train_micro_batch_size_per_gpu") return "parallel.micro_batch";
    if (key == "stage") return "parallel.zero_stage";
    return "parallel.global_batch";  // train_batch_size, gradient_accumulation_steps
  }

  void ignore(const std::vector<std::string>& paths) {
    std::string list;
    for (const auto& p : paths)
      list += (list.empty() ? "" : ", ") + p;
    out_.ignored.push_back({origin_, list + ": not modelled by trainsim"});
  }

  /// DeepSpeed's AutoTP training (runtime/tensor_parallel/config.py, TPTrainingConfig): autotp_size ranks split each
  /// layer's linears, tensor parallelism; 0 (the default) and 1 leave it off. Its other keys change no estimate.
  void tensor_parallel(JsonReader& in) {
    auto t = in.required_object("tensor_parallel");
    if (!t) return;
    std::vector<std::string> ignored;
    for (const auto& k : t->keys()) {
      if (k == "autotp_size") {
        std::int64_t size = 0;
        if (t->required(k, size, Range::between(0, 1'000'000)) && size > 1)
          out_.draft.put("parallel.tp", size, at(*t, k) + " (DeepSpeed AutoTP)");
      } else {
        ignored.push_back(t->path(k));
      }
    }
    if (!ignored.empty()) ignore(ignored);
  }

  void zero(JsonReader& in) {
    auto z = in.required_object("zero_optimization");
    if (!z) return;
    std::vector<std::string> ignored;
    std::optional<std::int64_t> stage;
    std::optional<std::pair<double, std::string>> live_params;  // stage 3's only: DeepSpeed reads it with stage 3 alone
    for (const auto& k : z->keys()) {
      if (k == "stage") {
        stage = integer(*z, k, Range::between(0, 3));
        if (stage) out_.draft.put("parallel.zero_stage", *stage, at(*z, k));
      } else if (k == "stage3_max_live_parameters" && (z->kind(k) == Kind::Number || z->kind(k) == Kind::Integer)) {
        double live = 0;
        if (z->optional(k, live, Range::between(1e6, 1e13))) live_params = std::pair{live, at(*z, k)};
      } else if (k == "overlap_comm" && z->kind(k) == Kind::Bool) {
        bool on = false;
        if (z->optional(k, on)) overlap_comm_ = std::pair{on, at(*z, k)};
      } else if (k == "cpu_offload" && z->kind(k) == Kind::Bool) {  // DeepSpeed before 0.3.16: offload_optimizer
        bool on = false;
        z->optional(k, on);
        if (on)
          z->error(k,
                   "offloading optimizer states to the CPU is not modelled (trainsim keeps them on the GPU); set "
                   "it to false to estimate the GPU-resident run");
      } else if (k == "offload_optimizer" || k == "offload_param") {
        // Offloaded states leave the GPU (memory) and cross PCIe every step (time): estimating the GPU-resident
        // run instead would misread the config, so it is refused unless the device is "none".
        std::string device = "none";
        if (z->kind(k) == Kind::Object) {
          auto o = z->optional_object(k);
          if (o && o->kind("device") == Kind::String) o->optional("device", device);
        }
        if (device != "none")
          z->error(k, "offloading to " + device +
                          " is not modelled (trainsim keeps parameters, gradients and "
                          "optimizer states on the GPU); remove " +
                          k +
                          " or set its device to \"none\" to estimate "
                          "the GPU-resident run");
      } else if (k == "mics_shard_size" && (z->kind(k) == Kind::Integer || z->kind(k) == Kind::Number)) {
        // MiCS (Zhang et al., VLDB 2022; DeepSpeed's runtime/zero/mics.py): ZeRO-3's states sharded over groups of
        // mics_shard_size ranks and replicated across the groups, gradients all-reduced between the copies: hybrid
        // sharding. -1 (the default) and 0 leave it off (a tester's trial found it "ignored": 13 GiB a GPU apart).
        std::int64_t size = -1;
        if (z->required(k, size, Range::at_least(-1)) && size > 0)
          out_.draft.put("parallel.dp_shard", size, at(*z, k) + " (MiCS: ZeRO-3 sharded within groups of this size)");
      } else if (k.starts_with("zero_hpz") || k.starts_with("zero_quantized")) {
        // ZeRO++ (Wang et al., arXiv:2306.10209): a secondary weight partition inside the node and quantized weight
        // gathers and gradient reductions change the memory and the traffic (a user trial found them "ignored").
        out_.not_modelled.push_back({at(*z, k),
                                     "ZeRO++ is not modelled: weights are gathered and gradients reduced "
                                     "in 16 bits over the whole data-parallel group, without a secondary "
                                     "partition"});
      } else {
        ignored.push_back(z->path(k));
      }
    }
    if (live_params && stage == 3)
      out_.draft.put("memory.zero3_live_params", live_params->first, live_params->second);
    else if (live_params)
      ignored.push_back(z->path("stage3_max_live_parameters"));  // a stage-3 setting in a stage 0-2 config
    if (!ignored.empty()) ignore(ignored);
  }

  /// DeepSpeed's activation checkpointing wraps whole transformer layers: trainsim's full recomputation.
  void checkpointing(JsonReader& in) {
    auto a = in.required_object("activation_checkpointing");
    if (!a) return;
    std::vector<std::string> ignored;
    for (const auto& k : a->keys()) {
      bool on = false;
      if ((k == "cpu_checkpointing" || k == "partition_activations") && a->kind(k) == Kind::Bool) {
        a->optional(k, on);
        // Checkpoints moved to the CPU, or split over the model-parallel ranks, change the GPU memory that trainsim
        // estimates: refused rather than read as plain recomputation.
        // Partitioning over one model-parallel rank (tp = 1, DeepSpeed's own data parallelism) changes nothing.
        const bool no_effect = k == "partition_activations" && known_.integer("parallel.tp").value_or(1) == 1;
        if (on && no_effect) {
          out_.notes.push_back({at(*a, k), "no effect with tensor parallelism 1: the checkpoints are whole"});
        } else if (on) {
          a->error(k, std::string(k == "cpu_checkpointing" ? "activation checkpoints kept in CPU memory"
                                                           : "activation checkpoints partitioned over the "
                                                             "model-parallel ranks") +
                          " are not modelled; set it to false to estimate checkpoints kept whole on the GPU");
        }
        continue;
      }
      ignored.push_back(a->path(k));
    }
    out_.draft.put("parallel.recompute", std::string("full"), at(in, "activation_checkpointing"));
    out_.notes.push_back({at(in, "activation_checkpointing"),
                          "whole-layer activation checkpointing: recompute \"full\" (the model code decides "
                          "whether it calls deepspeed.checkpointing; if it does not, --set parallel.recompute=none)"});
    if (!ignored.empty()) ignore(ignored);
  }

  /// Gradient reduction during the backward (DeepSpeed's configuration reference, zero_optimization.overlap_comm:
  /// default false for stages 1-2, true for stage 3): without ZeRO the engine all-reduces the gradients after the
  /// backward; ZeRO-3 with overlap_comm false is not modelled (trainsim overlaps its reduce-scatters).
  void overlap(Draft& d) {
    const auto stage = d.integer("parallel.zero_stage").value_or(0);
    if (stage == 3) {
      // Not "ignored" (which changes nothing): stage 3 then gathers and reduce-scatters on the compute stream
      // (stage3.py: the streams are the default one without overlap_comm), which trainsim overlaps (a user trial).
      if (overlap_comm_ && !overlap_comm_->first)
        out_.not_modelled.push_back({overlap_comm_->second,
                                     "false: not modelled under ZeRO-3: DeepSpeed then runs the parameter gathers "
                                     "and gradient reduce-scatters on the compute stream, which trainsim overlaps; "
                                     "the step is optimistic by up to their time"});
      return;
    }
    if (stage == 0) {
      d.put("parallel.overlap_grad_reduce", false,
            origin_ + " (without ZeRO DeepSpeed's engine all-reduces the gradients after the backward)", true);
      if (overlap_comm_ && overlap_comm_->first)
        out_.ignored.push_back({overlap_comm_->second, "true: a ZeRO option; stage 0 reduces after the backward"});
    } else if (overlap_comm_) {
      d.put("parallel.overlap_grad_reduce", overlap_comm_->first, overlap_comm_->second);
    } else {
      d.put("parallel.overlap_grad_reduce", false, origin_ + " (DeepSpeed's default overlap_comm false, ZeRO 1-2)",
            true);
    }
  }

  /// bf16 without ZeRO: DeepSpeed's engine wraps the optimizer in its BF16_Optimizer (engine.py: a bf16 config whose
  /// zero_optimization stage is 0), which partitions the fp32 master weights and Adam's states over the data-parallel
  /// ranks as ZeRO-1 does and keeps the whole model's gradients in fp32, all-reduced after the backward in the
  /// communication dtype (bf16 by default) (deepspeed/runtime/bf16_optimizer.py: fp32_groups_flat_partition,
  /// fp32_groups_gradients_flat). trainsim's ZeRO-1 with fp32 gradients holds the same bytes, and its reduce-scatter of
  /// fp32 gradients moves what a bf16 all-reduce moves. Found by a user trial on BigScience's BLOOM-176B config ("bf16
  /// must use z0! it implements its own zero stage 1 equivalent"): its optimizer was counted whole.
  void bf16_optimizer(Draft& d) {
    const auto* dtype = d.find("training.dtype");
    const bool bf16 =
        dtype && std::holds_alternative<std::string>(dtype->value) && std::get<std::string>(dtype->value) == "bf16";
    if (!bf16 && !grad_accum_.first.empty())  // said, not dropped (a review)
      out_.notes.push_back({grad_accum_.second,
                            "read with bf16 only, where it picks DeepSpeed's BF16_Optimizer; "
                            "with this config's precision it changes nothing trainsim models"});
    if (!bf16) return;
    const auto stage = d.integer("parallel.zero_stage").value_or(0);
    // data_types.grad_accum_dtype (engine.py, get_data_types: fp32 by default for bf16 without ZeRO, else the model's
    // dtype) picks the optimizer (_do_optimizer_sanity_check): bf16 with fp32 accumulation at stage 0, or at stage 1
    // without offload, is BF16_Optimizer; bf16 accumulation at stage 0 is the plain optimizer on bf16 parameters.
    const std::string& accum = grad_accum_.first;
    if (stage == 0 && accum == "bf16") {
      out_.not_modelled.push_back({grad_accum_.second,
                                   "bf16 at ZeRO stage 0: DeepSpeed then steps the bf16 parameters with the plain "
                                   "optimizer (no fp32 master); set training.master_weights \"none\" to model it"});
      return;
    }
    if (stage == 1 && accum == "fp32") {
      out_.notes.push_back({grad_accum_.second,
                            "bf16 with fp32 gradient accumulation at ZeRO stage 1 runs DeepSpeed's BF16_Optimizer "
                            "(engine.py): fp32 gradients (training.main_grads \"fp32\")"});
      d.override_value("training.main_grads", std::string("fp32"),
                       grad_accum_.second +
                           " (bf16 with fp32 accumulation at ZeRO stage 1: DeepSpeed's "
                           "BF16_Optimizer keeps the gradients in fp32)");
      return;
    }
    if (!accum.empty() && accum != "bf16" && stage >= 2)
      out_.not_modelled.push_back({grad_accum_.second, "\"" + accum + "\" at ZeRO stage " + std::to_string(stage) +
                                                           ": ZeRO's optimizer accumulates in the model's bf16"});
    if (stage != 0) return;
    const std::string why = " (bf16 without ZeRO: DeepSpeed's BF16_Optimizer";
    out_.notes.push_back({origin_,
                          "bf16 without ZeRO runs DeepSpeed's BF16_Optimizer: zero_stage 1 (its fp32 master "
                          "weights and Adam states sharded over data parallelism) with fp32 gradients; the bf16 "
                          "gradients it also keeps between backward passes (2 B per parameter) are not counted"});
    d.override_value(
        "parallel.zero_stage", std::int64_t{1},
        origin_ + why + " shards the fp32 master weights and Adam states over data parallelism, as ZeRO-1)");
    if (comm_dtype_.first == "fp32") {
      out_.not_modelled.push_back({comm_dtype_.second,
                                   "fp32 under DeepSpeed's BF16_Optimizer: its fp32 all-reduce is timed as ZeRO-1's "
                                   "fp32 reduce-scatter, half its bytes"});
    } else {
      d.override_value("training.main_grads", std::string("fp32"),
                       origin_ + why +
                           " keeps the gradients in fp32; its bf16 all-reduce moves what a reduce-scatter of fp32 "
                           "gradients does)");
    }
  }

  /// data_types (DeepSpeed's runtime config): grad_accum_dtype, the gradients' accumulation dtype, which bf16_optimizer
  /// reads; its other keys are listed as ignored.
  void data_types(JsonReader& in, std::vector<std::string>& ignored) {
    auto t = in.required_object("data_types");
    if (!t) return;
    for (const auto& k : t->keys()) {
      if (k != "grad_accum_dtype") {
        ignored.push_back(t->path(k));
        continue;
      }
      std::string v;
      // DeepSpeed's DtypeEnum spellings (runtime/config.py).
      if (t->optional_enum(k, v,
                           {"fp32", "float32", "float", "torch.float32", "fp16", "float16", "half", "torch.float16",
                            "bf16", "bfloat16", "bfloat", "torch.bfloat16"}))
        grad_accum_ = {v == "float32" || v == "float" || v == "fp32" || v == "torch.float32" ? "fp32"
                       : v.find("bf") != std::string::npos                                   ? "bf16"
                                                                                             : "fp16",
                       at(*t, k)};
    }
  }

  void precision(JsonReader& in, const std::string& key) {
    auto p = in.required_object(key);
    if (!p) return;
    std::vector<std::string> ignored;
    for (const auto& k : p->keys()) {
      if (k != "enabled") {
        ignored.push_back(p->path(k));
        continue;
      }
      if (p->kind(k) == Kind::String) {
        std::string s;
        p->required(k, s);
        if (s == "auto") {
          out_.unresolved.push_back({at(*p, k),
                                     "\"auto\" is decided at run time by the Hugging Face Trainer; give --set "
                                     "training.dtype=bf16 (or fp16, fp32)",
                                     "training.dtype"});
          dtype_seen_ = true;
        } else {
          p->error(k, "expected true, false or \"auto\", found \"" + s + "\" (a string)");
        }
        continue;
      }
      bool on = false;
      if (!p->required(k, on)) continue;
      if (on) out_.draft.put("training.dtype", std::string(key == "fp16" ? "fp16" : "bf16"), at(*p, k));
      dtype_seen_ = dtype_seen_ || on;
    }
    if (!ignored.empty()) ignore(ignored);
  }

  const std::string& origin_;
  const Draft& known_;
  Import out_;
  std::optional<std::int64_t> tbs_, micro_, gas_;
  bool dtype_seen_ = false;
  std::pair<std::string, std::string> comm_dtype_;            // communication_data_type and where it was given
  std::pair<std::string, std::string> grad_accum_;            // data_types.grad_accum_dtype (fp32, fp16, bf16), where
  std::optional<std::pair<bool, std::string>> overlap_comm_;  // zero_optimization.overlap_comm and where
};

}  // namespace

Import import_deepspeed(const std::string& path, const Draft& known) {
  const auto doc = base::JsonDocument::parse_file(path);
  base::Diagnostics diag(doc.origin());
  JsonReader root = doc.root(diag);
  Import out = DeepSpeedImport(path, known).run(root);
  for (const auto& c : out.draft.conflicts())
    diag.add({path, c.path, c.message});
  diag.throw_if_any();
  return out;
}

}  // namespace sim::importers
