// sim/importers/shell_exports.cpp: shell_exports.hpp's bookkeeping.
#include "sim/importers/shell_exports.hpp"

#include "sim/importers/shell_expand.hpp"
#include "sim/importers/shell_relevance.hpp"

namespace sim::importers::shell {

namespace {

/// The variable a builtin's word names: NAME=value's NAME, or the word itself.
std::string named(const Token& t) {
  const bool assigns =
      t.kind == Token::Kind::ArrayAssign || (t.kind == Token::Kind::Word && assignment_name(t.text) > 0);
  return assigns ? assigned_name(t) : t.text;
}

}  // namespace

void Exports::declared(const std::string& builtin, const std::vector<Token>& words) {
  bool exports = builtin == "export" || all_, options = true, locks = builtin == "readonly";
  for (const auto& t : words) {
    if (options && t.kind == Token::Kind::Word && t.text.size() > 1 && t.text[0] == '-') {
      locks = locks || (builtin != "export" && t.text.find('r') != std::string::npos);
      // export -n NAME takes the attribute away; declare -x (typeset, local) gives it.
      exports = builtin == "export" ? t.text.find('n') == std::string::npos
                                    : exports || t.text.find('x') != std::string::npos;
      continue;
    }
    options = false;
    const std::string name = named(t);
    if (locks) readonly_.insert(name);
    if (exports) {
      names_.insert(name);
    } else if (builtin == "export") {
      names_.erase(name);
    }
  }
}

void Exports::set_options(const std::vector<Token>& words) {
  for (std::size_t j = 0; j < words.size(); ++j) {
    const std::string& w = words[j].text;
    if (w.size() < 2 || (w[0] != '-' && w[0] != '+')) continue;
    if (w == "-o" || w == "+o") {
      if (j + 1 < words.size() && words[j + 1].text == "allexport") all_ = w[0] == '-';
      ++j;
    } else if (w.find('a') != std::string::npos) {
      all_ = w[0] == '-';
    }
  }
}

std::vector<Token> Exports::settable(const std::vector<Token>& words) const {
  std::vector<Token> kept;
  for (const auto& t : words)
    if (!readonly(named(t))) kept.push_back(t);
  return kept;
}

void Exports::unset(const std::vector<Token>& words) {
  for (const auto& t : words)
    names_.erase(t.text);
}

}  // namespace sim::importers::shell
