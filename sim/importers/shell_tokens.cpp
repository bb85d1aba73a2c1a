// sim/importers/shell_tokens.cpp: a launch script's tokens (words with their quotes kept, operators, array
// assignments, heredoc bodies, #SBATCH directives, (( )) commands), and the ends of the quotes and expansions inside a
// word. shell_parse.cpp makes statements of them; expansion is shell_expand.cpp's.
#include "sim/importers/shell.hpp"
#include "sim/importers/shell_expand.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <utility>

namespace sim::importers::shell {

using base::ConfigError;

void unterminated(const std::string& origin, int line, const std::string& what, const std::string& close) {
  throw ConfigError(
      origin, "line " + std::to_string(line),
      "unterminated " + what + ": no closing " + close + " before the end of the file; close it or escape it with \\");
}

namespace {

constexpr int kMaxDepth = 64;

bool meta(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' ||
         c == '(' || c == ')';
}

bool name_char(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

/// "NAME=" or "NAME+=": the raw text of a word that an array's "(" may follow.
bool assignment_prefix(std::string_view raw) {
  if (raw.size() < 2 || raw.back() != '=') return false;
  raw.remove_suffix(raw.ends_with("+=") ? 2 : 1);
  if (raw.empty() || !name_char(raw[0], true)) return false;
  return std::all_of(raw.begin(), raw.end(), [](char c) { return name_char(c, false); });
}

int lines_in(std::string_view s, std::size_t from, std::size_t to) {
  return static_cast<int>(
      std::count(s.begin() + static_cast<std::ptrdiff_t>(from), s.begin() + static_cast<std::ptrdiff_t>(to), '\n'));
}

class Tokenizer {
 public:
  Tokenizer(std::string_view s, const std::string& origin, int first_line, int depth)
      : s_(s), origin_(origin), line_(first_line), depth_(depth) {}

  std::vector<Token> run() {
    if (depth_ > 8) throw ConfigError(origin_, "line " + std::to_string(line_), "heredocs nested deeper than 8");
    while (i_ < s_.size())
      step(out_);
    if (!pending_.empty())
      unterminated(origin_, out_[pending_.front().token].line, "heredoc",
                   "line \"" + pending_.front().delimiter + "\"");
    return std::move(out_);
  }

 private:
  struct Pending {
    std::string delimiter;
    bool strip_tabs = false;
    std::size_t token = 0;
  };

  void step(std::vector<Token>& out) {
    const char c = s_[i_];
    if (const auto n = continuation(); n > 0) {
      i_ += n;
      ++line_;
      continued_ = true;
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i_;
      return;
    }
    const bool continued = std::exchange(continued_, false);
    if (c == '\n') {
      Token t{Token::Kind::Newline, "\n", line_};
      t.cut = std::exchange(cut_, false);
      out.push_back(std::move(t));
      ++line_;
      ++i_;
      read_heredocs();
    } else if (c == '#') {
      const auto end = std::min(s_.find('\n', i_), s_.size());
      const std::string_view text = s_.substr(i_, end - i_);
      if (text.starts_with("#SBATCH")) {
        out.push_back({Token::Kind::Sbatch, std::string(text.substr(7)), line_});
      } else if (in_command(out) && (continued || ends_in_backslash(text))) {
        // A comment runs to the end of its line, a backslash there included (bash manual, "Comments": a word beginning
        // with # causes that word and all remaining characters on that line to be ignored), and the newline then ends
        // the command: what the next line holds is a command of its own, not more of this one's arguments (a user
        // trial: `# --use-distributed-optimizer \` inside a torchrun command dropped the flags below it).
        cut_ = true;
      }
      i_ = end;
    } else if (meta(c)) {
      op(out);
    } else {
      word(out);
    }
  }

  /// Whether the words of a command precede: a comment here ends that command.
  static bool in_command(const std::vector<Token>& out) {
    return !out.empty() && (out.back().kind == Token::Kind::Word || out.back().kind == Token::Kind::ArrayAssign ||
                            out.back().kind == Token::Kind::Arith);
  }

  static bool ends_in_backslash(std::string_view text) {
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
      text.remove_suffix(1);
    return text.ends_with('\\');
  }

  /// Whether a command may start here (after nothing, a newline, an operator that ends or joins commands, a case
  /// pattern's ")", or a reserved word a command follows): "((" there opens an arithmetic command.
  static bool command_position(const std::vector<Token>& out) {
    if (out.empty() || out.back().kind == Token::Kind::Newline) return true;
    static const std::set<std::string_view> kOps = {";", "&", "&&", "||", "|", "|&", "(", ")", ";;"};
    static const std::set<std::string_view> kWords = {"then",  "do",    "else", "elif", "if",
                                                      "while", "until", "!",    "{",    "for"};
    const Token& t = out.back();
    return (t.kind == Token::Kind::Op && kOps.contains(t.text)) ||
           (t.kind == Token::Kind::Word && kWords.contains(t.text));
  }

  /// (( expression )) from the "((" at i_: the index past its "))", or npos where the parentheses do not close as one
  /// (bash then reads nested subshells, as it does "( (").
  std::size_t arithmetic_end() const {
    int depth = 0;
    for (std::size_t j = i_ + 2; j < s_.size(); ++j) {
      const char c = s_[j];
      if (c == '\\') {
        ++j;
      } else if (c == '\'') {
        j = s_.find('\'', j + 1);
        if (j == std::string_view::npos) return j;
      } else if (c == '"') {
        j = skip_double_quoted(s_, j, origin_, line_) - 1;
      } else if (c == '$' && j + 1 < s_.size() && (s_[j + 1] == '(' || s_[j + 1] == '{')) {
        j = skip_dollar(s_, j, origin_, line_) - 1;
      } else if (c == '(') {
        ++depth;
      } else if (c == ')' && depth > 0) {
        --depth;
      } else if (c == ')') {
        return j + 1 < s_.size() && s_[j + 1] == ')' ? j + 2 : std::string_view::npos;
      }
    }
    return std::string_view::npos;
  }

  /// The length of the line continuation at i_ (a backslash before LF or CRLF), 0 if there is none. Before a lone CR
  /// the backslash only escapes the CR: a CR is not a line of its own, and counting it would number later words past
  /// the text's last line.
  std::size_t continuation() const {
    if (s_[i_] != '\\' || i_ + 1 >= s_.size()) return 0;
    if (s_[i_ + 1] == '\n') return 2;
    return s_[i_ + 1] == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n' ? 3 : 0;
  }

  void op(std::vector<Token>& out) {
    static constexpr std::array<std::string_view, 17> kOps = {"<<-", "<<<", "&&", "||", ";;", "<<", ">>", ">&", "&>",
                                                              "<&",  "|&",  ";",  "&",  "|",  "(",  ")",  "<"};
    std::string_view found = ">";
    for (auto o : kOps)
      if (s_.substr(i_).starts_with(o)) {
        found = o;
        break;
      }
    // (( expression )): an arithmetic command (bash manual, "Conditional Constructs"), run in this shell, so that what
    // it assigns stays; read as one token, its continuations removed.
    if (found == "(" && s_.substr(i_).starts_with("((") && command_position(out))
      if (const auto end = arithmetic_end(); end != std::string_view::npos) {
        std::string text(s_.substr(i_ + 2, end - i_ - 4));
        for (auto at = text.find("\\\n"); at != std::string::npos; at = text.find("\\\n", at))
          text.erase(at, 2);
        out.push_back({Token::Kind::Arith, std::move(text), line_});
        line_ += lines_in(s_, i_, end);
        i_ = end;
        return;
      }
    out.push_back({Token::Kind::Op, std::string(found), line_});
    i_ += found.size();
    if (found == "<<" || found == "<<-") heredoc_start(out, found == "<<-");
  }

  void heredoc_start(std::vector<Token>& out, bool strip_tabs) {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t'))
      ++i_;
    std::string delimiter;
    bool quoted = false;
    while (i_ < s_.size() && !meta(s_[i_])) {
      if (s_[i_] == '\'' || s_[i_] == '"' || s_[i_] == '\\') {
        quoted = true;
      } else {
        delimiter += s_[i_];
      }
      ++i_;
    }
    if (delimiter.empty())
      throw ConfigError(origin_, "line " + std::to_string(line_), "<< without a heredoc delimiter word");
    Token t{Token::Kind::Heredoc, "", line_};
    t.quoted_delimiter = quoted;
    out.push_back(std::move(t));
    pending_.push_back({std::move(delimiter), strip_tabs, out.size() - 1});
  }

  /// The bodies of the heredocs started on the line just ended, in order.
  void read_heredocs() {
    for (const auto& p : pending_) {
      Token& t = out_[p.token];
      t.line = line_;
      std::string body;
      while (true) {
        if (i_ >= s_.size()) unterminated(origin_, t.line, "heredoc", "line \"" + p.delimiter + "\"");
        const auto end = std::min(s_.find('\n', i_), s_.size());
        std::string_view l = s_.substr(i_, end - i_);
        i_ = std::min(end + 1, s_.size());
        ++line_;
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        if (p.strip_tabs)
          while (!l.empty() && l.front() == '\t')
            l.remove_prefix(1);
        if (l == p.delimiter) break;
        body.append(l).push_back('\n');
      }
      t.text = std::move(body);
    }
    pending_.clear();
  }

  void word(std::vector<Token>& out) {
    const std::size_t start = i_;
    const int line = line_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '(' && assignment_prefix(s_.substr(start, i_ - start))) {
        array(out, std::string(s_.substr(start, i_ - start - 1)), line);
        return;
      }
      if (meta(c)) break;
      if (c == '\\') {
        if (const auto n = continuation(); n > 0) {  // the word goes on (without_continuations)
          i_ += n;
          ++line_;
          continue;
        }
        escaped_blank_at_line_end();
        i_ = std::min(i_ + 2, s_.size());
      } else if (c == '\'') {
        const auto end = s_.find('\'', i_ + 1);
        if (end == std::string_view::npos) unterminated(origin_, line_, "'", "'");
        line_ += lines_in(s_, i_, end);
        i_ = end + 1;
      } else if (c == '"') {
        const auto end = skip_double_quoted(s_, i_, origin_, line_);
        line_ += lines_in(s_, i_, end);
        i_ = end;
      } else if (c == '$' || c == '`') {
        const auto end = skip_dollar(s_, i_, origin_, line_);
        line_ += lines_in(s_, i_, end);
        i_ = end;
      } else {
        ++i_;
      }
    }
    std::string raw = without_continuations(s_.substr(start, i_ - start));
    const bool fd = i_ < s_.size() && (s_[i_] == '<' || s_[i_] == '>') &&
                    std::all_of(raw.begin(), raw.end(), [](char x) { return x >= '0' && x <= '9'; });
    if (!fd) out.push_back({Token::Kind::Word, std::move(raw), line});
  }

