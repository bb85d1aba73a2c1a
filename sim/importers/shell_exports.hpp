// sim/importers/shell_exports.hpp: what a launch script's child shells inherit (bash manual, "Command Execution
// Environment": a command run by the shell, bash -c or a heredoc given to bash, sbatch or srun, gets the shell's
// exported variables only; "Bourne Shell Builtins": export [-n], declare / typeset / local -x, unset; "The Set
// Builtin": set -a / -o allexport), and which are readonly (readonly, declare / typeset -r).
#pragma once
#include "sim/importers/shell.hpp"

#include <set>
#include <string>
#include <vector>

namespace sim::importers::shell {

/// The names a child shell gets: the invocation's environment and what the script exported. A subshell copies it with
/// the variables and puts it back after.
class Exports {
 public:
  void environment(const std::string& name) { names_.insert(name); }
  /// A plain NAME=value: exported under set -a.
  void assigned(const std::string& name) {
    if (all_) names_.insert(name);
  }
  /// export / declare / typeset / local / readonly with its words (options first, then NAME or NAME=value).
  void declared(const std::string& builtin, const std::vector<Token>& words);
  /// set's words: -a / +a (with other letters), -o / +o allexport.
  void set_options(const std::vector<Token>& words);
  void unset(const std::vector<Token>& words);
  bool exported(const std::string& name) const { return names_.count(name) != 0; }
  bool readonly(const std::string& name) const { return readonly_.count(name) != 0; }
  void drop_readonly() { readonly_.clear(); }
  /// `words` without those naming or assigning a readonly variable: bash refuses each ("X: readonly variable") and
  /// goes on with the others (export, declare, local, unset, a command's prefix assignments).
  std::vector<Token> settable(const std::vector<Token>& words) const;

 private:
  std::set<std::string> names_, readonly_;
  bool all_ = false;
};

}  // namespace sim::importers::shell
