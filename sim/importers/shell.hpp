// sim/importers/shell.hpp: the commands a launch script runs, read the way bash would without running anything.
//
// The reader (shell_tokens.cpp and shell_parse.cpp: tokens and statements; shell.cpp: the walk over the statements;
// shell_expand.cpp, shell_arith.cpp and shell_conditions.cpp: expansion, arithmetic and tests) covers what launch
// scripts use: NAME=value and NAME=(array) assignments (also after export/declare/local, += appends, unset; before a
// command, NAME=value is that command's environment only, as bash has it), $NAME, ${NAME}, ${NAME:-default} and the
// other default forms, ${ARR[@]} / ${ARR[i]} / ${#ARR[@]}, $((arithmetic)), (( )) and let (octal 010, 0x1F, 2#101; ++,
// +=, = assign as bash does), '...' and "..." quotes, word splitting of unquoted expansions (flags held in strings),
// backslash continuations, comments (one inside a continued command ends it there), #SBATCH directives, heredocs given
// to sbatch / bash / sh / srun / cat, `if` / `elif` / `else` with [ ], [[ ]] and test conditions, && and ||. Subshells
// ( ... ), the commands of a pipeline, background jobs and bash -c strings run with a copy of the variables: what they
// assign is not seen after them; a child shell (bash -c, a heredoc given to bash, sbatch or srun) gets only the
// exported ones (shell_exports.hpp), and an unquoted heredoc's body is expanded by the script first. The script is read
// as run with the invocation's arguments and environment (ShellInvocation; by default none, in an environment that sets
// nothing): ${1:-x} and ${SLURM_NNODES:-1} take their defaults when not given (recorded on the word), while a bare $1
// or $SLURM_NNODES that is not given, $(command) and `command` are unknown (the word says so). Given arguments are $1
// ... ${N}, $#, $@ and $* (an argument past the last given is empty, as bash has it; `shift` drops them). A condition
// that cannot be decided from the file, and loops, case statements and functions, are skipped when they assign nothing
// and hold no --flag; otherwise they are refused naming the line. A `source` / `.` file is not read: every variable set
// before it is unknown after it. Memory and time are bounded: the text, every expansion and their sum are capped
// (A=$A$A repeated is refused, not followed), and nesting is limited.
#pragma once
#include "sim/base/errors.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sim::importers {

/// One word of a command after expansion and quote removal.
struct ShellWord {
  std::string text;
  int line = 0;          // where its text was written (for a word from a variable: the variable's assignment)
  bool unknown = false;  // holds an expansion the file does not determine ($1, $(cmd), an unset variable)
  std::vector<std::string> defaults = {};  // "${SLURM_NNODES:-1} (SLURM_NNODES is not set in the file)"
  /// An unknown word whose only unknowns are variables the file does not set: its text with those empty, as bash
  /// gives it in an environment that sets nothing (a test's operand reads it; a flag's value stays unknown).
  std::optional<std::string> unset_empty = std::nullopt;
  /// Holds one of bash's operators trainsim does not evaluate (${A[@]/--bf16/--fp16}, ${X%pat}, ${A[@]:1}, ${X,,})
  /// applied to a variable the file sets: its value is not what the file's text says.
  bool operator_expansion = false;
};

/// One simple command as it would run (assignment-only statements are not commands). #SBATCH directives are commands
/// whose first word is "#SBATCH".
struct ShellCommand {
  int line = 0;
  std::vector<ShellWord> words;
  /// Its prefix assignments with known values (NCCL_NVLS_ENABLE=0 torchrun ...): the command's environment, not the
  /// script's variables; in a subshell, pipeline or child shell, the known variables it saw there first (the script's
  /// at its end no longer hold them: ( export NCCL_NVLS_ENABLE=0; torchrun ... ) | tee log).
  std::vector<std::pair<std::string, std::string>> env = {};
  /// The line of a comment that ended the command before this one: that command's last line ended in a backslash and
  /// the comment ran to the end of its line (its own backslash included), so bash runs this line as a command of its
  /// own, not as more arguments (`torchrun ... \`, `# --flag \`, `--tensor-model-parallel-size 8`). 0: none.
  int after_comment = 0;
};

struct ShellScript {
  std::vector<ShellCommand> commands;
  std::map<std::string, std::string> variables;  // scalar values known at the end ("" for an unknown one is absent)
  /// Every variable's value at the end, word-split as an unquoted ${NAME[@]} would be (arrays and flag strings of a
  /// file of variables meant to be sourced), in the order of their first assignment.
  std::vector<std::pair<std::string, std::vector<ShellWord>>> values;
  std::vector<std::string> notes;  // "line 12: heredoc for python not read", ...
  int exit_line = 0;               // the line of an `exit` the walk ran (what follows is not read); 0: none
  std::string exit_reason;         // why it stops there
};

