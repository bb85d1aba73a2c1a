// sim/importers/shell_expand.cpp: word expansion for the launch-script reader, following the bash manual's "Shell
// Expansions": parameter expansion with the default forms, ${ARR[@]} and ${#ARR[@]}, arithmetic expansion
// (shell_arith.cpp), command substitution kept as unknown text, word splitting of unquoted results, quote removal.
#include "sim/importers/shell_expand.hpp"

#include "sim/importers/shell_arith.hpp"
#include "sim/importers/shell_relevance.hpp"

#include <algorithm>
#include <cctype>

namespace sim::importers::shell {

using base::ConfigError;

std::vector<ShellWord> finalize(std::vector<ShellWord> words) {
  for (auto& w : words) {
    if (w.text.find(kUnknown) == std::string::npos) continue;
    w.unknown = true;
    // Its text were the variables the file does not set empty; none when it holds other unknown text ($(cmd), $1).
    std::string empty;
    bool only_unset = true;
    for (std::size_t i = 0; i < w.text.size(); ++i) {
      if (w.text[i] != kUnknown) {
        empty += w.text[i];
        continue;
      }
      only_unset = only_unset && i + 1 < w.text.size() && w.text[i + 1] == kUnset;
      w.operator_expansion = w.operator_expansion || (i + 1 < w.text.size() && w.text[i + 1] == kOperator);
      i = std::min(w.text.find(kUnknown, i + 1), w.text.size());
    }
    if (only_unset) w.unset_empty = empty;
    std::erase(w.text, kUnknown);
    std::erase(w.text, kUnset);
    std::erase(w.text, kOperator);
  }
  return words;
}

std::string Expander::heredoc_body(const std::string& body, int line) {
  // As one double-quoted word: the same expansions and escapes, but a heredoc's " is a plain character outside
  // $(...), ${...} and `...`, whose own quoting bash applies (${X:+"a b"} gives a b).
  std::string word = "\"";
  for (std::size_t i = 0; i < body.size();) {
    const char c = body[i], next = i + 1 < body.size() ? body[i + 1] : '\0';
    if (c == '\\' && (next == '$' || next == '`' || next == '\\' || next == '\n')) {
      word += body.substr(i, 2);
      i += 2;
    } else if (c == '\\' && next == '"') {
      word += "\\\\\\\"";  // \" stays two characters
      i += 2;
    } else if ((c == '$' && (next == '(' || next == '{')) || c == '`') {
      const std::size_t end = shell::skip_dollar(body, i, origin_, line);
      word += body.substr(i, end - i);
      i = end;
    } else {
      word += c == '"' ? std::string("\\\"") : std::string(1, c);
      ++i;
    }
  }
  word += '"';
  std::string out;
  bool unknown = false;
  // Unknown parts keep their markers; every other character of theirs is escaped, so that the child shell reads them
  // as one literal piece of its word (a $(date) there is no command, its space no word break).
  for (const auto& field : expand(Token{Token::Kind::Word, word, line}, false))
    for (const char c : field.text) {
      if (c == kUnknown) unknown = !unknown;
      const bool plain =
          std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == kUnknown || c == kUnset || c == kOperator;
      if (unknown && !plain) out += '\\';
      out += c;
    }
  return out;
}

std::size_t assignment_name(std::string_view raw) {
  std::size_t i = 0;
  while (i < raw.size() && name_char(raw[i], i == 0))
    ++i;
  if (i > 0 && i < raw.size() && raw[i] == '[') {  // NAME[subscript]= (Expander::assign_element)
    // The matching ']', past brackets inside ${...} and $(...) (A[${#A[@]}]=x, bash's append idiom).
    int brackets = 0, nested = 0;
    for (; i < raw.size(); ++i) {
      const char c = raw[i];
      if (c == '$' && i + 1 < raw.size() && (raw[i + 1] == '{' || raw[i + 1] == '(')) {
        ++nested;
        ++i;
      } else if (nested > 0 && (c == '}' || c == ')')) {
        --nested;
      } else if (nested == 0 && c == '[') {
        ++brackets;
      } else if (nested == 0 && c == ']' && --brackets == 0) {
        break;
      }
    }
    if (i >= raw.size()) return 0;
    ++i;
  }
  if (i == 0 || i >= raw.size()) return 0;
  if (raw[i] == '=') return i;
  if (raw[i] == '+' && i + 1 < raw.size() && raw[i + 1] == '=') return i;
  return 0;
}

void Expander::error(int line, const std::string& what) const {
  // A message quotes the construct it refuses; a 200 KB expression is cut to its ends (a tester's trial).
  if (what.size() > 600) {
    auto start_of = [&](std::size_t i) {  // back to a UTF-8 character's first byte
      while (i > 0 && (static_cast<unsigned char>(what[i]) & 0xC0) == 0x80)
        --i;
      return i;
    };
    const std::size_t head = start_of(300), tail = start_of(what.size() - 200);
    throw ConfigError(
        origin_, "line " + std::to_string(line),
        what.substr(0, head) + " ... (" + std::to_string(tail - head) + " bytes) ... " + what.substr(tail));
  }
  throw ConfigError(origin_, "line " + std::to_string(line), what);
}

void Expander::charge(std::size_t n, int line) {
  total_ += n;
  if (total_ > kShellMaxTotal)
    error(line, "the script's expansions grow past " + std::to_string(kShellMaxTotal >> 20) +
                    " MiB in all (a variable that doubles itself, A=$A$A, repeated?); trainsim reads launch scripts "
                    "whose expanded text stays under that");
}

void Expander::check_size(const Var& v, int line, const std::string& name) {
  std::size_t n = 0;
  for (const auto& e : v.values)
    n += e.text.size() + 1;
  if (n > kShellMaxWord)
    error(line, name + " grows past " + std::to_string(kShellMaxWord >> 20) + " MiB (a variable that doubles itself, " +
                    name + "=$" + name + "$" + name +
                    ", repeated?); trainsim reads launch scripts whose variables stay under that");
  charge(n, line);
}

void Expander::literal(Building& b, std::string_view text, int line) {
  if (!b.started) {
    b.started = true;
    b.cur.line = line;
  }
  b.cur.text.append(text);
  if (b.cur.text.size() > kShellMaxWord)
    error(line, "a word grows past " + std::to_string(kShellMaxWord >> 20) + " MiB");
}

void Expander::end_field(Building& b) {
  if (b.started) {
    charge(b.cur.text.size(), b.cur.line);
    b.fields.push_back(std::move(b.cur));
  }
  b.cur = {};
  b.started = false;
}

void Expander::add(Building& b, Expansion e, std::string_view raw, int line, bool quoted, bool split) {
  b.cur.defaults.insert(b.cur.defaults.end(), e.defaults.begin(), e.defaults.end());
  if (!e.known) {  // kept as written, between markers: the words it ends up in are unknown, the others are not
    const std::string mark = e.unset ? std::string(1, kUnset) : e.op ? std::string(1, kOperator) : std::string();
    literal(b, std::string(1, kUnknown) + mark + std::string(raw) + kUnknown, line);
    return;
  }
  if (quoted || !split) {
    if (e.at && quoted && split) {
      if (e.values.empty()) b.empty_at = true;
      for (std::size_t k = 0; k < e.values.size(); ++k) {
        if (k > 0) end_field(b);
        b.cur.defaults.insert(b.cur.defaults.end(), e.values[k].defaults.begin(), e.values[k].defaults.end());
        literal(b, e.values[k].text, e.values[k].line);
      }
      return;
    }
    std::string joined;
    for (std::size_t k = 0; k < e.values.size(); ++k) {
      joined += (k > 0 ? " " : "") + e.values[k].text;
      b.cur.defaults.insert(b.cur.defaults.end(), e.values[k].defaults.begin(), e.values[k].defaults.end());
    }
    literal(b, joined, e.values.empty() ? line : e.values.front().line);
    if (e.values.empty() && quoted) b.started = true;
    return;
  }
  for (std::size_t k = 0; k < e.values.size(); ++k) {
    if (k > 0) end_field(b);
    const std::string& v = e.values[k].text;
    // The element's defaults go to the first word it gives (or the word being built when it gives none).
    bool attached = false;
    auto attach = [&] {
      if (attached) return;
      b.cur.defaults.insert(b.cur.defaults.end(), e.values[k].defaults.begin(), e.values[k].defaults.end());
      attached = true;
    };
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
      attach();
      literal(b, std::string_view(v).substr(start, i - start), e.values[k].line);
    }
    attach();
  }
}

