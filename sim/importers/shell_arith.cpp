// sim/importers/shell_arith.cpp: $((arithmetic)) for the launch-script reader (shell_arith.hpp). Operators and
// their precedence follow the bash manual's "Shell Arithmetic" (test conditions are shell_conditions.cpp's).
#include "sim/importers/shell_arith.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

namespace sim::importers::shell {
namespace {

bool name_start(char c) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}
bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

// The assignment operators, longest first (bash manual, "Shell Arithmetic": = *= /= %= += -= <<= >>= &= ^= |=).
constexpr std::array<std::string_view, 11> kAssignOps = {
    "<<=", ">>=", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "="};

class Arith {
 public:
  Arith(std::string_view s, const ArithLookup& lookup, const ArithAssign& assign, const ArithText& text,
        std::string& why)
      : s_(s), lookup_(lookup), assign_(assign), text_(text), why_(why) {}

  std::optional<std::int64_t> run() {
    auto v = comma();
    space();
    if (ok_ && i_ != s_.size()) fail("unexpected \"" + std::string(s_.substr(i_)) + "\"");
    if (!ok_ || unknown_) return std::nullopt;
    return v;
  }

 private:
  using V = std::int64_t;
  void fail(const std::string& why) {
    if (ok_) why_ = why;
    ok_ = false;
  }
  /// An error of evaluation (not of syntax): none in an operand bash does not evaluate (a ?: branch not taken, the
  /// right of && or || cut short), nor in one that depends on an unknown operand.
  void eval_fail(const std::string& why) {
    if (dead_ == 0 && maybe_ == 0) fail(why);
  }
  void space() {
    while (i_ < s_.size() && blank(s_[i_]))
      ++i_;
  }
  bool eat(std::string_view op) {
    space();
    const auto rest = s_.substr(i_);
    if (!rest.starts_with(op)) return false;
    // Not the first part of a longer operator: "*" of "**" or "*=", "<" of "<<" or "<=", "&" of "&&", "<<" of "<<=".
    const auto next = rest.substr(op.size());
    const bool binary = std::string_view("|&^<>*/%+-").find(op[0]) != std::string_view::npos &&
                        (op.size() == 1 || op == "<<" || op == ">>");
    if (binary && next.starts_with("=")) return false;
    if (op.size() == 1 && std::string_view("|&<>*").find(op[0]) != std::string_view::npos && next.starts_with(op))
      return false;
    i_ += op.size();
    return true;
  }
  /// Evaluates an operand that bash may not evaluate: `dead` (not evaluated: nothing of it counts) or `maybe` (whether
  /// it is evaluated depends on an unknown operand: what it assigns becomes unknown). Returns its value and whether it
  /// holds an unknown operand.
  template <class F>
  std::pair<V, bool> operand(F&& f, bool dead, bool maybe) {
    const bool before = unknown_;
    unknown_ = false;
    dead_ += dead ? 1 : 0;
    maybe_ += maybe ? 1 : 0;
    const V v = f();
    dead_ -= dead ? 1 : 0;
    maybe_ -= maybe ? 1 : 0;
    const bool u = unknown_;
    unknown_ = before;
    return {v, u};
  }
  /// A variable's value, not read in an operand bash does not evaluate (N=08 in 1 ? 4 : N is no error there).
  std::optional<V> value(std::string_view name) { return dead_ > 0 ? std::optional<V>(0) : lookup_(name); }
  bool deeper() {
    if (++depth_ <= 64) return true;
    fail("nested deeper than 64");
    return false;
  }

