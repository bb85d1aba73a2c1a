// sim/importers/megatron.cpp: a Megatron-LM launch command line into scenario fields.
//
// Flag names and defaults follow megatron/training/arguments.py (Megatron-LM core_r0.9+): parallel sizes default to
// 1, --global-batch-size to micro-batch-size x data-parallel size, --ffn-hidden-size to 4 x hidden (with --swiglu:
// int(4 x hidden x 2/3 / 64) x 64), the MLP to GeLU, biases on, LayerNorm, learned absolute positions, tied input and
// output embeddings, fp32 parameters. Those defaults are recorded as weak fields: an explicit value from another input
// (a Hugging Face config) wins, with a note.
#include "sim/importers/importers.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace sim::importers {
namespace {

using base::ConfigError;

// ---- shell words ------------------------------------------------------------------------------------------------

struct Word {
  std::string text;         // after quote removal and expansion
  int line = 0;             // where the word starts
  bool unexpanded = false;  // holds a $NAME, ${...} or $(...) that the file does not define
  bool assignment = false;  // NAME=value
};

bool name_char(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

/// Splits a shell script fragment into words the way bash would for a simple command list: backslash-newline
/// continuations, # comments, '...' and "..." quotes, unquoted ; & | ( ) as separators, NAME=value assignments
/// (recorded and expanded in later words), $NAME / ${NAME} / ${NAME:-default} expansion. Command substitution and
/// arithmetic are not evaluated: words holding them are marked unexpanded.
class Lexer {
 public:
  Lexer(std::string_view text, const std::string& origin) : s_(text), origin_(origin) {}

  std::vector<Word> words() {
    std::vector<Word> out;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
        i_ += s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n' ? 3 : 2;
        ++line_;
      } else if (c == '\n') {
        ++line_;
        ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n')
          ++i_;
      } else {
        out.push_back(word());
      }
    }
    return out;
  }

  const std::map<std::string, std::string>& variables() const { return vars_; }

