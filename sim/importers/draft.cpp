// sim/importers/draft.cpp: merging of imported fields, conflicts, completeness and the scenario/model JSON.
#include "sim/importers/draft.hpp"

#include "sim/base/input_file.hpp"
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sim::importers {

using results::Json;

namespace {

bool same(const Value& a, const Value& b) {
  return a == b;
}

/// True when `path` is `prefix` or lies below it ("model.moe.experts" is below "model").
bool below(std::string_view path, std::string_view prefix) {
  return path == prefix || (path.size() > prefix.size() && path.starts_with(prefix) && path[prefix.size()] == '.');
}

Json to_json(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return Json(*i);
  if (const auto* d = std::get_if<double>(&v)) return Json(*d);
  if (const auto* b = std::get_if<bool>(&v)) return Json(*b);
  if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&v)) {
    Json a = Json::array();
    for (auto i : *ints)
      a.push_back(Json(i));
    return a;
  }
  if (const auto* texts = std::get_if<std::vector<std::string>>(&v)) {
    Json a = Json::array();
    for (const auto& t : *texts)
      a.push_back(Json(t));
    return a;
  }
  return Json(std::get<std::string>(v));
}

/// Sets root[a][b][c] = v for the path "a.b.c".
void set_path(Json& root, std::string_view path, const Value& v) {
  Json* node = &root;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string seg(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    node = &(*node)[seg];
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  *node = to_json(v);
}

// The scenario contract's field order (DESIGN.md), so that an imported scenario reads like a hand-written one.
constexpr std::string_view kModelOrder[] = {"name",
                                            "description",
                                            "layers",
                                            "hidden",
                                            "ffn_hidden",
                                            "heads",
                                            "kv_heads",
                                            "vocab",
                                            "activation",
                                            "norm",
                                            "position_embedding",
                                            "bias",
                                            "qkv_bias",
                                            "tied_embeddings",
                                            "max_seq_len",
                                            "moe.experts",
                                            "moe.top_k",
                                            "moe.ffn_hidden",
                                            "moe.shared_experts"};
constexpr std::string_view kScenarioOrder[] = {"name",
                                               "description",
                                               "model",
                                               "hardware",
                                               "cluster.gpus",
                                               "cluster.gpus_per_node",
                                               "parallel.tp",
                                               "parallel.pp",
                                               "parallel.dp",
                                               "parallel.cp",
                                               "parallel.ep",
                                               "parallel.vpp",
                                               "parallel.sequence_parallel",
                                               "parallel.zero_stage",
                                               "parallel.distributed_optimizer",
                                               "parallel.recompute",
                                               "parallel.micro_batch",
                                               "parallel.global_batch",
                                               "parallel.schedule",
                                               "training.seq_len",
                                               "training.tokens",
                                               "training.duration",
                                               "training.dtype"};

/// Writes the fields below `prefix` (with the prefix stripped when `strip`) into `out`: contract order first.
void write_model(Json& out, const Draft& d, bool strip) {
  std::vector<bool> done(d.fields().size(), false);
  auto emit = [&](std::size_t i) {
    const auto& f = d.fields()[i];
    set_path(out, strip ? std::string_view(f.path).substr(6) : std::string_view(f.path), f.value);
    done[i] = true;
  };
  for (auto key : kModelOrder)
    for (std::size_t i = 0; i < d.fields().size(); ++i)
      if (d.fields()[i].path == "model." + std::string(key)) emit(i);
  for (std::size_t i = 0; i < d.fields().size(); ++i)
    if (!done[i] && below(d.fields()[i].path, "model") && d.fields()[i].path != "model") emit(i);
}

}  // namespace

std::string to_string(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return results::json_quote(*s);
  return to_json(v).dump(-1);
}

void Draft::put(std::string path, Value value, std::string origin, bool weak) {
  for (auto& f : fields_) {
    if (f.path != path) continue;
    if (same(f.value, value)) {
      if (f.weak && !weak) f = {std::move(path), std::move(value), std::move(origin), false};
      return;
    }
    if (weak) {
      notes_.push_back({path, "using " + to_string(f.value) + " (" + f.origin + ") instead of " + to_string(value) +
                                  " (" + origin + ")"});
    } else if (f.weak) {
      notes_.push_back({path, "using " + to_string(value) + " (" + origin + ") instead of " + to_string(f.value) +
                                  " (" + f.origin + ")"});
      f = {std::move(path), std::move(value), std::move(origin), false};
    } else {
      conflicts_.push_back({"", path,
                            to_string(value) + " (" + origin + ") disagrees with " + to_string(f.value) + " (" +
                                f.origin + "); make the inputs agree, or choose one with --set " + path + "=VALUE"});
    }
    return;
  }
  fields_.push_back({std::move(path), std::move(value), std::move(origin), weak});
}

void Draft::override_value(std::string path, Value value, std::string origin) {
  // A reference "model" and inline "model.*" fields exclude each other.
  if (path == "model") erase("model");
  if (below(path, "model") && path != "model") {
    auto it = std::find_if(fields_.begin(), fields_.end(), [](const Field& f) { return f.path == "model"; });
    if (it != fields_.end()) fields_.erase(it);
  }
  for (auto& f : fields_) {
    if (f.path == path) {
      f.value = std::move(value);
      f.origin = std::move(origin);
      f.weak = false;  // given explicitly: no longer a framework default
      return;
    }
  }
  fields_.push_back({std::move(path), std::move(value), std::move(origin)});
}

void Draft::erase(std::string_view path) {
  std::erase_if(fields_, [&](const Field& f) { return below(f.path, path); });
}

void Draft::erase_field(std::string_view path) {
  std::erase_if(fields_, [&](const Field& f) { return f.path == path; });
}