  /// a, b: both evaluated, the value is b's.
  V comma() {
    V v = assignment();
    while (ok_ && eat(","))
      v = assignment();
    return v;
  }
  /// NAME = v and NAME op= v (grouping to the right, below ?: in precedence): the variable takes the value.
  V assignment() {
    space();
    std::size_t e = i_;
    while (e < s_.size() && (e == i_ ? name_start(s_[e]) : name_char(s_[e])))
      ++e;
    std::size_t o = e;
    while (o < s_.size() && blank(s_[o]))
      ++o;
    const auto rest = s_.substr(o);
    const auto op = std::find_if(kAssignOps.begin(), kAssignOps.end(), [&](std::string_view a) {
      return rest.starts_with(a) && !(a == "=" && rest.starts_with("=="));
    });
    if (e == i_ || op == kAssignOps.end()) return conditional();
    if (!deeper()) return 0;
    const std::string name(s_.substr(i_, e - i_));
    i_ = o + op->size();
    auto [v, u] = operand([&] { return assignment(); }, false, false);
    if (*op != "=") {
      const auto old = value(name);
      u = u || !old;
      v = binary(op->substr(0, op->size() - 1), old.value_or(1), v, u);
    }
    unknown_ = unknown_ || u;
    store(name, u ? std::nullopt : std::optional<V>(v));
    --depth_;
    return v;
  }
  /// c ? a : b, below || in precedence and grouping to the right; only the branch taken counts (its value, what it
  /// assigns, and whether it holds an unknown variable or an evaluation error). Where c is unknown, so is the value,
  /// and what either branch assigns.
  V conditional() {
    const auto [c, cu] = operand([&] { return logical_or(); }, false, false);
    unknown_ = unknown_ || cu;
    if (!ok_ || !eat("?")) return c;
    if (!deeper()) return 0;  // c ? d ? e ? ... nests like parentheses
    const bool first = c != 0;
    const auto [a, au] = operand([&] { return comma(); }, !cu && !first, cu);
    if (ok_ && !eat(":")) fail("a ? without its :");
    const auto [b, bu] = operand([&] { return conditional(); }, !cu && first, cu);
    unknown_ = unknown_ || (first ? au : bu);
    --depth_;
    return first ? a : b;
  }
  /// a || b and a && b: b is evaluated only where a does not decide (bash evaluates them short-circuit).
  V logical_or() {
    return logical([&] { return logical_and(); }, "||");
  }
  V logical_and() {
    return logical([&] { return bit_or(); }, "&&");
  }
  template <class F>
  V logical(F&& next, std::string_view op) {
    const bool is_or = op == "||";
    auto [a, au] = operand(next, false, false);
    while (ok_ && eat(op)) {
      const bool decided = !au && (is_or ? a != 0 : a == 0);
      const auto [b, bu] = operand(next, decided, au);
      if (decided) {
        a = is_or ? 1 : 0;
      } else if (au) {  // a unknown: b alone decides where it is what would decide (x || 1 is 1)
        if (!bu && (is_or ? b != 0 : b == 0)) {
          a = is_or ? 1 : 0;
          au = false;
        }
      } else {
        a = b != 0 ? 1 : 0;
        au = bu;
      }
    }
    unknown_ = unknown_ || au;
    return a;
  }
  V bit_or() {
    V a = bit_xor();
    while (ok_ && eat("|"))
      a |= bit_xor();
    return a;
  }
  V bit_xor() {
    V a = bit_and();
    while (ok_ && eat("^"))
      a ^= bit_and();
    return a;
  }
  V bit_and() {
    V a = equality();
    while (ok_ && eat("&"))
      a &= equality();
    return a;
  }
  V equality() {
    V a = relational();
    while (ok_) {
      if (eat("==")) {
        a = a == relational();
      } else if (eat("!=")) {
        a = a != relational();
      } else {
        break;
      }
    }
    return a;
  }
  V relational() {
    V a = shift();
    while (ok_) {
      if (eat("<=")) {
        a = a <= shift();
      } else if (eat(">=")) {
        a = a >= shift();
      } else if (eat("<")) {
        a = a < shift();
      } else if (eat(">")) {
        a = a > shift();
      } else {
        break;
      }
    }
    return a;
  }
  V shift() {
    V a = sum();
    while (ok_) {
      const std::string_view op = eat("<<") ? "<<" : eat(">>") ? ">>" : "";
      if (op.empty()) break;
      const V b = sum();
      a = binary(op, a, b, unknown_);
    }
    return a;
  }
  V sum() {
    V a = product();
    while (ok_) {
      const std::string_view op = eat("+") ? "+" : eat("-") ? "-" : "";
      if (op.empty()) break;
      const V b = product();
      a = binary(op, a, b, unknown_);
    }
    return a;
  }
  V product() {
    V a = power();
    while (ok_) {
      const std::string_view op = eat("*") ? "*" : eat("/") ? "/" : eat("%") ? "%" : "";
      if (op.empty()) break;
      const V b = power();
      a = binary(op, a, b, unknown_);
    }
    return a;
  }
  /// a op b for the binary operators an assignment also applies (+= ...); errors are not raised where a or b is
  /// unknown (`unknown`: a placeholder stands for it).
  V binary(std::string_view op, V a, V b, bool unknown) {
    V r = 0;
    if (op == "+" || op == "-" || op == "*") {
      const bool over = op == "+"   ? __builtin_add_overflow(a, b, &r)
                        : op == "-" ? __builtin_sub_overflow(a, b, &r)
                                    : __builtin_mul_overflow(a, b, &r);
      if (over && !unknown) eval_fail("overflows 64-bit integers");
      return over ? 0 : r;
    }
    if (op == "/" || op == "%") {
      if (b == 0) {
        if (!unknown) eval_fail("division by zero");
        return 0;
      }
      if (a == INT64_MIN && b == -1) {
        if (!unknown) eval_fail("overflows 64-bit integers");
        return 0;
      }
      return op == "/" ? a / b : a % b;
    }
    if (op == "<<" || op == ">>") {
      if (b < 0 || b > 63) {
        if (!unknown) eval_fail("a shift by " + std::to_string(b) + " bits, outside 0 to 63");
        return 0;
      }
      return op == "<<" ? static_cast<V>(static_cast<std::uint64_t>(a) << b) : a >> b;
    }
    if (op == "&") return a & b;
    if (op == "^") return a ^ b;
    return a | b;
  }
  V power() {
    const V a = unary();
    if (!ok_ || !eat("**")) return a;
    const V b = power();
    if (b < 0) {
      eval_fail("a negative exponent");
      return 0;
    }
    // Bounded work whatever the exponent (a fuzzer's 0**10**10 looped 10^10 times): 0, 1 and -1 have closed forms,
    // and any other base overflows 64 bits before its 64th power, so the loop runs at most 63 times.
    if (a == 0) return b == 0 ? 1 : 0;
    if (a == 1) return 1;
    if (a == -1) return b % 2 == 0 ? 1 : -1;
    V r = 1;
    for (V k = 0; k < b && ok_; ++k)
      if (__builtin_mul_overflow(r, a, &r)) eval_fail("overflows 64-bit integers");
    return r;
  }
  V unary() {
    if (!deeper()) return 0;
    V v = 0;
    space();
    if (const auto step = increment_ahead(); step != 0) {  // ++NAME, --NAME
      i_ += 2;
      space();
      v = increment(step, false);
    } else if (eat("-")) {
      const V x = unary();
      if (x == INT64_MIN) eval_fail("overflows 64-bit integers");
      v = ok_ ? -x : 0;
    } else if (eat("+")) {
      v = unary();
    } else if (eat("!")) {
      v = unary() == 0 ? 1 : 0;
    } else if (eat("~")) {
      v = ~unary();
    } else {
      v = primary();
    }
    --depth_;
    return v;
  }
  /// +1 or -1 where "++" or "--" at i_ is followed (blanks aside) by a variable's name, as bash reads a pre-increment
  /// ("--5" is minus minus five); 0 otherwise.
  int increment_ahead() const {
    const auto rest = s_.substr(i_);
    if (!rest.starts_with("++") && !rest.starts_with("--")) return 0;
    std::size_t k = i_ + 2;
    while (k < s_.size() && blank(s_[k]))
      ++k;
    return k < s_.size() && name_start(s_[k]) ? (rest[0] == '+' ? 1 : -1) : 0;
  }
  /// ++NAME / --NAME (`post` false: the value is the new one) and NAME++ / NAME-- (`post`: the old one), at the name.
  V increment(int step, bool post, std::string_view name = {}) {
    if (name.empty()) {
      const std::size_t start = i_;
      while (i_ < s_.size() && name_char(s_[i_]))
        ++i_;
      name = s_.substr(start, i_ - start);
    }
    const auto old = value(name);
    V now = 0;
    if (old && __builtin_add_overflow(*old, static_cast<V>(step), &now)) eval_fail("overflows 64-bit integers");
    store(name, old && ok_ ? std::optional<V>(now) : std::nullopt);
    if (!old) {
      unknown_ = true;
      return 1;  // a placeholder: the result is unknown
    }
    return post ? *old : now;
  }
  /// What an assignment, increment or decrement gives a variable (nullopt: unknown), as bash makes it: not in an
  /// operand it does not evaluate, and unknown in one whose evaluation depends on an unknown operand.
  void store(std::string_view name, std::optional<V> v) {
    if (dead_ > 0) return;
    if (!assign_) {
      fail("it assigns " + std::string(name) + " (=, +=, ++, ...), which trainsim does not evaluate here");
      return;
    }
    assign_(name, maybe_ > 0 ? std::nullopt : v);
  }

