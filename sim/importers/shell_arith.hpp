// sim/importers/shell_arith.hpp: bash's $((arithmetic)) on 64-bit integers and the [ ] / [[ ]] / test conditions,
// for the launch-script reader (shell.hpp). Both answer "not decided" rather than guess.
#pragma once
#include "sim/importers/shell.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sim::importers::shell {

/// The value of an arithmetic expression (bash manual, "Shell Arithmetic": + - * / % ** unary - + !, comparisons,
/// && ||, parentheses, decimal and 0x numbers, NAME and $NAME / ${NAME} operands looked up by `lookup`). nullopt
/// when an operand is unknown (`why` empty) or the expression is malformed, divides by zero or overflows (`why`
/// says which).
std::optional<std::int64_t> arithmetic(std::string_view expr,
                                       const std::function<std::optional<std::int64_t>(std::string_view)>& lookup,
                                       std::string& why);

/// The outcome of a test command's operands (without the brackets): -z -n, = == != < >, -eq -ne -lt -le -gt -ge,
/// ! -a -o && || and parentheses. nullopt, with `why`, when it tests the file system, an unknown word, or a
/// [[ ]] pattern.
std::optional<bool> evaluate_test(const std::vector<ShellWord>& words, bool double_bracket, std::string& why);

}  // namespace sim::importers::shell