/// NAME=value, NAME+=value, NAME=(...) and NAME+=(...): the variable set or appended to (bash manual, "Shell
/// Parameters"); NAME[i]=value is assign_element's.
void Expander::assign(const Token& t) {
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
      for (auto& w : expand(e, true))
        v.values.push_back({std::move(w.text), w.line, std::move(w.defaults)});
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
    if (const auto open = name.find('['); open != std::string::npos) {  // ARGS[1]=40 (a user trial: skipped)
      e.defaults = std::move(v.defaults);
      assign_element(name.substr(0, open), name.substr(open + 1, name.size() - open - 2), std::move(e), append);
      return;
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

/// An array subscript's value (bash manual, "Arrays": an arithmetic expression; negative counts back from the end of
/// `size` elements), or nullopt with `why` when the file does not determine it.
std::optional<std::int64_t> Expander::subscript_value(const std::string& subscript, int line, std::size_t size,
                                                      std::string& why) {
  std::string text;
  for (const auto& w : expand({Token::Kind::Word, subscript, line}, false))
    text += w.text;
  auto k = shell::arithmetic(
      text, [&](std::string_view n) { return lookup_int(n); }, why);
  if (k && *k < 0) {
    *k += static_cast<std::int64_t>(size);
    if (*k < 0) why = "a negative subscript past the array's start";
  }
  if (k && *k < 0) return std::nullopt;
  return k;
}

void Expander::assign_element(const std::string& name, const std::string& subscript, Elem value, bool append) {
  const int line = value.line;
  auto it = vars_.find(name);
  if (it != vars_.end() && !it->second.known) return;  // unknown it stays
  Var& v = vars_[name];
  if (it == vars_.end()) v.line = line;
  std::string why;
  const auto k = subscript_value(subscript, line, v.values.size(), why);
  if (!k) {  // an associative array's key (declare -A), or a subscript the file does not determine: unknown
    v.known = false;
    v.defaults.push_back(name + " is set at line " + std::to_string(line) + " under the subscript [" + subscript +
                         "], which trainsim does not evaluate" + (why.empty() ? "" : " (" + why + ")"));
    return;
  }
  v.array = true;
  const auto at = static_cast<std::size_t>(*k);
  if (at > v.values.size())
    error(line, name + "[" + subscript + "]=: element " + std::to_string(at) + " of an array of " +
                    std::to_string(v.values.size()) +
                    " leaves bash's array sparse, which trainsim does not read; append instead (" + name + "+=(...))");
  if (at == v.values.size()) {
    v.values.push_back(std::move(value));
  } else if (append) {
    v.values[at].text += value.text;
  } else {
    v.values[at] = std::move(value);
  }
  check_size(v, line, name);
}

void Expander::unset(const std::vector<Token>& words) {
  for (const auto& word : words) {
    std::string text;
    for (const auto& w : expand(word, false))
      text += w.text;
    if (text == "-f" || text == "-n") return;  // functions, or name references: no variable is removed
    if (text.starts_with("-")) continue;       // -v: variables, the default
    const auto open = text.find('[');
    if (open == std::string::npos) {
      vars_.erase(text);
      continue;
    }
    const std::string name = text.substr(0, open);
    auto it = vars_.find(name);
    if (it == vars_.end() || !it->second.known) continue;
    auto& values = it->second.values;
    const std::string subscript = text.substr(open + 1, text.rfind(']') > open ? text.rfind(']') - open - 1 : 0);
    if (subscript == "@" || subscript == "*") {  // every element
      values.clear();
      continue;
    }
    std::string why;
    const auto k = subscript_value(subscript, word.line, values.size(), why);
    if (k && static_cast<std::size_t>(*k) >= values.size()) continue;  // nothing there
    if (!k || static_cast<std::size_t>(*k) + 1 != values.size())
      error(word.line, "unset " + text + ": " +
                           (k ? "removing an element but the last leaves bash's array sparse, which trainsim does "
                                "not read; rebuild the array without it"
                              : "a subscript the file does not determine" + (why.empty() ? "" : " (" + why + ")")));
    values.pop_back();
  }
}

/// The fields of a word: expansion, word splitting of unquoted results when `split`, quote removal.
std::vector<ShellWord> Expander::expand(const Token& t, bool split) {
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
          add(b, dollar(std::string_view(r).substr(i, end - i), t.line), std::string_view(r).substr(i, end - i), t.line,
              true, split);
          i = end;
        } else {
          literal(b, std::string_view(r).substr(i, 1), t.line);
          ++i;
        }
      }
      if (!was_started && !b.started && !b.empty_at) literal(b, "", t.line);  // "" is an empty word
      ++i;
    } else if (c == '$' && i + 1 < r.size() && r[i + 1] == '\'') {  // $'...': ANSI-C quoting (bash manual)
      const auto end = r.find('\'', i + 2);
      if (end == std::string::npos) shell::unterminated(origin_, t.line, "$'", "'");
      literal(b, shell::ansi_c(std::string_view(r).substr(i + 2, end - i - 2)), t.line);
      i = end + 1;
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
Expander::Expansion Expander::dollar(std::string_view text, int line) {
  Expansion e;
  if (text == "$") return {{{"$", line}}};
  if (text == "$#" || text == "${#}") {  // the number of arguments: none unless they were given
    const auto it = vars_.find("#");
    return {{{it == vars_.end() ? "0" : it->second.values.front().text, line}}};
  }
  if (text.starts_with("$((") && text.ends_with("))")) {
    const auto v = arithmetic(text.substr(3, text.size() - 5), text, line);
    if (!v) return {{}, false};
    return {{{std::to_string(*v), line}}};
  }
  if (text.starts_with("$(") || text.starts_with("`")) return {{}, false};
  if (text.starts_with("${")) return parameter(text.substr(2, text.size() - 3), text, line);
  return parameter(text.substr(1), text, line);
}

/// ${inner}: NAME, NAME[i], #NAME, and the default forms :- - := = :+ + :? ?.
Expander::Expansion Expander::parameter(std::string_view inner, std::string_view text, int line) {
  bool length = false;
  if (inner.size() > 1 && inner.front() == '#') {
    length = true;
    inner.remove_prefix(1);
  }
  std::size_t i = 0;
  while (i < inner.size() && name_char(inner[i], i == 0))
    ++i;
  if (i == 0 && !inner.empty() && std::string_view("@*#?$!-0123456789").find(inner[0]) != std::string_view::npos) i = 1;
  if (i == 1 && inner[0] >= '1' && inner[0] <= '9' && text.starts_with("${"))  // ${10}: the tenth argument
    while (i < inner.size() && inner[i] >= '0' && inner[i] <= '9')
      ++i;
  std::string name(inner.substr(0, i));
  const bool positional = !name.empty() && name[0] >= '0' && name[0] <= '9' && name != "0";
  std::string index;
  if (i < inner.size() && inner[i] == '[') {
    const auto close = inner.find(']', i);
    if (close == std::string_view::npos) return {{}, false};
    index = std::string(inner.substr(i + 1, close - i - 1));
    i = close + 1;
  }
  if (name == "@" || name == "*") {  // $@ and $*: every argument, as ${ARGS[@]} / ${ARGS[*]} would give them
    if (!index.empty()) return {{}, false};
    index = name;
    name = "@";
  }
  std::string_view op, word;
  for (std::string_view o : {":-", ":=", ":+", ":?", "-", "=", "+", "?"})
    if (inner.substr(i).starts_with(o)) {
      op = o;
      word = inner.substr(i + o.size());
      break;
    }
  if (op.empty() && i != inner.size()) {  // ${X#pat}, ${X/a/b}, ${X:1:2}, ...: not evaluated
    // Marked where the variable holds flags (a word starting with '-'): a path (${MEGATRON%/}) holds none.
    const auto it = name.empty() ? vars_.end() : vars_.find(name);
    const bool flags =
        it != vars_.end() && std::any_of(it->second.values.begin(), it->second.values.end(), [](const Elem& e) {
          return e.text.starts_with('-') || e.text.find(" -") != std::string::npos;
        });
    return {.known = false, .op = flags};
  }
  if (name.empty()) return {{}, false};

  const auto it = vars_.find(name);
  const bool set = it != vars_.end();
  if (set && !it->second.known) return {.known = false, .defaults = it->second.defaults};  // with where it was set
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
      const auto k = shell::arithmetic(
          index, [&](std::string_view n) { return lookup_int(n); }, why);
      if (!k || *k < 0) return {{}, false};
      if (static_cast<std::size_t>(*k) < v.values.size()) value.values.push_back(v.values[*k]);
    }
    for (auto& e : value.values)  // an argument or environment value given to the script: written where it is used
      if (e.line == 0) e.line = line;
  }
  const bool null = value.values.empty() || (value.values.size() == 1 && value.values.front().text.empty());
  if (length) {
    if (!set) return {{}, false};
    const std::size_t n =
        value.at || index == "*" ? value.values.size() : (value.values.empty() ? 0 : value.values.front().text.size());
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
    if (!set && positional && positional_given_) return {};           // an argument past the last given: empty
    if (!set && !positional) return {.known = false, .unset = true};  // bare $NAME of a variable the file does not set
    if (!set) return {{}, false};
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
    d.defaults.push_back(
        std::string(text) + " = \"" + joined + "\" (" +
        (name[0] >= '0' && name[0] <= '9' ? "no argument " + name + " given" : name + " is not set in the file") + ")");
  if (kind == '=' && d.known) vars_[name] = Var{{{joined, line}}, true, false, line};
  return d;
}

