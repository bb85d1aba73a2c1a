// sim/importers/torchtitan_reader.cpp: the TorchTitan importer's typed reads and its precision (torchtitan_reader.hpp);
// the job config's other sections are read by torchtitan.cpp.
#include "sim/importers/torchtitan_reader.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace sim::importers::titan {

using Type = TomlValue::Type;

void Reader::used(const std::string& section, const std::string& key) {
  std::erase(ignored_, section + "." + key);
}

void Reader::error(int line, const std::string& message) {
  errors_.push_back({origin_, line > 0 ? "line " + std::to_string(line) : "", message});
}

std::optional<std::int64_t> Reader::integer(const std::string& section, const TomlValue& t, const char* key,
                                            bool allow_minus_one) {
  used(section, key);
  const TomlValue* v = t.get(key);
  if (!v) return std::nullopt;
  if (v->type != Type::Integer) {
    error(v->line, "[" + section + "] " + key + ": expected an integer, found " + v->type_name());
    return std::nullopt;
  }
  if (v->integer < 1 && !(allow_minus_one && v->integer == -1)) {
    error(v->line, "[" + section + "] " + key + ": " + std::to_string(v->integer) + " is not accepted; expected " +
                       (allow_minus_one ? "a positive integer or -1" : "a positive integer"));
    return std::nullopt;
  }
  return v->integer;
}

namespace {

// TorchTitan's job-config keys of the sections that shape a step, over its releases of 2024-2025
// (torchtitan/config_manager.py, then torchtitan/config/job_config.py: the Parallelism, Training and Experimental
// dataclasses and their older spellings). A key outside these is none of TorchTitan's.
const std::set<std::string, std::less<>> kTitanKeys{
    // [parallelism]
    "parallelism.data_parallel_replicate_degree", "parallelism.data_parallel_shard_degree",
    "parallelism.fsdp_reshard_after_forward", "parallelism.tensor_parallel_degree", "parallelism.disable_loss_parallel",
    "parallelism.enable_async_tensor_parallel", "parallelism.pipeline_parallel_degree",
    "parallelism.pipeline_parallel_split_points", "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.pipeline_parallel_schedule", "parallelism.pipeline_parallel_schedule_csv",
    "parallelism.pipeline_parallel_microbatch_size", "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers", "parallelism.module_fqns_per_model_part",
    "parallelism.context_parallel_degree", "parallelism.context_parallel_rotate_method",
    "parallelism.expert_parallel_degree", "parallelism.expert_tensor_parallel_degree",
    "parallelism.expert_parallel_comm_backend", "parallelism.enable_compiled_autograd",
    "parallelism.pipeline_parallel_expert_parallel_overlap",
    // [training]
    "training.dataset", "training.dataset_path", "training.local_batch_size", "training.global_batch_size",
    "training.batch_size", "training.seq_len", "training.max_norm", "training.steps", "training.warmup_steps",
    "training.enable_cpu_offload", "training.mixed_precision_param", "training.mixed_precision_reduce",
    "training.compile", "training.gc_freq", "training.gc_debug", "training.seed", "training.deterministic",
    "training.deterministic_warn_only", "training.dtype", "training.data_parallel_degree",
    "training.data_parallel_replicate_degree", "training.data_parallel_shard_degree", "training.tensor_parallel_degree",
    "training.enable_loss_parallel", "training.disable_loss_parallel", "training.fp8_linear",
    "training.enable_float8_linear", "training.enable_fsdp_float8_all_gather",
    "training.precompute_float8_dynamic_scale_for_fsdp", "training.enable_compiled_autograd",
    "training.debug_moe_force_load_balance",
    // [experimental] of 2024
    "experimental.pipeline_parallel_degree", "experimental.pipeline_parallel_split_points",
    "experimental.pipeline_parallel_schedule", "experimental.pipeline_parallel_schedule_csv",
    "experimental.pipeline_parallel_microbatches", "experimental.context_parallel_degree",
    "experimental.context_parallel_rotate_method", "experimental.enable_async_tensor_parallel",
    "experimental.enable_compiled_autograd", "experimental.custom_import", "experimental.custom_args_module",
    "experimental.custom_model_path"};

// TorchTitan keys that set the layout which trainsim does not read, and the value at which they change nothing.
bool layout_key_at_default(const std::string& k, const TomlValue& v) {
  static const std::set<std::string, std::less<>> kOne{
      "experimental.pipeline_parallel_degree", "experimental.context_parallel_degree",
      "parallelism.pipeline_parallel_first_stage_less_layers", "parallelism.pipeline_parallel_last_stage_less_layers"};
  if (kOne.count(k) != 0) return v.type == Type::Integer && v.integer == 1;
  if (k == "training.data_parallel_degree") return v.type == Type::Integer && v.integer == -1;
  return (v.type == Type::Array && v.array.empty()) || (v.type == Type::String && v.string.empty());
}

/// A TorchTitan layout key's name: a degree, the pipeline's schedule and split.
bool layout_key_name(std::string_view key) {
  static const std::set<std::string, std::less<>> kNames = [] {
    std::set<std::string, std::less<>> names;
    for (const auto& k : kTitanKeys)
      if (const auto name = k.substr(k.find('.') + 1);
          name.ends_with("_degree") || name.starts_with("pipeline_parallel_s") || name.ends_with("microbatches"))
        names.insert(name);
    return names;
  }();
  return kNames.count(key) != 0;
}

/// A TorchTitan layout key (a degree, the pipeline's schedule and split) anywhere under `v`, a table or an array of
/// tables TorchTitan does not read it from: a misplaced key (a dotted key written after another table's header lands
/// in that table; an inline table; a typo in a table's name). Its path from `path` and its line.
std::optional<std::pair<std::string, int>> misplaced_layout_key(const TomlValue& v, const std::string& path) {
  for (const auto& [key, sub] : v.table) {
    if (layout_key_name(key)) return std::pair{path + "." + key, sub.line};
    if (auto found = misplaced_layout_key(sub, path + "." + key)) return found;
  }
  for (const auto& element : v.array)
    if (auto found = misplaced_layout_key(element, path)) return found;
  return std::nullopt;
}

}  // namespace

