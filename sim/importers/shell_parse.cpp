// sim/importers/shell_parse.cpp: a launch script's statements (simple commands, if, && / ||, pipelines, subshells
// and groups, background jobs, and loops, case statements and functions kept opaque) from its tokens
// (shell_tokens.cpp). Expansion is shell_expand.cpp's.
#include "sim/importers/shell.hpp"

#include <set>
#include <utility>

namespace sim::importers::shell {

using base::ConfigError;

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(const std::vector<Token>& t, const std::string& origin) : t_(t), origin_(origin) {}

  std::vector<Node> all() {
    auto nodes = list({});
    if (pos_ < t_.size()) error(t_[pos_].line, "unexpected \"" + t_[pos_].text + "\"");
    return nodes;
  }

 private:
  bool word(std::string_view w) const {
    return pos_ < t_.size() && t_[pos_].kind == Token::Kind::Word && t_[pos_].text == w;
  }
  bool op(std::string_view o) const {
    return pos_ < t_.size() && t_[pos_].kind == Token::Kind::Op && t_[pos_].text == o;
  }
  int line() const { return pos_ < t_.size() ? t_[pos_].line : (t_.empty() ? 1 : t_.back().line); }
  [[noreturn]] void error(int line, const std::string& what) const {
    throw ConfigError(origin_, "line " + std::to_string(line), what);
  }
  void expect(std::string_view w, int opened, std::string_view construct) {
    if (!word(w)) error(opened, std::string(construct) + " without a matching \"" + std::string(w) + "\"");
    ++pos_;
  }
  void skip_newlines() {
    while (pos_ < t_.size() && t_[pos_].kind == Token::Kind::Newline)
      ++pos_;
  }

  std::vector<Node> list(const std::set<std::string_view>& ends) {
    if (++depth_ > kMaxDepth) error(line(), "statements nested deeper than " + std::to_string(kMaxDepth));
    std::vector<Node> nodes;
    while (pos_ < t_.size()) {
      const Token& t = t_[pos_];
      if (t.kind == Token::Kind::Newline || (t.kind == Token::Kind::Op && (t.text == ";" || t.text == "&"))) {
        if (t.cut) cut_ = t.line;
        ++pos_;
        continue;
      }
      if ((t.kind == Token::Kind::Word || t.kind == Token::Kind::Op) && ends.contains(t.text)) break;
      if (t.kind == Token::Kind::Op && (t.text == ")" || t.text == ";;")) break;
      nodes.push_back(and_or());
      nodes.back().end_line = t_[pos_ - 1].line;
      cut_ = 0;
      if (op("&")) {  // an asynchronous list: run in a subshell (bash manual, "Lists of Commands")
        nodes.back().subshell = true;
        nodes.back().background = true;
        ++pos_;
      }
    }
    --depth_;
    return nodes;
  }

  Node and_or() {
    Node first = pipeline();
    if (!op("&&") && !op("||")) return first;
    Node n{Node::Kind::AndOr, first.line};
    n.children.push_back(std::move(first));
    while (op("&&") || op("||")) {
      n.ops.push_back(t_[pos_++].text);
      skip_newlines();
      n.children.push_back(pipeline());
    }
    return n;
  }

  Node pipeline() {
    bool negated = false;
    if (word("!")) {
      negated = true;
      ++pos_;
    }
    Node n = command();
    n.negated = negated;
    if (!op("|") && !op("|&")) return n;
    // Each command of a pipeline runs in a subshell (bash manual, "Pipelines"; lastpipe is off in a script).
    Node g{Node::Kind::Group, n.line};
    g.children.push_back(std::move(n));
    while (op("|") || op("|&")) {
      ++pos_;
      skip_newlines();
      g.children.push_back(command());
    }
    for (auto& c : g.children)
      c.subshell = true;
    return g;
  }

  Node command() {
    const int at = line();
    if (word("if")) return if_clause();
    if (word("for") || word("select")) {
      Node n{Node::Kind::Opaque, at};
      n.what = t_[pos_].text + " loop";
      if (pos_ + 1 < t_.size() && t_[pos_ + 1].kind == Token::Kind::Word) n.var = t_[pos_ + 1].text;
      const bool arithmetic = pos_ + 1 < t_.size() && t_[pos_ + 1].kind == Token::Kind::Arith;  // for ((i=0; ...))
      if (arithmetic) n.words.push_back(t_[pos_ + 1]);
      // The words after "in" (kept as the loop's list; none without "in": the positional arguments).
      bool in_list = false;
      while (pos_ < t_.size() && !word("do")) {
        if (in_list && t_[pos_].kind == Token::Kind::Word) n.words.push_back(t_[pos_]);
        if (word("in")) in_list = true;
        ++pos_;
      }
      if (!in_list && !arithmetic) n.words.push_back({Token::Kind::Word, "\"$@\"", at});
      expect("do", at, n.what);
      n.children = list({"done"});
      expect("done", at, n.what);
      return n;
    }
    if (word("while") || word("until")) {  // arms[0]: the condition and the body
      Node n{Node::Kind::Opaque, at};
      n.what = t_[pos_++].text + " loop";
      auto cond = list({"do"});
      expect("do", at, n.what);
      auto body = list({"done"});
      expect("done", at, n.what);
      n.arms.emplace_back(std::move(cond), std::move(body));
      return n;
    }
    if (word("case")) return case_clause();
    if (word("function")) {
      ++pos_;
      Node n{Node::Kind::Opaque, at};
      n.what = "function " + (pos_ < t_.size() ? t_[pos_++].text : std::string());
      if (op("(")) pos_ += 2;
      skip_newlines();
      n.children.push_back(command());
      return n;
    }
    if (op("(") || word("{")) {
      const bool brace = word("{");
      ++pos_;
      Node n{Node::Kind::Group, at};
      n.subshell = !brace;  // ( list ): a subshell (bash manual, "Command Grouping")
      n.children = list({brace ? "}" : ")"});
      if (brace) {
        expect("}", at, "{");
      } else if (op(")")) {
        ++pos_;
      } else {
        error(at, "( without a matching )");
      }
      return n;
    }
    return simple();
  }

