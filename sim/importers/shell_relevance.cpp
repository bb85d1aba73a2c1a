// sim/importers/shell_relevance.cpp: what a statement the launch-script reader does not run could change
// (shell_relevance.hpp).
#include "sim/importers/shell_relevance.hpp"

#include "sim/importers/shell_arith.hpp"
#include "sim/importers/shell_expand.hpp"

#include <algorithm>
#include <cctype>

namespace sim::importers::shell {

std::string basename(const std::string& s) {
  const auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

bool is_launcher(const std::string& command) {
  static const std::set<std::string, std::less<>> kLaunchers = {
      "torchrun", "python", "python3",    "srun",    "deepspeed", "mpirun", "sbatch", "bash",
      "sh",       "uv",     "accelerate", "mpiexec", "exec",      "eval",   "nsys",   "bcprun"};
  return kLaunchers.contains(basename(command));
}

std::string assigned_name(const Token& t) {
  if (t.kind == Token::Kind::ArrayAssign) return t.text.ends_with('+') ? t.text.substr(0, t.text.size() - 1) : t.text;
  const std::string name = t.text.substr(0, assignment_name(t.text));
  return name.substr(0, name.find('['));  // ARGS[1]=... sets ARGS
}

void arith_assigned_in(const Token& t, std::set<std::string>& names) {
  if (t.kind == Token::Kind::Arith) arith_assigned(t.text, names);
  if (t.kind != Token::Kind::Word) return;
  for (auto at = t.text.find("$(("); at != std::string::npos; at = t.text.find("$((", at + 3)) {
    int depth = 0;
    std::size_t end = at + 1;
    for (; end < t.text.size(); ++end) {
      depth += t.text[end] == '(' ? 1 : t.text[end] == ')' ? -1 : 0;
      if (depth == 0) break;
    }
    arith_assigned(std::string_view(t.text).substr(at + 3, end - std::min(end, at + 3)), names);
  }
}

void assigned_in(const std::vector<Node>& nodes, std::set<std::string>& names) {
  for (const auto& n : nodes) {
    if (n.subshell) continue;  // what a subshell assigns is not seen after it
    for (const auto& t : n.words)
      arith_assigned_in(t, names);
    if (!n.words.empty() && n.words[0].kind == Token::Kind::Word && n.words[0].text == "let")
      for (const auto& t : n.words)
        arith_assigned(t.text, names);
    assigned_in(n.children, names);
    assigned_in(n.otherwise, names);
    for (const auto& [c, b] : n.arms) {
      assigned_in(c, names);
      assigned_in(b, names);
    }
    if (!n.var.empty()) names.insert(n.var);
    // The assignments a statement makes: its leading words (after export, local, declare or readonly), not a command's
    // arguments (a review: `echo TP=4` in a skipped if made TP unknown).
    std::size_t k = 0;
    if (!n.words.empty() && n.words[0].kind == Token::Kind::Word &&
        (n.words[0].text == "export" || n.words[0].text == "local" || n.words[0].text == "declare" ||
         n.words[0].text == "readonly"))
      k = 1;
    for (; k < n.words.size(); ++k) {
      const Token& t = n.words[k];
      if (t.kind != Token::Kind::ArrayAssign && !(t.kind == Token::Kind::Word && assignment_name(t.text) > 0)) break;
      names.insert(assigned_name(t));
    }
  }
}

namespace {
constexpr std::string_view kSetIn = " is set in the ";
}  // namespace

std::string set_where(const std::string& name, const std::string& what, const std::string& where) {
  return name + std::string(kSetIn) + what + where;
}

/// The bash construct in `value` that trainsim does not evaluate, named for the message (a tester's trial: each was
/// reported as a variable the file does not define, though the variable was defined); empty when none is seen.
std::string unevaluated_construct(const std::string& value) {
  const std::string not_evaluated = ", which trainsim does not evaluate";
  const std::string positional =
      "a positional parameter the invocation does not give (trainsim does not run set --; pass the script's arguments "
      "with --args)";
  if (value.find("${!") != std::string::npos) return "indirect expansion (${!NAME})" + not_evaluated;
  if (value.find("$[") != std::string::npos)
    return "bash's old arithmetic $[...]" + not_evaluated + " (write $((...)))";
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  // After ${: a digit (a positional parameter), # (a length); after ${NAME: an offset (a substring), a pattern or case
  // operator, or [ and a word (a keyed array).
  for (std::size_t at = value.find("${"); at != std::string::npos; at = value.find("${", at + 2)) {
    std::size_t i = at + 2;
    if (i < value.size() && digit(value[i])) return positional;
    if (i < value.size() && value[i] == '#') return "a length expansion (${#NAME})" + not_evaluated;
    while (i < value.size() && ident(value[i]))
      ++i;
    if (i == at + 2 || i + 1 >= value.size()) continue;
    const char op = value[i], next = value[i + 1];
    if (op == ':' && (digit(next) || next == ' ' || next == '(')) return "substring expansion" + not_evaluated;
    if (op == '%' || op == '#' || op == '/' || op == '^' || op == ',')
      return "a pattern or case operator (${NAME" + std::string(1, op) + "...})" + not_evaluated;
    if (op == '[' && !digit(next) && next != ']' && next != '@' && next != '*')
      return "an array indexed by a variable or a word (an associative array?)" + not_evaluated;
  }
  for (std::size_t at = value.find('$'); at != std::string::npos; at = value.find('$', at + 1))
    if (at + 1 < value.size() &&
        (digit(value[at + 1]) || value[at + 1] == '@' || value[at + 1] == '*' || value[at + 1] == '#'))
      return positional;
  return "";
}

std::string unknown_value_reason(const std::string& value, const std::vector<std::string>& origins) {
  std::string set;
  for (const auto& o : origins)
    if (o.find(kSetIn) != std::string::npos) set += (set.empty() ? "" : "; ") + o;
  if (const std::string construct = unevaluated_construct(value); set.empty() && !construct.empty())
    return "\"" + value + "\" uses " + construct + "; give the value itself";
  if (set.empty())
    return "\"" + value +
           "\" refers to a variable, command or arithmetic the file does not define; give the value itself";
  return "\"" + value + "\" is not determined by the file: " + set;
}

std::optional<std::string> set_in_skipped(const std::string& value, const std::vector<std::string>& origins) {
  if (std::none_of(origins.begin(), origins.end(),
                   [](const std::string& o) { return o.find(kSetIn) != std::string::npos; }))
    return std::nullopt;
  return unknown_value_reason(value, origins);
}

std::optional<std::string> unread_flags(const ShellWord& w) {
  if (const auto set = set_in_skipped(w.text, w.defaults)) return *set + "; its flags are unread";
  if (w.operator_expansion)  // a user trial: "${ARGS[@]/--bf16/--fp16}" was read as unset, its flags lost
    return w.text +
           ": bash's pattern, substring and case operators are not evaluated by trainsim, so the flags it holds "
           "would be unread; write them out in the file";
  return std::nullopt;
}

std::string unexpanded(const ShellWord& w) {
  return w.text +
         (w.unset_empty ? ": the file does not set it, so the flags it may hold are not read"
                        : ": trainsim cannot expand it (a command's output, or a bash operator it does not "
                          "evaluate), so the flags it may hold are not read") +
         "; write them out in the file";
}

bool Relevance::relevant(const std::vector<Node>& nodes, bool assignments) const {
  return std::any_of(nodes.begin(), nodes.end(), [&](const Node& n) { return relevant(n, assignments); });
}

bool Relevance::relevant(const Node& n, bool assignments) const {
  if (n.subshell) assignments = false;  // what a subshell assigns is not seen after it
  if (assignments) {
    std::set<std::string> names;
    for (const auto& t : n.words)
      arith_assigned_in(t, names);
    if (!n.words.empty() && n.words[0].kind == Token::Kind::Word && n.words[0].text == "let") return true;
    if (!names.empty()) return true;
  }
  if (relevant(n.children, assignments) || relevant(n.otherwise, assignments)) return true;
  for (const auto& [c, b] : n.arms)
    if (relevant(c, assignments) || relevant(b, assignments)) return true;
  for (std::size_t k = 0; k < n.words.size(); ++k) {
    const Token& t = n.words[k];
    if (t.kind == Token::Kind::Sbatch) return true;
    if (t.kind == Token::Kind::ArrayAssign) {
      if (assignment_matters(t, !assignments)) return true;
      continue;
    }
    std::string_view raw = t.text;
    while (!raw.empty() && (raw.front() == '"' || raw.front() == '\''))
      raw.remove_prefix(1);
    if (assignment_name(raw) > 0 && k == 0) {
      if (assignment_matters(t, !assignments)) return true;
      continue;
    }
    if (flags_in(t.text).second) return true;
    if (k == 0 && (is_launcher(t.text) || t.text.ends_with(".py") || t.text.ends_with(".sh") || t.text == "export" ||
                   t.text == "unset" || t.text == "declare" || t.text == "source" || t.text == "." ||
                   t.text == "local" || t.text == "readonly"))
      return true;
  }
  return false;
}

std::pair<bool, bool> Relevance::flags_in(std::string_view raw) const {
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

bool Relevance::assignment_matters(const Token& t, bool only_flags) const {
  std::string text = t.text;
  for (const auto& e : t.elements)
    text += " " + e.text;
  const auto [any, matters] = flags_in(text);
  return matters || (!any && !only_flags);
}

bool Relevance::assigns_anywhere(const std::vector<Node>& nodes) const {
  for (const auto& n : nodes)
    for (const auto& t : n.words) {
      std::set<std::string> names;
      arith_assigned_in(t, names);
      if (!names.empty() || (t.kind == Token::Kind::Word && t.text == "let")) return true;
      std::string_view raw = t.text;
      if (t.kind == Token::Kind::Word && assignment_name(raw) > 0 && assignment_matters(t)) return true;
    }
  return false;
}

}  // namespace sim::importers::shell