/// A variable's (first) value where the file determines it; nullptr otherwise.
const std::string* Expander::known_text(std::string_view name) const {
  const auto it = vars_.find(std::string(name));
  if (it == vars_.end() || !it->second.known || it->second.values.empty() ||
      it->second.values.front().text.find(kUnknown) != std::string::npos)
    return nullptr;
  return &it->second.values.front().text;
}

/// A variable's value as an arithmetic operand (bash evaluates it as an expression, so NODES=010 is octal eight; a
/// null value is 0; names inside are not followed). A value bash fails on (08) is kept in lookup_error_.
std::optional<std::int64_t> Expander::lookup_int(std::string_view name) {
  const std::string* text = known_text(name);
  if (text == nullptr) return std::nullopt;
  const std::string& value = *text;
  if (std::all_of(value.begin(), value.end(), is_space)) return 0;
  std::string why;
  const auto v = shell::arithmetic(
      value, [](std::string_view) -> std::optional<std::int64_t> { return std::nullopt; }, why);
  if (!v && !why.empty() && lookup_error_.empty()) lookup_error_ = std::string(name) + "=\"" + value + "\": " + why;
  return v;
}

std::optional<std::int64_t> Expander::arithmetic(std::string_view expr, std::string_view shown, int line) {
  std::string why;
  lookup_error_.clear();
  const auto v = shell::arithmetic(
      expr, [&](std::string_view name) { return lookup_int(name); }, why,
      [&](std::string_view name, std::optional<std::int64_t> value) {
        set_integer(std::string(name), value, shown, line);
      },
      [&](std::string_view name) -> std::optional<std::string> {
        const std::string* text = known_text(name);
        return text == nullptr ? std::nullopt : std::optional<std::string>(*text);
      });
  if (!lookup_error_.empty()) error(line, std::string(shown) + ": " + lookup_error_);
  if (!v && !why.empty()) error(line, std::string(shown) + ": " + why);
  return v;
}

