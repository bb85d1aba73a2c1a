// sim/cli/cmd_import.cpp: `trainsim import`: scenario (or model) JSON from Megatron-LM, DeepSpeed, TorchTitan and
// Hugging Face configs, combined with command-line options, checked by the scenario loader before it is written.
//
// Policy: what an input gives goes into the scenario; what trainsim does not model is listed as ignored; framework
// defaults that had to be applied are listed as notes; what cannot be determined is listed as unresolved and is never
// guessed. When a required field (model, hardware, cluster size, batch, sequence length, training length) is missing
// or something unresolved is not settled by an option, nothing is written and the exit code is 2, with the list and
// the option that supplies each; --partial writes the incomplete draft anyway (for editing by hand).
#include "sim/base/atomic_file.hpp"
#include "sim/base/errors.hpp"
#include "sim/base/quantity.hpp"
#include "sim/cli/app.hpp"
#include "sim/cli/common.hpp"
#include "sim/importers/importers.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <random>

namespace sim::cli {
namespace {

using importers::Draft;
using importers::Finding;
using importers::Import;

struct ImportArgs {
  std::string kind;  // megatron | deepspeed | torchtitan | hf-config
  std::vector<std::string> files;
  std::string model;         // built-in name or trainsim model file
  std::string model_config;  // Hugging Face config.json
  std::string hardware;
  int gpus = 0;
  std::string tokens;
  std::string name;
  std::string output;
  bool partial = false;
  std::optional<std::string> args;  // the launch script's arguments, as typed after its name
  std::vector<std::string> env;     // NAME=VALUE the launch script is run with
};

/// `--args "dsw A37B 1 'a b'"`: words split at blanks, '...' and "..." keeping theirs (no expansion, as typed).
std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        cur += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) throw base::ConfigError("--args", "", std::string("unterminated ") + quote + " quote in \"" + text + "\"");
  if (in_word) out.push_back(std::move(cur));
  return out;
}

importers::ShellInvocation invocation_of(const ImportArgs& a) {
  importers::ShellInvocation inv;
  if (a.args) inv.args = split_args(*a.args);
  for (const auto& e : a.env) {
    const auto eq = e.find('=');
    if (eq == std::string::npos)
      throw base::ConfigError("--env", "", "\"" + e + "\": expected NAME=VALUE (NAME= for an empty value)");
    inv.env.emplace_back(e.substr(0, eq), e.substr(eq + 1));
  }
  return inv;
}

/// The fields of a resolved model, to check a named model against the architecture flags of a launch line.
void put_model(Draft& d, const workload::ModelSpec& m, const std::string& origin) {
  auto put = [&](const char* path, importers::Value v) { d.put(path, std::move(v), origin); };
  put("model.layers", std::int64_t{m.layers});
  put("model.hidden", std::int64_t{m.hidden});
  put("model.ffn_hidden", std::int64_t{m.ffn_hidden});
  put("model.heads", std::int64_t{m.heads});
  put("model.kv_heads", std::int64_t{m.kv_heads});
  put("model.vocab", std::int64_t{m.vocab});
  put("model.activation", workload::to_string(m.activation));
  put("model.norm", std::string(m.norm == workload::Norm::RmsNorm ? "rmsnorm" : "layernorm"));
  put("model.position_embedding",
      std::string(m.position_embedding == workload::PositionEmbedding::Rope ? "rope" : "learned"));
  put("model.bias", m.bias);
  if (m.qkv_bias && !m.bias) put("model.qkv_bias", true);
  put("model.tied_embeddings", m.tied_embeddings);
  put("model.max_seq_len", std::int64_t{m.max_seq_len});
  if (m.moe) {
    put("model.moe.experts", std::int64_t{m.moe->experts});
    put("model.moe.top_k", std::int64_t{m.moe->top_k});
    put("model.moe.ffn_hidden", std::int64_t{m.moe->ffn_hidden});
  }
}

