// sim/importers/shell_arith.cpp: $((arithmetic)) for the launch-script reader (shell_arith.hpp). Operators and
// their precedence follow the bash manual's "Shell Arithmetic" (test conditions are shell_conditions.cpp's).
#include "sim/importers/shell_arith.hpp"

#include <algorithm>
#include <charconv>

namespace sim::importers::shell {
namespace {

class Arith {
 public:
  Arith(std::string_view s, const std::function<std::optional<std::int64_t>(std::string_view)>& lookup,
        std::string& why)
      : s_(s), lookup_(lookup), why_(why) {}

  std::optional<std::int64_t> run() {
    auto v = conditional();
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
  /// An error of evaluation (not of syntax): none in the branch a ?: does not take, which bash does not evaluate.
  void eval_fail(const std::string& why) {
    if (dead_ == 0) fail(why);
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n'))
      ++i_;
  }
  bool eat(std::string_view op) {
    space();
    if (!s_.substr(i_).starts_with(op)) return false;
    // "*" must not eat the first half of "**", "<" of "<=", "&&" is not "&".
    if ((op == "*" && s_.substr(i_).starts_with("**")) ||
        ((op == "<" || op == ">") && s_.substr(i_ + 1).starts_with("=")))
      return false;
    i_ += op.size();
    return true;
  }

  /// c ? a : b, below || in precedence and grouping to the right; only the branch taken counts (its value, and
  /// whether it holds an unknown variable or an evaluation error).
  V conditional() {
    const V c = logical_or();
    if (!ok_ || !eat("?")) return c;
    if (++depth_ > 64) {  // c ? d ? e ? ... nests like parentheses
      fail("nested deeper than 64");
      return 0;
    }
    const bool unknown_before = unknown_;
    const bool take_first = c != 0;
    V a = 0, b = 0;
    dead_ += take_first ? 0 : 1;
    a = conditional();
    dead_ -= take_first ? 0 : 1;
    const bool unknown_a = unknown_;
    unknown_ = unknown_before;
    if (ok_ && !eat(":")) fail("a ? without its :");
    dead_ += take_first ? 1 : 0;
    b = conditional();
    dead_ -= take_first ? 1 : 0;
    const bool unknown_b = unknown_;
    unknown_ = unknown_before || (take_first ? unknown_a : unknown_b);
    --depth_;
    return take_first ? a : b;
  }
  V logical_or() {
    V a = logical_and();
    while (ok_ && eat("||")) {
      const V b = logical_and();
      a = (a != 0 || b != 0) ? 1 : 0;
    }
    return a;
  }
  V logical_and() {
    V a = compare();
    while (ok_ && eat("&&")) {
      const V b = compare();
      a = (a != 0 && b != 0) ? 1 : 0;
    }
    return a;
  }
  V compare() {
    V a = sum();
    while (ok_) {
      if (eat("==")) {
        a = a == sum();
      } else if (eat("!=")) {
        a = a != sum();
      } else if (eat("<=")) {
        a = a <= sum();
      } else if (eat(">=")) {
        a = a >= sum();
      } else if (eat("<")) {
        a = a < sum();
      } else if (eat(">")) {
        a = a > sum();
      } else {
        break;
      }
    }
    return a;
  }
  V sum() {
    V a = product();
    while (ok_) {
      V r = 0;
      if (eat("+")) {
        if (__builtin_add_overflow(a, product(), &r)) eval_fail("overflows 64-bit integers");
      } else if (eat("-")) {
        if (__builtin_sub_overflow(a, product(), &r)) eval_fail("overflows 64-bit integers");
      } else {
        break;
      }
      a = r;
    }
    return a;
  }
  V product() {
    V a = power();
    while (ok_) {
      if (eat("*")) {
        V r = 0;
        if (__builtin_mul_overflow(a, power(), &r)) eval_fail("overflows 64-bit integers");
        a = r;
      } else if (eat("/") || eat("%")) {
        const bool div = s_[i_ - 1] == '/';
        const V b = power();
        if (b == 0) {
          if (!unknown_) eval_fail("division by zero");
          return 0;
        }
        if (a == INT64_MIN && b == -1) {
          eval_fail("overflows 64-bit integers");
          return 0;
        }
        a = div ? a / b : a % b;
      } else {
        break;
      }
    }
    return a;
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
    if (++depth_ > 64) {
      fail("nested deeper than 64");
      return 0;
    }
    V v = 0;
    if (eat("-")) {
      const V x = unary();
      if (x == INT64_MIN) eval_fail("overflows 64-bit integers");
      v = ok_ ? -x : 0;
    } else if (eat("+")) {
      v = unary();
    } else if (eat("!")) {
      v = unary() == 0 ? 1 : 0;
    } else {
      v = primary();
    }
    --depth_;
    return v;
  }
  V primary() {
    space();
    if (i_ >= s_.size()) {
      fail("an operand is missing");
      return 0;
    }
    if (eat("(")) {
      const V v = conditional();
      if (!eat(")")) fail("a ( without its )");
      return v;
    }
    const char c = s_[i_];
    if (c >= '0' && c <= '9') {
      int base = 10;
      if (s_.substr(i_).starts_with("0x") || s_.substr(i_).starts_with("0X")) {
        base = 16;
        i_ += 2;
      }
      V v = 0;
      auto [p, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), v, base);
      if (ec != std::errc{}) {
        fail("a number out of range");
        return 0;
      }
      i_ = static_cast<std::size_t>(p - s_.data());
      return v;
    }
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
    while (i_ < s_.size() && (s_[i_] == '_' || (s_[i_] >= 'A' && s_[i_] <= 'Z') || (s_[i_] >= 'a' && s_[i_] <= 'z') ||
                              (i_ > start && s_[i_] >= '0' && s_[i_] <= '9')))
      ++i_;
    if (i_ == start) {
      fail("unexpected \"" + std::string(s_.substr(i_)) + "\"");
      return 0;
    }
    const auto name = s_.substr(start, i_ - start);
    if (braced && !eat("}")) fail("a ${ without its }");
    const auto v = lookup_(name);
    if (!v) {
      unknown_ = true;
      return 1;  // a placeholder: the result is unknown
    }
    return *v;
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
  const std::function<std::optional<std::int64_t>(std::string_view)>& lookup_;
  std::string& why_;
  std::size_t i_ = 0;
  int depth_ = 0;
  int dead_ = 0;  // inside a ?: branch not taken
  bool ok_ = true;
  bool unknown_ = false;
};

}  // namespace

std::optional<std::int64_t> arithmetic(std::string_view expr,
                                       const std::function<std::optional<std::int64_t>(std::string_view)>& lookup,
                                       std::string& why) {
  return Arith(expr, lookup, why).run();
}

}  // namespace sim::importers::shell
