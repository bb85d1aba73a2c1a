// sim/scenario/scenario.cpp: strict scenario loading, overrides, name resolution and cross-file checks.
#include "sim/scenario/scenario.hpp"

#include "sim/scenario/cluster_section.hpp"
#include "sim/scenario/cost_section.hpp"
#include "sim/scenario/expect_section.hpp"
#include "sim/scenario/failures_section.hpp"
#include "sim/scenario/training_section.hpp"

#include "sim/base/json_reader.hpp"
#include "sim/base/quantity.hpp"
#include "sim/base/sha256.hpp"
#include "sim/base/builtin.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace sim::scenario {

using base::ConfigError;
using base::Diagnostics;
using base::JsonDocument;
using base::JsonReader;
using base::Range;
using namespace base::literals;

namespace {

constexpr std::string_view kScenarioSchema = "trainsim.scenario/1";
constexpr std::string_view kModelSchema = "trainsim.model/1";
constexpr std::string_view kHardwareSchema = "trainsim.hardware/1";
constexpr std::string_view kBuiltinPrefix = "<built-in>/";

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.ends_with(".json");
}

/// Checkpoint intervals in optimizer steps: at most a billion (a run's steps fit in far fewer).
constexpr long long kMaxIntervalSteps = 1'000'000'000;