  V primary() {
    space();
    if (i_ >= s_.size()) {
      fail("an operand is missing");
      return 0;
    }
    if (eat("(")) {
      const V v = comma();
      if (!eat(")")) fail("a ( without its )");
      return v;
    }
    const char c = s_[i_];
    if (c >= '0' && c <= '9') return number();
    // $((...)) inside arithmetic is a parenthesised expression; $(command) and `command` are outputs the file does
    // not determine: an unknown operand, as a command substitution is anywhere else (a user trial: Megatron-DeepSpeed's
    // num_gpus=$(($(ds_ssh nvidia-smi ... | wc -l)-2)) stopped the import as a syntax error).
    if (s_.substr(i_).starts_with("$((")) {
      ++i_;
      return primary();
    }
    if (s_.substr(i_).starts_with("$(") || c == '`') {
      if (!skip_substitution()) return 0;
      unknown_ = true;
      return 1;  // a placeholder: the result is unknown
    }
    const bool braced = s_.substr(i_).starts_with("${");
    if (c == '$') i_ += braced ? 2 : 1;
    const std::size_t start = i_;
    while (i_ < s_.size() && (i_ > start ? name_char(s_[i_]) : name_start(s_[i_])))
      ++i_;
    if (i_ == start) {
      fail("unexpected \"" + std::string(s_.substr(i_)) + "\"");
      return 0;
    }
    const auto name = s_.substr(start, i_ - start);
    if (braced && !eat("}")) fail("a ${ without its }");
    // bash expands $NAME as text before it evaluates: with N="2+3", $N*2 is 2+3*2. A value that is one operand reads
    // the same either way; another is not evaluated (unknown).
    if (c == '$' && text_)
      if (const auto text = text_(name); text && !one_operand(*text)) {
        unknown_ = true;
        return 1;  // a placeholder: the result is unknown
      }
    if (c != '$') {  // NAME++ and NAME-- (bash expands $NAME first: $X++ is "5++", not an increment)
      space();
      const auto rest = s_.substr(i_);
      if (rest.starts_with("++") || rest.starts_with("--")) {
        i_ += 2;
        return increment(rest[0] == '+' ? 1 : -1, true, name);
      }
    }
    const auto v = value(name);
    if (!v) {
      unknown_ = true;
      return 1;  // a placeholder: the result is unknown
    }
    return *v;
  }

