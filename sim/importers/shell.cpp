// sim/importers/shell.cpp: expansion of a launch script's words and the walk over its statements (shell.hpp says
// what is covered; shell_parse.cpp makes the statements). Semantics follow the bash manual's "Shell Expansions"
// (parameter expansion, arithmetic expansion, word splitting on unquoted results, quote removal) and "Conditional
// Constructs"; the script is read as run with no arguments in an environment that sets nothing.
#include "sim/importers/shell.hpp"

#include "sim/importers/shell_arith.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace sim::importers {
namespace {

using base::ConfigError;
using shell::Node;
using shell::Token;

struct Elem {
  std::string text;
  int line = 0;
};

// Unknown text ($(cmd), an unset $NAME) inside a value is kept between two of these, so that word splitting later
// marks only the words it lands in as unknown (GPT_ARGS="... `pwd`/pretrain_gpt.py --num-layers 70 ...").
constexpr char kUnknown = '\x01';

struct Var {
  std::vector<Elem> values = {};
  bool known = true;
  bool array = false;
  int line = 0;
  std::vector<std::string> defaults = {};  // defaults its value took (${SLURM_NNODES:-1}), passed on to its uses
};

/// Command and test words: markers removed, the word flagged unknown where it held any.
std::vector<ShellWord> finalize(std::vector<ShellWord> words) {
  for (auto& w : words) {
    if (w.text.find(kUnknown) == std::string::npos) continue;
    w.unknown = true;
    std::erase(w.text, kUnknown);
  }
  return words;
}

/// What one $-expansion gave.
struct Expansion {
  std::vector<Elem> values = {};
  bool known = true;
  bool at = false;  // "${ARR[@]}": one word per element even inside double quotes
  std::vector<std::string> defaults = {};
};

bool name_char(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

/// The length of a leading NAME= or NAME+= (0 when the word is not an assignment).
std::size_t assignment_name(std::string_view raw) {
  std::size_t i = 0;
  while (i < raw.size() && name_char(raw[i], i == 0))
    ++i;
  if (i == 0 || i >= raw.size()) return 0;
  if (raw[i] == '=') return i;
  if (raw[i] == '+' && i + 1 < raw.size() && raw[i + 1] == '=') return i;
  return 0;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

std::string basename(const std::string& s) {
  const auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

// Commands that start a training job: an `if` or a loop around them decides whether the job's flags are read.
const std::set<std::string, std::less<>> kLaunchers = {"torchrun", "python",  "python3", "srun", "deepspeed", "mpirun",
                                                       "sbatch",   "bash",    "sh",      "uv",   "accelerate",
                                                       "mpiexec",  "exec",    "eval",    "nsys"};

class Shell {
 public:
  Shell(const std::string& origin, const FlagFilter& matters) : origin_(origin), matters_(matters) {}

  void run(std::string_view text, int first_line, int depth) {
    const auto tokens = shell::tokenize(text, origin_, first_line, depth);
    const int outer = depth_;
    depth_ = depth;
    exec(shell::parse(tokens, origin_));
    depth_ = outer;
  }

  ShellScript finish() {
    for (const auto& [name, v] : vars_)
      if (v.known && !v.array && !v.values.empty() && v.values.front().text.find(kUnknown) == std::string::npos)
        out_.variables[name] = v.values.front().text;
    return std::move(out_);
  }

 private:
  [[noreturn]] void error(int line, const std::string& what) const {
    throw ConfigError(origin_, "line " + std::to_string(line), what);
  }

  void charge(std::size_t n, int line) {
    total_ += n;
    if (total_ > kShellMaxTotal)
      error(line, "the script's expansions grow past " + std::to_string(kShellMaxTotal >> 20) +
                      " MiB in all (a variable that doubles itself, A=$A$A, repeated?); trainsim reads launch scripts "
                      "whose expanded text stays under that");
  }

  // ---- statements -------------------------------------------------------------------------------------------------

  void exec(const std::vector<Node>& nodes) {
    for (const auto& n : nodes) {
      if (stopped_) return;
      exec(n);
    }
  }

  void exec(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Simple:
        simple(n);
        return;
      case Node::Kind::Group:
        exec(n.children);
        return;
      case Node::Kind::Opaque:
        if (!n.arms.empty()) {  // while / until: a loop whose condition is decided false never runs
          std::string why;
          const auto holds = condition(n.arms[0].first, why);
          if (holds && *holds == n.what.starts_with("until")) return;
        }
        if (relevant(n.children) || relevant(n.arms.empty() ? std::vector<Node>{} : n.arms[0].second))
          error(n.line, "a " + n.what +
                            " that sets variables or holds --flags or a launch command; trainsim reads scripts "
                            "without running loops, case statements or functions: write the command it runs out in "
                            "full (or the variables it sets)");
        return;
      case Node::Kind::AndOr:
        and_or(n);
        return;
      case Node::Kind::If:
        if_clause(n);
        return;
    }
  }

  void if_clause(const Node& n) {
    for (const auto& [cond, body] : n.arms) {
      std::string why;
      const auto taken = condition(cond, why);
      if (!taken) {
        bool matters = relevant(n.otherwise);
        for (const auto& arm : n.arms)
          matters = matters || relevant(arm.second) || relevant(arm.first);
        if (matters)
          error(cond.empty() ? n.line : cond.front().line,
                "this if cannot be decided from the file (" + why +
                    ") and its branches set variables or flags; trainsim reads exactly one branch: set what it "
                    "tests in the file, or keep only the branch that runs");
        out_.notes.push_back("line " + std::to_string(n.line) + ": an if not decided by the file (" + why +
                             ") skipped: its branches set nothing trainsim reads");
        return;
      }
      if (*taken) {
        exec(body);
        return;
      }
    }
    exec(n.otherwise);
  }

  void and_or(const Node& n) {
    std::string why;
    std::optional<bool> status = status_of(n.children.front(), why);
    for (std::size_t k = 1; k < n.children.size(); ++k) {
      const Node& c = n.children[k];
      if (!status) {
        if (relevant(c))
          error(c.line, "what runs after " + n.ops[k - 1] + " cannot be decided from the file (" + why +
                            ") and it sets variables or flags; write it without the condition");
        continue;
      }
      if ((n.ops[k - 1] == "&&") == *status) status = status_of(c, why);
    }
  }

  /// The outcome of a condition list (the last command's status); nullopt when the file does not decide it.
  std::optional<bool> condition(const std::vector<Node>& cond, std::string& why) {
    if (cond.empty()) return true;
    for (std::size_t k = 0; k + 1 < cond.size(); ++k)
      exec(cond[k]);
    return status_of(cond.back(), why);
  }

  std::optional<bool> status_of(const Node& n, std::string& why) {
    std::optional<bool> s;
    if (n.kind == Node::Kind::Simple && !n.words.empty() && n.words.front().kind == Token::Kind::Word) {
      const std::string& cmd = n.words.front().text;
      if (cmd == "[" || cmd == "[[" || cmd == "test") {
        std::vector<ShellWord> words;
        for (std::size_t k = 1; k < n.words.size(); ++k) {
          auto w = finalize(expand(n.words[k], cmd != "[["));
          if (cmd == "[[" && w.empty()) w.push_back({"", n.words[k].line});
          words.insert(words.end(), w.begin(), w.end());
        }
        if (cmd != "test" && !words.empty()) words.pop_back();  // ] or ]]
        s = shell::evaluate_test(words, cmd == "[[", why);
      } else if (cmd == "true" || cmd == ":") {
        s = true;
      } else if (cmd == "false") {
        s = false;
      } else {
        exec(n);
        why = "it depends on whether \"" + cmd + "\" succeeds";
        return std::nullopt;
      }
    } else if (n.kind == Node::Kind::AndOr) {
      s = status_of(n.children.front(), why);
      for (std::size_t k = 1; s && k < n.children.size(); ++k)
        if ((n.ops[k - 1] == "&&") == *s) s = status_of(n.children[k], why);
    } else {
      exec(n);
      why = "it depends on what a command returns";
      return std::nullopt;
    }
    if (s && n.negated) s = !*s;
    return s;
  }

  /// Whether statements set variables, hold a --flag or start a job: then skipping them could misread the script.
  bool relevant(const std::vector<Node>& nodes) const {
    return std::any_of(nodes.begin(), nodes.end(), [&](const Node& n) { return relevant(n); });
  }
  /// The --flags written in a raw word ("--fp8-format hybrid" inside quotes counts), and whether one matters.
  std::pair<bool, bool> flags_in(std::string_view raw) const {
    bool any = false;
    for (std::size_t p = raw.find("--"); p != std::string_view::npos; p = raw.find("--", p + 2)) {
      if (p > 0 && !is_space(raw[p - 1]) && raw[p - 1] != '"' && raw[p - 1] != '\'' && raw[p - 1] != '(') continue;
      std::size_t e = p + 2;
      while (e < raw.size() && (name_char(raw[e], false) || raw[e] == '-'))
        ++e;
      if (e == p + 2 || !name_char(raw[p + 2], true)) continue;
      any = true;
      if (!matters_ || matters_(raw.substr(p + 2, e - p - 2))) return {true, true};
    }
    return {any, false};
  }

  /// An assignment matters unless what it assigns is only flags that do not matter (LOGGING_ARGS+=(--wandb-...)).
  bool assignment_matters(const Token& t) const {
    std::string text = t.text;
    for (const auto& e : t.elements)
      text += " " + e.text;
    const auto [any, matters] = flags_in(text);
    return matters || !any;
  }

  bool relevant(const Node& n) const {
    if (relevant(n.children) || relevant(n.otherwise)) return true;
    for (const auto& [c, b] : n.arms)
      if (relevant(c) || relevant(b)) return true;
    for (std::size_t k = 0; k < n.words.size(); ++k) {
      const Token& t = n.words[k];
      if (t.kind == Token::Kind::Sbatch) return true;
      if (t.kind == Token::Kind::ArrayAssign) {
        if (assignment_matters(t)) return true;
        continue;
      }
      std::string_view raw = t.text;
      while (!raw.empty() && (raw.front() == '"' || raw.front() == '\''))
        raw.remove_prefix(1);
      if (assignment_name(raw) > 0 && k == 0) {
        if (assignment_matters(t)) return true;
        continue;
      }
      if (flags_in(t.text).second) return true;
      if (k == 0 && (kLaunchers.contains(basename(t.text)) || t.text.ends_with(".py") || t.text.ends_with(".sh") ||
                     t.text == "export" || t.text == "unset" || t.text == "declare" || t.text == "source" ||
                     t.text == "." || t.text == "local" || t.text == "readonly"))
        return true;
    }
    return false;
  }

  void simple(const Node& n) {
    std::size_t k = 0;
    for (; k < n.words.size(); ++k) {  // leading assignments
      const Token& t = n.words[k];
      if (t.kind == Token::Kind::ArrayAssign || (t.kind == Token::Kind::Word && assignment_name(t.text) > 0)) {
        assign(t);
      } else {
        break;
      }
    }
    if (k == n.words.size()) return;
    const Token& head = n.words[k];
    if (head.kind == Token::Kind::Word &&
        (head.text == "export" || head.text == "declare" || head.text == "typeset" || head.text == "local" ||
         head.text == "readonly")) {
      for (std::size_t j = k + 1; j < n.words.size(); ++j) {
        const Token& t = n.words[j];
        if (t.kind == Token::Kind::ArrayAssign || (t.kind == Token::Kind::Word && assignment_name(t.text) > 0))
          assign(t);
      }
      return;
    }
    if (head.kind == Token::Kind::Word && head.text == "unset") {
      for (std::size_t j = k + 1; j < n.words.size(); ++j)
        vars_.erase(n.words[j].text);
      return;
    }
    if (head.kind == Token::Kind::Word && head.text == "exit") {
      stopped_ = true;
      return;
    }
    ShellCommand cmd{n.line, {}};
    for (std::size_t j = k; j < n.words.size(); ++j) {
      const Token& t = n.words[j];
      if (t.kind == Token::Kind::Sbatch) {
        cmd.words.push_back({"#SBATCH", t.line});
        for (auto& w : split_words(t.text, t.line))
          cmd.words.push_back(std::move(w));
        continue;
      }
      auto w = finalize(expand(t, true));
      cmd.words.insert(cmd.words.end(), std::make_move_iterator(w.begin()), std::make_move_iterator(w.end()));
    }
    // bash -c "STRING" / sh -c "STRING" (srun ... bash -c "$LAUNCHER $CMD"): the string is a script of its own.
    for (std::size_t j = 0; j + 2 < cmd.words.size(); ++j) {
      const std::string shell_name = basename(cmd.words[j].text);
      if (shell_name != "bash" && shell_name != "sh") continue;
      std::size_t c = j + 1;  // bash -x -c, bash -e -c, bash -lc: options before the string
      while (c + 1 < cmd.words.size() && cmd.words[c].text.starts_with("-") && !cmd.words[c].text.ends_with("c"))
        ++c;
      if (c + 1 < cmd.words.size() && cmd.words[c].text.starts_with("-") && cmd.words[c].text.ends_with("c")) {
        const ShellWord script = cmd.words[c + 1];
        cmd.words.resize(j);
        if (!cmd.words.empty()) out_.commands.push_back(std::move(cmd));
        run(script.text, script.line, depth_ + 1);
        return;
      }
    }
    const std::string name = cmd.words.empty() ? std::string() : basename(cmd.words.front().text);
    if (name == "source" || name == ".")
      out_.notes.push_back("line " + std::to_string(n.line) + ": " + name + " " +
                           (cmd.words.size() > 1 ? cmd.words[1].text : "") +
                           " is not read: the variables it sets are unknown here");
    if (!cmd.words.empty()) out_.commands.push_back(std::move(cmd));
    for (const auto& h : n.heredocs) {
      if (name == "sbatch" || name == "bash" || name == "sh" || name == "srun") {
        run(h.text, h.line, depth_ + 1);
      } else {
        out_.notes.push_back("line " + std::to_string(h.line) + ": the heredoc given to " +
                             (name.empty() ? std::string("the command") : name) + " is not read as a script");
      }
    }
  }

  /// Words of a #SBATCH line (unquoted, unexpanded: Slurm reads the directive itself).
  std::vector<ShellWord> split_words(std::string_view text, int line) {
    std::vector<ShellWord> out;
    for (std::size_t i = 0; i < text.size();) {
      while (i < text.size() && is_space(text[i]))
        ++i;
      if (i >= text.size() || text[i] == '#') break;
      const std::size_t start = i;
      while (i < text.size() && !is_space(text[i]))
        ++i;
      out.push_back({std::string(text.substr(start, i - start)), line});
    }
    return out;
  }

  void assign(const Token& t) {
    std::string name = t.text;
    bool append = false;
    Var v;
    v.line = t.line;
    if (t.kind == Token::Kind::ArrayAssign) {
      if (name.ends_with('+')) {
        name.pop_back();
        append = true;
      }
      v.array = true;
      for (const auto& e : t.elements)
        for (auto& w : expand(e, true)) {
          v.defaults.insert(v.defaults.end(), w.defaults.begin(), w.defaults.end());
          v.values.push_back({std::move(w.text), w.line});
        }
    } else {
      const std::size_t len = assignment_name(t.text);
      name = t.text.substr(0, len);
      append = t.text[len] == '+';
      Token value = t;
      value.text = t.text.substr(len + (append ? 2 : 1));
      auto words = expand(value, false);
      Elem e{"", t.line};
      for (const auto& w : words) {
        e.text += w.text;
        v.defaults.insert(v.defaults.end(), w.defaults.begin(), w.defaults.end());
      }
      v.values.push_back(std::move(e));
    }
    auto it = vars_.find(name);
    if (append && it != vars_.end()) {
      Var& old = it->second;
      old.known = old.known && v.known;
      old.defaults.insert(old.defaults.end(), v.defaults.begin(), v.defaults.end());
      if (v.array) {
        old.array = true;
        old.values.insert(old.values.end(), v.values.begin(), v.values.end());
      } else if (!old.values.empty()) {
        old.values.front().text += v.values.front().text;
      } else {
        old.values = v.values;
      }
      check_size(old, t.line, name);
      return;
    }
    check_size(v, t.line, name);
    vars_[name] = std::move(v);
  }

  void check_size(const Var& v, int line, const std::string& name) {
    std::size_t n = 0;
    for (const auto& e : v.values)
      n += e.text.size() + 1;
    if (n > kShellMaxWord)
      error(line, name + " grows past " + std::to_string(kShellMaxWord >> 20) +
                      " MiB (a variable that doubles itself, " + name + "=$" + name + "$" + name +
                      ", repeated?); trainsim reads launch scripts whose variables stay under that");
    charge(n, line);
  }

  // ---- words ------------------------------------------------------------------------------------------------------

  struct Building {
    std::vector<ShellWord> fields;
    ShellWord cur;
    bool started = false;
    bool empty_at = false;  // "${E[@]}" of an empty array: no word, although quoted
  };

  void literal(Building& b, std::string_view text, int line) {
    if (!b.started) {
      b.started = true;
      b.cur.line = line;
    }
    b.cur.text.append(text);
    if (b.cur.text.size() > kShellMaxWord)
      error(line, "a word grows past " + std::to_string(kShellMaxWord >> 20) + " MiB");
  }

  void end_field(Building& b) {
    if (b.started) {
      charge(b.cur.text.size(), b.cur.line);
      b.fields.push_back(std::move(b.cur));
    }
    b.cur = {};
    b.started = false;
  }

  void add(Building& b, Expansion e, std::string_view raw, int line, bool quoted, bool split) {
    b.cur.defaults.insert(b.cur.defaults.end(), e.defaults.begin(), e.defaults.end());
    if (!e.known) {  // kept as written, between markers: the words it ends up in are unknown, the others are not
      literal(b, std::string(1, kUnknown) + std::string(raw) + kUnknown, line);
      return;
    }
    if (quoted || !split) {
      if (e.at && quoted && split) {
        if (e.values.empty()) b.empty_at = true;
        for (std::size_t k = 0; k < e.values.size(); ++k) {
          if (k > 0) end_field(b);
          literal(b, e.values[k].text, e.values[k].line);
        }
        return;
      }
      std::string joined;
      for (std::size_t k = 0; k < e.values.size(); ++k)
        joined += (k > 0 ? " " : "") + e.values[k].text;
      literal(b, joined, e.values.empty() ? line : e.values.front().line);
      if (e.values.empty() && quoted) b.started = true;
      return;
    }
    for (std::size_t k = 0; k < e.values.size(); ++k) {
      if (k > 0) end_field(b);
      const std::string& v = e.values[k].text;
      for (std::size_t i = 0; i < v.size();) {
        if (is_space(v[i])) {
          end_field(b);
          while (i < v.size() && is_space(v[i]))
            ++i;
          continue;
        }
        const std::size_t start = i;
        while (i < v.size() && !is_space(v[i])) {
          if (v[i] == kUnknown) i = std::min(v.find(kUnknown, i + 1), v.size() - 1);  // unknown text is not split
          ++i;
        }
        literal(b, std::string_view(v).substr(start, i - start), e.values[k].line);
      }
    }
  }

  /// The fields of a word: expansion, word splitting of unquoted results when `split`, quote removal.
  std::vector<ShellWord> expand(const Token& t, bool split) {
    if (++nesting_ > 32) error(t.line, "expansions nested deeper than 32");
    const std::string& r = t.text;
    Building b;
    for (std::size_t i = 0; i < r.size();) {
      const char c = r[i];
      if (c == '\\') {
        if (i + 1 < r.size()) literal(b, std::string_view(r).substr(i + 1, 1), t.line);
        i += 2;
      } else if (c == '\'') {
        const auto end = r.find('\'', i + 1);
        if (end == std::string::npos) shell::unterminated(origin_, t.line, "'", "'");
        literal(b, std::string_view(r).substr(i + 1, end - i - 1), t.line);
        i = end + 1;
      } else if (c == '"') {
        const bool was_started = b.started;
        b.empty_at = false;
        ++i;
        while (i < r.size() && r[i] != '"') {
          if (r[i] == '\\' && i + 1 < r.size() && std::string_view("$`\"\\\n").find(r[i + 1]) != std::string::npos) {
            if (r[i + 1] != '\n') literal(b, std::string_view(r).substr(i + 1, 1), t.line);
            i += 2;
          } else if (r[i] == '$' || r[i] == '`') {
            const auto end = dollar_end(r, i, t.line);
            add(b, dollar(std::string_view(r).substr(i, end - i), t.line), std::string_view(r).substr(i, end - i),
                t.line, true, split);
            i = end;
          } else {
            literal(b, std::string_view(r).substr(i, 1), t.line);
            ++i;
          }
        }
        if (!was_started && !b.started && !b.empty_at) literal(b, "", t.line);  // "" is an empty word
        ++i;
      } else if (c == '$' || c == '`') {
        const std::size_t end = dollar_end(r, i, t.line);
        add(b, dollar(std::string_view(r).substr(i, end - i), t.line), std::string_view(r).substr(i, end - i), t.line,
            false, split);
        i = end;
      } else {
        literal(b, std::string_view(r).substr(i, 1), t.line);
        ++i;
      }
    }
    end_field(b);
    --nesting_;
    return std::move(b.fields);
  }

  /// One expansion: `text` is "$NAME", "${...}", "$((...))", "$(...)" or "`...`".
  Expansion dollar(std::string_view text, int line) {
    Expansion e;
    if (text == "$") return {{{"$", line}}};
    if (text == "$#" || text == "${#}") return {{{"0", line}}};  // run with no arguments
    if (text.starts_with("$((") && text.ends_with("))")) {
      std::string why;
      const auto v = shell::arithmetic(
          text.substr(3, text.size() - 5), [&](std::string_view name) { return lookup_int(name); }, why);
      if (!v && !why.empty()) error(line, std::string(text) + ": " + why);
      if (!v) return {{}, false};
      return {{{std::to_string(*v), line}}};
    }
    if (text.starts_with("$(") || text.starts_with("`")) return {{}, false};
    if (text.starts_with("${")) return parameter(text.substr(2, text.size() - 3), text, line);
    return parameter(text.substr(1), text, line);
  }

  /// ${inner}: NAME, NAME[i], #NAME, and the default forms :- - := = :+ + :? ?.
  Expansion parameter(std::string_view inner, std::string_view text, int line) {
    bool length = false;
    if (inner.size() > 1 && inner.front() == '#') {
      length = true;
      inner.remove_prefix(1);
    }
    std::size_t i = 0;
    while (i < inner.size() && name_char(inner[i], i == 0))
      ++i;
    if (i == 0 && !inner.empty() && std::string_view("@*#?$!-0123456789").find(inner[0]) != std::string_view::npos)
      i = 1;
    const std::string name(inner.substr(0, i));
    std::string index;
    if (i < inner.size() && inner[i] == '[') {
      const auto close = inner.find(']', i);
      if (close == std::string_view::npos) return {{}, false};
      index = std::string(inner.substr(i + 1, close - i - 1));
      i = close + 1;
    }
    std::string_view op, word;
    for (std::string_view o : {":-", ":=", ":+", ":?", "-", "=", "+", "?"})
      if (inner.substr(i).starts_with(o)) {
        op = o;
        word = inner.substr(i + o.size());
        break;
      }
    if (op.empty() && i != inner.size()) return {{}, false};  // ${X#pat}, ${X/a/b}, ${X:1:2}, ...: not evaluated
    if (name.empty()) return {{}, false};

    const auto it = vars_.find(name);
    const bool set = it != vars_.end();
    if (set && !it->second.known) return {{}, false};
    Expansion value;
    if (set) {
      const Var& v = it->second;
      value.defaults = v.defaults;
      if (index == "@" || index == "*") {
        value.values = v.values;
        value.at = index == "@";
      } else if (index.empty() || index == "0") {
        if (!v.values.empty()) value.values.push_back(v.values.front());
      } else {
        std::string why;
        const auto k = shell::arithmetic(index, [&](std::string_view n) { return lookup_int(n); }, why);
        if (!k || *k < 0) return {{}, false};
        if (static_cast<std::size_t>(*k) < v.values.size()) value.values.push_back(v.values[*k]);
      }
    }
    const bool null = value.values.empty() || (value.values.size() == 1 && value.values.front().text.empty());
    if (length) {
      if (!set) return {{}, false};
      const std::size_t n = value.at || index == "*" ? value.values.size()
                                                     : (value.values.empty() ? 0 : value.values.front().text.size());
      return {{{std::to_string(n), line}}};
    }
    const bool colon = op.starts_with(':');
    const char kind = op.empty() ? ' ' : op.back();
    const bool use_word = (kind == '-' || kind == '=' || kind == '?') ? (!set || (colon && null))
                          : kind == '+'                               ? (set && !(colon && null))
                                                                      : false;
    if (kind == '+') {
      if (!use_word) return {};
    } else if (!use_word) {
      if (!set) return {{}, false};  // bare $NAME of a variable the file does not set
      return value;
    }
    if (kind == '?') return {{}, false};
    Token w{Token::Kind::Word, std::string(word), line};
    Expansion d;
    std::string joined;
    for (auto& f : expand(w, false)) {
      d.defaults.insert(d.defaults.end(), f.defaults.begin(), f.defaults.end());
      joined += f.text;
    }
    d.values.push_back({joined, line});
    if (kind != '+' && !set)
      d.defaults.push_back(std::string(text) + " = \"" + joined + "\" (" +
                           (name[0] >= '0' && name[0] <= '9' ? "no argument " + name + " given"
                                                             : name + " is not set in the file") +
                           ")");
    if (kind == '=' && d.known) vars_[name] = Var{{{joined, line}}, true, false, line};
    return d;
  }

  /// A variable's value as an arithmetic operand (bash evaluates it as an expression; names inside are not followed).
  std::optional<std::int64_t> lookup_int(std::string_view name) const {
    auto it = vars_.find(std::string(name));
    if (it == vars_.end() || !it->second.known || it->second.values.empty() ||
        it->second.values.front().text.find(kUnknown) != std::string::npos)
      return std::nullopt;
    std::string why;
    return shell::arithmetic(
        it->second.values.front().text, [](std::string_view) -> std::optional<std::int64_t> { return std::nullopt; },
        why);
  }

  /// The end of the $-expansion at r[i] ($NAME, $1, $@, ${...}, $(...), `...`).
  std::size_t dollar_end(const std::string& r, std::size_t i, int line) const {
    std::size_t end = shell::skip_dollar(r, i, origin_, line);
    if (end != i + 1 || r[i] != '$') return end;
    while (end < r.size() && name_char(r[end], end == i + 1))
      ++end;
    if (end == i + 1 && end < r.size() && std::string_view("@*#?$!-0123456789").find(r[end]) != std::string_view::npos)
      ++end;
    return end;
  }

  const std::string& origin_;
  const FlagFilter& matters_;
  std::map<std::string, Var> vars_;
  ShellScript out_;
  std::size_t total_ = 0;
  int depth_ = 0;
  int nesting_ = 0;
  bool stopped_ = false;
};

}  // namespace

ShellScript read_shell(std::string_view text, const std::string& origin, const FlagFilter& matters) {
  if (text.size() > kShellMaxText)
    throw ConfigError(origin, "",
                      "is " + std::to_string(text.size() >> 20) + " MiB; trainsim reads launch scripts up to " +
                          std::to_string(kShellMaxText >> 20) + " MiB");
  if (text.find(kUnknown) != std::string_view::npos)
    throw ConfigError(origin, "", "holds a control character (0x01); expected a shell script (text)");
  Shell sh(origin, matters);
  sh.run(text, 1, 0);
  return sh.finish();
}

}  // namespace sim::importers