  Node if_clause() {
    const int at = line();
    Node n{Node::Kind::If, at};
    ++pos_;  // if
    while (true) {
      auto cond = list({"then"});
      expect("then", at, "if");
      auto body = list({"elif", "else", "fi"});
      n.arms.emplace_back(std::move(cond), std::move(body));
      if (word("elif")) {
        ++pos_;
        continue;
      }
      break;
    }
    if (word("else")) {
      ++pos_;
      n.otherwise = list({"fi"});
    }
    expect("fi", at, "if");
    return n;
  }

  /// case ... esac: kept as one opaque statement holding its words (patterns and commands alike).
  Node case_clause() {
    const int at = line();
    Node n{Node::Kind::Opaque, at};
    n.what = "case statement";
    Node body{Node::Kind::Simple, at};
    int depth = 0;
    while (pos_ < t_.size()) {
      const Token& t = t_[pos_++];
      if (t.kind == Token::Kind::Word && t.text == "case") ++depth;
      if (t.kind == Token::Kind::Word && t.text == "esac" && --depth == 0) {
        n.children.push_back(std::move(body));
        return n;
      }
      if (t.kind == Token::Kind::Word || t.kind == Token::Kind::ArrayAssign || t.kind == Token::Kind::Arith)
        body.words.push_back(t);
    }
    error(at, "case without a matching \"esac\"");
  }

  Node simple() {
    Node n{Node::Kind::Simple, line()};
    n.after_comment = std::exchange(cut_, 0);
    if (pos_ < t_.size() && t_[pos_].kind == Token::Kind::Arith) {  // (( expression ))
      n.words.push_back(t_[pos_++]);
      return n;
    }
    if (word("[[")) {  // [[ ... ]]: && || < > inside are operands of the test
      while (pos_ < t_.size() && !word("]]")) {
        if (t_[pos_].kind == Token::Kind::Newline) error(n.line, "[[ without a matching ]] on its line");
        n.words.push_back(t_[pos_++]);
      }
      expect("]]", n.line, "[[");
      n.words.push_back({Token::Kind::Word, "]]", n.line});
      return n;
    }
    while (pos_ < t_.size()) {
      const Token& t = t_[pos_];
      if (t.kind == Token::Kind::Word || t.kind == Token::Kind::ArrayAssign) {
        n.words.push_back(t);
        ++pos_;
        if (n.words.size() == 1 && op("(") && pos_ + 1 < t_.size() && t_[pos_ + 1].text == ")") {  // NAME() body
          pos_ += 2;
          skip_newlines();
          Node f{Node::Kind::Opaque, n.line};
          f.what = "function " + n.words.front().text;
          f.children.push_back(command());
          return f;
        }
      } else if (t.kind == Token::Kind::Heredoc) {
        n.heredocs.push_back(t);
        ++pos_;
      } else if (t.kind == Token::Kind::Sbatch && n.words.empty()) {
        n.words.push_back(t);
        ++pos_;
        return n;
      } else if (t.kind == Token::Kind::Op && (t.text == ">" || t.text == ">>" || t.text == "<" || t.text == ">&" ||
                                               t.text == "&>" || t.text == "<&" || t.text == "<<<")) {
        pos_ += 1;
        if (pos_ < t_.size() && t_[pos_].kind == Token::Kind::Word) ++pos_;  // the redirection's target
      } else if (t.kind == Token::Kind::Op && (t.text == "<<" || t.text == "<<-")) {
        ++pos_;
      } else {
        break;
      }
    }
    if (n.words.empty() && n.heredocs.empty() && pos_ < t_.size()) {
      const Token& t = t_[pos_];
      if (t.kind == Token::Kind::Sbatch) {
        ++pos_;
        return n;
      }
      error(t.line, "unexpected \"" + t.text + "\"");
    }
    return n;
  }

  const std::vector<Token>& t_;
  const std::string& origin_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  int cut_ = 0;  // the line of a comment that ended the command before the next one (Token::cut)
};

}  // namespace

std::vector<Node> parse(const std::vector<Token>& tokens, const std::string& origin) {
  return Parser(tokens, origin).all();
}

}  // namespace sim::importers::shell