void Reader::report_unread(const TomlValue& root) {
  static const std::set<std::string, std::less<>> kLayoutUnread{"parallelism.pipeline_parallel_split_points",
                                                                "parallelism.pipeline_parallel_schedule_csv",
                                                                "parallelism.pipeline_parallel_first_stage_less_layers",
                                                                "parallelism.pipeline_parallel_last_stage_less_layers",
                                                                "parallelism.module_fqns_per_model_part",
                                                                "experimental.pipeline_parallel_degree",
                                                                "experimental.pipeline_parallel_split_points",
                                                                "experimental.pipeline_parallel_schedule_csv",
                                                                "experimental.pipeline_parallel_microbatches",
                                                                "experimental.context_parallel_degree",
                                                                "training.data_parallel_degree"};
  // What shapes the step; [checkpoint], [metrics], [job], [profiling], [comm], [validation] ... do not.
  static const std::set<std::string, std::less<>> kStepSections{
      "parallelism", "training", "experimental", "compile", "model", "optimizer", "activation_checkpoint", "float8"};
  static const std::set<std::string, std::less<>> kSpeedOnly{
      "parallelism.disable_loss_parallel", "training.enable_loss_parallel", "training.disable_loss_parallel",
      "parallelism.pipeline_parallel_expert_parallel_overlap"};
  std::string list;
  for (const auto& k : ignored_) {
    const auto dot = k.find('.');
    const std::string section = k.substr(0, dot), key = dot == std::string::npos ? "" : k.substr(dot + 1);
    const TomlValue* table = root.get(section);
    const TomlValue* v = table && !key.empty() ? table->get(key) : nullptr;
    auto named = [&](std::initializer_list<const char*> words) {
      return std::any_of(words.begin(), words.end(), [&](const char* w) { return key.find(w) != std::string::npos; });
    };
    const bool shapes_step = kStepSections.count(section) != 0 || section.starts_with("quantize");
    const bool titan = kTitanKeys.count(k) != 0;
    const bool layout_named =
        named({"degree", "parallel", "batch", "seq_len", "layers", "stage", "split", "microbatch", "schedule", "fqns"});
    const bool refused =
        v &&
        ((kLayoutUnread.count(k) != 0 && !layout_key_at_default(k, *v)) ||
         (!titan && layout_named && (section == "parallelism" || section == "training" || section == "experimental")));
    const bool off = v && ((v->type == Type::Bool && !v->boolean) ||
                           (v->type == Type::String && (v->string.empty() || v->string == "disabled")));
    const TomlValue* holder = v ? v : key.empty() ? table : nullptr;
    // A layout key in a table TorchTitan does not read it from: the key itself ([parallelsim] tensor_parallel_degree)
    // or one under it (a dotted key after [validation], an inline table).
    std::optional<std::pair<std::string, int>> misplaced;
    if (!refused && !titan && v && layout_key_name(key)) misplaced = std::pair{k, v->line};
    if (!refused && !misplaced && holder) misplaced = misplaced_layout_key(*holder, k);
    if (misplaced)
      error(misplaced->second, misplaced->first +
                                   ": TorchTitan reads this key in [parallelism] (or [training], "
                                   "[experimental]), not here: a dotted key written after another "
                                   "table's header lands in that table; move it under its table");
    if (refused) {
      error(v->line,
            "[" + section + "] " + key + ": " +
                (titan ? "TorchTitan's key sets the layout, which trainsim does not read from it"
                       : "not a TorchTitan key (TorchTitan refuses keys it does not know, "
                         "torchtitan/config/manager.py), and its name says it may set the layout or the batch") +
                "; give the layout through the keys the README lists, or --set the scenario field");
    } else if (v && shapes_step && !off &&
               (kSpeedOnly.count(k) != 0 ||
                named({"dtype", "precision", "float8", "fp8", "offload", "overlap", "async", "quantiz"}))) {
      out_.not_modelled.push_back({origin_ + " [" + section + "] " + key,
                                   "not read by trainsim; its name says it may change the precision, "
                                   "memory or speed, which the estimate then does not show"});
    } else if (v && !titan && v->type != Type::Table &&  // a sub-table ([training.data]) is a newer config's
               (section == "parallelism" || section == "training" || section == "experimental")) {
      out_.not_modelled.push_back({origin_ + " [" + section + "] " + key,
                                   "not a TorchTitan key trainsim knows (TorchTitan refuses keys it does not know: a "
                                   "typo, or a fork's key?); not read"});
    } else {
      list += (list.empty() ? "" : ", ") + k;
    }
  }
  if (!list.empty()) out_.ignored.push_back({origin_, list + ": not modelled by trainsim"});
}