/// Limits: the input text, one expanded word or assignment, and all expansion together. Real launch scripts expand
/// to kilobytes; the total bounds the reader's work (64 MiB of doubling variables through nested bash -c strings took
/// the fuzzer's 10 s limit under the sanitizers, 8 MiB takes about a second there).
inline constexpr std::size_t kShellMaxText = 4u << 20;
inline constexpr std::size_t kShellMaxWord = 1u << 20;
inline constexpr std::size_t kShellMaxTotal = 8u << 20;
/// Limit on the variables copied for subshells, pipelines and background jobs together (each starts with a copy of
/// the script's variables): a few kilobytes each in real scripts.
inline constexpr std::size_t kShellMaxCopied = 64u << 20;

/// How the script is run: its positional arguments and the environment variables it is given (`bash run.sh dsw A37B`
/// with MP_VP=2 set). A value taken from them is recorded on the word, like a default, naming where it came from.
struct ShellInvocation {
  std::optional<std::vector<std::string>> args = {};  // given (even none): $1 ... are known; absent: unknown
  std::vector<std::pair<std::string, std::string>> env = {};
  /// How messages name them: the options of `trainsim import` that give them.
  std::string args_origin = "--args";
  std::string env_origin = "--env";
};

/// Which --flags matter to the reader's caller (the flag without "--", as written): a branch or loop that holds only
/// flags that do not matter (--wandb-project) is skipped with a note rather than refused. Empty: every flag matters.
using FlagFilter = std::function<bool(std::string_view)>;

/// Reads `text` (from `origin`, used in messages). Throws base::ConfigError naming the line for malformed input
/// (an unterminated quote), an undecidable branch that matters, and inputs past the limits.
ShellScript read_shell(std::string_view text, const std::string& origin, const FlagFilter& matters = {},
                       const ShellInvocation& invocation = {});

// ---- internal: the statements of a script (shell_parse.cpp), walked by shell.cpp --------------------------------

namespace shell {

struct Token {
  enum class Kind { Word, Op, Newline, ArrayAssign, Sbatch, Heredoc, Arith };
  Kind kind = Kind::Word;
  std::string text;  // raw word (quotes kept), operator, array name (with "+" for +=), or #SBATCH / heredoc body
  int line = 0;
  std::vector<Token> elements = {};  // ArrayAssign: the raw element words
  bool quoted_delimiter = false;     // Heredoc: <<'EOF' (not expanded)
  bool cut = false;                  // Newline: ends a comment that ended a continued command (ShellCommand)
};

struct Node {
  enum class Kind { Simple, If, AndOr, Group, Opaque };
  Kind kind = Kind::Simple;
  int line = 0;
  std::vector<Token> words = {};  // Simple: words and array assignments, redirections removed
  std::vector<Token> heredocs = {};
  // If: arms of (condition, body); `otherwise` is the else body. AndOr: children with `ops` ("&&", "||") between.
  std::vector<std::pair<std::vector<Node>, std::vector<Node>>> arms = {};
  std::vector<Node> otherwise = {};
  std::vector<Node> children = {};  // AndOr operands, Group and Opaque bodies
  std::vector<std::string> ops = {};
  bool negated = false;   // ! pipeline
  std::string what = {};  // Opaque: "for loop", "while loop", "case statement", "function NAME"
  std::string var = {};   // for / select loop: the variable it sets
  /// Runs in a subshell (bash manual, "Command Execution Environment"): ( list ), each command of a pipeline of more
  /// than one, and an asynchronous list (`list &`, `background` also set): what it assigns is not seen after it.
  bool subshell = false;
  bool background = false;
  int after_comment = 0;  // Simple: ShellCommand::after_comment
  int end_line = 0;       // the line of its last token (a compound's fi, done, esac, } or ))
};

std::vector<Token> tokenize(std::string_view text, const std::string& origin, int first_line, int depth);
std::vector<Node> parse(const std::vector<Token>& tokens, const std::string& origin);

/// The index past the end of the $-expansion, quote or backtick starting at s[i] (quote-aware, nesting counted).
std::size_t skip_dollar(std::string_view s, std::size_t i, const std::string& origin, int line, int depth = 0);
std::size_t skip_double_quoted(std::string_view s, std::size_t i, const std::string& origin, int line, int depth = 0);
[[noreturn]] void unterminated(const std::string& origin, int line, const std::string& what, const std::string& close);
/// The text of $'...' (bash manual, "ANSI-C Quoting"): \n, \t, \\, \", \xHH and \NNN decoded (\' ends the word in
/// the tokenizer, so it does not reach here).
std::string ansi_c(std::string_view s);
/// Blank-separated words up to a # (unquoted, unexpanded: a #SBATCH line as Slurm reads it, bcprun's --env list).
std::vector<ShellWord> split_words(std::string_view text, int line);

}  // namespace shell

}  // namespace sim::importers
