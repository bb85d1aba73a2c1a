// sim/importers/megatron.cpp: a Megatron-LM launch command line into scenario fields.
//
// Flag names and defaults follow megatron/training/arguments.py (Megatron-LM core_r0.9+): parallel sizes default to
// 1, --global-batch-size to micro-batch-size x data-parallel size, --ffn-hidden-size to 4 x hidden (with --swiglu:
// int(4 x hidden x 2/3 / 64) x 64), the MLP to GeLU, biases on, LayerNorm, learned absolute positions, tied input and
// output embeddings, fp32 parameters. Those defaults are recorded as weak fields: an explicit value from another input
// (a Hugging Face config) wins, with a note.
#include "sim/importers/importers.hpp"
#include "sim/importers/megatron_args.hpp"
#include "sim/importers/shell.hpp"
#include "sim/importers/shell_relevance.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace sim::importers {
namespace {

using base::ConfigError;
using namespace megatron;

// Commands whose words are not a training job's flags.
bool not_a_job(const std::string& command) {
  static const std::set<std::string, std::less<>> kSkip = {
      "echo",   "printf", "mkdir",  "cd",    "rm",       "cp",         "mv",       "ls",       "tee",
      "sleep",  "set",    "wait",   "trap",  "hostname", "nvidia-smi", "scontrol", "pip",      "git",
      "wget",   "curl",   "chmod",  "touch", "ln",       "date",       "source",   ".",        "cat",
      "module", "conda",  "ulimit", "shift", "read",     "mount",      "dirname",  "basename", "head"};
  const auto slash = command.rfind('/');
  return kSkip.contains(slash == std::string::npos ? command : command.substr(slash + 1));
}

class MegatronImport {
 public:
  MegatronImport(const std::string& origin, const Draft& known, const ShellInvocation& invocation)
      : origin_(origin), known_(known), invocation_(invocation) {}

  Import run(std::string_view text) {
    const FlagFilter matters = [](std::string_view flag) {
      std::string n(flag);
      std::replace(n.begin(), n.end(), '_', '-');
      return find_spec(n) != nullptr || n == "nodes" || n == "ntasks-per-node" || n == "gpus-per-node" || n == "gres";
    };
    const ShellScript script = read_shell(text, origin_, matters, invocation_);
    for (const auto& n : script.notes)
      out_.notes.push_back({origin_, n});
    // A file of flags alone is an argument list, read whole; in a script, a line of flags is a command of its own.
    const bool argument_list = std::all_of(script.commands.begin(), script.commands.end(), [](const ShellCommand& c) {
      return c.words.empty() || c.words.front().text.starts_with("-");
    });
    for (std::size_t c = 0; c < script.commands.size(); ++c) {
      const auto& cmd = script.commands[c];
      if (cmd.words.empty() || not_a_job(cmd.words.front().text)) continue;
      if (!argument_list && cmd.words.front().text.starts_with("-")) {
        // A line of flags in a script is a command bash runs and fails: below a comment that ended the launch command
        // (`# --flag \`, a user trial) or a line without its backslash (a review); the job never gets them.
        std::string shown;
        for (const auto& w : cmd.words)
          shown += (shown.empty() ? "" : " ") + w.text;
        out_.ignored.push_back(
            {where(cmd.line),
             shown + ": not an argument of the command above: " +
                 (cmd.after_comment > 0 ? "the comment on line " + std::to_string(cmd.after_comment) + " ends that "
                                        : std::string("the line before ends without a backslash, which ends the ")) +
                 "command, so bash runs this line as a command of its own, which fails"});
        continue;
      }
      std::size_t start = 0;
      if (cmd.words.front().text == "#SBATCH" || cmd.words.front().text == "srun" || cmd.words.front().text == "sbatch")
        start = slurm(cmd);
      read_flags(cmd.words, start, c);
    }
    // A file of variables and no command (the model arguments a launch script sources): the flags the variables hold
    // are the argument list, in the order they were assigned.
    if (flags_.empty() && out_.ignored.empty() && errors_.empty())
      for (const auto& [name, words] : script.values)
        if (std::any_of(words.begin(), words.end(), [](const ShellWord& w) { return w.text.starts_with("--"); })) {
          out_.notes.push_back({origin_, "no command runs the flags of " + name + ": read as the argument list"});
          read_flags(words, 0, script.commands.size());
        }
    if (flags_.empty() && script.exit_line > 0)
      throw ConfigError(origin_, "line " + std::to_string(script.exit_line),
                        script.exit_reason + ", before any Megatron-LM command");
    // The job's environment: the script's variables, and what the launching command is given before its name
    // (NCCL_NVLS_ENABLE=0 torchrun ...).
    auto env = script.variables;
    for (const auto& cmd : script.commands)
      if (!cmd.words.empty() && !not_a_job(cmd.words.front().text))
        for (const auto& [name, value] : cmd.env)
          env[name] = value;
    const bool world_size = world_size_from_env(env);
    nvls_from_env(env);
    if (flags_.empty() && out_.ignored.empty() && !world_size && errors_.empty() && !slurm_nodes_)
      throw ConfigError(origin_, "",
                        "no Megatron-LM flags found; expected a launch command line or argument list such as "
                        "\"torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 2 ...\"");
    apply();
    if (!errors_.empty()) throw ConfigError(errors_);
    // A framework default never stands in for a value the file gives but cannot be read (a tester's trial: --partial
    // drafts had tp 1 and Megatron-LM's ffn default where the script's flags were unresolved).
    for (const auto& u : out_.unresolved)
      if (const Field* f = out_.draft.find(u.path); !u.path.empty() && f && f->weak) out_.draft.erase_field(u.path);
    return std::move(out_);
  }