/// "1000 steps" / "1 step" (spaces optional before the unit): the count, or nullopt when `text` is not a step count
/// (a time, "auto", anything else). A count that overflows reads as one above the limit.
std::optional<long long> parse_steps(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ')
    ++i;
  const std::size_t digits = i;
  long long n = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    n = n > kMaxIntervalSteps ? n : n * 10 + (text[i] - '0');
  if (i == digits) return std::nullopt;
  while (i < text.size() && text[i] == ' ')
    ++i;
  const std::string_view unit = text.substr(i);
  if (unit != "steps" && unit != "step") return std::nullopt;
  return n;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// A named file: a built-in name ("llama3-70b") or a path, relative to `base_dir` first, then to the working dir.
JsonDocument open_named(const std::string& name, std::string_view folder, const std::string& base_dir) {
  if (looks_like_path(name)) {
    namespace fs = std::filesystem;
    fs::path p(name);
    std::error_code ec;  // a name the system refuses (too long) is not there; parse_file says why
    if (p.is_relative() && !base_dir.empty() && fs::exists(fs::path(base_dir) / p, ec)) p = fs::path(base_dir) / p;
    return JsonDocument::parse_file(p.string());
  }
  const std::string builtin = std::string(folder) + "/" + name + ".json";
  if (auto text = base::builtin_text(builtin))
    return JsonDocument::parse_text(*text, std::string(kBuiltinPrefix) + builtin);
  auto names = base::builtin_names(folder);
  if (folder == "failures") names.insert(names.begin(), {"default", "none"});  // the hardware profile's; no failures
  const std::string hint = base::did_you_mean(name, names);
  throw ConfigError("", "",
                    "\"" + name + "\" is not a built-in " +
                        (folder == "models"     ? "model"
                         : folder == "failures" ? "failure model"
                                                : "hardware profile") +
                        (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") + "; built-in: " + join_names(names) +
                        "; or give a path to a .json file");
}

void require_schema(const JsonDocument& doc, std::string_view expected) {
  auto schema = doc.top_level_string("schema");
  if (!schema)
    throw ConfigError(doc.origin(), "/schema",
                      "missing required field \"schema\"; expected \"" + std::string(expected) + "\"");
  if (*schema != expected)
    throw ConfigError(doc.origin(), "/schema",
                      "\"" + *schema + "\" is not accepted here; expected \"" + std::string(expected) + "\"");
}

workload::ModelSpec model_from(const JsonDocument& doc) {
  require_schema(doc, kModelSchema);
  Diagnostics diag(doc.origin());
  JsonReader r = doc.root(diag);
  auto m = workload::ModelSpec::parse(r);
  diag.throw_if_any();
  return m;
}

hardware::HardwareProfile hardware_from(const JsonDocument& doc) {
  require_schema(doc, kHardwareSchema);
  Diagnostics diag(doc.origin());
  JsonReader r = doc.root(diag);
  auto h = hardware::HardwareProfile::parse(r);
  diag.throw_if_any();
  return h;
}

/// A referenced file's problems, reported against the member that named it: the file itself (not found, a folder, a
/// device) at the scenario's key with the name, and where a relative one was looked for (user trials: "nonexist.json:
/// cannot open" named neither the scenario nor the key); a problem in the text of a file found at that file.
void report_reference(JsonReader& in, std::string_view key, const std::string& name, const std::string& base_dir,
                      const ConfigError& e) {
  for (const auto& d : e.items()) {
    if (d.file.empty()) {
      in.error(key, d.message);
    } else if (d.path.empty() && !d.message.starts_with("invalid JSON") &&
               !d.message.starts_with("the file is empty") && !d.message.starts_with("has a NUL") &&
               !d.message.starts_with("is UTF-16")) {
      // Not found, a folder, a device: the name as given. A file found whose text is wrong stays at its own path.
      const bool relative =
          looks_like_path(name) && std::filesystem::path(name).is_relative() && d.message.starts_with("cannot open");
      in.error(key, "\"" + name + "\": " + d.message +
                        (!relative          ? std::string()
                         : base_dir.empty() ? std::string(" (a relative path is looked for in the working folder)")
                                            : " (a relative path is looked for beside the scenario file, in " +
                                                  base_dir + ", then in the working folder)"));
    } else {
      in.diagnostics().add(d);
    }
  }
}

/// Resolves a "model" / "hardware" member: a name or path (string) or an inline object.
template <class Spec, class FromDoc>
std::optional<Spec> resolve_member(JsonReader& in, std::string_view key, std::string_view folder,
                                   const std::string& base_dir, FromDoc from_doc) {
  const auto kind = in.kind(key);
  if (kind == JsonReader::Kind::Object) {
    auto sub = in.required_object(key);
    return Spec::parse(*sub);
  }
  std::string name;
  if (kind != JsonReader::Kind::String && kind != JsonReader::Kind::Missing) {
    in.error(key, "expected a built-in name (a string) or an inline object");
    in.accept(key);
    return std::nullopt;
  }
  if (!in.required(key, name)) return std::nullopt;
  try {
    return from_doc(open_named(name, folder, base_dir));
  } catch (const ConfigError& e) {
    report_reference(in, key, name, base_dir, e);
    return std::nullopt;
  }
}

Scenario parse_scenario(const JsonDocument& doc, const std::string& base_dir) {
  Diagnostics diag(doc.origin());
  JsonReader in = doc.root(diag);
  Scenario s;
  s.source = doc.origin();
  std::string schema;
  if (in.required("schema", schema) && schema != kScenarioSchema)
    in.error("schema", "\"" + schema + "\" is not accepted; expected \"" + std::string(kScenarioSchema) + "\"");
  in.required("name", s.name);
  in.optional("description", s.description);
  auto model = resolve_member<workload::ModelSpec>(in, "model", "models", base_dir, model_from);
  auto hw = resolve_member<hardware::HardwareProfile>(in, "hardware", "hardware_profiles", base_dir, hardware_from);
  if (model) s.model = *model;
  if (hw) s.hardware = *hw;

  if (auto c = in.required_object("cluster")) detail::parse_cluster(*c, s.cluster, s.hardware, hw.has_value());
  if (s.cluster.nvlink_domain > 0) s.hardware.nvlink.domain = s.cluster.nvlink_domain;  // checked by parse_cluster

  if (auto p = in.required_object("parallel")) {
    const std::size_t errors_before = diag.items().size();
    s.parallel = parallel::ParallelConfig::parse(*p);
    s.parallel_fixed = p->leaf_paths();
    const auto& pc = s.parallel;
    // Not with a degree the reader refused: its placeholder would make up a mismatch (a user trial: --set
    // parallel.tp=abc was followed by "tp*pp*dp*cp = 1*4*64*1", a tp of 1 nobody gave).
    const bool degrees_read = std::none_of(diag.items().begin() + static_cast<std::ptrdiff_t>(errors_before),
                                           diag.items().end(), [](const base::Diagnostic& d) {
                                             return d.path == "/parallel/tp" || d.path == "/parallel/pp" ||
                                                    d.path == "/parallel/dp" || d.path == "/parallel/cp";
                                           });
    if (degrees_read && pc.dp && s.cluster.gpus > 0 &&
        static_cast<long long>(pc.tp) * pc.pp * *pc.dp * pc.cp != s.cluster.gpus)
      p->error("dp", "tp*pp*dp*cp = " + std::to_string(pc.tp) + "*" + std::to_string(pc.pp) + "*" +
                         std::to_string(*pc.dp) + "*" + std::to_string(pc.cp) + " = " +
                         std::to_string(static_cast<long long>(pc.tp) * pc.pp * *pc.dp * pc.cp) +
                         " but cluster.gpus = " + std::to_string(s.cluster.gpus) +
                         "; they must agree (or omit dp to derive it)");
    // Selective recomputation of modules the model does not have would recompute nothing (a user trial: ["moe"] on
    // Llama 3 8B ran as no recomputation).
    if (model && pc.recompute == parallel::Recompute::Selective && p->has("recompute_modules")) {
      const std::pair<unsigned, bool> needs[] = {{parallel::kRecomputeMoe, s.model.moe.has_value()},
                                                 {parallel::kRecomputeMoeAct, s.model.moe.has_value()},
                                                 {parallel::kRecomputeMlaUpProj, s.model.mla.has_value()},
                                                 {parallel::kRecomputeSharedExperts, s.model.shared_expert_ffn() > 0}};
      for (const auto& [module, present] : needs)
        if ((pc.recompute_modules & module) && !present)
          p->error("recompute_modules", "\"" + parallel::recompute_module_names(module).front() +
                                            "\": " + s.model.name + " has no such module; it would recompute nothing");
    }
    // Expert-parallel settings on a model without experts would do nothing: say so rather than accept them.
    if (model && !s.model.moe)
      for (const char* key : {"moe_dispatch_dtype", "moe_dispatcher", "expert_tp", "ep_comm_overlap"})
        if (p->has(key))
          p->error(key, std::string("applies to models with experts (model.moe); ") + s.model.name + " has none");
  }

  if (auto t = in.required_object("training")) detail::parse_training(*t, s, model.has_value(), hw.has_value());

  if (auto mem = in.optional_object("memory")) {
    mem->optional("reserve", s.memory.runtime_reserve, base::Sign::NonNegative);
    // ZeRO-3 / FSDP settings: with weights not sharded there is nothing to gather, so they would do nothing.
    for (const char* key : {"zero3_units", "zero3_live_params"}) {
      const bool given = std::string_view(key) == "zero3_units"
                             ? mem->optional(key, s.memory.zero3_units, Range::between(1, 64))
                             : mem->optional(key, s.memory.zero3_live_params, Range::between(1e6, 1e13));
      if (given && s.parallel.zero_stage < 3)
        mem->error(key, std::string("applies to parallel.zero_stage 3 (ZeRO-3 / FSDP, which gathers sharded weights "
                                    "before use); zero_stage is ") +
                            std::to_string(s.parallel.zero_stage));
    }
    std::string buffers;
    if (mem->optional_enum("pipeline_buffers", buffers, {"in_flight", "per_micro_batch"}))
      s.memory.pipeline_buffers_per_micro_batch = buffers == "per_micro_batch";
    mem->finish();
  }

  if (auto d = in.optional_object("data")) {
    DataConfig& dc = s.data;
    // Bounded so that a step's data time stays on the integer clock (found by a user trial: 1e-5 tokens/s, 1e-300 B/s
    // and 1e18 bytes per token ended in an internal error, exit 4).
    if (d->optional("storage_bandwidth", dc.storage_bandwidth) && !(dc.storage_bandwidth.bytes_per_s >= 1e6))
      d->error("storage_bandwidth", "is below 1 MB/s; give at least \"1 MB/s\"");
    base::Bytes bpt;
    if (d->optional("bytes_per_token", bpt)) {
      if (bpt.n < 1 || bpt.n > (std::int64_t{1} << 20))
        d->error("bytes_per_token", "must be between 1 B and 1 MiB per token");
      else
        dc.bytes_per_token = bpt;
    }
    base::Count loader;
    if (d->optional("loader_tokens_per_s", loader)) {
      if (!(loader.n >= 1))
        d->error("loader_tokens_per_s", "must be at least 1 token per second");
      else
        dc.loader_tokens_per_s = loader;
    }
    d->optional("cache_hit_rate", dc.cache_hit_rate, Range::between(0, 0.999));
    d->finish();
  }

  ReliabilityConfig& rel = s.reliability;
  rel.restart = 10_min;
  rel.hang_timeout = 10_min;
  std::vector<hardware::FailureComponentSpec> inline_components;
  bool replace = true;
  if (auto r = in.optional_object("reliability")) {
    for (const char* k : {"failures", "checkpoint"})
      r->accept(k);  // read by their kind below; accepted keys either way
    const auto fk = r->kind("failures");
    if (fk == JsonReader::Kind::Object) {
      if (auto f = r->required_object("failures")) {
        rel.trace = detail::read_failures_object(*f, s.hardware, "inline", inline_components, replace);
        f->finish();
        rel.failures = "inline";
      }
    } else if (fk != JsonReader::Kind::Missing) {
      std::string name;
      const bool named = r->required("failures", name);
      if (named && name == "none") {
        rel.failures = "none";  // no failure components at all: the failure-free run
      } else if (named && name != "default") {
        try {
          JsonDocument fd = open_named(name, "failures", base_dir);
          Diagnostics fdiag(fd.origin());
          JsonReader fr = fd.root(fdiag);
          rel.trace = detail::read_failures_object(fr, s.hardware, name, inline_components, replace);
          rel.failures_sha256 = base::sha256_hex(fd.dump());
          std::string ignored;
          fr.optional("schema", ignored);
          fr.optional("description", ignored);
          fr.finish();
          for (const auto& d : fdiag.items())
            diag.add(d);
          rel.failures = name;
        } catch (const ConfigError& e) {
          report_reference(*r, "failures", name, base_dir, e);
        }
      }
    }
    if (r->kind("checkpoint") == JsonReader::Kind::Object) {
      auto ck = r->required_object("checkpoint");
      ck->accept("interval");
      if (ck->kind("interval") == JsonReader::Kind::String) {
        std::string text;
        ck->required("interval", text);
        if (const auto steps = parse_steps(text); steps.has_value()) {
          if (*steps < 1 || *steps > kMaxIntervalSteps) {
            ck->error("interval", "\"" + text + "\": the steps between checkpoints must be 1 to " +
                                      std::to_string(kMaxIntervalSteps));
          } else {
            rel.checkpoint.auto_interval = false;
            rel.checkpoint.interval_steps = *steps;
          }
        } else if (text != "auto") {
          auto t = base::parse_time(text);
          if (!t) {
            ck->error("interval", t.error + "; or a step count such as \"1000 steps\", or \"auto\" for Daly's optimum");
          } else if (t.value->ns <= 0) {
            ck->error("interval", "\"" + text + "\" must be greater than zero");
          } else {
            rel.checkpoint.auto_interval = false;
            rel.checkpoint.interval = *t.value;
          }
        }
      } else if (ck->has("interval")) {
        ck->error("interval", "expected \"auto\", a time such as \"2 h\" or a step count such as \"1000 steps\"");
        ck->accept("interval");
      }
      for (const char* key : {"write", "load"}) {
        std::optional<base::Time>& slot = std::string_view(key) == "write" ? rel.checkpoint.write : rel.checkpoint.load;
        if (ck->kind(key) == JsonReader::Kind::String) {
          std::string text;
          ck->required(key, text);
          if (text == "auto") continue;
          auto t = base::parse_time(text);
          if (!t) {
            ck->error(key, t.error + "; or write \"auto\" to derive it from the checkpoint's bytes and bandwidths");
          } else if (t.value->ns < 0) {
            ck->error(key, "\"" + text + "\" must not be negative");
          } else {
            slot = *t.value;
          }
        } else {
          base::Time t;  // the reader's own message for a number without a unit or another type
          if (ck->optional(key, t, base::Sign::NonNegative)) slot = t;
        }
      }
      ck->optional("async", rel.checkpoint.async);
      reliability::CheckpointStorage& st = rel.checkpoint.storage;
      // At least 1 MB/s: slower rates time a checkpoint past the integer clock's 292 years (found by a user trial:
      // "10 B/s" overflowed and the per-node rate was used in its place, a 99.5% goodput).
      for (auto [key, slot] :
           {std::pair{"write_bandwidth", &st.write}, std::pair{"read_bandwidth", &st.read},
            std::pair{"node_bandwidth", &st.per_node}, std::pair{"snapshot_bandwidth", &st.snapshot}})
        if (ck->optional(key, *slot) && !(slot->bytes_per_s >= 1e6))
          ck->error(key,
                    "is below 1 MB/s, slower than any checkpoint storage trainsim can time; give at least \"1 MB/s\"");
      // A given time and the bandwidth it would be derived from contradict each other; one was dropped silently
      // (found by a user trial: "write": "30 s" beside "write_bandwidth": "5 GB/s", whose 198 s went unread).
      const auto both = [&](const char* time, const char* bandwidth) {
        ck->error(bandwidth, std::string("is not read when checkpoint.") + time +
                                 " gives the time itself (\"auto\" derives it from the bytes and this bandwidth); "
                                 "give one of them");
      };
      if (rel.checkpoint.write && ck->has("write_bandwidth")) both("write", "write_bandwidth");
      if (rel.checkpoint.load && ck->has("read_bandwidth")) both("load", "read_bandwidth");
      if (rel.checkpoint.write && rel.checkpoint.load && ck->has("node_bandwidth"))
        both("write and load", "node_bandwidth");
      // The GPU-to-host copy is what an asynchronous checkpoint blocks on; a blocking one never makes it (a user
      // trial: 1 MB/s beside async false changed nothing).
      if (ck->has("snapshot_bandwidth") && !rel.checkpoint.async)
        ck->error("snapshot_bandwidth",
                  "times the GPU-to-host copy of an asynchronous checkpoint; with \"async\": false the write blocks "
                  "on storage (write_bandwidth, node_bandwidth): drop it or set async true");
      ck->finish();
    } else if (r->has("checkpoint")) {
      r->required_object("checkpoint");  // reports the wrong type
    }
    r->optional("restart", rel.restart, base::Sign::NonNegative);
    r->optional("hang_timeout", rel.hang_timeout);
    if (auto det = r->optional_object("detection")) {
      for (auto [key, slot] : {std::pair{"crash", &rel.detect_crash}, std::pair{"straggler", &rel.detect_straggler},
                               std::pair{"sdc", &rel.detect_sdc}}) {
        base::Time t;
        if (det->optional(key, t, base::Sign::NonNegative)) *slot = t;
      }
      det->finish();
    }
    double slowdown = 0;
    if (r->optional("straggler_slowdown", slowdown, Range::between(1.0, 100.0))) rel.straggler_slowdown = slowdown;
    if (r->kind("spares") == JsonReader::Kind::String) {
      std::string text;
      if (r->optional("spares", text) && text != "auto")
        r->error("spares", "expected \"auto\" or a node count (an integer >= 0), found \"" + text + "\"");
      rel.spares.reset();
    } else {
      int spares = 0;
      if (r->optional("spares", spares, Range::at_least(0))) rel.spares = spares;
    }
    r->optional("node_swap", rel.node_swap, base::Sign::NonNegative);
    std::string exhausted;
    if (r->optional_enum("on_spares_exhausted", exhausted, {"shrink", "wait"})) rel.shrink = exhausted == "shrink";
    r->optional("trials", rel.trials, Range::between(1, 10'000'000));
    std::int64_t seed = 42;
    if (r->optional("seed", seed, Range::at_least(0))) rel.seed = static_cast<std::uint64_t>(seed);
    r->finish();
  }
  rel.components = rel.failures == "default" ? s.hardware.failures
                                             : detail::effective_components(s.hardware, inline_components, replace);

  s.cost.gpu_hour = s.hardware.price ? std::optional<base::Money>(s.hardware.price->gpu_hour) : std::nullopt;
  s.cost.energy.node_power = s.hardware.node.power;
  if (auto c = in.optional_object("cost")) detail::parse_cost(*c, s.cost);
  detail::finish_cost(s.cost, s.hardware);
  if (auto e = in.optional_object("expect"))
    s.expect = detail::parse_expect(*e, rel.components, s.training.loss_spikes.has_value());
  in.finish();
  diag.throw_if_any();
  return s;
}

Scenario load_from_doc(JsonDocument doc, const std::string& base_dir, const std::vector<Override>& overrides) {
  for (const auto& o : overrides)
    doc.set(o.key, o.value);
  try {
    Scenario s = parse_scenario(doc, base_dir);
    // Provenance over every key, not only the resolved summary (found by a user trial: checkpoint, restart,
    // deadline and budget settings that moved p50 by days left the report's hashes unchanged).
    for (const auto& o : overrides)
      s.overrides.push_back(o.key + "=" + o.value);
    s.document_sha256 = base::sha256_hex(doc.dump());
    return s;
  } catch (const ConfigError& e) {
    // A value that came from --set is the command line's, not the file's: say so.
    std::vector<base::Diagnostic> items = e.items();
    bool moved = false;
    for (auto& d : items) {
      for (const auto& o : overrides) {
        std::string pointer = "/" + o.key;
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        if (d.path == pointer) {
          d.file = "--set " + o.key;
          moved = true;
        }
      }
    }
    // What the file says together with the command line's values (tp*pp*dp against the cluster, after --set
    // parallel.tp=3) is not the file's alone: the file is named with them (found by a user trial).
    if (!overrides.empty()) {
      std::string with;
      for (const auto& o : overrides)
        with += (with.empty() ? " with --set " : ", ") + o.key + "=" + o.value;
      for (auto& d : items)
        if (d.file == doc.origin()) {
          d.file += with;
          moved = true;
        }
    }
    if (!moved) throw;
    throw ConfigError(std::move(items));
  }
}

}  // namespace

Override Override::parse(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw ConfigError("--set", "", "\"" + std::string(text) + "\" is not KEY=VALUE; e.g. --set parallel.tp=4");
  const std::string key(text.substr(0, eq));
  // A bracketed index is not a --set path: an element of an array the scenario has is KEY.INDEX (JsonDocument::set).
  if (const auto bracket = key.find('['); bracket != std::string::npos)
    throw ConfigError("--set " + key, "",
                      "\"" + key.substr(bracket) + "\": write an element of an array the scenario has as " +
                          key.substr(0, bracket) + ".INDEX, or give the whole array: --set " + key.substr(0, bracket) +
                          "=[...]");
  return Override{key, std::string(text.substr(eq + 1))};
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides) {
  JsonDocument doc = JsonDocument::parse_file(path);
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  return load_from_doc(std::move(doc), base_dir, overrides);
}

Scenario load_scenario_text(std::string_view text, const std::string& origin, const std::vector<Override>& overrides) {
  return load_from_doc(JsonDocument::parse_text(text, origin), "", overrides);
}

namespace {

JsonDocument default_scenario_document() {
  const std::string path = "scenarios/default.json";
  auto text = base::builtin_text(path);
  if (!text) throw base::InternalError("the built-in default scenario is missing from this build");
  return JsonDocument::parse_text(*text, std::string(kBuiltinPrefix) + path);
}

}  // namespace

Scenario load_default_scenario(const std::vector<Override>& overrides) {
  return load_from_doc(default_scenario_document(), "", overrides);
}

std::string canonical_text(const std::string& path, const std::vector<Override>& overrides) {
  JsonDocument doc = path.empty() ? default_scenario_document() : JsonDocument::parse_file(path);
  for (const auto& o : overrides)
    doc.set(o.key, o.value);
  return doc.dump();
}

workload::ModelSpec load_model(const std::string& name_or_path) {
  try {
    return model_from(open_named(name_or_path, "models", ""));
  } catch (const ConfigError& e) {
    if (e.items().size() == 1 && e.items()[0].file.empty()) throw ConfigError("model", "", e.items()[0].message);
    throw;
  }
}

hardware::HardwareProfile load_hardware(const std::string& name_or_path) {
  try {
    return hardware_from(open_named(name_or_path, "hardware_profiles", ""));
  } catch (const ConfigError& e) {
    if (e.items().size() == 1 && e.items()[0].file.empty()) throw ConfigError("hardware", "", e.items()[0].message);
    throw;
  }
}

FileKind validate_file(const std::string& path, const std::vector<Override>& scenario_overrides) {
  JsonDocument doc = JsonDocument::parse_file(path);
  auto schema = doc.top_level_string("schema");
  if (!schema)
    throw ConfigError(path, "/schema",
                      "missing \"schema\"; expected one of \"trainsim.scenario/1\", \"trainsim.model/1\", "
                      "\"trainsim.hardware/1\"");
  if (*schema == kScenarioSchema) {
    load_from_doc(std::move(doc), std::filesystem::path(path).parent_path().string(), scenario_overrides);
    return FileKind::Scenario;
  }
  if (*schema == kModelSchema) {
    model_from(doc);
    return FileKind::Model;
  }
  if (*schema == kHardwareSchema) {
    Diagnostics diag(doc.origin());
    JsonReader r = doc.root(diag);
    auto profile = hardware::HardwareProfile::parse(r);
    diag.throw_if_any();
    return FileKind::Hardware;
  }
  throw ConfigError(path, "/schema",
                    "\"" + *schema +
                        "\" is not a trainsim schema; expected one of \"trainsim.scenario/1\", "
                        "\"trainsim.model/1\", \"trainsim.hardware/1\"");
}

}  // namespace sim::scenario
