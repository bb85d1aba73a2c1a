// sim/importers/shell_arith.hpp: bash's $((arithmetic)) on 64-bit integers and the [ ] / [[ ]] / test conditions,
// for the launch-script reader (shell.hpp). Both answer "not decided" rather than guess.
#pragma once
#include "sim/importers/shell.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sim::importers::shell {

/// A variable's value as an arithmetic operand; nullopt where the file does not determine it.
using ArithLookup = std::function<std::optional<std::int64_t>(std::string_view)>;
/// What an assignment (= += -= *= /= %= <<= >>= &= ^= |=), increment or decrement gives a variable, in the order bash
/// makes them; nullopt where that value is unknown (an operand the file does not determine, or an operand whose
/// evaluation depends on one: the branch of `X ? A=1 : 0` with X unknown).
using ArithAssign = std::function<void(std::string_view, std::optional<std::int64_t>)>;
/// A variable's value as text ($NAME is expanded as text before bash evaluates: 10#$N); nullopt where unknown.
using ArithText = std::function<std::optional<std::string>(std::string_view)>;

/// The value of an arithmetic expression (bash manual, "Shell Arithmetic": every operator it lists, from id++ to the
/// comma, with its precedence; ?:, && and || evaluate only what bash evaluates), integer constants as bash reads them
/// (010 octal, 0x1F hexadecimal, 2#101 in any base from 2 to 64), NAME and $NAME / ${NAME} operands looked up by
/// `lookup` (and as text by `text`, where given: 10#$N; a $NAME whose value is more than one operand is unknown). What
/// it assigns goes to `assign`; without one, an expression that assigns is refused (`why`). nullopt
/// when an operand is unknown (`why` empty) or the expression is malformed, divides by zero or overflows (`why` says
/// which, as bash would fail).
std::optional<std::int64_t> arithmetic(std::string_view expr, const ArithLookup& lookup, std::string& why,
                                       const ArithAssign& assign = {}, const ArithText& text = {});

/// The variables an arithmetic expression may assign (NAME=, NAME+=, ..., ++NAME, NAME--): what a statement not run
/// would leave unknown.
void arith_assigned(std::string_view expr, std::set<std::string>& names);

/// The outcome of a test command's operands (without the brackets): -z -n, = == != < >, -eq -ne -lt -le -gt -ge
/// (decimal integers in [ ], arithmetic expressions in [[ ]]),
/// ! -a -o && || and parentheses. nullopt, with `why`, when it tests the file system, an unknown word, or a
/// [[ ]] pattern.
std::optional<bool> evaluate_test(const std::vector<ShellWord>& words, bool double_bracket, std::string& why);

class Expander;
/// The status of a `[ ... ]`, `[[ ... ]]` or `test ...` command: its words expanded (a variable the file does not set
/// taken as bash gives it, with a note), then evaluate_test.
std::optional<bool> test_command(Expander& ex, const Node& n, std::vector<std::string>& notes, std::string& why);

}  // namespace sim::importers::shell