 private:
  std::string where(int line) const { return origin_ + ":" + std::to_string(line); }
  std::string where(const Given& g) const { return where(g.line) + " " + g.flag; }
  void error(int line, const std::string& message) {
    errors_.push_back({origin_, "line " + std::to_string(line), message});
  }

  /// Megatron-LM's entry points for models that are not decoder-only transformers: an error naming the script.
  void refuse_entry_point(const ShellWord& w) {
    if (auto why = other_entry_point(w.text)) error(w.line, *why);
  }

  /// Slurm's node count and tasks or GPUs per node (#SBATCH directives, srun and sbatch options); returns the index of
  /// the first word after the options (the program srun runs).
  std::size_t slurm(const ShellCommand& cmd) {
    const auto& w = cmd.words;
    std::size_t i = 1;
    for (; i < w.size(); ++i) {
      std::string flag = w[i].text, value;
      if (!flag.starts_with("-")) break;
      if (const auto eq = flag.find('='); eq != std::string::npos) {
        value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
      } else if (slurm_option_takes_value(flag) && i + 1 < w.size()) {
        value = w[++i].text;
      }
      const bool unknown = w[i].unknown;
      // Slurm's precedence: srun's options over sbatch's command line over #SBATCH directives (the later of equals);
      // a directive read after `sbatch --nodes=4 <<EOF` had replaced it (a tester's trial).
      const int rank = w.front().text == "srun" ? 2 : w.front().text == "sbatch" ? 1 : 0;
      auto count = [&](std::optional<Given>& into, int& into_rank) {
        if (into && rank < into_rank) return;
        if (unknown || !parse_integer(value) || *parse_integer(value) < 1) {
          out_.unresolved.push_back({where(w[i].line),
                                     flag + " \"" + value + "\" is not a number trainsim can read; give --gpus N",
                                     "cluster.gpus"});
          return;
        }
        into = Given{flag, value, w[i].line};
        into_rank = rank;
      };
      if (flag == "-N" || flag == "--nodes") count(slurm_nodes_, slurm_nodes_rank_);
      if (flag == "--ntasks-per-node" || flag == "--gpus-per-node") count(slurm_per_node_, slurm_per_node_rank_);
      if (flag == "--gres" && value.starts_with("gpu:")) {
        value = value.substr(value.rfind(':') + 1);
        count(slurm_per_node_, slurm_per_node_rank_);
      }
    }
    return w.front().text == "#SBATCH" ? w.size() : i;
  }