void print_findings(const Import& im, const Options& o, std::ostream& err) {
  if (o.quiet) return;
  for (const auto& f : im.draft.notes())
    err << "note: " << base::printable(f.to_string()) << "\n";
  for (const auto& f : im.notes)
    err << "note: " << base::printable(f.to_string()) << "\n";
  for (const auto& f : im.ignored)
    err << "ignored: " << base::printable(f.to_string()) << "\n";
  for (const auto& f : im.not_modelled)
    err << "warning: " << base::printable(f.to_string()) << "\n";
  for (const auto& f : im.unresolved)
    if (!f.path.empty() && im.draft.has(f.path) && !im.draft.find(f.path)->weak)
      err << "settled: " << base::printable(f.to_string()) << " (given as "
          << base::printable(im.draft.find(f.path)->origin) << ")\n";
}

/// Writes `text` to a temporary file in TMPDIR, runs `load` on its path (relative references resolve from the working
/// directory) and returns what `load` returned; problems in the temporary file are reported as `label`'s. The file is
/// written by the one output writer (a planted link or special file at its name is refused, a failed write is an
/// error) and removed however the load ends.
template <class Load>
auto load_through_temporary(const std::string& text, const std::string& label, Load load) {
  namespace fs = std::filesystem;
  std::random_device rd;
  std::error_code no_tmp;
  const fs::path tmp_dir = fs::temp_directory_path(no_tmp);
  if (no_tmp)
    throw base::ConfigError("TMPDIR", "",
                            "no folder for the temporary file that checks the import (" + no_tmp.message() +
                                "); set TMPDIR to a folder that exists");
  const fs::path tmp = tmp_dir / ("trainsim-import-" + std::to_string(rd()) + ".json");
  struct Remove {
    const fs::path& path;
    ~Remove() {
      std::error_code ec;
      if (fs::is_regular_file(fs::symlink_status(path, ec))) fs::remove(path, ec);
    }
  } remove_tmp{tmp};
  base::write_file_atomic(tmp.string(), text);
  try {
    return load(tmp.string());
  } catch (const base::ConfigError& e) {
    std::vector<base::Diagnostic> items;
    for (auto d : e.items()) {
      if (d.file == tmp.string()) d.file = label;
      items.push_back(std::move(d));
    }
    throw base::ConfigError(std::move(items));
  }
}

/// Loads the text through the scenario loader, so that an import never writes a scenario (or model) that trainsim
/// would reject.
void check_loads(const std::string& text, bool model_only) {
  load_through_temporary(text, "the imported " + std::string(model_only ? "model" : "scenario"),
                         [model_only](const std::string& path) {
                           if (model_only) {
                             scenario::validate_file(path);
                           } else {
                             scenario::load_scenario(path);
                           }
                           return 0;
                         });
}

