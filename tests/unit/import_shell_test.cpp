// The launch-script reader (sim/importers/shell.hpp) and the Megatron-LM flags it feeds: what bash would run, read
// without running it, or a refusal naming the line. Inputs are written here to isolate one construct each; the real
// scripts are in import_corpus_test.cpp.
#include "sim/cli/app.hpp"
#include "sim/importers/importers.hpp"
#include "sim/importers/shell.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace sim::importers {
namespace {

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// The words of the script's last command.
std::vector<std::string> last_command(const std::string& script) {
  const auto s = read_shell(script, "t.sh");
  if (s.commands.empty()) return {};
  std::vector<std::string> out;
  for (const auto& w : s.commands.back().words)
    out.push_back(w.text + (w.unknown ? "?" : ""));
  return out;
}

std::string shell_error(const std::string& script) {
  try {
    read_shell(script, "t.sh");
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string megatron_error(const std::string& script) {
  try {
    import_megatron_text(script, "t.sh");
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string megatron_error_of_file(const std::string& path) {
  try {
    import_megatron(path);
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

using W = std::vector<std::string>;

TEST(Shell, DefaultsQuotesAndArithmeticExpandAsBashDoes) {
  EXPECT_EQ(last_command("NNODES=${SLURM_NNODES:-\"1\"}\nGPN=8\nrun $(($GPN*$NNODES)) $(( (GPN + 2) / 3 ))\n"),
            (W{"run", "8", "3"}));
  EXPECT_EQ(last_command("TP=\"\"1\"\"\nrun --tp ${TP}\n"), (W{"run", "--tp", "1"})) << "\"\"1\"\" is 1";
  EXPECT_EQ(last_command("run ${1:-\"ckpt\"} ${X-a} ${X:+b} ${Y:=c} $Y\n"), (W{"run", "ckpt", "a", "c", "c"}));
  EXPECT_EQ(last_command("run $1 $UNSET_VAR $(hostname) `date`\n"),
            (W{"run", "$1?", "$UNSET_VAR?", "$(hostname)?", "`date`?"}))
      << "what the file does not determine is unknown, never empty";
  const auto s = read_shell("N=${SLURM_NNODES:-2}\nrun $N\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  ASSERT_EQ(s.commands[0].words[1].defaults.size(), 1u);
  EXPECT_TRUE(contains(s.commands[0].words[1].defaults[0], "SLURM_NNODES is not set in the file"));
  EXPECT_TRUE(contains(shell_error("X=$((4/0))\n"), "division by zero"));
  EXPECT_TRUE(contains(shell_error("X=$((2**62 * 4))\n"), "overflows"));
  // A huge exponent is answered at once (the fuzzer's 0**10**10 looped 10^10 times), as bash answers it.
  EXPECT_EQ(last_command("run $((0**10**10)) $((1**10**10)) $((-1**10**10)) $(((-1)**(10**10+1)))\n"),
            (W{"run", "0", "1", "1", "-1"}));
  EXPECT_TRUE(contains(shell_error("X=$((3**10**10))\n"), "overflows"));
  EXPECT_TRUE(contains(shell_error("X=$((0**10**10 / 0))\n"), "division by zero"));
}

TEST(Shell, ArraysKeepQuotedElementsAndSplitThemWhenUnquoted) {
  const std::string arrays =
      "A=(\n  --bf16   # a comment\n  \"--fp8-format hybrid\"\n)\nA+=(\"--x 1\")\nB=(\"${A[@]}\" --y)\n";
  EXPECT_EQ(last_command(arrays + "run ${A[@]}\n"), (W{"run", "--bf16", "--fp8-format", "hybrid", "--x", "1"}));
  EXPECT_EQ(last_command(arrays + "run \"${A[@]}\"\n"), (W{"run", "--bf16", "--fp8-format hybrid", "--x 1"}));
  EXPECT_EQ(last_command(arrays + "run ${B[@]} ${#A[@]} ${A[1]}\n"),
            (W{"run", "--bf16", "--fp8-format", "hybrid", "--x", "1", "--y", "3", "--fp8-format", "hybrid"}));
  EXPECT_EQ(last_command("E=()\nrun \"${E[@]}\" x\n"), (W{"run", "x"})) << "an empty array gives no word";
}

// A user trial: ARGS[1]=40 ran as a command and unset "ARGS[3]" removed nothing, so the import kept layers 80 and tp 2.
TEST(Shell, ArrayElementsAreSetAndUnsetAsBashDoesOrRefusedWhereBashLeavesGaps) {
  const std::string a = "A=(--num-layers 80 --bf16 --tp 2)\n";
  EXPECT_EQ(last_command(a + "A[1]=40\nrun \"${A[@]}\"\n"), (W{"run", "--num-layers", "40", "--bf16", "--tp", "2"}));
  EXPECT_EQ(last_command(a + "I=2; A[I+2]+=0\nrun ${A[@]}\n"),
            (W{"run", "--num-layers", "80", "--bf16", "--tp", "20"}));
  EXPECT_EQ(last_command(a + "A[5]=x\nrun ${A[@]}\n"), (W{"run", "--num-layers", "80", "--bf16", "--tp", "2", "x"}))
      << "one past the end appends";
  EXPECT_EQ(last_command("B[0]=--fp16\nrun ${B[@]}\n"), (W{"run", "--fp16"})) << "a new array";
  EXPECT_EQ(last_command(a + "unset \"A[4]\"; unset 'A[3]'\nrun ${A[@]}\n"),
            (W{"run", "--num-layers", "80", "--bf16"}));
  EXPECT_EQ(last_command(a + "unset -v A\nrun ${A[@]} x\n"), (W{"run", "${A[@]}?", "x"})) << "unset: as if never set";
  EXPECT_TRUE(
      contains(shell_error(a + "A[9]=x\n"), "line 2: A[9]=: element 9 of an array of 5 leaves bash's array sparse"))
      << shell_error(a + "A[9]=x\n");
  EXPECT_TRUE(contains(shell_error(a + "unset 'A[1]'\n"), "line 2: unset A[1]: removing an element but the last"))
      << shell_error(a + "unset 'A[1]'\n");
  // A review: bash's append idiom, negative subscripts, [@], unset -f, export of an element, associative keys.
  EXPECT_EQ(last_command("A=(--bf16)\nA[${#A[@]}]=--tp\nA[${#A[*]}]=2\nrun ${A[@]}\n"),
            (W{"run", "--bf16", "--tp", "2"}));
  EXPECT_EQ(last_command(a + "A[-1]=4\nrun ${A[@]}\n"), (W{"run", "--num-layers", "80", "--bf16", "--tp", "4"}));
  EXPECT_EQ(last_command(a + "unset 'A[-1]'\nrun ${A[@]}\n"), (W{"run", "--num-layers", "80", "--bf16", "--tp"}));
  EXPECT_EQ(last_command(a + "unset 'A[@]'\nrun ${A[@]} x\n"), (W{"run", "x"}));
  EXPECT_EQ(last_command(a + "unset -f A\nrun ${A[@]}\n"), (W{"run", "--num-layers", "80", "--bf16", "--tp", "2"}))
      << "-f removes functions, not variables";
  EXPECT_EQ(last_command(a + "export A[1]=40\nrun ${A[@]}\n"), (W{"run", "--num-layers", "80", "--bf16", "--tp", "2"}))
      << "bash: not a valid identifier, the array unchanged";
  EXPECT_EQ(shell_error("declare -A M\nM[key]=v\nrun x\n"), "(no error)") << "an associative array left unused";
}

// A user trial: "${ARGS[@]/--bf16/--fp16}" expanded to nothing, with "the file does not set it", and the flags were
// lost; a backslash then a blank at a line's end was read as a continuation of a command bash ends there.
TEST(MegatronScript, OperatorsNotEvaluatedAndEscapedBlanksAtLineEndAreRefused) {
  const std::string tail = " --num-layers 2 --hidden-size 64 --num-attention-heads 2\n";
  for (const char* use : {"\"${A[@]/--bf16/--fp16}\"", "${P% --bf16}", "${P,,}", "${A[@]:1}", "${P:0:6}"}) {
    const auto e = megatron_error(
        std::string("A=(--bf16 --sequence-parallel)\nP=\"--bf16\"\ntorchrun pretrain_gpt.py ") + use + tail);
    EXPECT_TRUE(contains(e, "line 3: ")) << use << ": " << e;
    EXPECT_TRUE(contains(e, "operators are not evaluated by trainsim")) << use << ": " << e;
  }
  // Of a variable the file does not set, bash gives nothing: not refused (the README's environment).
  EXPECT_EQ(megatron_error("torchrun pretrain_gpt.py ${UNSET_ARGS%% *}" + tail), "(no error)");
  const auto blank = shell_error("run --a 1 \\ \n  --b 2\n");
  EXPECT_TRUE(contains(blank, "line 1: a backslash followed by a blank ends the line")) << blank;
  const auto comment = shell_error("run --a 1 \\  # precision\n  --b 2\n");
  EXPECT_TRUE(contains(comment, "line 1: a backslash followed by a blank ends the line")) << comment;
  // Inside an array the newline ends no command: bash goes on with the elements (a review).
  EXPECT_EQ(last_command("A=(\n  --bf16 \\ \n  --tp 2\n)\nrun ${A[@]}\n"), (W{"run", "--bf16", "--tp", "2"}));
  // An operator on a value without flags (a path) is no flag list: the script's word is not refused.
  const auto path = megatron_error("M=/opt/megatron/\ntorchrun ${M%/}/pretrain_gpt.py --num-layers 2\n");
  EXPECT_EQ(path.find("operators are not evaluated"), std::string::npos) << path;
}

TEST(Shell, StringHeldFlagsSplitAndUnknownPartsStayInTheirWord) {
  EXPECT_EQ(last_command("N=2\nARGS=\" \\\n  --tp $N \\\n  --pp 2 \\\n  \"\nCMD=\"`pwd`/x.py $ARGS\"\nrun $CMD\n"),
            (W{"run", "`pwd`/x.py?", "--tp", "2", "--pp", "2"}));
  EXPECT_EQ(last_command("L=\"python -m torch.distributed.run --nnodes 2\"\nsrun bash -c \"$L x.py --a \\$RANK\"\n"),
            (W{"python", "-m", "torch.distributed.run", "--nnodes", "2", "x.py", "--a", "$RANK?"}))
      << "bash -c's string is read as a script";
}

TEST(Shell, IfBranchesAreDecidedOrRefusedNamingTheLine) {
  const std::string pick =
      "D=fp8\nif [[ \"$D\" == \"bf16\" ]]; then\n  X=1\nelif [ \"$D\" = fp8 ] && [ -n \"$D\" ]; then\n"
      "  X=2\nelse\n  X=3\nfi\nrun $X\n";
  EXPECT_EQ(last_command(pick), (W{"run", "2"}));
  EXPECT_EQ(last_command("N=4\nif [ $N -gt 2 ]; then X=big; else X=small; fi\nrun $X\n"), (W{"run", "big"}));
  // An if that sets a flag's variable is not run: the variable is unknown, and the flag that uses it says where it
  // was set and what would decide the if.
  const auto undecided = read_shell("echo start\nif [ -f /etc/cluster ]; then\n  TP=2\nfi\nrun $TP\n", "t.sh");
  ASSERT_EQ(undecided.commands.size(), 2u);
  const auto& run_tp = undecided.commands.back().words;
  ASSERT_EQ(run_tp.size(), 2u);
  EXPECT_TRUE(run_tp[1].unknown);
  ASSERT_EQ(run_tp[1].defaults.size(), 1u);
  const auto& where = run_tp[1].defaults[0];
  EXPECT_TRUE(contains(where, "TP is set in the if at line 2, which cannot be decided from the file")) << where;
  EXPECT_TRUE(contains(where, "-f /etc/cluster")) << where;
  // An if whose branches write flags is refused where it stands.
  const auto e = shell_error("echo start\nif [ -f /etc/cluster ]; then\n  run --tp 2\nfi\n");
  EXPECT_TRUE(contains(e, "t.sh: line 2: this if cannot be decided")) << e;
  EXPECT_TRUE(contains(e, "-f /etc/cluster")) << e;
  // Nothing that matters in the branches: skipped, with a note.
  const auto s = read_shell("if [ ! -f x.py ]; then\n  echo missing\n  exit 1\nfi\nrun ok\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(s.commands[0].words[0].text, "run");
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_TRUE(contains(s.notes[0], "line 1: an if not decided")) << s.notes[0];
  EXPECT_TRUE(contains(shell_error("for i in 1 2; do\n  ARGS=\"--tp $i\"\ndone\n"), "line 1: a for loop")) << "loops";
  EXPECT_TRUE(contains(shell_error("f() {\n  torchrun x.py --tp 2\n}\n"), "function f"));
  // A loop that only sets variables (a host list) is not run: what it sets is unknown after it, not refused (a user
  // trial found such loops refused outright).
  const auto hosts = read_shell("for h in a b; do\n  HOSTS=\"$HOSTS,$h\"\n  N=$((N+1))\ndone\nrun --tp 2 $N\n", "t.sh");
  ASSERT_EQ(hosts.commands.size(), 1u);
  ASSERT_EQ(hosts.commands[0].words.size(), 4u);
  EXPECT_EQ(hosts.commands[0].words[2].text, "2");
  EXPECT_TRUE(hosts.commands[0].words[3].unknown) << "N is set by the loop that was not run";
  ASSERT_FALSE(hosts.notes.empty());
  EXPECT_TRUE(contains(hosts.notes.back(), "line 1: the for loop is not run; what it sets (HOSTS, N, h)"))
      << hosts.notes.back();
  // A case statement whose arms set variables (Megatron-LM's examples/mamba/train.sh picks the sizes so): refused
  // naming it, where the variables used to read as undefined later on.
  EXPECT_TRUE(contains(shell_error("case \"${SCALE}\" in\n  \"800M\")\n    TP=1\n    ;;\n  \"8B\")\n    TP=4\n    ;;\n"
                                   "esac\ntorchrun x.py --tensor-model-parallel-size $TP\n"),
                       "line 1: a case statement that sets variables"));
  // for A in "$@": refused when the arguments are not known, skipped when the script is run with none (--args "").
  const std::string loop = "for A in \"$@\"; do\n  export \"$A\"\ndone\ntorchrun x.py --tensor-model-parallel-size 2\n";
  EXPECT_TRUE(contains(shell_error(loop), "line 1: a for loop"));
  ShellInvocation none;
  none.args = std::vector<std::string>{};
  const auto s2 = read_shell(loop, "t.sh", {}, none);
  ASSERT_EQ(s2.commands.size(), 1u);
  EXPECT_EQ(s2.commands[0].words[0].text, "torchrun");
  ShellInvocation some;
  some.args = std::vector<std::string>{"TP=4"};
  EXPECT_THROW((void)read_shell(loop, "t.sh", {}, some), base::ConfigError) << "the loop runs: refused";
  // The command line says "no arguments" as --args "" (other options refuse an empty value).
  support::TempDir dir;
  const auto cli = support::trainsim({"import", "megatron", dir.write("loop.sh", loop), "--args", "", "--partial"});
  EXPECT_EQ(cli.err.find("an empty value"), std::string::npos) << cli.err;
  EXPECT_EQ(cli.err.find("a for loop"), std::string::npos) << cli.err;
}

TEST(Shell, HeredocsGivenToSbatchAreScriptsAndOthersAreNotRead) {
  const auto s = read_shell("sbatch <<EOF\n#!/bin/bash\n#SBATCH --nodes=4\nsrun x.py --tp 2\nEOF\necho done\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 4u);
  EXPECT_EQ(s.commands[1].words[0].text, "#SBATCH");
  EXPECT_EQ(s.commands[1].words[1].text, "--nodes=4");
  EXPECT_EQ(s.commands[1].line, 3);
  EXPECT_EQ(s.commands[2].words[0].text, "srun");
  const auto py = read_shell("python - <<'EOF'\nimport os; print('--tp 2')\nEOF\n", "t.sh");
  ASSERT_EQ(py.notes.size(), 1u);
  EXPECT_TRUE(contains(py.notes[0], "heredoc given to python is not read")) << py.notes[0];
  EXPECT_TRUE(contains(shell_error("cat <<EOF\nno end\n"), "unterminated heredoc"));
}

TEST(Shell, MemoryAndNestingAreBoundedInsteadOfFollowed) {
  std::string doubling = "A=x\n";
  for (int i = 0; i < 40; ++i)
    doubling += "A=$A$A\n";
  const auto e = shell_error(doubling);
  EXPECT_TRUE(contains(e, "grows past 1 MiB")) << e;
  EXPECT_TRUE(contains(e, "A=$A$A")) << e;
  // Each word under 1 MiB, but 512 KiB used over and over: the total is bounded too (the fuzzer's doubling through
  // nested bash -c strings ran past its 10 s limit at the 64 MiB total this was).
  std::string reused = "A=x\n";
  for (int i = 0; i < 19; ++i)
    reused += "A=$A$A\n";
  for (int i = 0; i < 20; ++i)
    reused += "run $A\n";
  const auto total = shell_error(reused);
  EXPECT_TRUE(contains(total, "grow past 8 MiB in all")) << total;
  EXPECT_TRUE(contains(shell_error("X=" + std::string(200, '(') + "\n"), "unexpected"));
  std::string substitutions;
  for (int i = 0; i < 3000; ++i)
    substitutions += "\"$(";
  EXPECT_TRUE(contains(shell_error("X=" + substitutions), "nested deeper"));
  std::string groups;
  for (int i = 0; i < 100; ++i)
    groups += "{ ";
  EXPECT_TRUE(contains(shell_error(groups + "\n"), "nested deeper"));
  EXPECT_TRUE(
      contains(shell_error("X=$((" + std::string(500, '(') + "1" + std::string(500, ')') + "))\n"), "nested deeper"));
}

// Found by fuzz_shell (corpus/fuzz_shell/regress_backslash_lone_cr): a backslash before a lone CR was taken as a line
// continuation (a CR is not a line), so the words after it were numbered past the text's last line.
TEST(Shell, OnlyBackslashNewlineOrCrlfContinuesALine) {
  const auto crlf = read_shell("run --a 1 \\\r\n  --b 2\r\n", "t.sh");
  ASSERT_EQ(crlf.commands.size(), 1u);
  EXPECT_EQ(crlf.commands[0].words.size(), 5u);
  const auto lone = read_shell("run x\\\ry\nrun z\n", "t.sh");
  ASSERT_EQ(lone.commands.size(), 2u);
  EXPECT_EQ(lone.commands[0].words.size(), 2u);
  EXPECT_EQ(lone.commands[1].words.back().line, 2);
}

// Found by fuzz_shell (corpus/fuzz_shell/regress_bash_c_expanded_newlines): a bash -c string whose variables expand to
// several lines was numbered past the file's last line.
TEST(Shell, ABashCStringExpandedToMoreLinesStaysInsideTheFile) {
  const auto s = read_shell("A=\"run x\nrun y\"\nbash -c \"$A\n$A\n$A\"\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 6u);
  EXPECT_EQ(s.commands.front().words.front().line, 1);  // the string starts with $A: A's assignment line
  for (const auto& c : s.commands)
    for (const auto& w : c.words)
      EXPECT_LE(w.line, 6) << w.text;
}

// `bash run.sh dsw A37B 8` with MP_VP=2 set: the arguments and environment a script is run with are given to the
// reader, which expands $1 ... ${10}, $#, "$@" and shift as bash does, and says where each value came from.
TEST(Shell, TheArgumentsAndEnvironmentAScriptIsRunWithAreItsOwn) {
  auto words = [](const std::string& script, const ShellInvocation& inv) {
    const auto s = read_shell(script, "t.sh", {}, inv);
    std::vector<std::string> out;
    if (s.commands.empty()) return out;
    for (const auto& w : s.commands.back().words)
      out.push_back(w.text + (w.unknown ? "?" : ""));
    return out;
  };
  ShellInvocation inv;
  inv.args = std::vector<std::string>{"dsw", "A37B", "3", "4", "5", "6", "7", "8", "9", "ten", "eleven"};
  inv.env = {{"MP_VP", "2"}, {"EMPTY", ""}};
  EXPECT_EQ(words("run $1 ${2} ${10} $10 ${11} $# $MP_VP x${EMPTY}y\n", inv),
            (W{"run", "dsw", "A37B", "ten", "dsw0", "eleven", "11", "2", "xy"}))
      << "${10} is the tenth argument, $10 is $1 then 0";
  EXPECT_EQ(words("run ${12} ${12:-d} $NOT_GIVEN\n", inv), (W{"run", "d", "$NOT_GIVEN?"}))
      << "an argument past the last is empty (bash), an environment variable not given stays unknown";
  EXPECT_EQ(words("run \"$@\"\n", ShellInvocation{std::vector<std::string>{"a b", "c"}}), (W{"run", "a b", "c"}));
  EXPECT_EQ(words("shift 2\nrun $1 $#\n", inv), (W{"run", "3", "9"}));
  // A condition on an argument is decided by it; without arguments it stays undecided and the error says how to give
  // them.
  const std::string branchy = "if [ $1 = dsw ]; then\n  TP=8\nelse\n  TP=1\nfi\nrun --tp $TP\n";
  EXPECT_EQ(words(branchy, inv), (W{"run", "--tp", "8"}));
  const auto unset = read_shell(branchy, "t.sh");
  ASSERT_EQ(unset.commands.size(), 1u);
  ASSERT_EQ(unset.commands[0].words.size(), 3u);
  ASSERT_EQ(unset.commands[0].words[2].defaults.size(), 1u);
  EXPECT_TRUE(contains(unset.commands[0].words[2].defaults[0], "--env NAME=VALUE, --args \"...\" for $1, $2, ..."))
      << unset.commands[0].words[2].defaults[0];
  // Where a value came from is recorded on the word, like a default the script took.
  const auto s = read_shell("TP=${10}\nrun --tp $TP --pp $MP_VP\n", "t.sh", {}, inv);
  ASSERT_EQ(s.commands.size(), 1u);
  ASSERT_EQ(s.commands[0].words[2].defaults.size(), 1u);
  EXPECT_EQ(s.commands[0].words[2].defaults[0], "$10 = \"ten\" (--args)");
  ASSERT_EQ(s.commands[0].words[4].defaults.size(), 1u);
  EXPECT_EQ(s.commands[0].words[4].defaults[0], "MP_VP = \"2\" (--env)");
  const auto direct = read_shell("\nrun --tp $1 \"$@\" $MP_VP\n", "t.sh", {}, inv);
  for (const auto& w : direct.commands.at(0).words)
    EXPECT_EQ(w.line, 2) << w.text << ": a given value is written where the script uses it";
  ShellInvocation bad;
  bad.env = {{"1X", "v"}};
  EXPECT_THROW(read_shell("run\n", "t.sh", {}, bad), base::ConfigError);
}

// `TP=2 bash other.sh` gives TP to that command's environment only (bash's "Simple Command Expansion"): the script's
// own TP, and the command's own words, do not see it. The reader had kept it as the script's variable, so a later
// --tensor-model-parallel-size $TP read 2 where bash passes 4. A `bash -c` string run by the command sees it.
TEST(Shell, APrefixAssignmentIsTheCommandsEnvironmentOnly) {
  EXPECT_EQ(last_command("TP=4\nTP=2 bash other.sh\nrun --tp $TP\n"), (W{"run", "--tp", "4"}));
  EXPECT_EQ(last_command("X=1 run $X\n"), (W{"run", "$X?"})) << "not in the command's own words either";
  EXPECT_EQ(last_command("N=1\nN=4 bash -c \"run --n \\$N\"\n"), (W{"run", "--n", "4"}));
  EXPECT_EQ(last_command("N=4 bash -c \"true\"\nrun $N\n"), (W{"run", "$N?"})) << "and gone after it";
  EXPECT_EQ(last_command("A=1 B=2\nrun $A $B\n"), (W{"run", "1", "2"})) << "assignments alone are the script's";
}

// bash's c ? a : b in $((...)) (Pai-Megatron-Patch: TP_COMM_OVERLAP=$(( ($TP > 1) ? 1 : 0 ))), grouping to the right,
// and only the branch taken evaluated.
TEST(Shell, ArithmeticConditionalTakesOneBranch) {
  EXPECT_EQ(last_command("TP=2\nrun $(( ($TP > 1) ? 1 : 0 )) $(( TP > 4 ? 1 : 0 )) $(( 0 ? 1 : 2 ? 3 : 4 ))\n"),
            (W{"run", "1", "0", "3"}));
  EXPECT_EQ(last_command("run $(( 1 ? 5 : 1/0 )) $(( 1 ? 5 : UNSET_VAR )) $(( 0 ? UNSET_VAR : 6 ))\n"),
            (W{"run", "5", "5", "6"}))
      << "the branch not taken neither divides by zero nor makes the value unknown";
  EXPECT_EQ(last_command("run $(( UNSET_VAR ? 1 : 2 ))\n"), (W{"run", "$(( UNSET_VAR ? 1 : 2 ))?"}));
  EXPECT_TRUE(contains(shell_error("X=$(( 1 ? 2 ))\n"), "a ? without its :"));
  EXPECT_TRUE(contains(shell_error("X=$(( 0 ? 2 : 1/0 ))\n"), "division by zero"));
  std::string deep = "X=$(( ";
  for (int i = 0; i < 200; ++i)
    deep += "1 ? ";
  EXPECT_TRUE(contains(shell_error(deep + "1 ))\n"), "nested deeper than 64"));
}

TEST(Shell, CommandSubstitutionInsideArithmeticIsAnUnknownOperand) {
  // Megatron-DeepSpeed's ds_pretrain_* header (microsoft/Megatron-DeepSpeed examples_deepspeed/sequence_parallel/
  // ds_pretrain_gpt_6.7B_fpdt_32k.sh at 79b8e228: num_gpus=$(($(ds_ssh nvidia-smi ... | wc -l)-2))) stopped the
  // import as a syntax error (a user trial).
  const auto s = read_shell("N=$(( $(nproc) - 2 ))\nM=$((`nproc` * 2))\nrun $N $M $(( $((2 + 3)) * 2 ))\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  ASSERT_EQ(s.commands[0].words.size(), 4u);
  EXPECT_TRUE(s.commands[0].words[1].unknown);
  EXPECT_TRUE(s.commands[0].words[2].unknown);
  EXPECT_EQ(s.commands[0].words[3].text, "10") << "$((...)) inside arithmetic is a parenthesised expression";
  EXPECT_EQ(last_command("run $(( $(echo \")\") + 1 )) 3\n"), (W{"run", "$(( $(echo \")\") + 1 ))?", "3"}))
      << "a quoted parenthesis does not end the substitution";
  EXPECT_TRUE(contains(shell_error("X=$(( `nproc - 2 ))\n"), "a ` without its closing `"));
  // An escaped parenthesis inside the substitution does not end it (a review).
  EXPECT_EQ(last_command("run $(( $(echo a\\)) + 1 )) 3\n").back(), "3");
}

TEST(Shell, AnUndecidedIfThatOnlySetsVariablesIsNotRun) {
  // A checkpoint-resume block (the same Megatron-DeepSpeed script): its if tests a counter set by a loop over ssh,
  // and its branches set variables no flag reads. It was refused, naming --env for a variable the file sets.
  const std::string resume =
      "iteration=0\nfor node in $(cat hostfile); do\n  iteration=$(ssh $node cat latest)\ndone\n"
      "if [[ $iteration -gt 0 ]]; then\n  iteration_2=\"global_step${iteration}\"\nfi\n"
      "run --tp 2 $iteration_2\n";
  const auto s = read_shell(resume, "t.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  ASSERT_EQ(s.commands[0].words.size(), 4u);
  EXPECT_EQ(s.commands[0].words[2].text, "2");
  EXPECT_TRUE(s.commands[0].words[3].unknown) << "set in the if that was not run";
  ASSERT_FALSE(s.notes.empty());
  EXPECT_TRUE(contains(s.notes.back(), "line 5: an if not decided by the file")) << s.notes.back();
  EXPECT_TRUE(contains(s.notes.back(), "whose value the file does not determine")) << s.notes.back();
  EXPECT_TRUE(contains(s.notes.back(), "what its branches set (iteration_2) is unknown after it")) << s.notes.back();
  // Branches that write flags are still refused.
  EXPECT_TRUE(contains(shell_error("X=$(hostname)\nif [ \"$X\" = a ]; then\n  run --tp 2\nfi\n"),
                       "line 2: this if cannot be decided"));
  // Flags held in a variable the skipped if sets: the launch command's word that uses it is refused, saying where it
  // was set (a review: EXTRA="$MOE_ARGS" was dropped as "the file does not set it" and a dense model written).
  const auto held = megatron_error(
      "MOE=\"--num-experts 8 --moe-router-topk 2\"\nEXTRA=\"\"\nif [ -f /etc/cluster ]; then\n  EXTRA=\"$MOE\"\nfi\n"
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
      "--micro-batch-size 1 --global-batch-size 8 --vocab-size 100 --train-iters 10 $EXTRA\n");
  EXPECT_TRUE(contains(held, "line 6: \"$EXTRA\" is not determined by the file: EXTRA is set in the if at line 3"))
      << held;
  // A command's arguments are not assignments: `echo TP=4` in a skipped if leaves TP as the file set it.
  const auto echo = read_shell("TP=2\nif [ -f /x ]; then\n  echo TP=4\nfi\nrun $TP\n", "t.sh");
  ASSERT_EQ(echo.commands.size(), 1u);
  EXPECT_EQ(echo.commands.back().words.back().text, "2");
}

TEST(ImportInputs, DevicesAndHugeFilesAreRefusedBeforeTheyAreRead) {
  EXPECT_TRUE(contains(megatron_error_of_file("/dev/zero"), "(trainsim reads regular files only)"));
  support::TempDir dir;
  const std::string big = (dir.path() / "big.sh").string();
  {
    std::ofstream out(big);
    out << std::string((17u << 20), '#');
  }
  EXPECT_TRUE(contains(megatron_error_of_file(big), "is 17 MiB, larger than 16 MiB"));
}

// ---- the Megatron-LM flags read through it -----------------------------------------------------------------------

TEST(MegatronScript, StringHeldFlagsAreReadAndOnlyTheTakenBranch) {
  const auto im = import_megatron_text(
      "GPT_ARGS=\"--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --fp16\"\n"
      "MODE=big\nif [ \"$MODE\" = small ]; then\n  EXTRA=\"--micro-batch-size 1\"\nelse\n"
      "  EXTRA=\"--micro-batch-size 4\"\nfi\ntorchrun pretrain_gpt.py $GPT_ARGS $EXTRA --train-samples 1953125000 "
      "--seq-length 4096\n",
      "l.sh");
  EXPECT_EQ(im.draft.integer("parallel.tp"), 2);
  EXPECT_EQ(im.draft.integer("parallel.pp"), 2);
  EXPECT_EQ(std::get<std::string>(im.draft.find("training.dtype")->value), "fp16");
  EXPECT_EQ(im.draft.integer("parallel.micro_batch"), 4) << "the else branch only";
  EXPECT_EQ(im.draft.integer("training.tokens"), std::int64_t{1953125000} * 4096) << "large counts are valid";
  EXPECT_TRUE(contains(im.draft.find("parallel.tp")->origin, "l.sh:1")) << "the line the flag was written on";
}

TEST(MegatronScript, FlagsTrainsimModelsAreReadNotDropped) {
  const std::string model = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 ";
  auto im = import_megatron_text(model +
                                     "--checkpoint-activations --kv-channels 128 --use-megatron-fsdp "
                                     "--data-parallel-sharding-strategy optim_grads_params --vocab-size 50257 "
                                     "--tensor-model-parallel-size 2 --global-batch-size 64 --moe-layer-freq 1",
                                 "a.sh");
  EXPECT_EQ(std::get<std::string>(im.draft.find("parallel.recompute")->value), "full");
  EXPECT_EQ(im.draft.integer("parallel.zero_stage"), 3) << "Megatron-FSDP optim_grads_params is ZeRO-3";
  EXPECT_EQ(im.draft.integer("model.vocab"), 50432) << "50257 padded to a multiple of 128 x tp 2";
  im = import_megatron_text(model +
                                "--num-experts 64 --moe-ffn-hidden-size 1408 "
                                "--moe-shared-expert-intermediate-size 2816 --global-batch-size 1536 "
                                "--rampup-batch-size 16 16 5859375 --train-iters 500000",
                            "b.sh");
  EXPECT_EQ(im.draft.integer("model.moe.shared_experts"), 2) << "2816 / 1408";
  // Megatron-LM's ramp: 95 increments of 16 over 5,859,375 samples take 19,802 iterations and 5,859,424 samples;
  // the other 480,198 iterations run at 1536.
  EXPECT_EQ(im.draft.integer("training.tokens"), (std::int64_t{5859424} + std::int64_t{480198} * 1536) * 4096);
}

TEST(MegatronScript, ModelAndTrainingFeaturesAreReadIntoTheirFields) {
  const std::string model = "--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --num-experts 8 ";
  const auto im = import_megatron_text(
      model +
          "--kv-channels 256 --moe-layer-freq '([0]*1+[1]*3)' --quick-geglu --multi-latent-attention "
          "--kv-lora-rank 512 --qk-layernorm --mtp-num-layers 1 --grad-reduce-in-bf16 --attention-dropout 0.0 "
          "--attention-backend unfused --recompute-granularity full --recompute-method block "
          "--recompute-num-layers 2 --decoder-first-pipeline-num-layers 1 --moe-ffn-hidden-size 1024 "
          "--moe-shared-expert-intermediate-size 1536",
      "f.sh");
  const auto& d = im.draft;
  EXPECT_FALSE(d.has("model.head_dim")) << "MLA does not read --kv-channels (KvChannelsBesideMultiLatentAttention...)";
  ASSERT_NE(d.find("model.moe.layer_pattern"), nullptr);
  EXPECT_EQ(to_string(d.find("model.moe.layer_pattern")->value), "[0,1,1,1]");
  EXPECT_EQ(std::get<std::string>(d.find("model.activation")->value), "geglu");
  EXPECT_EQ(d.integer("model.mla.kv_lora_rank"), 512);
  EXPECT_EQ(d.integer("model.mla.qk_rope_head_dim"), 64) << "Megatron-Core's default";
  EXPECT_EQ(to_string(d.find("model.qk_norm")->value), "true");
  EXPECT_EQ(d.integer("model.mtp_layers"), 1);
  EXPECT_EQ(d.integer("model.moe.shared_experts"), 1) << "1536 is not a multiple of 1024: one shared expert";
  EXPECT_EQ(d.integer("model.moe.shared_ffn_hidden"), 1536);
  EXPECT_EQ(std::get<std::string>(d.find("training.main_grads")->value), "bf16");
  EXPECT_EQ(to_string(d.find("training.fused_attention")->value), "false");
  EXPECT_EQ(std::get<std::string>(d.find("parallel.recompute_method")->value), "block");
  EXPECT_EQ(d.integer("parallel.recompute_num_layers"), 2);
  EXPECT_EQ(d.integer("parallel.first_stage_layers"), 1);
}

TEST(MegatronScript, WhatTrainsimDoesNotAcceptIsRefusedNamingTheFlag) {
  const std::string model = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 ";
  EXPECT_TRUE(contains(megatron_error(model + "--num-experts 8 --moe-layer-freq '[0,2]'"), "must be 0 (dense) or 1"));
  EXPECT_TRUE(contains(megatron_error(model + "--attention-dropout 1.5"), "is not a probability"));
  EXPECT_TRUE(contains(megatron_error(model + "--position-embedding-type alibi"),
                       "\"alibi\" is not accepted; accepted: learned_absolute, rope"));
  // No position embeddings (NoPE) are not modelled either: the list above does not offer "none" (a user trial).
  EXPECT_TRUE(contains(megatron_error(model + "--position-embedding-type none"),
                       "\"none\" is not accepted; accepted: learned_absolute, rope"));
  EXPECT_TRUE(contains(megatron_error(model + "--data-parallel-sharding-strategy zero9"), "accepted: no_shard"));
  EXPECT_TRUE(contains(megatron_error("torchrun a.py --tensor-model-parallel-size 2\n"
                                      "torchrun b.py --tensor-model-parallel-size 4\n"),
                       "line 2: --tensor-model-parallel-size 4 disagrees with --tensor-model-parallel-size 2 of "
                       "another command (line 1)"));
}

TEST(MegatronScript, SlurmDirectivesCountTheCluster) {
  const auto im = import_megatron_text(
      "#!/bin/bash\n#SBATCH --nodes=48\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:8\n"
      "NNODES=$SLURM_NNODES\nsrun --jobid $SLURM_JOB_ID bash -c \"python -m torch.distributed.run --nproc_per_node 8 "
      "--nnodes $NNODES x.py --tensor-model-parallel-size 4\"\n",
      "s.slurm");
  EXPECT_EQ(im.draft.integer("cluster.gpus"), 384) << "48 nodes x --nproc_per_node 8";
  EXPECT_EQ(im.draft.integer("parallel.tp"), 4);
  EXPECT_TRUE(unsettled(im).empty()) << "the unknown --nnodes is settled by the node count";
}

// A launch script that takes its settings as arguments (Pai-Megatron-Patch's run_mcore_*.sh: TP=${10}, PP=${11}, and
// `if [ -z ${MP_VP} ]` on the environment) is imported as it is run: --args and --env.
TEST(MegatronScript, ArgumentsAndEnvironmentAreGivenAsTheScriptIsRun) {
  support::TempDir dir;
  const auto f = dir.write("run.sh",
                           "MODEL_SIZE=$1\nTP=$2\nPP=${3}\n"
                           "if [ -z ${MP_VP} ]; then\n  vp_option=\"\"\nelse\n"
                           "  vp_option=\"--num-layers-per-virtual-pipeline-stage ${MP_VP}\"\nfi\n"
                           "if [ $MODEL_SIZE = 8B ]; then\n  LAYERS=32\nelse\n  LAYERS=80\nfi\n"
                           "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers $LAYERS "
                           "--hidden-size 4096 --num-attention-heads 32 --ffn-hidden-size 14336 --swiglu "
                           "--vocab-size 128256 --seq-length 8192 --micro-batch-size 1 --global-batch-size 512 "
                           "--tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP ${vp_option} "
                           "--train-samples 1000 --bf16\n");
  const auto o = support::trainsim(
      {"import", "megatron", f, "--args", "8B 2 '4'", "--env", "MP_VP=4", "--hardware", "h100-sxm5-80gb"});
  ASSERT_EQ(o.code, cli::kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"tp\": 2")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"pp\": 4")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"vpp\": 2")) << "32 layers / pp 4 / 4 per virtual stage\n" << o.out;
  EXPECT_TRUE(contains(o.out, "\"layers\": 32")) << o.out;
  EXPECT_TRUE(contains(o.err, "--tensor-model-parallel-size: 2 from $2 = \"2\" (--args)\n")) << o.err;
  EXPECT_FALSE(contains(o.err, "(--args); the script run elsewhere")) << "a given value is not a guess\n" << o.err;
  // Without the arguments the branch on $1 cannot be decided, and the error says how to give what it tests.
  const auto bare = support::trainsim({"import", "megatron", f, "--hardware", "h100-sxm5-80gb"});
  EXPECT_EQ(bare.code, cli::kExitBadInput);
  EXPECT_TRUE(contains(bare.err,
                       "--num-layers: \"$LAYERS\" is not determined by the file: LAYERS is set in the if "
                       "at line 9, which cannot be decided from the file (it tests \"$1\""))
      << bare.err;
  // A variable the file does not set is empty in the documented environment, as bash has it (a user trial found
  // `[ -z "$X" ]` refused): the test is decided, and a note says so.
  const auto no_env = support::trainsim({"import", "megatron", f, "--args", "8B 2 4", "--hardware", "h100-sxm5-80gb"});
  ASSERT_EQ(no_env.code, cli::kExitOk) << no_env.err;
  EXPECT_TRUE(contains(no_env.err, "line 4: tests \"${MP_VP}\", which the file does not set: taken as \"\""))
      << no_env.err;
  EXPECT_FALSE(contains(no_env.out, "\"vpp\"")) << "the branch without --num-layers-per-virtual-pipeline-stage ran";
  EXPECT_TRUE(contains(bare.err, "--env NAME=VALUE")) << bare.err;
  // Bad forms are bad input, and the options belong to launch scripts only.
  EXPECT_TRUE(contains(support::trainsim({"import", "megatron", f, "--env", "MP_VP"}).err, "expected NAME=VALUE"));
  EXPECT_TRUE(contains(support::trainsim({"import", "megatron", f, "--args", "8B 'a"}).err, "unterminated ' quote"));
  const auto ds = support::trainsim({"import", "deepspeed", f, "--args", "8B"});
  EXPECT_EQ(ds.code, cli::kExitBadInput);
  EXPECT_TRUE(contains(ds.err, "belong to import megatron")) << ds.err;
}

// DeepSeek launch scripts pass --kv-channels 128 beside --multi-latent-attention; Megatron-Core's MLA sizes its heads
// by --qk-head-dim, --qk-pos-emb-head-dim and --v-head-dim and does not read it. Importing it as head_dim made a
// scenario the loader refuses ("an MLA model's head sizes are mla.qk_nope_head_dim + ...").
TEST(MegatronScript, KvChannelsBesideMultiLatentAttentionIsNotAHeadSize) {
  const auto im = import_megatron_text(
      "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 7168 --num-attention-heads 128 --multi-latent-attention "
      "--q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
      "--kv-channels 128\n",
      "ds.sh");
  EXPECT_FALSE(im.draft.has("model.head_dim"));
  EXPECT_EQ(im.draft.integer("model.mla.v_head_dim"), 128);
  bool noted = false;
  for (const auto& n : im.notes)
    noted = noted || contains(n.to_string(), "--kv-channels: not read with --multi-latent-attention");
  EXPECT_TRUE(noted);
  const auto plain = import_megatron_text(
      "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 4096 --num-attention-heads 32 --kv-channels 256\n",
      "t.sh");
  EXPECT_EQ(plain.draft.integer("model.head_dim"), 256);
}

TEST(MegatronScript, CommandLineOptionsOverrideTheFileAndSaySo) {
  support::TempDir dir;
  const auto f = dir.write("l.sh",
                           "WORLD_SIZE=8\ntorchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 32 "
                           "--hidden-size 4096 --num-attention-heads 32 --ffn-hidden-size 14336 --swiglu "
                           "--group-query-attention --num-query-groups 8 --vocab-size 128256 --seq-length 8192 "
                           "--global-batch-size 512 --train-samples 1000 --bf16\n");
  const auto o = support::trainsim(
      {"import", "megatron", f, "--gpus", "1024", "--tokens", "100B", "--hardware", "h100-sxm5-80gb"});
  ASSERT_EQ(o.code, cli::kExitOk) << o.err;
  EXPECT_TRUE(contains(o.out, "\"gpus\": 1024")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"tokens\": \"100B\"")) << o.out;
  EXPECT_TRUE(contains(o.err, "note: --gpus: cluster.gpus = 1024 overrides 8")) << o.err;
  EXPECT_TRUE(contains(o.err, "note: --tokens: training.tokens = \"100B\" overrides 8192000")) << o.err;
}

}  // namespace
}  // namespace sim::importers