  void read_flags(const std::vector<ShellWord>& words, std::size_t start, std::size_t command) {
    script_seen_ = false;         // per command: an earlier command's script says nothing of this launcher's words
    bool after_operator = false;  // past a redirection or control operator left in an eval'd string
    for (std::size_t i = start; i < words.size(); ++i) {
      const ShellWord& w = words[i];
      refuse_entry_point(w);
      // torchrun (or python -m torch.distributed.run) launches the command, or DeepSpeed's runner, which without
      // --num_nodes or a host list runs on the local node ("Unable to find hostfile, will proceed with training with
      // local resources only"); a word they cannot read before the script may hold the node count.
      if (i == start && (w.text == "torchrun" || w.text.ends_with("/torchrun"))) torchrun_line_ = w.line;
      if (i > start && w.text == "torch.distributed.run" && words[i - 1].text == "-m") torchrun_line_ = w.line;
      if (i == start && (w.text == "deepspeed" || w.text.ends_with("/deepspeed")))
        torchrun_line_ = w.line, launcher_ = "deepspeed without --num_nodes or a host list";
      static const std::set<std::string_view> kHostLists{"--hostfile", "-H", "--include", "-i", "--exclude", "-e"};
      if (torchrun_line_ && !script_seen_ && kHostLists.count(w.text.substr(0, w.text.find('='))) != 0)
        launcher_unread_ = true;
      if (w.unknown && w.text.starts_with("$") && torchrun_line_ && !script_seen_) launcher_unread_ = true;
      if (w.text.ends_with(".py")) script_seen_ = true;
      if (w.unknown && w.text.starts_with("$")) {
        // Set in a loop or an if not run, or under an operator not evaluated, it may hold the job's flags: refused.
        if (const auto why = shell::unread_flags(w))
          error(w.line, *why);
        else
          out_.ignored.push_back({where(w.line), shell::unexpanded(w)});
        continue;
      }
      if (!w.text.starts_with("--") || w.text.size() == 2) {  // the command, the script, a positional word
        after_operator = after_operator || (script_seen_ && shell_operator_word(w.text));
        if (script_seen_ && !after_operator && !w.text.ends_with(".py"))
          if (const auto why = stray_word(w.text)) error(w.line, *why);
        continue;
      }
      Given g{w.text, "", w.line, command};
      std::optional<std::string> inline_value;
      if (const auto eq = w.text.find('='); eq != std::string::npos) {
        g.flag = w.text.substr(0, eq);
        inline_value = w.text.substr(eq + 1);
      }
      std::string norm = g.flag.substr(2);
      std::replace(norm.begin(), norm.end(), '_', '-');
      const FlagSpec* spec = find_spec(norm);
      auto is_value = [&](std::size_t k) {
        return k < words.size() && !shell_operator_word(words[k].text) &&
               (!words[k].text.starts_with("-") || parse_integer(words[k].text) ||
                (words[k].text.size() > 1 && words[k].text[1] == '.'));
      };
      bool unknown = w.unknown;
      std::vector<std::string> defaults = w.defaults;
      if (spec && spec->kind == Kind::Bool) {
        if (inline_value) {
          error(w.line, g.flag + " takes no value (found \"=" + *inline_value + "\"); write " + g.flag + " alone");
          continue;
        }
        // `--use-distributed-optimizer false`: argparse's store_true takes no value and refuses the word as an
        // unrecognized argument; it was dropped, leaving the flag on (found by a user trial).
        if (const std::size_t k = i + 1; script_seen_ && k < words.size()) {
          static const std::set<std::string_view> kTruthWords{"true", "false", "True", "False", "0", "1", "yes", "no"};
          if (const std::string& v = words[k].text; kTruthWords.count(v) != 0) {
            error(w.line, g.flag + " " + v + ": a switch takes no value (argparse refuses \"" + v + "\"); write " +
                              g.flag + " alone to turn it on, or leave it out");
            ++i;
            continue;
          }
        }
      } else if (inline_value) {
        g.value = *inline_value;
      } else if (is_value(i + 1)) {
        // A flag trainsim has no spec for may take many values (Megatron-LM's --data-path 0.5 A 0.5 B, nargs '*'):
        // every word up to the next flag is its value, not a stray word.
        const int n = spec ? spec->nargs : -1;
        for (int k = 0; (n < 0 || k < n) && is_value(i + 1); ++k) {
          const ShellWord& v = words[++i];
          g.value += (k > 0 ? " " : "") + v.text;
          unknown = unknown || v.unknown;
          defaults.insert(defaults.end(), v.defaults.begin(), v.defaults.end());
        }
      } else if (spec) {
        error(w.line, g.flag + " needs a value; " +
                          (spec->kind == Kind::Int ? "write e.g. " + g.flag + " 8"
                           : spec->choices.empty() ? std::string("give one")
                                                   : "accepted: " + join(spec->choices)));
        continue;
      }
      if (!spec) {
        const std::string shown = g.flag + (g.value.empty() ? "" : " " + g.value);
        std::string why;
        switch (classify_unread(norm, why)) {
          case Unread::NoEffect:
            out_.ignored.push_back({where(w.line), shown + ": no effect on time or memory"});
            break;
          case Unread::NotModelled:
            out_.not_modelled.push_back({where(w.line), shown + ": " + why});
            break;
          case Unread::ShapesModel:
            error(w.line, shown + ": " + why + "; not imported");
            break;
          case Unread::Unknown:
            out_.not_modelled.push_back({where(w.line), shown + ": " + why});
            break;
        }
        continue;
      }
      if (unknown && !spec->presence_only) {
        const std::string_view name = spec->name;
        if (name == "nnodes" || name == "num-nodes") nnodes_unread_ = true;  // no one-node default then
        out_.unresolved.push_back({where(g), shell::unknown_value_reason(g.value, defaults), settles(*spec)});
        continue;
      }
      if (!spec->presence_only)  // a value nothing reads: no note on where it came from
        for (const auto& d : defaults)
          out_.notes.push_back({where(g), g.value + " from " + d +
                                              (given_by_invocation(d) ? ""
                                                                      : "; the script run elsewhere may give another "
                                                                        "value")});
      if (auto it = flags_.find(norm); it != flags_.end() && it->second.value != g.value) {
        if (it->second.command != command) {
          error(g.line, g.flag + " " + g.value + " disagrees with " + it->second.flag + " " + it->second.value +
                            " of another command (line " + std::to_string(it->second.line) +
                            "); trainsim reads one training job: keep the command that launches it");
        } else {
          out_.notes.push_back({where(g), "given again: " + g.value + " replaces " + it->second.value + " (line " +
                                              std::to_string(it->second.line) + "), as argparse keeps the last"});
        }
      }
      flags_[norm] = g;
    }
  }