 private:
  Word word() {
    Word w;
    w.line = line_;
    std::size_t name_end = 0;  // length of a leading NAME= (an assignment), else 0
    bool quoted = false;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')')
        break;
      if (c == '\\') {
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '\n') break;  // continuation ends the word
        if (i_ + 1 < s_.size()) w.text += s_[i_ + 1];
        i_ += 2;
      } else if (c == '\'') {
        quoted = true;
        const auto end = s_.find('\'', i_ + 1);
        if (end == std::string_view::npos) unterminated('\'', w.line);
        w.text += s_.substr(i_ + 1, end - i_ - 1);
        count_lines(i_ + 1, end);
        i_ = end + 1;
      } else if (c == '"') {
        quoted = true;
        const int start_line = line_;
        ++i_;
        while (true) {
          if (i_ >= s_.size()) unterminated('"', start_line);
          const char d = s_[i_];
          if (d == '"') break;
          if (d == '\\' && i_ + 1 < s_.size() &&
              std::string_view("\"\\$`\n").find(s_[i_ + 1]) != std::string_view::npos) {
            if (s_[i_ + 1] == '\n') {
              ++line_;
            } else {
              w.text += s_[i_ + 1];
            }
            i_ += 2;
          } else if (d == '$') {
            expand(w);
          } else {
            if (d == '\n') ++line_;
            w.text += d;
            ++i_;
          }
        }
        ++i_;
      } else if (c == '$') {
        expand(w);
      } else {
        if (c == '=' && !quoted && name_end == 0 && !w.text.empty() && name_char(w.text[0], true) &&
            std::all_of(w.text.begin(), w.text.end(), [](char x) { return name_char(x, false); }))
          name_end = w.text.size() + 1;
        w.text += c;
        ++i_;
      }
    }
    if (name_end > 0) {
      w.assignment = true;
      vars_[w.text.substr(0, name_end - 1)] = w.text.substr(name_end);
    }
    return w;
  }

  /// Expands the $... at i_ into `w` (or keeps it literally, marking the word unexpanded).
  void expand(Word& w) {
    const std::size_t start = i_;
    ++i_;                                   // '$'
    if (i_ < s_.size() && s_[i_] == '(') {  // $(...) and $((...)): not evaluated
      int depth = 0;
      while (i_ < s_.size()) {
        if (s_[i_] == '(') ++depth;
        if (s_[i_] == ')' && --depth == 0) break;
        if (s_[i_] == '\n') ++line_;
        ++i_;
      }
      if (i_ >= s_.size()) unterminated('(', w.line);
      ++i_;
      w.text += s_.substr(start, i_ - start);
      w.unexpanded = true;
      return;
    }
    if (i_ < s_.size() && s_[i_] == '{') {
      const auto end = s_.find('}', i_);
      if (end == std::string_view::npos) unterminated('{', w.line);
      const std::string_view inner = s_.substr(i_ + 1, end - i_ - 1);
      i_ = end + 1;
      const auto dflt = inner.find(":-");
      const std::string name(inner.substr(0, dflt));
      if (auto it = vars_.find(name); it != vars_.end() && !it->second.empty()) {
        w.text += it->second;
      } else if (dflt != std::string_view::npos) {
        w.text += inner.substr(dflt + 2);
      } else {
        w.text += s_.substr(start, i_ - start);
        w.unexpanded = true;
      }
      return;
    }
    std::size_t end = i_;
    while (end < s_.size() && name_char(s_[end], end == i_))
      ++end;
    if (end == i_) {  // a lone '$' or a special parameter ($@, $1): kept literally
      if (i_ < s_.size() && s_[i_] != '"') {
        w.text += s_.substr(start, 2);
        w.unexpanded = true;
        ++i_;
      } else {
        w.text += '$';
      }
      return;
    }
    const std::string name(s_.substr(i_, end - i_));
    i_ = end;
    if (auto it = vars_.find(name); it != vars_.end()) {
      w.text += it->second;
    } else {
      w.text += "$" + name;
      w.unexpanded = true;
    }
  }

  void count_lines(std::size_t from, std::size_t to) {
    line_ += static_cast<int>(
        std::count(s_.begin() + static_cast<std::ptrdiff_t>(from), s_.begin() + static_cast<std::ptrdiff_t>(to), '\n'));
  }

  [[noreturn]] void unterminated(char what, int line) const {
    const std::string close = what == '(' ? ")" : what == '{' ? "}" : std::string(1, what);
    throw ConfigError(origin_, "line " + std::to_string(line),
                      std::string("unterminated ") +
                          (what == '('   ? "$("
                           : what == '{' ? "${"
                                         : std::string(1, what)) +
                          ": no closing " + close + " before the end of the file; close it or escape it with \\");
  }

  std::string_view s_;
  const std::string& origin_;
  std::size_t i_ = 0;
  int line_ = 1;
  std::map<std::string, std::string> vars_;
};

// ---- flags ------------------------------------------------------------------------------------------------------

enum class Kind { Int, Bool, Choice };

struct FlagSpec {
  const char* name;  // without the leading "--"
  Kind kind;
  const char* path;                       // scenario path for a direct mapping, else nullptr (handled below)
  std::vector<const char*> choices = {};  // accepted values of a Choice flag
};