std::optional<std::string> Reader::text(const std::string& section, const TomlValue* t, const char* key) {
  if (!t || !t->get(key)) return std::nullopt;
  used(section, key);
  const TomlValue* v = t->get(key);
  if (v->type != Type::String) {
    error(v->line, "[" + section + "] " + key + ": expected a string, found " + v->type_name());
    return std::nullopt;
  }
  return v->string;
}

/// The [quantize.<group>.<kind>] table of TorchTitan's 2025 configs ([quantize.linear.float8], later
/// [quantize.dense.float8] and [quantize.moe.float8], and their .mx twins); the keys of every such table other than
/// recipe_name are listed as not modelled, one by one.
const TomlValue* Reader::quantize_table(const TomlValue& root, const char* group, const char* kind) {
  const TomlValue* q = root.get("quantize");
  if (!q || q->type != Type::Table) return nullptr;
  for (const auto& [g, sub] : q->table) {
    if (sub.type != Type::Table || std::find(ignored_.begin(), ignored_.end(), "quantize." + g) == ignored_.end())
      continue;
    used("quantize", g);
    for (const auto& [k, t] : sub.table)
      if (t.type == Type::Table)
        for (const auto& [key, v] : t.table)
          ignored_.push_back("quantize." + g + "." + k + "." + key);
  }
  const TomlValue* grp = q->get(group);
  const TomlValue* t = grp && grp->type == Type::Table ? grp->get(kind) : nullptr;
  return t && t->type == Type::Table ? t : nullptr;
}

/// The FP8 recipe: torchao's Float8Linear scales per tensor unless recipe_name says "rowwise" (TorchTitan's
/// [float8] of 2024 and [quantize.linear.float8] since 2025: "tensorwise", "rowwise", "rowwise_with_gw_hp"); MX
/// converters run MXFP8 (blocks of 32 with a shared exponent).
void Reader::fp8_recipe(const TomlValue* table, const std::string& section, bool mx) {
  Draft& d = out_.draft;
  const TomlValue* r = table ? table->get("recipe_name") : nullptr;
  if (r) std::erase(ignored_, section + ".recipe_name");
  if (mx) {
    if (r && (r->type != Type::String || !r->string.starts_with("mxfp8"))) {
      error(r->line, "[" + section + "] recipe_name: " +
                         (r->type == Type::String ? "\"" + r->string + "\"" : "a " + std::string(r->type_name())) +
                         " is not modelled; trainsim has MXFP8 (\"mxfp8\", \"mxfp8_cublas\", ...)");
      return;
    }
    d.put("training.fp8_recipe", std::string("mxfp8"),
          r ? origin_ + " [" + section + "] recipe_name" : origin_ + " MX converter (MXFP8)");
    return;
  }
  // Float8 weights gathered by FSDP: half the bytes of trainsim's 16-bit gathers, so a warning, not "ignored" (which
  // changes nothing; a user trial found it there, while Megatron-LM's --fp8-param-gather warns).
  if (const TomlValue* g = table ? table->get("enable_fsdp_float8_all_gather") : nullptr;
      g && g->type == Type::Bool && g->boolean) {
    std::erase(ignored_, section + ".enable_fsdp_float8_all_gather");
    out_.not_modelled.push_back({origin_ + " [" + section + "] enable_fsdp_float8_all_gather",
                                 "true: not modelled: FSDP all-gathers the weights in float8 (1 byte each); trainsim "
                                 "gathers them in 16 bits, twice the bytes"});
  }
  if (!r) {
    d.put("training.fp8_recipe", std::string("tensorwise"),
          origin_ + " (torchao's default Float8Linear recipe: tensorwise)", true);
    return;
  }
  if (r->type == Type::String &&
      (r->string == "tensorwise" || r->string == "rowwise" || r->string == "rowwise_with_gw_hp")) {
    d.put("training.fp8_recipe", std::string(r->string == "tensorwise" ? "tensorwise" : "rowwise"),
          origin_ + " [" + section + "] recipe_name");
    return;
  }
  error(r->line, "[" + section + "] recipe_name: " +
                     (r->type == Type::String ? "\"" + r->string + "\"" : "a " + std::string(r->type_name())) +
                     " is not accepted; accepted: tensorwise, rowwise, rowwise_with_gw_hp");
}