  /// A word as bash splits it: every backslash-newline removed but inside single quotes (bash manual, "Escape
  /// Character", "Double Quotes"), in $(( )), ${ } and $( ) too, so `8\` then `--d 2` at a line's start is "8--d".
  static std::string without_continuations(std::string_view w) {
    std::string out;
    bool single = false, dquote = false;
    for (std::size_t j = 0; j < w.size(); ++j) {
      if (w[j] == '\'' && !dquote) single = !single;
      if (w[j] == '"' && !single) dquote = !dquote;
      if (w[j] != '\\' || single || j + 1 >= w.size()) {
        out += w[j];
        continue;
      }
      const std::size_t n = w[j + 1] == '\n' ? 2 : w.substr(j + 1).starts_with("\r\n") ? 3 : 0;
      if (n == 0) out.append(w.substr(j, 2));  // an escaped character, kept for the expander
      j += n == 0 ? 1 : n - 1;
    }
    return out;
  }

  /// A backslash before blanks that end the line (--swiglu, a backslash, a blank, the newline): bash reads an escaped
  /// blank, a word of its own, and ends the command at the newline, so the lines below run as commands of their own and
  /// the script fails. Read as a continuation it would simulate a launch that never runs (a user trial): refused.
  void escaped_blank_at_line_end() const {
    std::size_t j = i_ + 1;
    if (in_array_ || j >= s_.size() || (s_[j] != ' ' && s_[j] != '\t')) return;
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t' || s_[j] == '\r'))
      ++j;
    if (j < s_.size() && s_[j] != '\n' && s_[j] != '#') return;  // a comment after the blank ends the line too
    throw ConfigError(
        origin_, "line " + std::to_string(line_),
        "a backslash followed by a blank ends the line: bash passes an escaped blank as an argument and ends the "
        "command here, so the lines below are not part of it; delete the blank after the backslash");
  }