  /// An integer constant as bash reads one (its strlong, following the manual's "Shell Arithmetic"): a leading 0 means
  /// octal, 0x or 0X hexadecimal, BASE#DIGITS any base from 2 to 64 (digits 0-9, then a-z, A-Z, @ and _; below base 37
  /// a letter's case does not matter); a digit the base lacks is an error ("08").
  V number() {
    const std::size_t start = i_;
    while (i_ < s_.size() && (name_char(s_[i_]) || s_[i_] == '#' || s_[i_] == '@'))
      ++i_;
    std::string t(s_.substr(start, i_ - start));
    if (t.ends_with('#') && i_ < s_.size() && s_[i_] == '$') {  // 10#$N: bash expands $N first ("10#08")
      const auto digits = reference_text();
      if (!digits) {
        unknown_ = true;
        return 1;  // a placeholder: the result is unknown
      }
      t += *digits;
    }
    const auto bad = [&](const std::string& what) {
      fail("\"" + std::string(t) + "\": " + what);
      return V{0};
    };
    std::size_t k = 0;
    V base = 10;
    bool based = false;
    if (t[0] == '0' && t.size() > 1) {
      k = 1;
      base = 8;
      if (t[1] == 'x' || t[1] == 'X') {
        base = 16;
        k = 2;  // "0x" alone is 0, as bash has it
      }
      based = true;
    }
    V v = 0;
    for (; k < t.size(); ++k) {
      const char ch = t[k];
      if (ch == '#') {
        if (based) return bad("invalid number");
        if (v < 2 || v > 64) return bad("invalid arithmetic base (bases run from 2 to 64)");
        if (k + 1 == t.size()) return bad("invalid integer constant");
        base = v;
        v = 0;
        based = true;
        continue;
      }
      V d = 0;
      if (ch >= '0' && ch <= '9') {
        d = ch - '0';
      } else if (ch >= 'a' && ch <= 'z') {
        d = ch - 'a' + 10;
      } else if (ch >= 'A' && ch <= 'Z') {
        d = ch - 'A' + (base <= 36 ? 10 : 36);
      } else {
        d = ch == '@' ? 62 : 63;
      }
      if (d >= base)
        return bad(base == 8 && t[0] == '0'
                       ? "value too great for base (bash reads a number with a leading 0 as octal: "
                         "write it without the 0, or 10#" +
                             std::string(t) + " for decimal)"
                       : "value too great for base");
      if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v)) return bad("a number out of range");
    }
    return v;
  }

  /// The text of the $NAME or ${NAME} at i_ (moved past it), blanks trimmed; nullopt where it is unknown.
  std::optional<std::string> reference_text() {
    const bool braced = s_.substr(i_).starts_with("${");
    i_ += braced ? 2 : 1;
    const std::size_t start = i_;
    while (i_ < s_.size() && (i_ > start ? name_char(s_[i_]) : name_start(s_[i_])))
      ++i_;
    const auto name = s_.substr(start, i_ - start);
    if (braced && !eat("}")) fail("a ${ without its }");
    if (name.empty() || !text_) return std::nullopt;
    auto text = text_(name);
    if (!text) return std::nullopt;
    while (!text->empty() && blank(text->back()))
      text->pop_back();
    text->erase(0, std::min(text->find_first_not_of(" \t\n"), text->size()));
    return text;
  }
  /// A value bash reads as one operand once expanded: blanks, an optional sign, then a number or a name.
  static bool one_operand(std::string_view t) {
    while (!t.empty() && blank(t.front()))
      t.remove_prefix(1);
    while (!t.empty() && blank(t.back()))
      t.remove_suffix(1);
    if (t.starts_with('-') || t.starts_with('+')) t.remove_prefix(1);
    return std::all_of(t.begin(), t.end(), [](char ch) { return name_char(ch) || ch == '#' || ch == '@'; });
  }

  /// Past a $(...) (nested parentheses and quotes followed) or a `...`; false, with the reason, where it is not closed.
  bool skip_substitution() {
    if (s_[i_] == '`') {
      const auto end = s_.find('`', i_ + 1);
      if (end == std::string_view::npos) return fail("a ` without its closing `"), false;
      i_ = end + 1;
      return true;
    }
    int depth = 0;
    char quote = 0;
    for (i_ += 1; i_ < s_.size(); ++i_) {
      const char ch = s_[i_];
      if (ch == '\\' && quote != '\'') {
        ++i_;  // an escaped character: a\) is not the end
      } else if (quote) {
        if (ch == quote) quote = 0;
      } else if (ch == '\'' || ch == '"') {
        quote = ch;
      } else if (ch == '(') {
        ++depth;
      } else if (ch == ')' && --depth == 0) {
        ++i_;
        return true;
      }
    }
    // Not balanced by this count (a case pattern's ")" inside the command): the command's output is unknown, and so
    // is the rest of the expression, rather than a syntax error bash would not give.
    i_ = s_.size();
    return true;
  }

  std::string_view s_;
  const ArithLookup& lookup_;
  const ArithAssign& assign_;
  const ArithText& text_;
  std::string& why_;
  std::size_t i_ = 0;
  int depth_ = 0;
  int dead_ = 0;   // inside an operand bash does not evaluate
  int maybe_ = 0;  // inside an operand whose evaluation depends on an unknown one
  bool ok_ = true;
  bool unknown_ = false;
};

}  // namespace