void Reader::precision(const TomlValue& root, const TomlValue* tr) {
  Draft& d = out_.draft;
  const TomlValue* f8 = root.get("float8");
  const TomlValue* m = root.get("model");
  bool fp8 = false, mx = false;
  if (f8 && f8->get("enable_float8_linear") && f8->get("enable_float8_linear")->type == Type::Bool) {
    used("float8", "enable_float8_linear");
    fp8 = f8->get("enable_float8_linear")->boolean;
  }
  // Converters: "float8" (2024), "quantize.linear.float8" (2025), "quantize.dense.float8" (later 2025), and the
  // MX ones of the same names; "quantize.moe.float8" / ".mx" convert the experts' grouped GEMMs alone.
  bool moe_only = false;
  int moe_line = 0;
  auto converter = [&](const std::string& c, int line) {
    fp8 = fp8 || c == "float8" || c == "quantize.linear.float8" || c == "quantize.dense.float8";
    mx = mx || c == "mx" || c == "quantize.linear.mx" || c == "quantize.dense.mx";
    if (c == "quantize.moe.float8" || c == "quantize.moe.mx") {
      moe_only = true;
      moe_line = line;
    }
  };
  if (m && m->get("converters") && m->get("converters")->type == Type::Array) {
    used("model", "converters");
    for (const auto& c : m->get("converters")->array)
      if (c.type == Type::String) converter(c.string, c.line);
  } else if (m && m->get("converters") && m->get("converters")->type == Type::String) {
    // Before 2025 TorchTitan took converters as one comma-separated string ("float8").
    used("model", "converters");
    const std::string& list = m->get("converters")->string;
    for (std::size_t a = 0, b = 0; a <= list.size(); a = b + 1) {
      b = std::min(list.find(',', a), list.size());
      std::string item = list.substr(a, b - a);
      std::erase(item, ' ');
      converter(item, m->get("converters")->line);
    }
  }
  const TomlValue* lf8 = quantize_table(root, "linear", "float8");
  const TomlValue* df8 = quantize_table(root, "dense", "float8");
  const TomlValue* lmx = quantize_table(root, "linear", "mx");
  const TomlValue* dmx = quantize_table(root, "dense", "mx");
  if (moe_only && !fp8 && !mx) {
    // FP8 expert GEMMs beside 16-bit dense layers: trainsim has one GEMM precision per run.
    error(moe_line,
          "[model] converters: quantize.moe.* alone runs the experts' GEMMs in FP8 and the rest in BF16, "
          "which trainsim does not model (one precision for all GEMMs); remove it to import the run as "
          "BF16, or add quantize.dense.float8 to import it as FP8 throughout");
    return;
  }
  if (fp8 || mx) {
    d.put("training.dtype", std::string("fp8"), origin_ + (mx ? " MX linear layers" : " float8 linear layers"));
    if (mx) {
      fp8_recipe(dmx   ? dmx
                 : lmx ? lmx
                       : root.get("mx"),
                 dmx   ? "quantize.dense.mx"
                 : lmx ? "quantize.linear.mx"
                       : "mx",
                 true);
    } else {
      fp8_recipe(df8   ? df8
                 : lf8 ? lf8
                       : f8,
                 df8   ? "quantize.dense.float8"
                 : lf8 ? "quantize.linear.float8"
                       : "float8",
                 false);
    }
    return;
  }
  if (auto p = text("training", tr, "mixed_precision_param")) {
    if (*p == "bfloat16" || *p == "float32") {
      d.put("training.dtype", std::string(*p == "bfloat16" ? "bf16" : "fp32"),
            origin_ + " [training] mixed_precision_param");
    } else {
      error(tr->get("mixed_precision_param")->line,
            "[training] mixed_precision_param: \"" + *p + "\" is not accepted; accepted: bfloat16, float32");
    }
  } else {
    d.put("training.dtype", std::string("bf16"), origin_ + " (TorchTitan default: mixed_precision_param bfloat16)",
          true);
  }
}

}  // namespace sim::importers::titan