  /// WORLD_SIZE (or NNODES x GPUS_PER_NODE) assigned in the script, as torchrun's environment.
  bool world_size_from_env(const std::map<std::string, std::string>& vars) {
    if (auto it = vars.find("WORLD_SIZE"); it != vars.end()) {
      // torchrun sets its workers' WORLD_SIZE from its own flags, and platforms give the launching shell their own
      // meaning (PAI-DLC's WORLD_SIZE counts nodes): a launcher's --nnodes x --nproc-per-node wins over it.
      if (auto n = parse_integer(it->second); n && *n > 0) {
        out_.draft.put("cluster.gpus", *n, origin_ + " WORLD_SIZE", true);
        return true;
      }
      out_.unresolved.push_back({origin_ + " WORLD_SIZE",
                                 "\"" + it->second + "\" is not a number trainsim can evaluate; give --gpus N",
                                 "cluster.gpus"});
    }
    return false;
  }

  /// NCCL_NVLS_ENABLE=0 in the script's environment: NCCL's NVLink SHARP algorithms off (NVIDIA's DGX Cloud recipes
  /// set it to save memory); any other value leaves NCCL's default.
  void nvls_from_env(const std::map<std::string, std::string>& vars) {
    if (auto it = vars.find("NCCL_NVLS_ENABLE"); it != vars.end() && it->second == "0")
      out_.draft.put("cluster.network.nvls", false, origin_ + " NCCL_NVLS_ENABLE");
    // NVTE_FUSED_ATTN=0: Transformer Engine's cuDNN attention off, its flash-attn backend instead (FlashAttention-2, or
    // 3 where that package is installed): which one the file does not say.
    if (auto it = vars.find("NVTE_FUSED_ATTN"); it != vars.end() && it->second == "0")
      out_.notes.push_back({origin_ + " NVTE_FUSED_ATTN=0",
                            "Transformer Engine runs flash-attn, not its cuDNN attention; trainsim's "
                            "training.attention_kernel stays \"fused\" (FlashAttention-3 / cuDNN class): set "
                            "\"flash2\" if the job has FlashAttention-2"});
  }