std::optional<std::int64_t> arithmetic(std::string_view expr, const ArithLookup& lookup, std::string& why,
                                       const ArithAssign& assign, const ArithText& text) {
  return Arith(expr, lookup, assign, text, why).run();
}

void arith_assigned(std::string_view expr, std::set<std::string>& names) {
  for (std::size_t i = 0; i < expr.size();) {
    if (expr[i] >= '0' && expr[i] <= '9') {  // a number: 0x1F, 2#101 hold no name
      while (i < expr.size() && (name_char(expr[i]) || expr[i] == '#' || expr[i] == '@'))
        ++i;
      continue;
    }
    if (!name_start(expr[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < expr.size() && name_char(expr[i]))
      ++i;
    std::size_t before = start;
    while (before > 0 && blank(expr[before - 1]))
      --before;
    std::size_t after = i;
    while (after < expr.size() && blank(expr[after]))
      ++after;
    const auto rest = expr.substr(after);
    const bool pre = before >= 2 && (expr.substr(before - 2, 2) == "++" || expr.substr(before - 2, 2) == "--");
    const bool post = rest.starts_with("++") || rest.starts_with("--");
    const bool op = std::any_of(kAssignOps.begin(), kAssignOps.end(), [&](std::string_view a) {
      return rest.starts_with(a) && !(a == "=" && rest.starts_with("=="));
    });
    if ((pre || post || op) && (start == 0 || expr[start - 1] != '$')) names.emplace(expr.substr(start, i - start));
  }
}

}  // namespace sim::importers::shell