// Every flag trainsim reads. Anything else is listed as ignored.
const std::vector<FlagSpec>& flag_specs() {
  static const std::vector<FlagSpec> specs = {
      {"tensor-model-parallel-size", Kind::Int, "parallel.tp"},
      {"pipeline-model-parallel-size", Kind::Int, "parallel.pp"},
      {"context-parallel-size", Kind::Int, "parallel.cp"},
      {"expert-model-parallel-size", Kind::Int, "parallel.ep"},
      {"virtual-pipeline-model-parallel-size", Kind::Int, "parallel.vpp"},
      {"num-layers-per-virtual-pipeline-stage", Kind::Int, nullptr},
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
      {"train-iters", Kind::Int, nullptr},
      {"train-samples", Kind::Int, nullptr},
      {"recompute-granularity", Kind::Choice, nullptr, {"full", "selective"}},
      {"recompute-activations", Kind::Bool, nullptr},
      {"recompute-method", Kind::Choice, nullptr, {"uniform", "block"}},
      {"recompute-num-layers", Kind::Int, nullptr},
      {"sequence-parallel", Kind::Bool, nullptr},
      {"use-distributed-optimizer", Kind::Bool, nullptr},
      {"bf16", Kind::Bool, nullptr},
      {"fp16", Kind::Bool, nullptr},
      {"fp8-format", Kind::Choice, nullptr, {"e4m3", "hybrid"}},
      {"swiglu", Kind::Bool, nullptr},
      {"normalization", Kind::Choice, nullptr, {"LayerNorm", "RMSNorm"}},
      {"position-embedding-type", Kind::Choice, nullptr, {"learned_absolute", "rope", "none"}},
      {"untie-embeddings-and-output-weights", Kind::Bool, nullptr},
      {"disable-bias-linear", Kind::Bool, nullptr},
      {"num-experts", Kind::Int, "model.moe.experts"},
      {"moe-router-topk", Kind::Int, "model.moe.top_k"},
      {"moe-ffn-hidden-size", Kind::Int, "model.moe.ffn_hidden"},
      {"padded-vocab-size", Kind::Int, "model.vocab"},
      {"vocab-size", Kind::Int, "model.vocab"},
      // torchrun's launcher flags (both spellings are accepted by torchrun)
      {"nproc-per-node", Kind::Int, "cluster.gpus_per_node"},
      {"nnodes", Kind::Int, nullptr},
  };
  return specs;
}