int import_command(const ImportArgs& a, const Options& o, std::ostream& out, std::ostream& err) {
  const bool model_only = a.kind == "hf-config";
  if (model_only &&
      (!a.model.empty() || !a.model_config.empty() || !a.hardware.empty() || a.gpus > 0 || !a.tokens.empty()))
    throw base::ConfigError("import", "",
                            "hf-config writes a model file; --model, --model-config, --hardware, --gpus and --tokens "
                            "belong to the scenario importers (megatron, deepspeed, torchtitan)");
  if (!a.model.empty() && !a.model_config.empty())
    throw base::ConfigError("import", "", "give --model or --model-config, not both");
  if (a.kind != "megatron" && (a.args || !a.env.empty()))
    throw base::ConfigError("import", "",
                            "--args and --env say how a launch script is run; they belong to import megatron");
  const auto invocation = invocation_of(a);

  // What the options give: the importers read it (cluster size for batch defaults, layers for vpp), and it overrides
  // the files' values afterwards (with a note naming what it replaced).
  Draft options;
  if (a.gpus > 0) options.put("cluster.gpus", std::int64_t{a.gpus}, "--gpus");
  if (!a.hardware.empty()) options.put("hardware", a.hardware, "--hardware");
  if (!a.tokens.empty()) {
    auto c = base::parse_count(a.tokens);
    if (!c) throw base::ConfigError("--tokens", "", c.error);
    options.put("training.tokens", a.tokens, "--tokens");
  }
  Import all;
  if (!a.model_config.empty()) all.merge(importers::import_hf_config(a.model_config));
  if (!a.model.empty()) put_model(all.draft, scenario::load_model(a.model), "--model " + a.model);

  for (const auto& f : a.files) {
    Draft known = all.draft;
    for (const auto& opt : options.fields())
      known.override_value(opt.path, opt.value, opt.origin);
    // --set replaces what the files say (below), so the importers' arithmetic (batch over data parallelism) uses it.
    if (!model_only)
      for (const auto& ov : overrides_of(o))
        known.override_value(ov.key, importers::parse_value(ov.value), "--set");
    try {
      if (a.kind == "megatron") all.merge(importers::import_megatron(f, known, invocation));
      if (a.kind == "deepspeed") all.merge(importers::import_deepspeed(f, known));
      if (a.kind == "torchtitan") all.merge(importers::import_torchtitan(f, known));
      if (a.kind == "hf-config") all.merge(importers::import_hf_config(f));
    } catch (const base::ConfigError& e) {
      // --partial writes a draft with fields left open, not one beside a refusal: say so (a user trial saw only the
      // refusal and no file).
      if (!a.partial) throw;
      auto items = e.items();
      items.push_back({"import", "",
                       "nothing written: --partial leaves open what a file does not give; beside an error (a "
                       "setting trainsim refuses, a file it cannot read) it writes nothing"});
      throw base::ConfigError(std::move(items));
    }
  }
  // --model-config is the model: a built-in the file names (a TorchTitan flavor) gives way to it, with a note.
  if (!a.model_config.empty())
    if (const auto* ref = all.draft.find("model"); ref && ref->origin.find("--model") == std::string::npos) {
      all.notes.push_back(
          {ref->origin, "model " + importers::to_string(ref->value) + " replaced by --model-config " + a.model_config});
      all.draft.erase_field("model");
    }
  for (const auto& opt : options.fields()) {
    if (const auto* was = all.draft.find(opt.path); was && was->value != opt.value)
      all.notes.push_back({opt.origin, opt.path + " = " + importers::to_string(opt.value) + " overrides " +
                                           importers::to_string(was->value) + " (" + was->origin + ")"});
    all.draft.override_value(opt.path, opt.value, opt.origin);
  }
  if (!all.draft.conflicts().empty()) {
    std::vector<base::Diagnostic> items;
    for (auto d : all.draft.conflicts()) {
      if (options.has(d.path)) continue;  // an option settles what the files disagree on
      d.file = "import";
      items.push_back(std::move(d));
    }
    if (!items.empty()) throw base::ConfigError(std::move(items));
  }

  // Explicit choices: --set (model fields without the "model." prefix for hf-config), then --model and the names.
  for (const auto& ov : overrides_of(o))
    all.draft.override_value(model_only ? "model." + ov.key : ov.key, importers::parse_value(ov.value), "--set");
  if (!a.model.empty() && !all.draft.has("model")) {
    all.draft.erase("model");
    all.draft.put("model", a.model, "--model");
  }
  const std::string stem = std::filesystem::path(a.files.front()).stem().string();
  if (!a.name.empty()) all.draft.override_value(model_only ? "model.name" : "name", a.name, "--name");
  if (!model_only && !all.draft.has("name")) all.draft.put("name", stem, a.files.front() + " (file name)");
  if (!model_only && !all.draft.has("model") && !all.draft.has("model.name"))
    if (const auto* n = all.draft.find("name"); n && std::holds_alternative<std::string>(n->value))
      all.draft.put("model.name", std::get<std::string>(n->value) + "-model", "the scenario name");

  print_findings(all, o, err);
  auto missing =
      model_only ? importers::missing_model_fields(all.draft) : importers::missing_scenario_fields(all.draft);
  for (auto& f : importers::unsettled(all)) {  // more precise than "missing": replaces it
    std::erase_if(missing, [&](const Finding& m) { return !f.path.empty() && m.where == f.path; });
    missing.push_back(std::move(f));
  }
  if (!missing.empty()) {
    for (const auto& f : missing)
      err << (a.partial ? "unresolved: " : "error: unresolved: ") << base::printable(f.to_string()) << "\n";
    if (!a.partial) {
      err << "import: " << missing.size() << " field(s) unresolved; nothing written (--partial writes the draft "
          << "anyway)\n";
      return kExitBadInput;
    }
  }
  const auto json = model_only ? importers::model_json(all.draft) : importers::scenario_json(all.draft);
  const std::string text = json.dump() + "\n";
  if (missing.empty()) check_loads(text, model_only);
  if (a.output.empty()) {
    out << text;
  } else {
    base::write_file_atomic(a.output, text);
    if (!o.quiet) err << "wrote " << a.output << "\n";
  }
  return kExitOk;
}

}  // namespace