const Field* Draft::find(std::string_view path) const {
  for (const auto& f : fields_)
    if (f.path == path) return &f;
  return nullptr;
}

std::optional<std::int64_t> Draft::integer(std::string_view path) const {
  const auto* f = find(path);
  if (!f) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(&f->value)) return *i;
  return std::nullopt;
}

void Draft::merge(const Draft& other) {
  for (const auto& f : other.fields_)
    put(f.path, f.value, f.origin, f.weak);
  conflicts_.insert(conflicts_.end(), other.conflicts_.begin(), other.conflicts_.end());
  notes_.insert(notes_.end(), other.notes_.begin(), other.notes_.end());
}

void Import::merge(const Import& other) {
  draft.merge(other.draft);
  ignored.insert(ignored.end(), other.ignored.begin(), other.ignored.end());
  unresolved.insert(unresolved.end(), other.unresolved.begin(), other.unresolved.end());
  notes.insert(notes.end(), other.notes.begin(), other.notes.end());
  not_modelled.insert(not_modelled.end(), other.not_modelled.begin(), other.not_modelled.end());
}

std::vector<Finding> unsettled(const Import& im) {
  std::vector<Finding> out;
  // A framework default (a weak field, "implied by an absent flag") does not settle a value the file gives but
  // cannot be read: found by a user trial, `--global-batch-size $(cmd)` was written as micro x dp.
  for (const auto& f : im.unresolved) {
    const Field* given = f.path.empty() ? nullptr : im.draft.find(f.path);
    if (!given || given->weak) out.push_back(f);
  }
  return out;
}

std::vector<Finding> missing_model_fields(const Draft& d) {
  std::vector<Finding> out;
  const std::pair<const char*, const char*> required[] = {
      {"model.name", "a name for the model"},
      {"model.layers", "the number of transformer layers"},
      {"model.hidden", "the hidden size"},
      {"model.ffn_hidden", "the MLP width"},
      {"model.heads", "the number of attention heads"},
      {"model.vocab",
       "the vocabulary size (Megatron-LM: --vocab-size or --padded-vocab-size; else from a "
       "Hugging Face config.json)"},
      {"model.activation", "\"gelu\" or \"swiglu\""}};
  for (const auto& [path, what] : required)
    if (!d.has(path)) out.push_back({path, std::string("missing: ") + what});
  return out;
}

std::vector<Finding> missing_scenario_fields(const Draft& d) {
  std::vector<Finding> out;
  if (!d.has("model")) {
    bool any_inline = false;
    for (const auto& f : d.fields())
      any_inline = any_inline || below(f.path, "model");
    if (!any_inline) {
      out.push_back({"model",
                     "missing: give --model NAME|FILE (a built-in model or a trainsim model file) or "
                     "--model-config config.json (a Hugging Face config)"});
    } else {
      for (auto f : missing_model_fields(d))
        if (f.where != "model.name") out.push_back(std::move(f));  // the command line names an unnamed model
    }
  }
  const std::pair<const char*, const char*> required[] = {
      {"hardware", "missing: give --hardware NAME (trainsim describe hardware lists them) or FILE"},
      {"cluster.gpus", "missing: give --gpus N (or a torchrun prefix with --nnodes and --nproc-per-node)"},
      {"parallel.global_batch", "missing: give --set parallel.global_batch=N (sequences per iteration)"},
      {"training.seq_len", "missing: give --set training.seq_len=N (tokens per sequence)"}};
  for (const auto& [path, what] : required)
    if (!d.has(path)) out.push_back({path, what});
  if (!d.has("training.tokens") && !d.has("training.duration"))
    out.push_back({"training.tokens", "missing: give --tokens COUNT (e.g. 1T) or --set training.duration=\"30 d\""});
  return out;
}

Json scenario_json(const Draft& d) {
  Json j = Json::object();
  j["schema"] = "trainsim.scenario/1";
  std::vector<bool> done(d.fields().size(), false);
  for (auto key : kScenarioOrder) {
    if (key == "model" && !d.has("model")) {
      bool any_inline = false;
      for (const auto& f : d.fields())
        any_inline = any_inline || below(f.path, "model");
      if (any_inline) {
        write_model(j["model"], d, true);
        for (std::size_t i = 0; i < d.fields().size(); ++i)
          if (below(d.fields()[i].path, "model")) done[i] = true;
      }
      continue;
    }
    for (std::size_t i = 0; i < d.fields().size(); ++i) {
      if (d.fields()[i].path != key) continue;
      set_path(j, key, d.fields()[i].value);
      done[i] = true;
    }
  }
  const bool model_ref = d.has("model");
  for (std::size_t i = 0; i < d.fields().size(); ++i) {
    const auto& f = d.fields()[i];
    if (done[i] || f.path == "schema" || (model_ref && below(f.path, "model"))) continue;
    set_path(j, f.path, f.value);
  }
  return j;
}

Json model_json(const Draft& d) {
  Json j = Json::object();
  j["schema"] = "trainsim.model/1";
  write_model(j, d, true);
  return j;
}

std::string read_input_file(const std::string& path) {
  std::string s = base::read_input_file(path, "a training configuration to import");
  if (s.find_first_not_of(" \t\r\n") == std::string::npos) throw base::ConfigError(path, "", "is empty");
  return s;
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t v = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || p != end) return std::nullopt;
  return v;
}

Value parse_value(std::string_view text) {
  if (auto i = parse_integer(text)) return *i;
  if (text == "true") return true;
  if (text == "false") return false;
  double d = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, d);
  if (!text.empty() && ec == std::errc{} && p == end && std::isfinite(d)) return d;
  std::string s(text);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

}  // namespace sim::importers
