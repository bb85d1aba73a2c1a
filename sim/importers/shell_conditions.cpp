// sim/importers/shell_conditions.cpp: the [ ] / [[ ]] / test conditions of the launch-script reader (shell_arith.hpp).
// Operators and their precedence follow the bash manual's "Bash Conditional Expressions" and "Bourne Shell Builtins"
// (test).
#include "sim/importers/shell_arith.hpp"

#include "sim/importers/shell_expand.hpp"

#include <algorithm>
#include <charconv>

namespace sim::importers::shell {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

/// A decimal integer as test's -eq and the others read one: blanks around, a sign, digits (bash's legal_number).
std::optional<std::int64_t> decimal(std::string_view t) {
  while (!t.empty() && blank(t.front()))
    t.remove_prefix(1);
  while (!t.empty() && blank(t.back()))
    t.remove_suffix(1);
  if (t.starts_with('+')) t.remove_prefix(1);
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 10);
  if (t.empty() || ec != std::errc{} || p != t.data() + t.size()) return std::nullopt;
  return v;
}

class Test {
 public:
  Test(const std::vector<ShellWord>& w, bool dbl, std::string& why) : w_(w), dbl_(dbl), why_(why) {}

  std::optional<bool> run() {
    if (w_.empty()) return false;
    const auto v = disjunction();
    if (decided_ && k_ != w_.size())
      return undecided("it has an operand trainsim does not read: \"" + w_[k_].text + "\"");
    if (!decided_) return std::nullopt;
    return v;
  }

 private:
  std::optional<bool> undecided(const std::string& why) {
    if (decided_) why_ = why;
    decided_ = false;
    return std::nullopt;
  }
  bool at(std::string_view s) const { return k_ < w_.size() && w_[k_].text == s; }

  bool disjunction() {
    bool v = conjunction();
    while (at("-o") || at("||")) {
      ++k_;
      v = conjunction() || v;
    }
    return v;
  }
  bool conjunction() {
    bool v = negation();
    while (at("-a") || at("&&")) {
      ++k_;
      v = negation() && v;
    }
    return v;
  }
  bool negation() {
    if (++depth_ > 64) return undecided("nested deeper than 64"), false;
    bool v = false;
    if (at("!") && k_ + 1 < w_.size()) {
      ++k_;
      v = !negation();
    } else if (at("(") && k_ + 1 < w_.size()) {
      ++k_;
      v = disjunction();
      if (at(")")) ++k_;
    } else {
      v = primary();
    }
    --depth_;
    return v;
  }
  const ShellWord* operand() {
    if (k_ >= w_.size()) return undecided("an operand is missing"), nullptr;
    const ShellWord* w = &w_[k_++];
    // Variables the file does not set were taken as empty before the test (shell.cpp); what is left unknown is set
    // from something the file does not determine (a user trial read "which the file does not set" of a variable the
    // file sets, then changes in a loop over ssh).
    if (w->unknown)
      return undecided("it tests \"" + w->text +
                       "\", whose value the file does not determine: a command's output, a variable set in a loop or "
                       "an if that is not run, or an argument"),
             nullptr;
    return w;
  }
  bool primary() {
    static const std::vector<std::string_view> kFile = {"-e", "-f", "-d", "-x", "-r", "-w", "-s",
                                                        "-L", "-h", "-p", "-S", "-b", "-c", "-g",
                                                        "-u", "-k", "-O", "-G", "-N", "-t", "-v"};
    if (k_ + 1 < w_.size() && std::find(kFile.begin(), kFile.end(), w_[k_].text) != kFile.end()) {
      undecided("it tests " + w_[k_].text + " " + w_[k_ + 1].text + ", which depends on the machine it runs on");
      k_ += 2;
      return false;
    }
    if ((at("-z") || at("-n")) && k_ + 1 < w_.size()) {
      const bool z = at("-z");
      ++k_;
      const ShellWord* w = operand();
      return w && (z ? w->text.empty() : !w->text.empty());
    }
    const ShellWord* a = operand();
    if (!a) return false;
    static const std::vector<std::string_view> kBinary = {"=",   "==",  "!=",  "<",   ">",   "-eq",
                                                          "-ne", "-lt", "-le", "-gt", "-ge", "=~"};
    if (k_ >= w_.size() || std::find(kBinary.begin(), kBinary.end(), w_[k_].text) == kBinary.end())
      return !a->text.empty();
    const std::string op = w_[k_++].text;
    const ShellWord* b = operand();
    if (!b) return false;
    if (op == "=~") return undecided("it matches a regular expression"), false;
    if (op == "=" || op == "==" || op == "!=") {
      if (dbl_ && b->text.find_first_of("*?[") != std::string::npos)
        return undecided("it matches the pattern \"" + b->text + "\""), false;
      return (a->text == b->text) == (op != "!=");
    }
    if (op == "<") return a->text < b->text;
    if (op == ">") return a->text > b->text;
    std::string why;
    const auto none = [](std::string_view) -> std::optional<std::int64_t> { return std::nullopt; };
    // [ ] and test read decimal integers (bash manual, "Bash Conditional Expressions": "may be positive or negative
    // integers"; 010 is ten); [[ ]] evaluates its operands as arithmetic expressions, where 010 is octal eight.
    const auto x = dbl_ ? arithmetic(a->text, none, why) : decimal(a->text);
    const auto y = dbl_ ? arithmetic(b->text, none, why) : decimal(b->text);
    if (!x || !y) return undecided("\"" + a->text + " " + op + " " + b->text + "\" compares non-integers"), false;
    if (op == "-eq") return *x == *y;
    if (op == "-ne") return *x != *y;
    if (op == "-lt") return *x < *y;
    if (op == "-le") return *x <= *y;
    if (op == "-gt") return *x > *y;
    return *x >= *y;
  }

  const std::vector<ShellWord>& w_;
  bool dbl_;
  std::string& why_;
  std::size_t k_ = 0;
  int depth_ = 0;
  bool decided_ = true;
};

}  // namespace

std::optional<bool> evaluate_test(const std::vector<ShellWord>& words, bool double_bracket, std::string& why) {
  return Test(words, double_bracket, why).run();
}

std::optional<bool> test_command(Expander& ex, const Node& n, std::vector<std::string>& notes, std::string& why) {
  const std::string& cmd = n.words.front().text;
  std::vector<ShellWord> words;
  for (std::size_t k = 1; k < n.words.size(); ++k) {
    auto w = finalize(ex.expand(n.words[k], cmd != "[["));
    if (cmd == "[[" && w.empty()) w.push_back({"", n.words[k].line});
    words.insert(words.end(), w.begin(), w.end());
  }
  if (cmd != "test" && !words.empty()) words.pop_back();  // ] or ]]
  // A variable the file does not set is empty in the documented environment (found by a user trial: `[ -z "$X" ]` was
  // refused as undecided); said in a note, since a script may exit on it.
  for (auto& w : words)
    if (w.unknown && w.unset_empty) {
      notes.push_back("line " + std::to_string(n.line) + ": tests \"" + w.text +
                      "\", which the file does not set: taken as \"" + *w.unset_empty +
                      "\", as bash gives it in an environment that sets nothing (--env NAME=VALUE sets it)");
      w.text = *w.unset_empty;
      w.unknown = false;
    }
  return evaluate_test(words, cmd == "[[", why);
}

}  // namespace sim::importers::shell
