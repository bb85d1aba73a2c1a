// sim/importers/shell_expand.hpp: the expansion of one word of a launch script (parameters and their defaults,
// arrays, arithmetic, quotes, word splitting) against the script's variables, for the statement walk of shell.cpp.
// Internal to the shell reader (shell.hpp); bounded like it (every word and all expansion together are capped).
#pragma once
#include "sim/importers/shell.hpp"
#include "sim/importers/shell_relevance.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::importers::shell {

struct Elem {
  std::string text;
  int line = 0;
  /// Defaults this array element's value took (`--node_rank ${NODE_RANK:-0}` in an array): they stay with the word
  /// the element becomes, not with the array's first word.
  std::vector<std::string> defaults = {};
};

// Unknown text ($(cmd), an unset $NAME) inside a value is kept between two of these, so that word splitting later
// marks only the words it lands in as unknown (GPT_ARGS="... `pwd`/pretrain_gpt.py --num-layers 70 ...").
inline constexpr char kUnknown = '\x01';
// Right after the opening kUnknown: the unknown text is a variable the file does not set (bare $NAME), which bash, in
// the environment the README documents (one that sets nothing), expands to nothing.
inline constexpr char kUnset = '\x02';
// Right after the opening kUnknown: the unknown text applies one of bash's operators trainsim does not evaluate
// (${X/a/b}, ${X%pat}, ${X:1:2}, ${X,,}, ...) to a variable the file sets (ShellWord::operator_expansion).
inline constexpr char kOperator = '\x03';

struct Var {
  std::vector<Elem> values = {};
  bool known = true;
  bool array = false;
  int line = 0;
  std::vector<std::string> defaults = {};  // defaults its value took (${SLURM_NNODES:-1}), passed on to its uses
};

/// Command and test words: markers removed, the word flagged unknown where it held any.
std::vector<ShellWord> finalize(std::vector<ShellWord> words);

inline bool name_char(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}
inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}
/// The length of a leading NAME= or NAME+= (0 when the word is not an assignment).
std::size_t assignment_name(std::string_view raw);

class Expander {
 public:
  explicit Expander(const std::string& origin) : origin_(origin) {}

  /// The fields of a word: expansion, word splitting of unquoted results when `split`, quote removal. Unknown parts
  /// stay between kUnknown markers (finalize removes them).
  std::vector<ShellWord> expand(const Token& t, bool split);
  /// An unquoted heredoc's body as the shell reading it expands it before the command gets it (bash manual, "Here
  /// Documents": parameter, command and arithmetic expansion, with \ quoting only \, $, ` and newline). Unknown parts
  /// keep their markers with their text escaped, so a child shell running the body sees them unknown, not its values.
  std::string heredoc_body(const std::string& body, int line);
  std::map<std::string, Var>& vars() { return vars_; }
  /// The script's arguments were given (vars "1" ..., "#" and "@"): one not given expands to nothing, not unknown.
  void set_positional_given() { positional_given_ = true; }
  /// Counts `n` bytes against the limit on all expansion together.
  void charge(std::size_t n, int line);
  /// A variable's size against the limit on one value.
  void check_size(const Var& v, int line, const std::string& name);
  /// An assignment token: NAME=value, NAME+=value, NAME=(...), NAME+=(...) or NAME[subscript]=value.
  void assign(const Token& t);
  /// NAME[subscript]=value or +=value (bash manual, "Arrays"): the element set or appended to. Arrays are read dense,
  /// so a subscript past the end but one (which bash would leave sparse) is refused, naming the line.
  void assign_element(const std::string& name, const std::string& subscript, Elem value, bool append);
  /// `unset` with its words, quotes removed: variables, an array's last element or all of them ([@]); another
  /// element (which bash would leave sparse) is refused; -f and -n remove no variable.
  void unset(const std::vector<Token>& words);
  /// An arithmetic expression (bash manual, "Shell Arithmetic") as $((expr)), (( expr )) and let evaluate it, `shown`
  /// as written: its value, nullopt where an operand is unknown. What it assigns (=, +=, ++, ...) is made to the
  /// variables, as bash makes it; an expression bash fails on (08, a division by zero) is refused, naming the line.
  std::optional<std::int64_t> arithmetic(std::string_view expr, std::string_view shown, int line);
  /// A variable set by arithmetic, or made unknown by it (nullopt), naming where. A readonly one (`readonly`) keeps its
  /// value, as bash refuses the assignment; take_readonly_hit() then names it.
  void set_integer(const std::string& name, std::optional<std::int64_t> value, std::string_view shown, int line);
  /// Whether a variable is readonly (the shell's attributes; none unless set).
  std::function<bool(const std::string&)> is_readonly;
  /// The readonly variable an arithmetic assignment last tried to change, cleared; empty when none did.
  std::string take_readonly_hit() { return std::exchange(readonly_hit_, std::string()); }
  /// Runs `f` with a command's prefix assignments (`NNODES=4 bash -c "..."`) in effect, then puts the variables back:
  /// bash gives them to that command's environment only, not to the script (nor to the command's own words).
  template <class F>
  void with_prefix(const std::vector<Token>& prefix, F&& f) {
    std::vector<std::pair<std::string, std::optional<Var>>> saved;
    for (const auto& t : prefix) {
      const std::string name = assigned_name(t);
      const auto it = vars_.find(name);
      saved.emplace_back(name, it == vars_.end() ? std::nullopt : std::optional<Var>(it->second));
    }
    for (const auto& t : prefix)
      assign(t);
    f();
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
      if (it->second)
        vars_[it->first] = std::move(*it->second);
      else
        vars_.erase(it->first);
  }

 private:
  /// What one $-expansion gave.
  struct Expansion {
    std::vector<Elem> values = {};
    bool known = true;
    bool at = false;  // "${ARR[@]}": one word per element even inside double quotes
    std::vector<std::string> defaults = {};
    bool unset = false;  // unknown because it names a variable the file does not set
    bool op = false;     // unknown because an operator not evaluated applies to a variable the file sets
  };
  struct Building {
    std::vector<ShellWord> fields;
    ShellWord cur;
    bool started = false;
    bool empty_at = false;  // "${E[@]}" of an empty array: no word, although quoted
  };

  [[noreturn]] void error(int line, const std::string& what) const;
  void literal(Building& b, std::string_view text, int line);
  void end_field(Building& b);
  void add(Building& b, Expansion e, std::string_view raw, int line, bool quoted, bool split);
  Expansion dollar(std::string_view text, int line);
  Expansion parameter(std::string_view inner, std::string_view text, int line);
  const std::string* known_text(std::string_view name) const;
  std::optional<std::int64_t> lookup_int(std::string_view name);
  std::optional<std::int64_t> subscript_value(const std::string& subscript, int line, std::size_t size,
                                              std::string& why);
  std::size_t dollar_end(const std::string& r, std::size_t i, int line) const;

  const std::string& origin_;
  std::map<std::string, Var> vars_;
  std::string readonly_hit_;
  bool positional_given_ = false;
  std::string lookup_error_;  // why a variable's value is not an arithmetic expression bash evaluates
  std::size_t total_ = 0;
  int nesting_ = 0;
};

}  // namespace sim::importers::shell