/// The scenario field a flag gives (for unresolved values).
std::string settles(const FlagSpec& s) {
  if (s.path) return s.path;
  const std::map<std::string, std::string> derived = {{"num-layers-per-virtual-pipeline-stage", "parallel.vpp"},
                                                      {"num-query-groups", "model.kv_heads"},
                                                      {"train-iters", "training.tokens"},
                                                      {"train-samples", "training.tokens"},
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

std::string join(const std::vector<const char*>& items) {
  std::string out;
  for (const auto* c : items)
    out += (out.empty() ? "" : ", ") + std::string(c);
  return out;
}

/// One flag as given, for messages and origins.
struct Given {
  std::string flag;   // as written, with "--"
  std::string value;  // empty for a boolean flag
  int line = 0;
};

class MegatronImport {
 public:
  MegatronImport(const std::string& origin, const Draft& known) : origin_(origin), known_(known) {}

  Import run(std::string_view text) {
    Lexer lexer(text, origin_);
    const auto words = lexer.words();
    read_flags(words);
    const bool world_size = world_size_from_env(lexer.variables());
    if (flags_.empty() && out_.ignored.empty() && !world_size && errors_.empty())
      throw ConfigError(origin_, "",
                        "no Megatron-LM flags found; expected a launch command line or argument list such as "
                        "\"torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 2 ...\"");
    apply();
    if (!errors_.empty()) throw ConfigError(errors_);
    return std::move(out_);
  }

 private:
  std::string where(int line) const { return origin_ + ":" + std::to_string(line); }
  std::string where(const Given& g) const { return where(g.line) + " " + g.flag; }
  void error(int line, const std::string& message) {
    errors_.push_back({origin_, "line " + std::to_string(line), message});
  }

  void read_flags(const std::vector<Word>& words) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      const Word& w = words[i];
      if (w.assignment || !w.text.starts_with("--") || w.text.size() == 2) continue;  // commands, scripts, ${ARGS[@]}
      Given g{w.text, "", w.line};
      std::optional<std::string> inline_value;
      if (const auto eq = w.text.find('='); eq != std::string::npos) {
        g.flag = w.text.substr(0, eq);
        inline_value = w.text.substr(eq + 1);
      }
      std::string norm = g.flag.substr(2);
      std::replace(norm.begin(), norm.end(), '_', '-');
      const FlagSpec* spec = find_spec(norm);
      const bool next_is_value = i + 1 < words.size() && !words[i + 1].assignment &&
                                 (!words[i + 1].text.starts_with("-") || parse_integer(words[i + 1].text));
      if (spec && spec->kind == Kind::Bool) {
        if (inline_value) {
          error(w.line, g.flag + " takes no value (found \"=" + *inline_value + "\"); write " + g.flag + " alone");
          continue;
        }
      } else if (inline_value) {
        g.value = *inline_value;
        if (w.unexpanded) unexpanded_.push_back(g);
      } else if (next_is_value) {
        g.value = words[++i].text;
        if (words[i].unexpanded) unexpanded_.push_back(g);
      } else if (spec) {
        error(w.line,
              g.flag + " needs a value; " +
                  (spec->kind == Kind::Int ? "write e.g. " + g.flag + " 8" : "accepted: " + join(spec->choices)));
        continue;
      }
      if (!spec) {
        out_.ignored.push_back(
            {where(w.line), g.flag + (g.value.empty() ? "" : " " + g.value) + ": not modelled by trainsim"});
        continue;
      }
      if (!unexpanded_.empty() && unexpanded_.back().flag == g.flag && unexpanded_.back().line == g.line) {
        out_.unresolved.push_back({where(g),
                                   "\"" + g.value + "\" refers to a variable, command or arithmetic the file does " +
                                       "not define; give the value itself",
                                   settles(*spec)});
        continue;
      }
      flags_[norm] = g;
    }
  }

  /// WORLD_SIZE (or NNODES x GPUS_PER_NODE) assigned in the script, as torchrun's environment.
  bool world_size_from_env(const std::map<std::string, std::string>& vars) {
    if (auto it = vars.find("WORLD_SIZE"); it != vars.end()) {
      if (auto n = parse_integer(it->second); n && *n > 0) {
        out_.draft.put("cluster.gpus", *n, origin_ + " WORLD_SIZE");
        return true;
      }
      out_.unresolved.push_back({origin_ + " WORLD_SIZE",
                                 "\"" + it->second + "\" is not a number trainsim can evaluate; give --gpus N",
                                 "cluster.gpus"});
    }
    return false;
  }

  std::optional<std::int64_t> positive(const std::string& flag) {
    auto it = flags_.find(flag);
    if (it == flags_.end()) return std::nullopt;
    const Given& g = it->second;
    auto n = parse_integer(g.value);
    if (!n || *n < 1 || *n > 1'000'000'000) {
      error(g.line, g.flag + ": \"" + g.value + "\" is not a positive integer; write e.g. " + g.flag + " 8");
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
  std::optional<std::int64_t> lookup(std::string_view path) const {
    if (auto v = out_.draft.integer(path)) return v;
    return known_.integer(path);
  }

  void apply() {
    Draft& d = out_.draft;
    // Values checked first: integers positive, choices among the accepted ones.
    if (const Given* nn = given("nnodes"); nn && nn->value.find(':') != std::string::npos) {
      out_.unresolved.push_back({where(*nn), nn->value + " is an elastic range; give --gpus N", "cluster.gpus"});
      flags_.erase("nnodes");
    } else {
      nnodes_ = positive("nnodes");
    }
    for (const auto& spec : flag_specs()) {
      if (spec.kind == Kind::Int && std::string_view(spec.name) != "nnodes") {
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
    if (nnodes_) {
      if (const auto per = d.integer("cluster.gpus_per_node")) {
        d.put("cluster.gpus", *nnodes_ * *per, where(*given("nnodes")) + " x --nproc-per-node");
      } else {
        out_.unresolved.push_back(
            {where(*given("nnodes")), "needs --nproc-per-node to count GPUs; give --gpus N", "cluster.gpus"});
      }
    }

    if (given("sequence-parallel")) d.put("parallel.sequence_parallel", true, where(*given("sequence-parallel")));
    if (given("use-distributed-optimizer"))
      d.put("parallel.distributed_optimizer", true, where(*given("use-distributed-optimizer")));

    // Recomputation: --recompute-activations is selective; --recompute-granularity says which.
    if (const Given* g = given("recompute-granularity")) {
      d.put("parallel.recompute", g->value, where(*g));
    } else if (const Given* a = given("recompute-activations")) {
      d.put("parallel.recompute", std::string("selective"), where(*a));
    }
    for (const char* f : {"recompute-method", "recompute-num-layers"})
      if (const Given* g = given(f))
        out_.notes.push_back({where(*g), g->value + ": trainsim's full recomputation recomputes every layer; "
                                                    "partial recomputation of some layers is not modelled"});

    // Precision: fp8 (with bf16 or fp16 for what fp8 does not cover) > bf16 > fp16 > fp32 parameters.
    if (const Given* g = given("fp8-format")) {
      d.put("training.dtype", std::string("fp8"), where(*g));
    } else if (const Given* b = given("bf16")) {
      d.put("training.dtype", std::string("bf16"), where(*b));
    } else if (const Given* h = given("fp16")) {
      d.put("training.dtype", std::string("fp16"), where(*h));
    } else {
      d.put("training.dtype", std::string("fp32"), origin_ + " (Megatron-LM default without --bf16/--fp16)", true);
    }

    apply_model();

    // Virtual pipeline stages from layers per virtual stage: vpp = layers / (pp x N).
    if (const Given* g = given("num-layers-per-virtual-pipeline-stage")) {
      const auto per = parse_integer(g->value);
      const auto layers = lookup("model.layers");
      const auto pp = lookup("parallel.pp");
      if (!layers) {
        out_.unresolved.push_back({where(*g),
                                   "needs the number of layers (--num-layers or a model config) to "
                                   "derive the virtual pipeline size",
                                   "parallel.vpp"});
      } else if (per && pp && *layers % (*pp * *per) != 0) {
        error(g->line, g->flag + " " + g->value + ": " + std::to_string(*layers) + " layers do not split into " +
                           "pipeline size " + std::to_string(*pp) + " x " + g->value +
                           " layers per virtual stage (Megatron-LM requires it)");
      } else if (per && pp) {
        d.put("parallel.vpp", *layers / (*pp * *per), where(*g) + " (layers / (pp x this))");
      }
    }

    // Global batch: Megatron-LM's default is micro-batch x data-parallel size.
    if (!d.has("parallel.global_batch")) {
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

    // Training length: iterations x global batch x sequence length, or samples x sequence length.
    const auto seq = lookup("training.seq_len");
    const auto gbs = lookup("parallel.global_batch");
    if (const Given* g = given("train-iters"); g && parse_integer(g->value)) {
      if (seq && gbs) {
        d.put("training.tokens", *parse_integer(g->value) * *gbs * *seq, where(*g) + " x global batch x seq length");
      } else {
        out_.unresolved.push_back(
            {where(*g), "needs --global-batch-size and --seq-length to count tokens", "training.tokens"});
      }
    } else if (const Given* smp = given("train-samples"); smp && parse_integer(smp->value)) {
      if (seq) {
        d.put("training.tokens", *parse_integer(smp->value) * *seq, where(*smp) + " x seq length");
      } else {
        out_.unresolved.push_back({where(*smp), "needs --seq-length to count tokens", "training.tokens"});
      }
    }
  }

  /// The architecture flags. Defaults are recorded only when the file describes a model at all.
  void apply_model() {
    Draft& d = out_.draft;
    const bool describes_model = given("num-layers") || given("hidden-size") || given("num-attention-heads");
    const std::string dflt = origin_ + " (Megatron-LM default)";
    if (const Given* g = given("swiglu")) {
      d.put("model.activation", std::string("swiglu"), where(*g));
    } else if (describes_model) {
      d.put("model.activation", std::string("gelu"), origin_ + " (Megatron-LM default without --swiglu)", true);
    }
    if (const Given* g = given("normalization")) {
      d.put("model.norm", std::string(g->value == "RMSNorm" ? "rmsnorm" : "layernorm"), where(*g));
    } else if (describes_model) {
      d.put("model.norm", std::string("layernorm"), dflt, true);
    }
    if (const Given* g = given("position-embedding-type")) {
      if (g->value == "none") {
        out_.unresolved.push_back(
            {where(*g), "\"none\": trainsim models learned or rotary positions only", "model.position_embedding"});
      } else {
        d.put("model.position_embedding", std::string(g->value == "rope" ? "rope" : "learned"), where(*g));
      }
    } else if (describes_model) {
      d.put("model.position_embedding", std::string("learned"), dflt, true);
    }
    if (const Given* g = given("disable-bias-linear")) {
      d.put("model.bias", false, where(*g));
    } else if (describes_model) {
      d.put("model.bias", true, dflt + ", linear layers with biases", true);
    }
    if (const Given* g = given("untie-embeddings-and-output-weights")) {
      d.put("model.tied_embeddings", false, where(*g));
    } else if (describes_model) {
      d.put("model.tied_embeddings", true, dflt + ", tied input and output embeddings", true);
    }
    // MLP width default: 4h, or for SwiGLU int(4h * 2/3 / 64) * 64 (arguments.py).
    if (const auto h = d.integer("model.hidden"); h && !d.has("model.ffn_hidden")) {
      const bool swiglu = given("swiglu") != nullptr;
      const std::int64_t ffn = swiglu ? (4 * *h * 2 / 3) / 64 * 64 : 4 * *h;
      d.put("model.ffn_hidden", ffn,
            origin_ + (swiglu ? " (Megatron-LM default: int(4 x hidden x 2/3 / 64) x 64)"
                              : " (Megatron-LM default: 4 x hidden)"),
            true);
    }
    // Key/value heads: --num-query-groups counts only with --group-query-attention (default 1 group then).
    const Given* gqa = given("group-query-attention");
    const Given* groups = given("num-query-groups");
    if (gqa) {
      if (groups) {
        if (auto n = parse_integer(groups->value)) d.put("model.kv_heads", *n, where(*groups));
      } else {
        d.put("model.kv_heads", std::int64_t{1}, where(*gqa) + " (Megatron-LM default: 1 query group)", true);
      }
    } else if (groups) {
      out_.notes.push_back({where(*groups), "ignored without --group-query-attention, as Megatron-LM does"});
    }
    if (const auto heads = d.integer("model.heads"); heads && !d.has("model.kv_heads"))
      d.put("model.kv_heads", *heads, dflt + ", multi-head attention", true);
    // MoE: top-k defaults to 2, the expert width to the MLP width.
    if (d.has("model.moe.experts")) {
      if (!d.has("model.moe.top_k")) d.put("model.moe.top_k", std::int64_t{2}, dflt + " --moe-router-topk 2", true);
      if (!d.has("model.moe.ffn_hidden")) {
        if (auto f = lookup("model.ffn_hidden"))
          d.put("model.moe.ffn_hidden", *f, dflt + " (expert width = MLP width)", true);
      }
    }
    // The position table: Megatron-LM sizes it to --max-position-embeddings, else the sequence length.
    if (describes_model && !d.has("model.max_seq_len"))
      if (auto seq = d.integer("training.seq_len")) d.put("model.max_seq_len", *seq, dflt + " (= --seq-length)", true);
  }

  const std::string& origin_;
  const Draft& known_;
  Import out_;
  std::map<std::string, Given> flags_;
  std::vector<Given> unexpanded_;
  std::vector<base::Diagnostic> errors_;
  std::optional<std::int64_t> nnodes_;
};

}  // namespace

Import import_megatron_text(std::string_view text, const std::string& origin, const Draft& known) {
  return MegatronImport(origin, known).run(text);
}

Import import_megatron(const std::string& path, const Draft& known) {
  return import_megatron_text(read_input_file(path), path, known);
}

}  // namespace sim::importers