  /// NAME=( elements ): words, comments and newlines up to the closing parenthesis.
  void array(std::vector<Token>& out, std::string name, int line) {
    ++i_;  // '('
    Token t{Token::Kind::ArrayAssign, std::move(name), line};
    while (true) {
      if (i_ >= s_.size()) unterminated(origin_, line, "array (", ")");
      const char c = s_[i_];
      if (c == ')') {
        ++i_;
        break;
      }
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (const auto n = continuation(); n > 0) {
        ++line_;
        i_ += n;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        i_ = std::min(s_.find('\n', i_), s_.size());
      } else if (meta(c)) {
        throw ConfigError(origin_, "line " + std::to_string(line_),
                          std::string("unexpected '") + c + "' inside the array assignment of " + t.text +
                              "; quote it if it is part of an element");
      } else {
        std::vector<Token> element;
        in_array_ = true;  // an escaped blank ends no command here: the array goes on (escaped_blank_at_line_end)
        word(element);
        in_array_ = false;
        for (auto& e : element)
          t.elements.push_back(std::move(e));
      }
    }
    out.push_back(std::move(t));
  }

  std::string_view s_;
  const std::string& origin_;
  bool in_array_ = false;   // reading an element of NAME=( ... )
  bool continued_ = false;  // a line continuation came last, blanks aside
  bool cut_ = false;        // a comment ended a command on this line (Token::cut)
  std::size_t i_ = 0;
  int line_;
  int depth_;
  std::vector<Token> out_;
  std::vector<Pending> pending_;
};

}  // namespace