void Expander::set_integer(const std::string& name, std::optional<std::int64_t> value, std::string_view shown,
                           int line) {
  if (is_readonly && is_readonly(name)) {  // bash: "NAME: readonly variable"; the value stays
    readonly_hit_ = name;
    return;
  }
  if (!value) {
    const std::string where = " at line " + std::to_string(line) +
                              " from an operand the file does not determine (or in a branch that depends on one)";
    vars_[name] = Var{{}, false, false, line, {set_where(name, "arithmetic " + std::string(shown), where)}};
    return;
  }
  Elem e{std::to_string(*value), line};
  const auto it = vars_.find(name);
  if (it != vars_.end() && it->second.known && it->second.array && !it->second.values.empty()) {
    it->second.values.front() = std::move(e);  // an array's element 0, as bash assigns NAME
    return;
  }
  vars_[name] = Var{{std::move(e)}, true, false, line};
}

/// The end of the $-expansion at r[i] ($NAME, $1, $@, ${...}, $(...), `...`).
std::size_t Expander::dollar_end(const std::string& r, std::size_t i, int line) const {
  std::size_t end = shell::skip_dollar(r, i, origin_, line);
  if (end != i + 1 || r[i] != '$') return end;
  while (end < r.size() && name_char(r[end], end == i + 1))
    ++end;
  if (end == i + 1 && end < r.size() && std::string_view("@*#?$!-0123456789").find(r[end]) != std::string_view::npos)
    ++end;
  return end;
}

}  // namespace sim::importers::shell