bool is_hf_config(const std::string& path) {
  const auto doc = base::JsonDocument::parse_file(path);
  base::Diagnostics diag(path);
  const auto root = doc.root(diag);
  return !root.has("schema") && root.has("model_type");
}

workload::ModelSpec load_hf_config_model(const std::string& path) {
  auto im = importers::import_hf_config(path);
  if (!im.unresolved.empty()) {
    std::vector<base::Diagnostic> items;
    for (const auto& f : im.unresolved)
      items.push_back({path, "",
                       "unresolved: " + f.what + " (trainsim import hf-config " + path +
                           " --set FIELD=VALUE writes a model file with it)"});
    throw base::ConfigError(std::move(items));
  }
  return load_through_temporary(importers::model_json(im.draft).dump() + "\n", path + " (as imported)",
                                [](const std::string& tmp) { return scenario::load_model(tmp); });
}

void add_import_command(CLI::App& app, const Options& o, CommandList& commands) {
  auto* cmd = app.add_subcommand("import",
                                 "Scenario JSON from a Megatron-LM command line, a DeepSpeed or TorchTitan config; "
                                 "model JSON from a Hugging Face config.json");
  auto a = std::make_shared<ImportArgs>();
  cmd->add_option("kind", a->kind, "megatron | deepspeed | torchtitan | hf-config")
      ->required()
      ->check(CLI::IsMember({"megatron", "deepspeed", "torchtitan", "hf-config"}));
  cmd->add_option("files", a->files, "Launch script / config file(s); several are merged")->required();
  cmd->add_option("--model", a->model, "The model: a built-in name or a trainsim model file")->type_name("NAME|FILE");
  cmd->add_option("--model-config", a->model_config, "The model from a Hugging Face config.json (inlined)")
      ->type_name("FILE");
  cmd->add_option("--hardware", a->hardware, "Hardware profile: a built-in name or a file")->type_name("NAME|FILE");
  cmd->add_option("--gpus", a->gpus, "Cluster size in GPUs")->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--tokens", a->tokens, "Tokens to train, e.g. 1T")->type_name("COUNT");
  cmd->add_option("--name", a->name, "Scenario name (hf-config: model name); default: the first file's name");
  cmd->add_option("-o,--output", a->output, "Write to FILE (atomically) instead of stdout")->type_name("FILE");
  cmd->add_flag("--partial", a->partial, "Write the draft even when fields are unresolved (for editing by hand)");
  cmd->add_option("--args", a->args,
                  "megatron: the launch script's arguments, as typed after its name ($1, $2, ...; quotes group; "
                  "\"\" for none)")
      ->type_name("\"WORD...\"");
  cmd->add_option("--env", a->env, "megatron: a variable the launch script is run with (repeatable)")
      ->type_name("NAME=VALUE");
  commands.push_back({cmd, [a, &o](std::ostream& out, std::ostream& err) { return import_command(*a, o, out, err); }});
}

}  // namespace sim::cli