namespace {

/// Whether the shell keyword `word` starts at s[i] in a command's position: a whole word, first in its command
/// (after "(", ";", "&", "|" or a newline, blanks aside), so `$(echo case)` is an argument, not a case statement.
bool keyword_at(std::string_view s, std::size_t i, std::string_view word) {
  if (s.substr(i, word.size()) != word) return false;
  if (i + word.size() < s.size() && std::string_view(" \t\n;)|&").find(s[i + word.size()]) == std::string_view::npos)
    return false;
  std::size_t k = i;
  while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t'))
    --k;
  return k > 0 && std::string_view("(;|&\n").find(s[k - 1]) != std::string_view::npos;
}

}  // namespace

std::size_t skip_double_quoted(std::string_view s, std::size_t i, const std::string& origin, int line, int depth) {
  if (depth > kMaxDepth)
    throw ConfigError(origin, "line " + std::to_string(line),
                      "quotes and expansions nested deeper than " + std::to_string(kMaxDepth));
  ++i;  // opening quote
  while (true) {
    if (i >= s.size()) unterminated(origin, line, "\"", "\"");
    const char c = s[i];
    if (c == '"') return i + 1;
    if (c == '\\') {
      i += 2;
    } else if (c == '$' || c == '`') {
      i = skip_dollar(s, i, origin, line, depth + 1);
    } else {
      ++i;
    }
  }
}

std::size_t skip_dollar(std::string_view s, std::size_t i, const std::string& origin, int line, int depth) {
  if (depth > kMaxDepth)
    throw ConfigError(origin, "line " + std::to_string(line),
                      "quotes and expansions nested deeper than " + std::to_string(kMaxDepth));
  if (s[i] == '`') {
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      if (s[j] == '\\') {
        ++j;
      } else if (s[j] == '`') {
        return j + 1;
      }
    }
    unterminated(origin, line, "`", "`");
  }
  if (i + 1 >= s.size() || (s[i + 1] != '(' && s[i + 1] != '{')) return i + 1;  // $NAME: the name is ordinary text
  const char open = s[i + 1];
  const char close = open == '(' ? ')' : '}';
  int level = 0;
  int cases = 0;  // case ... esac statements open inside a command substitution
  for (std::size_t j = i + 1; j < s.size(); ++j) {
    const char c = s[j];
    if (c == '\\') {
      ++j;
    } else if (open == '(' && (keyword_at(s, j, "case") || (cases > 0 && keyword_at(s, j, "esac")))) {
      cases += s[j] == 'c' ? 1 : -1;
      j += 3;
    } else if (c == close && open == '(' && cases > 0 && level == 1) {
      // A case pattern's ")" ($(case $x in 70b) echo 8;; esac)) closes the pattern, not the substitution (bash's
      // grammar: a pattern list ends at ")"; a user trial's launch script was refused at "unexpected ;;").
    } else if (c == '\'' && open == '(') {
      const auto end = s.find('\'', j + 1);
      if (end == std::string_view::npos) break;
      j = end;
    } else if (c == '"') {
      j = skip_double_quoted(s, j, origin, line, depth + 1) - 1;
    } else if (c == '$' && j + 1 < s.size() && (s[j + 1] == '(' || s[j + 1] == '{')) {
      j = skip_dollar(s, j, origin, line, depth + 1) - 1;
    } else if (c == open) {
      ++level;
    } else if (c == close && --level == 0) {
      return j + 1;
    }
  }
  unterminated(origin, line, open == '(' ? "$(" : "${", std::string(1, close));
}

std::string ansi_c(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char e = s[++i];
    const auto digits = [&](int base, std::size_t most) {
      std::size_t n = 0;
      int v = 0;
      for (; n < most && i + n < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + n])) &&
             (base == 16 || (s[i + n] >= '0' && s[i + n] <= '7'));
           ++n)
        v = v * base +
            (std::isdigit(static_cast<unsigned char>(s[i + n])) ? s[i + n] - '0' : std::tolower(s[i + n]) - 'a' + 10);
      i += n - 1;
      out += static_cast<char>(v);
    };
    const std::string_view simple = "abefnrtv", value = "\a\b\x1b\f\n\r\t\v";
    if (const auto k = simple.find(e); k != std::string_view::npos) {
      out += value[k];
    } else if (e == 'x' && i + 1 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
      digits(16, 2);
    } else if (e >= '0' && e <= '7') {
      digits(8, 3);
    } else {
      if (e != '\\' && e != '\'' && e != '"' && e != '?') out += '\\';
      out += e;
    }
  }
  return out;
}

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

std::vector<Token> tokenize(std::string_view text, const std::string& origin, int first_line, int depth) {
  return Tokenizer(text, origin, first_line, depth).run();
}

}  // namespace sim::importers::shell
