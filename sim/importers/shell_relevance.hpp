// sim/importers/shell_relevance.hpp: (internal to the launch-script reader) what a statement the reader does not run
// could change: the variables it assigns, the --flags it holds, the jobs it starts. shell.cpp asks before it skips a
// loop, an undecided if or a command whose status it cannot know.
#pragma once
#include "sim/importers/shell.hpp"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::importers::shell {

/// The last path component of a command word ("/usr/bin/torchrun" -> "torchrun").
std::string basename(const std::string& s);
/// Commands that start a training job: an `if` or a loop around them decides whether the job's flags are read.
bool is_launcher(const std::string& command);
/// The variable an assignment token sets.
std::string assigned_name(const Token& t);
/// The variables a (( )) command or the $(( )) expansions in a word may assign (++, =, +=, ...).
void arith_assigned_in(const Token& t, std::set<std::string>& names);
/// The variables statements assign, at any depth, but not those a subshell assigns (which it keeps).
void assigned_in(const std::vector<Node>& nodes, std::set<std::string>& names);
/// What a variable set by a statement the reader does not run (a loop, an undecided if) carries to its uses: "NAME
/// is set in the WHAT WHERE", WHERE saying what would decide it.
std::string set_where(const std::string& name, const std::string& what, const std::string& where);
/// The bash construct in a value that trainsim does not evaluate (${!NAME}, ${NAME:1:2}, ${NAME%x}, $[...], $1, ...),
/// as a phrase for a message ("indirect expansion (${!NAME}), which trainsim does not evaluate"); empty when none.
std::string unevaluated_construct(const std::string& value);
/// Why a flag's value is unknown: where the file sets it from something it does not determine (the origins its
/// word carries, set_where's), a construct trainsim does not evaluate, or that it names nothing the file defines.
std::string unknown_value_reason(const std::string& value, const std::vector<std::string>& origins);
/// unknown_value_reason's answer where the value was set in a statement not run; nullopt otherwise.
std::optional<std::string> set_in_skipped(const std::string& value, const std::vector<std::string>& origins);
/// Why the flags an unknown word of a launch command may hold cannot be read, where the file does set what it
/// expands (set in a statement not run, or under one of bash's operators trainsim does not evaluate); nullopt for a
/// variable the file does not set (empty in the environment the README documents).
std::optional<std::string> unread_flags(const ShellWord& w);
/// What an unknown word of a launch command that unread_flags lets pass is, for the "ignored" list: a variable the
/// file does not set, or text trainsim cannot expand (a command's output, an operator on a value without flags).
std::string unexpanded(const ShellWord& w);

class Relevance {
 public:
  /// `matters`: whether a flag name changes the import (empty: every flag does).
  explicit Relevance(const std::function<bool(std::string_view)>& matters) : matters_(matters) {}

  /// Whether statements set variables, hold a --flag or start a job: then skipping them could misread the script.
  /// `assignments` false: only flags and launch commands count.
  bool relevant(const std::vector<Node>& nodes, bool assignments = true) const;
  bool relevant(const Node& n, bool assignments = true) const;
  /// The --flags written in a raw word ("--fp8-format hybrid" inside quotes counts), and whether one matters.
  std::pair<bool, bool> flags_in(std::string_view raw) const;
  /// An assignment matters unless what it assigns is only flags that do not matter (LOGGING_ARGS+=(--wandb-...)).
  bool assignment_matters(const Token& t, bool only_flags = false) const;
  /// An opaque body keeps its words in one list (a case statement's patterns and commands alike), so an assignment
  /// is not first among them: any word that assigns a variable a later command may read makes it matter.
  bool assigns_anywhere(const std::vector<Node>& nodes) const;

 private:
  const std::function<bool(std::string_view)>& matters_;
};

}  // namespace sim::importers::shell
