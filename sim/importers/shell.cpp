// sim/importers/shell.cpp: the walk over a launch script's statements (shell.hpp: what is covered; shell_parse.cpp
// makes the statements, shell_expand.cpp expands their words), as the bash manual's "Conditional Constructs" and
// "Simple Commands" say, run with the invocation's arguments and environment (none by default).
#include "sim/importers/shell.hpp"

#include "sim/importers/shell_arith.hpp"
#include "sim/importers/shell_exports.hpp"
#include "sim/importers/shell_expand.hpp"
#include "sim/importers/shell_relevance.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

namespace sim::importers {
namespace {

using base::ConfigError;
using shell::assigned_in;
using shell::assigned_name;
using shell::assignment_name;
using shell::basename;
using shell::Elem;
using shell::Expander;
using shell::finalize;
using shell::is_space;
using shell::kUnknown;
using shell::name_char;
using shell::Node;
using shell::Relevance;
using shell::Token;
using shell::Var;

class Shell {
 public:
  Shell(const std::string& origin, const FlagFilter& matters, const ShellInvocation& inv)
      : origin_(origin), matters_(matters), rel_(matters_), ex_(origin), inv_(inv) {
    for (const auto& [name, value] : inv.env) {
      if (name.empty() || !name_char(name.front(), true) ||
          !std::all_of(name.begin(), name.end(), [](char c) { return name_char(c, false); }))
        throw ConfigError(inv.env_origin, "", "\"" + name + "\" is not a variable name; expected NAME=VALUE");
      ex_.vars()[name] = Var{{{value, 0}}, true, false, 0, {name + " = \"" + value + "\" (" + inv.env_origin + ")"}};
      exports_.environment(name);
    }
    if (inv.args) set_positional(*inv.args);
    ex_.is_readonly = [this](const std::string& name) { return exports_.readonly(name); };
  }

  void run(std::string_view text, int first_line, int depth) {
    auto tokens = shell::tokenize(text, origin_, first_line, depth);
    // A bash -c string is numbered from the line its word starts on; once expanded it can hold more lines than the
    // file wrote (a variable's value with newlines), so its lines stop at the file's last one.
    if (depth == 0)
      last_line_ = static_cast<int>(1 + std::count(text.begin(), text.end(), '\n'));
    else
      clamp_lines(tokens);
    const int outer = depth_;
    depth_ = depth;
    const auto nodes = shell::parse(tokens, origin_);
    const auto top = std::pair{top_, top_subshells_};  // a child shell's commands are its script's own
    top_ = &nodes;
    top_subshells_ = subshells_;
    exec(nodes);
    std::tie(top_, top_subshells_) = top;
    depth_ = outer;
  }

  std::map<std::string, std::string> known_scalars() {  // as ShellScript::variables holds them
    std::map<std::string, std::string> out;
    for (const auto& [name, v] : ex_.vars())
      if (v.known && !v.array && !v.values.empty() && v.values.front().text.find(kUnknown) == std::string::npos)
        out[name] = v.values.front().text;
    return out;
  }
  ShellScript finish() {
    out_.variables = known_scalars();
    std::vector<std::pair<int, std::string>> order;
    for (const auto& [name, v] : ex_.vars())
      order.emplace_back(v.line, name);
    std::sort(order.begin(), order.end());
    for (const auto& [line, name] : order)
      out_.values.emplace_back(name, finalize(ex_.expand(Token{Token::Kind::Word, "${" + name + "[@]}", line}, true)));
    return std::move(out_);
  }

 private:
  [[noreturn]] void error(int line, const std::string& what) const {
    throw ConfigError(origin_, "line " + std::to_string(line), what);
  }

  void exec(const std::vector<Node>& nodes) {
    for (std::size_t i = 0; i < nodes.size() && !stopped_; ++i) {
      exec(nodes[i]);
      if (!abandoned_ || &nodes != top_) continue;
      stopped_ = abandoned_ = false;  // bash reads on at the next line
      while (i + 1 < nodes.size() && nodes[i + 1].line == std::max(nodes[i].line, nodes[i].end_line))
        ++i;
    }
  }

  void exec(const Node& n) {
    if (n.subshell) return subshell(n.line, [&] { exec_here(n); });
    exec_here(n);
    if (const auto name = ex_.take_readonly_hit(); !name.empty()) abandon(n.line, name);  // $(( )), let
  }