  std::optional<std::int64_t> positive(const std::string& flag) {
    auto it = flags_.find(flag);
    if (it == flags_.end()) return std::nullopt;
    const Given& g = it->second;
    auto n = python_int(g.value);
    const FlagSpec* spec = find_spec(flag);
    if (!n || *n < 1 || *n > (spec ? spec->max : 1'000'000'000)) {
      const std::string construct = shell::unevaluated_construct(g.value);
      const bool sum = g.value.find_first_of("+-*/") != std::string::npos &&
                       g.value.find_first_not_of("0123456789+-*/() ") == std::string::npos;
      error(g.line, g.flag + ": \"" + g.value + "\" is not a positive integer" +
                        (!construct.empty() ? " (it uses " + construct + ")"
                         : sum ? " (an arithmetic expression as text: declare -i is not evaluated; write $((...)))"
                               : "") +
                        "; write e.g. " + g.flag + " 8");
      flags_.erase(it);
      return std::nullopt;
    }
    return n;
  }

  const Given* given(const std::string& flag) const {
    auto it = flags_.find(flag);
    return it == flags_.end() ? nullptr : &it->second;
  }

  /// A value from this file, else from the other inputs.
  /// A command-line option (origin "--gpus") wins over the file: it overrides the file's value.
  std::optional<std::int64_t> lookup(std::string_view path) const {
    if (const Field* f = known_.find(path); f && f->origin.starts_with("--")) return known_.integer(path);
    if (auto v = out_.draft.integer(path)) return v;
    return known_.integer(path);
  }

  void apply() {
    Draft& d = out_.draft;
    // Values checked first: integers positive, choices among the accepted ones.
    if (!given("nnodes") && given("num-nodes")) flags_["nnodes"] = *given("num-nodes");  // deepspeed's launcher
    const bool nnodes_given = given("nnodes") != nullptr;  // read or not: its value is the cluster's, not a default
    if (const Given* nn = given("nnodes"); nn && nn->value.find(':') != std::string::npos) {
      out_.unresolved.push_back({where(*nn), nn->value + " is an elastic range; give --gpus N", "cluster.gpus"});
      flags_.erase("nnodes");
    } else {
      nnodes_ = positive("nnodes");
    }
    for (const auto& spec : flag_specs()) {
      if (spec.kind == Kind::Int && spec.nargs == 1 && std::string_view(spec.name) != "nnodes" &&
          std::string_view(spec.name) != "num-nodes") {
        if (auto n = positive(spec.name); n && spec.path) d.put(spec.path, *n, where(flags_.at(spec.name)));
      } else if (spec.kind == Kind::Choice) {
        if (const Given* g = given(spec.name);
            g && std::none_of(spec.choices.begin(), spec.choices.end(), [&](const char* c) { return g->value == c; })) {
          error(g->line, g->flag + ": \"" + g->value + "\" is not accepted; accepted: " + join(spec.choices));
          flags_.erase(spec.name);
        }
      }
    }
    if (!d.has("parallel.tp")) d.put("parallel.tp", std::int64_t{1}, origin_ + " (Megatron-LM default)", true);
    if (!d.has("parallel.pp")) d.put("parallel.pp", std::int64_t{1}, origin_ + " (Megatron-LM default)", true);

    // Cluster size: torchrun's --nnodes x --nproc-per-node.
    if (const auto per = d.integer("cluster.gpus_per_node"); nnodes_ && per)
      d.put("cluster.gpus", *nnodes_ * *per, where(*given("nnodes")) + " x --nproc-per-node");
    else if (nnodes_)
      out_.unresolved.push_back(
          {where(*given("nnodes")), "needs --nproc-per-node to count GPUs; give --gpus N", "cluster.gpus"});

    // torchrun without --nnodes runs one node (its default "1:1"), unless a word it could not read may hold it; a
    // --nnodes whose value could not be read (an undefined variable, an elastic range) is left unresolved.
    if (!nnodes_given && !nnodes_unread_ && !nnodes_ && !slurm_nodes_ && torchrun_line_ && !launcher_unread_ &&
        !d.has("cluster.gpus"))
      if (const auto per = d.integer("cluster.gpus_per_node"))
        d.put("cluster.gpus", *per, where(*torchrun_line_) + " " + launcher_ + " (one node, its default)", true);

    if (!nnodes_ && slurm_nodes_) {  // srun / #SBATCH: one task per GPU (Megatron-LM's Slurm launches)
      const auto nodes = *parse_integer(slurm_nodes_->value);
      if (const auto per = d.integer("cluster.gpus_per_node")) {
        d.put("cluster.gpus", nodes * *per, where(*slurm_nodes_) + " x --nproc-per-node");
      } else if (slurm_per_node_) {
        d.put("cluster.gpus_per_node", *parse_integer(slurm_per_node_->value), where(*slurm_per_node_));
        d.put("cluster.gpus", nodes * *parse_integer(slurm_per_node_->value),
              where(*slurm_nodes_) + " x " + slurm_per_node_->flag + " (one process per GPU)");
      } else {
        out_.unresolved.push_back({where(*slurm_nodes_),
                                   "needs --ntasks-per-node or --gpus-per-node to count GPUs; "
                                   "give --gpus N",
                                   "cluster.gpus"});
      }
    }

    if (given("sequence-parallel")) d.put("parallel.sequence_parallel", true, where(*given("sequence-parallel")));
    megatron::apply_sharding_flags(context());
    if (given("use-distributed-optimizer"))
      d.put("parallel.distributed_optimizer", true, where(*given("use-distributed-optimizer")));

    // Recomputation: --recompute-activations is selective; --recompute-granularity says which.
    if (const Given* g = given("recompute-granularity")) {
      d.put("parallel.recompute", g->value, where(*g));
    } else if (const Given* a = given("recompute-activations")) {
      d.put("parallel.recompute", std::string("selective"), where(*a));
    } else if (const Given* c = given("checkpoint-activations")) {  // the pre-2022 spelling of full recomputation
      d.put("parallel.recompute", std::string("full"), where(*c) + " (full recomputation, as Megatron-LM maps it)");
    }
    megatron::apply_training_features(context());

    // Precision: fp8 (with bf16 or fp16 for what fp8 does not cover) > bf16 > fp16 > fp32 parameters.
    if (const Given* g = given("fp8-format")) {
      d.put("training.dtype", std::string("fp8"), where(*g));
      if (const Given* r = given("fp8-recipe")) d.put("training.fp8_recipe", r->value, where(*r));
    } else if (const Given* b = given("bf16")) {
      d.put("training.dtype", std::string("bf16"), where(*b));
    } else if (const Given* h = given("fp16")) {
      d.put("training.dtype", std::string("fp16"), where(*h));
    } else {
      d.put("training.dtype", std::string("fp32"), origin_ + " (Megatron-LM default without --bf16/--fp16)", true);
    }

    apply_model();

    megatron::apply_virtual_pipeline(context());

    // Global batch: Megatron-LM's default is micro-batch x data-parallel size.
    // Not from the layout's defaults where the file gives a batch, a layout size or a micro-batch it cannot read.
    static constexpr const char* kLayout[] = {"parallel.global_batch", "parallel.tp",          "parallel.pp",
                                              "parallel.cp",           "parallel.micro_batch", "cluster.gpus"};
    const auto unread = [this](std::string_view path) {
      return std::any_of(out_.unresolved.begin(), out_.unresolved.end(),
                         [&](const Finding& u) { return u.path == path; });
    };
    if (!d.has("parallel.global_batch") &&
        !std::any_of(std::begin(kLayout), std::end(kLayout), [&](const char* p) { return unread(p); })) {
      const auto gpus = lookup("cluster.gpus");
      const auto tp = lookup("parallel.tp"), pp = lookup("parallel.pp");
      const auto cp = lookup("parallel.cp").value_or(1);
      const auto mb = lookup("parallel.micro_batch").value_or(1);
      if (gpus && tp && pp && *gpus % (*tp * *pp * cp) == 0) {
        d.put("parallel.global_batch", mb * (*gpus / (*tp * *pp * cp)),
              origin_ + " (Megatron-LM default without --global-batch-size: micro batch x data-parallel size)", true);
        out_.notes.push_back({origin_, "no --global-batch-size: micro batch x data-parallel size, as Megatron-LM"});
      }
    }

    // Training length: iterations x global batch x sequence length, or samples x sequence length. With a batch
    // ramp-up, the iterations of the ramp consume fewer samples (rampup_samples below).
    const auto seq = lookup("training.seq_len");
    const auto gbs = lookup("parallel.global_batch");
    const auto ramp = rampup(gbs);
    auto tokens = [&](std::int64_t samples, const std::string& origin) {
      std::int64_t t = 0;
      if (__builtin_mul_overflow(samples, *seq, &t)) {
        error(0, origin + ": more than 2^63 tokens");
        return;
      }
      d.put("training.tokens", t, origin);
    };
    if (const Given* g = given("train-iters"); g && python_int(g->value)) {
      const std::int64_t iters = *python_int(g->value);
      std::int64_t samples = 0;
      if (!seq || !gbs) {
        out_.unresolved.push_back(
            {where(*g), "needs --global-batch-size and --seq-length to count tokens", "training.tokens"});
      } else if (ramp && iters > ramp->first) {
        if (!__builtin_mul_overflow(iters - ramp->first, *gbs, &samples) &&
            !__builtin_add_overflow(samples, ramp->second, &samples))
          tokens(samples, where(*g) + " (ramp-up samples + the rest at the global batch) x seq length");
      } else if (ramp) {
        error(g->line, g->flag + " " + g->value + " ends inside the batch ramp-up (" + std::to_string(ramp->first) +
                           " iterations); trainsim simulates the final global batch");
      } else if (!__builtin_mul_overflow(iters, *gbs, &samples)) {
        tokens(samples, where(*g) + " x global batch x seq length");
      }
    } else if (const Given* smp = given("train-samples"); smp && python_int(smp->value)) {
      if (seq) {
        tokens(*python_int(smp->value), where(*smp) + " x seq length");
      } else {
        out_.unresolved.push_back({where(*smp), "needs --seq-length to count tokens", "training.tokens"});
      }
    }
    // Megatron-DeepSpeed's --train-tokens: training stops at whichever of its iteration, sample and token limits comes
    // first (its arguments.py: "Total number of tokens to train over all training runs"). Found by a user trial: its
    // GPT examples set --train-samples far past --train-tokens, and the run came out twice as long.
    if (const Given* tt = given("train-tokens"); tt && python_int(tt->value)) {
      const std::int64_t cap = *python_int(tt->value);
      const auto have = d.integer("training.tokens");
      if (!have || cap < *have)
        d.override_value(
            "training.tokens", cap,
            where(*tt) + (have ? " (before the sample or iteration limit: the first limit ends training)" : ""));
    }
  }

  /// --rampup-batch-size START INCREMENT SAMPLES: the batch grows from START by INCREMENT over SAMPLES samples
  /// (megatron/core/num_microbatches_calculator.py, RampupBatchsizeNumMicroBatchesCalculator: the batch is
  /// START + floor(consumed / (SAMPLES / increments)) x INCREMENT until it reaches the global batch). Returns the
  /// iterations and samples of the ramp.
  std::optional<std::pair<std::int64_t, std::int64_t>> rampup(std::optional<std::int64_t> gbs) {
    const Given* g = given("rampup-batch-size");
    if (!g) return std::nullopt;
    std::vector<std::int64_t> v;
    for (std::size_t a = 0, b = 0; a <= g->value.size(); a = b + 1) {
      b = std::min(g->value.find(' ', a), g->value.size());
      if (auto n = python_int(g->value.substr(a, b - a)); n && *n > 0) v.push_back(*n);
    }
    if (v.size() != 3 || !gbs || v[0] > *gbs || (*gbs - v[0]) % v[1] != 0) {
      error(g->line, g->flag + " " + g->value + ": expected START INCREMENT SAMPLES, positive, with the global batch " +
                         (gbs ? std::to_string(*gbs) : std::string("(--global-batch-size)")) +
                         " - START a multiple of INCREMENT, as Megatron-LM requires");
      return std::nullopt;
    }
    const std::int64_t increments = (*gbs - v[0]) / v[1];
    if (increments == 0 || v[2] / v[0] > 100'000'000) {
      error(g->line, g->flag + " " + g->value + ": a ramp of more than 10^8 iterations (or none) is not read");
      return std::nullopt;
    }
    const double per_increment = static_cast<double>(v[2]) / static_cast<double>(increments);
    std::int64_t consumed = 0, iters = 0;
    while (consumed <= v[2]) {
      const auto step = std::min<std::int64_t>(
          v[0] + static_cast<std::int64_t>(static_cast<double>(consumed) / per_increment) * v[1], *gbs);
      consumed += step;
      ++iters;
    }
    out_.notes.push_back({where(*g), "batch ramp-up over " + std::to_string(consumed) + " samples (" +
                                         std::to_string(iters) +
                                         " iterations) counted in the tokens; the step is "
                                         "simulated at the final global batch"});
    return std::pair{iters, consumed};
  }

  megatron::Context context() {
    return {origin_, [this](const std::string& f) { return given(f); },
            [this](std::string_view p) { return lookup(p); }, out_,
            [this](int line, const std::string& m) { error(line, m); }};
  }

  /// The architecture flags. Defaults are recorded only when the file describes a model at all.
  void apply_model() { megatron::apply_model_flags(context()); }

  /// A value the script took from the arguments or environment it was given, not from one of its own defaults.
  bool given_by_invocation(const std::string& d) const {
    return d.ends_with("(" + invocation_.args_origin + ")") || d.ends_with("(" + invocation_.env_origin + ")");
  }

  const std::string& origin_;
  const Draft& known_;
  const ShellInvocation& invocation_;
  Import out_;
  std::map<std::string, Given> flags_;
  std::optional<Given> slurm_nodes_;
  std::optional<Given> slurm_per_node_;
  int slurm_nodes_rank_ = 0, slurm_per_node_rank_ = 0;  // where each came from (slurm(): 0 #SBATCH, 1 sbatch, 2 srun)
  std::vector<base::Diagnostic> errors_;
  std::optional<std::int64_t> nnodes_;
  std::optional<int> torchrun_line_;  // where torchrun (or DeepSpeed's runner) launches the job
  std::string launcher_ = "torchrun without --nnodes";
  bool launcher_unread_ = false;
  bool nnodes_unread_ = false;  // --nnodes given with a value the file does not define      // a word before the script
                                // the file does not define (it may hold --nnodes)
  bool script_seen_ = false;
};

}  // namespace

Import import_megatron_text(std::string_view text, const std::string& origin, const Draft& known,
                            const ShellInvocation& invocation) {
  return MegatronImport(origin, known, invocation).run(text);
}

Import import_megatron(const std::string& path, const Draft& known, const ShellInvocation& invocation) {
  return import_megatron_text(read_input_file(path), path, known, invocation);
}

}  // namespace sim::importers