  void exec_here(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Simple:
        simple(n);
        return;
      case Node::Kind::Group:
        exec(n.children);
        return;
      case Node::Kind::Opaque:
        if (n.what == "for loop" && runs_over_nothing(n)) return;
        if (!n.arms.empty()) {  // while / until: a loop whose condition is decided false never runs
          std::string why;
          const auto holds = condition(n.arms[0].first, why);
          if (holds && *holds == n.what.starts_with("until")) return;
        }
        if (n.what.ends_with(" loop") && !rel_.relevant(n.children, false) &&
            !rel_.relevant(n.arms.empty() ? std::vector<Node>{} : n.arms[0].second, false)) {
          // A loop that only sets variables (host lists, counters): not run, so what it sets is unknown after it,
          // and refused only where a flag uses it (a user trial found such loops refused outright).
          std::set<std::string> names;
          if (!n.var.empty()) names.insert(n.var);
          for (const auto& t : n.words)  // for ((i = 0; ...))
            if (t.kind == Token::Kind::Arith) shell::arith_assigned(t.text, names);
          assigned_in(n.children, names);
          if (!n.arms.empty()) assigned_in(n.arms[0].second, names);
          const std::string list = forget(names, n.line,
                                          " at line " + std::to_string(n.line) +
                                              ", which trainsim does not "
                                              "run: write the value it ends with",
                                          n.what);
          if (!names.empty())
            out_.notes.push_back("line " + std::to_string(n.line) + ": the " + n.what + " is not run; what it sets (" +
                                 list + ") is unknown after it");
          return;
        }
        if (rel_.relevant(n.children) || rel_.relevant(n.arms.empty() ? std::vector<Node>{} : n.arms[0].second) ||
            rel_.assigns_anywhere(n.children))
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
        bool matters = rel_.relevant(n.otherwise);
        bool flags = rel_.relevant(n.otherwise, false);
        for (const auto& arm : n.arms) {
          matters = matters || rel_.relevant(arm.second) || rel_.relevant(arm.first);
          flags = flags || rel_.relevant(arm.second, false) || rel_.relevant(arm.first, false);
        }
        if (matters && !flags) {
          // Branches that only set variables (a resume counter, a host list): neither is run, so what they set is
          // unknown after the if, and refused only where a flag uses it, as for such loops (a user trial: a
          // Megatron-DeepSpeed script's checkpoint-resume if stopped the import though no flag read its variables).
          std::set<std::string> names;
          assigned_in(n.otherwise, names);
          for (const auto& arm : n.arms) {
            assigned_in(arm.first, names);
            assigned_in(arm.second, names);
          }
          const std::string list =
              forget(names, n.line,
                     " at line " + std::to_string(n.line) + ", which cannot be decided from the file (" + why +
                         "): give what it tests as the script is run (" + inv_.env_origin + " NAME=VALUE, " +
                         inv_.args_origin +
                         " \"...\" for $1, $2, ...), set it in the file, or keep only the branch "
                         "that runs",
                     "if");
          out_.notes.push_back("line " + std::to_string(n.line) + ": an if not decided by the file (" + why +
                               ") is not run; what its branches set (" + list + ") is unknown after it");
          return;
        }
        if (matters)
          error(cond.empty() ? n.line : cond.front().line,
                "this if cannot be decided from the file (" + why +
                    ") and its branches set variables or flags; trainsim reads exactly one branch: give what it "
                    "tests as the script is run (" +
                    inv_.env_origin + " NAME=VALUE, " + inv_.args_origin +
                    " \"...\" for $1, $2, ...), set it in the file, or keep only the branch that runs");
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

  /// What a construct that is not run (a loop, an undecided if) sets is unknown after it, each variable carrying
  /// where it was set, which a flag that uses it says. Returns the names, comma-separated.
  std::string forget(const std::set<std::string>& names, int line, const std::string& where, const std::string& what) {
    std::string list;
    for (const auto& name : names) {
      ex_.vars()[name] = Var{{}, false, false, line, {shell::set_where(name, what, where)}};
      list += (list.empty() ? "" : ", ") + name;
    }
    return list;
  }

  void and_or(const Node& n) {
    std::string why;
    std::optional<bool> status = status_of(n.children.front(), why);
    for (std::size_t k = 1; k < n.children.size(); ++k) {
      const Node& c = n.children[k];
      if (!status) {
        if (rel_.relevant(c))
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
    if (n.background) {  // bash manual, "Lists of Commands": an asynchronous command's status is 0
      exec(n);
      return true;
    }
    if (n.kind == Node::Kind::Simple && !n.words.empty() && n.words.front().kind == Token::Kind::Arith) {
      // (( expression )): true when it is not 0 (bash manual, "Conditional Constructs").
      const auto v = arithmetic_command(n.words.front());
      if (!v) why = "it tests ((" + n.words.front().text + ")), whose operands the file does not determine";
      if (v) s = *v != 0;
    } else if (n.kind == Node::Kind::Simple && !n.words.empty() && n.words.front().kind == Token::Kind::Word) {
      const std::string& cmd = n.words.front().text;
      if (cmd == "[" || cmd == "[[" || cmd == "test") {
        s = shell::test_command(ex_, n, out_.notes, why);
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

  /// A for loop whose list expands to no word, all of it known (for A in "$@" with no arguments), never runs.
  bool runs_over_nothing(const Node& n) {
    for (const auto& t : n.words) {
      if (t.kind == Token::Kind::Arith) return false;  // for ((...)): its condition decides
      if (t.text == "$@" || t.text == "\"$@\"" || t.text == "$*" || t.text == "\"$*\"") {
        // No arguments (--args ""): "$@" is no word at all.
        const auto it = ex_.vars().find("@");
        if (it == ex_.vars().end() || !it->second.known || !it->second.values.empty()) return false;
        continue;
      }
      if (!finalize(ex_.expand(t, false)).empty() || t.text.find('$') != std::string::npos) return false;
    }
    return true;
  }

  /// Runs `f` as bash runs a subshell (bash manual, "Command Execution Environment": ( list ), a command of a pipeline,
  /// an asynchronous list, and a child shell such as bash -c, which then drops what is not exported): it starts with
  /// the script's variables and arguments, and what it assigns, shifts or unsets, and an exit, end with it.
  template <class F>
  void subshell(int line, F&& f) {
    std::size_t size = 0;
    for (const auto& [name, v] : ex_.vars()) {
      size += name.size();
      for (const auto& e : v.values)
        size += e.text.size() + 8;
    }
    copied_ += size;
    if (copied_ > kShellMaxCopied)
      error(line, "the script's subshells, pipelines and background jobs copy its variables past " +
                      std::to_string(kShellMaxCopied >> 20) +
                      " MiB in all; trainsim reads launch scripts whose copies stay under that");
    auto vars = ex_.vars();
    auto exports = exports_;
    const auto args = args_;
    const bool positional = positional_;
    ++subshells_;
    f();
    --subshells_;
    stopped_ = false;
    ex_.vars() = std::move(vars);
    exports_ = std::move(exports);
    args_ = args;
    positional_ = positional;
  }

  /// An exit: what follows is not read, in the subshell (child shell) only if in one.
  void stop(int line, const std::string& why) {
    stopped_ = true;
    out_.notes.push_back("line " + std::to_string(line) + ": " + why + "; what follows" +
                         (subshells_ > 0 ? " in the subshell (or child shell) it runs in" : "") + " is not read");
    if (subshells_ > 0) return;
    out_.exit_line = line;
    out_.exit_reason = why;
  }

  /// NAME=value of a readonly NAME: bash drops the rest of the command (line, compound, subshell) and reads on.
  void abandon(int line, const std::string& name) {
    out_.notes.push_back("line " + std::to_string(line) + ": " + name +
                         " is readonly: bash refuses the assignment and skips the rest of the command it is in (the "
                         "line, or the compound command or subshell around it)");
    stopped_ = true;
    abandoned_ = subshells_ == top_subshells_;  // not inside a ( ) subshell of the script it runs in
  }

  /// (( expression )): evaluated with what it assigns (bash manual, "Conditional Constructs").
  std::optional<std::int64_t> arithmetic_command(const Token& t) {
    const auto v = ex_.arithmetic(t.text, "((" + t.text + "))", t.line);
    if (const auto name = ex_.take_readonly_hit(); !name.empty()) abandon(t.line, name);
    return v;
  }

  void simple(const Node& n) {
    if (!n.words.empty() && n.words.front().kind == Token::Kind::Arith) {
      arithmetic_command(n.words.front());
      return;
    }
    std::size_t k = 0;
    std::vector<Token> prefix;  // leading assignments
    for (; k < n.words.size(); ++k) {
      const Token& t = n.words[k];
      if (t.kind == Token::Kind::ArrayAssign || (t.kind == Token::Kind::Word && assignment_name(t.text) > 0)) {
        prefix.push_back(t);
      } else {
        break;
      }
    }
    if (k == n.words.size()) {  // assignments alone: they set the script's variables
      for (const auto& t : prefix) {
        if (exports_.readonly(assigned_name(t))) return abandon(n.line, assigned_name(t));
        ex_.assign(t);
        exports_.assigned(assigned_name(t));
      }
      return;
    }
    const Token& head = n.words[k];
    const std::vector<Token> rest(n.words.begin() + static_cast<std::ptrdiff_t>(k) + 1, n.words.end());
    if (head.kind == Token::Kind::Word && (head.text == "export" || head.text == "declare" || head.text == "typeset" ||
                                           head.text == "local" || head.text == "readonly")) {
      const auto words = exports_.settable(rest);  // bash keeps a readonly variable's value, and goes on
      exports_.declared(head.text, words);
      for (const Token& t : words) {
        // export, readonly and local take no element (bash: "not a valid identifier", the array unchanged).
        const bool element = t.kind == Token::Kind::Word && t.text.find('[') < assignment_name(t.text);
        if (element && head.text != "declare" && head.text != "typeset") continue;
        if (t.kind == Token::Kind::ArrayAssign || (t.kind == Token::Kind::Word && assignment_name(t.text) > 0))
          ex_.assign(t);
      }
      return;
    }
    if (head.kind == Token::Kind::Word && head.text == "set") exports_.set_options(rest);
    if (head.kind == Token::Kind::Word && head.text == "unset") {
      const auto names = exports_.settable(rest);
      exports_.unset(names);
      ex_.unset(names);
      return;
    }
    if (head.kind == Token::Kind::Word && head.text == "shift" && positional_) {
      std::size_t drop = 1;
      if (k + 1 < n.words.size()) {
        const auto w = finalize(ex_.expand(n.words[k + 1], false));
        const std::string t = w.empty() || w.front().unknown ? "" : w.front().text;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), drop);
        if (t.empty() || t.size() > 6 || ec != std::errc() || end != t.data() + t.size())
          error(n.line, "shift " + n.words[k + 1].text + ": expected a number of arguments to drop");
      }
      if (drop <= args_.size()) {  // bash leaves them when asked to drop more than there are
        auto kept = std::vector<std::string>(args_.begin() + static_cast<std::ptrdiff_t>(drop), args_.end());
        set_positional(kept);
      }
      return;
    }
    if (head.kind == Token::Kind::Word && head.text == "exit")
      return stop(n.line,
                  "the script exits here as written (the condition above holds with the file's own values; "
                  "set what it tests in the file, or import the command itself)");
    if (head.kind == Token::Kind::Word && head.text == "let") {  // let EXPR ...: each an arithmetic expression
      for (std::size_t j = k + 1; j < n.words.size(); ++j)
        for (const auto& w : finalize(ex_.expand(n.words[j], true))) {
          if (!w.unknown) {
            ex_.arithmetic(w.text, "let " + w.text, n.line);
            continue;
          }
          std::set<std::string> names;
          shell::arith_assigned(w.text, names);
          for (const auto& name : names)
            ex_.set_integer(name, std::nullopt, "let " + w.text, n.line);
        }
      return;
    }
    ShellCommand cmd{n.line, {}};
    cmd.after_comment = n.after_comment;
    if (n.after_comment > 0)
      out_.notes.push_back(
          "line " + std::to_string(n.line) + ": the comment on line " + std::to_string(n.after_comment) +
          " ends the command before it (a comment runs to the end of its line, a backslash there "
          "included), so bash runs line " +
          std::to_string(n.line) + " as a command of its own, not as more of that command's arguments");
    // Expanded once: what the expansions assign stays in the script ($((N++)) in X=$((N++)) cmd), as bash has it.
    std::vector<std::pair<std::string, Var>> given;
    prefix = exports_.settable(prefix);  // bash leaves a readonly one out and runs the command
    ex_.with_prefix(prefix, [&] {
      for (const auto& t : prefix) {
        const Var& v = ex_.vars()[assigned_name(t)];
        given.emplace_back(assigned_name(t), v);
        if (v.known && !v.array && !v.values.empty() && v.values.front().text.find(kUnknown) == std::string::npos)
          cmd.env.emplace_back(assigned_name(t), v.values.front().text);
      }
    });
    const auto child = [&](const std::string& text, int line) {  // a child shell: the exported and prefix variables
      subshell(line, [&] {
        std::erase_if(ex_.vars(), [&](const auto& v) {
          return !v.first.empty() && name_char(v.first.front(), true) && !exports_.exported(v.first);
        });
        for (const auto& [name, v] : given)
          ex_.vars()[name] = v;
        exports_.drop_readonly();  // a new bash process: no variable of its own is readonly
        run(text, line, depth_ + 1);
      });
    };
    for (std::size_t j = k; j < n.words.size(); ++j) {
      const Token& t = n.words[j];
      if (t.kind == Token::Kind::Sbatch) {
        cmd.words.push_back({"#SBATCH", t.line});
        for (auto& w : finalize(shell::split_words(t.text, t.line)))  // markers: a heredoc's unknowns
          cmd.words.push_back(std::move(w));
        continue;
      }
      auto w = finalize(ex_.expand(t, true));
      cmd.words.insert(cmd.words.end(), std::make_move_iterator(w.begin()), std::make_move_iterator(w.end()));
    }
    // bash -c "STRING" / sh -c "STRING" (srun ... bash -c "$LAUNCHER $CMD"): the string is a script of its own.
    for (std::size_t j = 0; j + 2 < cmd.words.size(); ++j) {
      const std::string shell_name = basename(cmd.words[j].text);
      // NVIDIA Base Command's bcprun runs its -c / --cmd string as one (a user trial: LLM360's K2 65B script).
      const bool bcp = shell_name == "bcprun";
      if (!bcp && shell_name != "bash" && shell_name != "sh") continue;
      const auto is_c = [&](const std::string& w) {
        return bcp ? w == "-c" || w == "--cmd" || w.starts_with("--cmd=") : w.starts_with("-") && w.ends_with("c");
      };
      std::size_t c = j + 1;  // bash -x -c, bash -e -c, bash -lc; bcprun -n 60 -p 8 -c: options before the string
      while (c + 1 < cmd.words.size() && (bcp || cmd.words[c].text.starts_with("-")) && !is_c(cmd.words[c].text))
        ++c;
      const bool cmd_eq = bcp && c < cmd.words.size() && cmd.words[c].text.starts_with("--cmd=");  // --cmd=STRING
      if ((c + 1 < cmd.words.size() && is_c(cmd.words[c].text)) || cmd_eq) {
        const ShellWord script = cmd_eq ? ShellWord{cmd.words[c].text.substr(6), cmd.words[c].line} : cmd.words[c + 1];
        // bcprun --env 'NAME=VALUE ...': the job's environment, as a prefix assignment is (NVTE_FUSED_ATTN=0).
        ShellCommand launcher{cmd.line, {cmd.words[j]}};
        for (std::size_t e = j + 1; bcp && e + 1 < c; ++e)
          if (cmd.words[e].text == "--env")
            for (const auto& w : shell::split_words(cmd.words[e + 1].text, cmd.words[e + 1].line))
              if (const auto eq = assignment_name(w.text); eq > 0)
                launcher.env.emplace_back(w.text.substr(0, eq), w.text.substr(eq + 1));
        cmd.words.resize(j);
        if (!cmd.words.empty()) out_.commands.push_back(std::move(cmd));
        if (!launcher.env.empty()) out_.commands.push_back(std::move(launcher));
        child(script.text, script.line);
        return;
      }
    }
    const std::string name = cmd.words.empty() ? std::string() : basename(cmd.words.front().text);
    if (name == "source" || name == ".") {  // the file may set any variable: those set so far are unknown after it
      const std::string file = name + " " + (cmd.words.size() > 1 ? cmd.words[1].text : "");
      std::set<std::string> names;
      for (const auto& [var, v] : ex_.vars())  // the invocation's --env values (line 0) are the user's: kept
        if (!var.empty() && name_char(var.front(), true) && v.line > 0) names.insert(var);
      forget(names, n.line, " at line " + std::to_string(n.line) + ", which may set it again: write its value", file);
      out_.notes.push_back("line " + std::to_string(n.line) + ": " + file +
                           " is not read: the variables it sets are unknown here");
    }
    if (subshells_ > 0 && !cmd.words.empty()) {  // a subshell's command keeps what it saw (an export in ( ... ) | tee)
      const auto seen = known_scalars();
      cmd.env.insert(cmd.env.begin(), seen.begin(), seen.end());
    }
    if (!cmd.words.empty()) out_.commands.push_back(std::move(cmd));
    for (const auto& h : n.heredocs) {
      if (name == "sbatch" || name == "bash" || name == "sh" || name == "srun") {
        child(h.quoted_delimiter ? h.text : ex_.heredoc_body(h.text, h.line), h.line);
      } else {
        out_.notes.push_back("line " + std::to_string(h.line) + ": the heredoc given to " +
                             (name.empty() ? std::string("the command") : name) + " is not read as a script");
      }
    }
  }

  void clamp_lines(std::vector<Token>& tokens) const {
    for (auto& t : tokens) {
      t.line = std::min(t.line, last_line_);
      clamp_lines(t.elements);
    }
  }

  /// $1 ... ${N}, $# and $@ / $* from the given arguments; one past the last is unset, and a bare reference to it
  /// expands to nothing (not to an unknown value), as bash has it.
  void set_positional(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args_.size(); ++i)
      ex_.vars().erase(std::to_string(i + 1));
    args_ = args;
    positional_ = true;
    ex_.set_positional_given();
    std::vector<Elem> all;
    std::vector<std::string> origins;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      const std::string origin = "$" + std::to_string(i + 1) + " = \"" + args_[i] + "\" (" + inv_.args_origin + ")";
      ex_.vars()[std::to_string(i + 1)] = Var{{{args_[i], 0}}, true, false, 0, {origin}};
      all.push_back({args_[i], 0, {origin}});
      origins.push_back(origin);
    }
    ex_.vars()["#"] = Var{{{std::to_string(args_.size()), 0}}, true, false, 0, {}};
    ex_.vars()["@"] = Var{all, true, true, 0, origins};
  }

  const std::string& origin_;
  const FlagFilter& matters_;
  Relevance rel_;
  Expander ex_;
  const ShellInvocation& inv_;
  std::vector<std::string> args_;
  bool positional_ = false;  // arguments were given: $1 ... are known (empty past the last)
  ShellScript out_;
  int depth_ = 0;
  int last_line_ = 1;  // the file's last line
  bool stopped_ = false;
  bool abandoned_ = false;                  // stopped_ by an error that ends only the script's current command
  const std::vector<Node>* top_ = nullptr;  // the commands of the script (or child shell) being read
  int top_subshells_ = 0;                   // subshells_ where it runs
  int subshells_ = 0;                       // subshells and child shells the walk is inside
  shell::Exports exports_;                  // what a child shell inherits
  std::size_t copied_ = 0;                  // bytes of variables copied for them
};

}  // namespace

ShellScript read_shell(std::string_view text, const std::string& origin, const FlagFilter& matters,
                       const ShellInvocation& invocation) {
  if (text.size() > kShellMaxText)
    throw ConfigError(origin, "",
                      "is " + std::to_string(text.size() >> 20) + " MiB; trainsim reads launch scripts up to " +
                          std::to_string(kShellMaxText >> 20) + " MiB");
  if (const auto at = text.find_first_of(std::string{kUnknown, shell::kUnset}); at != std::string_view::npos)
    throw ConfigError(origin, "",
                      "holds a control character (0x0" + std::to_string(static_cast<int>(text[at])) +
                          "); expected a shell script (text)");
  Shell sh(origin, matters, invocation);
  sh.run(text, 1, 0);
  return sh.finish();
}

}  // namespace sim::importers
