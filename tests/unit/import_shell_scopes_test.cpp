// The launch-script reader (sim/importers/shell.hpp) where bash keeps a change to itself or reads text another way
// than it looks: subshells, pipelines, background jobs and child shells keep their assignments; a comment inside a
// continued command ends it; arithmetic reads 010 as octal and makes the assignments it writes. Each case is what bash
// prints for the same lines (bash 5.2).
#include "sim/importers/importers.hpp"
#include "sim/importers/shell.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace sim::importers {
namespace {

using W = std::vector<std::string>;

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

std::vector<std::string> words_of(const ShellCommand& c) {
  std::vector<std::string> out;
  for (const auto& w : c.words)
    out.push_back(w.text + (w.unknown ? "?" : ""));
  return out;
}

/// The words of the script's last command.
std::vector<std::string> last_command(const std::string& script) {
  const auto s = read_shell(script, "t.sh");
  return s.commands.empty() ? W{} : words_of(s.commands.back());
}

std::string shell_error(const std::string& script) {
  try {
    read_shell(script, "t.sh");
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

bool any_contains(const std::vector<std::string>& notes, const std::string& fragment) {
  for (const auto& n : notes)
    if (contains(n, fragment)) return true;
  return false;
}

// The model flags every Megatron-LM case below shares.
const std::string kModel =
    "    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 --seq-length 8192 \\\n"
    "    --max-position-embeddings 8192 --global-batch-size 128 --vocab-size 128256 --bf16 --train-iters 1000";

// bash manual, "Command Execution Environment": a subshell, each command of a pipeline and an asynchronous command
// get a copy of the shell's variables; bash -c and a heredoc given to bash are a child shell. `TP=2; ( TP=8 ); echo
// $TP` prints 2 (a tester's trial: trainsim read 8).
TEST(ShellScopes, SubshellsPipelinesBackgroundJobsAndChildShellsKeepTheirAssignments) {
  EXPECT_EQ(last_command("TP=2\n( TP=8 )\nrun $TP\n"), (W{"run", "2"}));
  EXPECT_EQ(last_command("echo x | PP=4\nrun ${PP:-1}\n"), (W{"run", "1"})) << "no lastpipe in a script";
  EXPECT_EQ(last_command("PP=4 | cat\nrun ${PP:-1}\n"), (W{"run", "1"})) << "the first command of a pipeline too";
  EXPECT_EQ(last_command("TP=2\n( ( TP=8 ) )\nif true; then ( TP=8 ); fi\n( TP=8; ( TP=4 ) )\nrun $TP\n"),
            (W{"run", "2"}))
      << "nested, and inside an if";
  EXPECT_EQ(last_command("TP=2\nTP=8 &\n( TP=8 ) &\nexport TP=8 &\nrun $TP\n"), (W{"run", "2"})) << "background";
  EXPECT_EQ(last_command("TP=2\ntrue && TP=8 &\nrun $TP\n"), (W{"run", "2"})) << "an asynchronous && list";
  EXPECT_EQ(last_command("MBS=2\nbash -c 'MBS=4'\nsh -c \"MBS=8\"\nbash <<EOF\nMBS=16\nEOF\nrun $MBS\n"),
            (W{"run", "2"}))
      << "child shells";
  EXPECT_EQ(last_command("TP=2\n{ TP=8; }\nrun $TP\n"), (W{"run", "8"})) << "a { } group runs in this shell";
  EXPECT_EQ(last_command("TP=2\n((TP=8))\n( (TP=4) )\nrun $TP\n"), (W{"run", "8"}))
      << "(( )) is arithmetic in this shell, ( ( ) ) two subshells";
  EXPECT_EQ(last_command("A=(1)\n( A+=(2); unset B )\nB=3\n( unset B )\nrun ${#A[@]} $B\n"), (W{"run", "1", "3"}));

  // Commands inside are read as before, with the variables they see there.
  const auto s = read_shell(
      "TP=2\n( TP=8; torchrun --tp $TP )\nbash -c 'PP=4; torchrun --pp $PP'\n"
      "echo go | PP=3 torchrun --pp $PP\nrun $TP ${PP:-1}\n",
      "t.sh");
  ASSERT_EQ(s.commands.size(), 5u);
  EXPECT_EQ(words_of(s.commands[0]), (W{"torchrun", "--tp", "8"}));
  EXPECT_EQ(words_of(s.commands[1]), (W{"torchrun", "--pp", "4"}));
  EXPECT_EQ(words_of(s.commands[4]), (W{"run", "2", "1"}));
  EXPECT_EQ(s.variables.at("TP"), "2") << "the job's environment is the script's";

  const auto p = read_shell("N=1\nX=$((N++)) bash -c 'run $X'\nrun $N\n", "t.sh");
  ASSERT_EQ(p.commands.size(), 2u);
  EXPECT_EQ(words_of(p.commands[0]), (W{"run", "1"}));
  EXPECT_EQ(words_of(p.commands[1]), (W{"run", "2"})) << "a prefix assignment is expanded once, in the script";

  // An exit there ends the subshell only: what follows it in the script is read.
  const auto e = read_shell("( exit 1 )\nbash -c 'exit 0'\nrun after\n", "t.sh");
  EXPECT_EQ(e.exit_line, 0);
  ASSERT_FALSE(e.commands.empty());
  EXPECT_EQ(words_of(e.commands.back()), (W{"run", "after"}));

  // An undecided if whose branches assign only inside a subshell changes nothing after it.
  EXPECT_EQ(last_command("TP=2\nif [ -f /x ]; then ( TP=8 ); fi\nrun $TP\n"), (W{"run", "2"}));
}

TEST(ShellScopes, TheTestersSubshellScriptImportsTheValuesBashGives) {
  const auto im = import_megatron_text(
      "#!/bin/bash\nTP=2\n( TP=8 )\necho probe | PP=4\nPP=${PP:-1}\n"
      "bash -c 'MBS=4'\nMBS=${MBS:-1}\n"
      "torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \\\n"
      "    --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP \\\n"
      "    --micro-batch-size $MBS \\\n" +
          kModel + "\n",
      "subshell.sh");
  EXPECT_EQ(im.draft.integer("parallel.tp"), 2);
  EXPECT_EQ(im.draft.integer("parallel.pp"), 1);
  EXPECT_EQ(im.draft.integer("parallel.micro_batch"), 1);
}

// bash manual, "Here Documents": with an unquoted delimiter the reading shell expands the body (parameters, commands,
// arithmetic; \ quotes only \, $, ` and newline) before the command gets it; a quoted delimiter passes it as written.
// A tester's trial: TP=4, then sbatch <<EOT whose body sets TP=2 and passes ${TP}: imported 2, bash submits 4; the
// body's \${TP}, bash's idiom for the job's own value, was refused.
TEST(ShellScopes, AnUnquotedHeredocIsExpandedByTheShellThatReadsIt) {
  EXPECT_EQ(last_command("TP=4\nsbatch <<EOT\nTP=2\nrun ${TP}\nEOT\n"), (W{"run", "4"}));
  EXPECT_EQ(last_command("TP=4\nsbatch <<EOT\nTP=2\nrun \\${TP}\nEOT\n"), (W{"run", "2"})) << "escaped";
  EXPECT_EQ(last_command("TP=4\nsbatch <<'EOT'\nTP=2\nrun ${TP}\nEOT\n"), (W{"run", "2"})) << "quoted delimiter";
  EXPECT_EQ(last_command("sbatch <<EOT\nTP=2\nrun ${TP}\nEOT\n"), (W{"run", "${TP}?"}))
      << "unset where the heredoc is read: unknown in the job, not the job's 2";
  EXPECT_EQ(last_command("X=1\nbash <<EOF\nrun \"a $X\" \\\"b\\\" $((X + 1))\nEOF\n"), (W{"run", "a 1", "\"b\"", "2"}))
      << "a heredoc's quotes are the child's";
  // What the script cannot expand stays one unknown piece of its word in the job (a review: $(date) became a command
  // of its own there), and the quoting inside ${...} is bash's (${X:+"--tp $X"} gives two words).
  EXPECT_EQ(last_command("sbatch <<EOT\nrun --seed $(date +%s) --tp 2\nEOT\n"),
            (W{"run", "--seed", "$(date +%s)?", "--tp", "2"}));
  EXPECT_EQ(last_command("X=3\nsbatch <<EOT\nrun ${X:+\"--tp $X\"} --z\nEOT\n"), (W{"run", "--tp", "3", "--z"}));
  const auto directive = read_shell("sbatch <<EOT\n#SBATCH --job-name=`pwd`\nrun\nEOT\n", "t.sh");
  ASSERT_EQ(directive.commands.size(), 3u);  // sbatch, the directive, run
  EXPECT_EQ(words_of(directive.commands[1]), (W{"#SBATCH", "--job-name=\\`pwd\\`?"}))
      << "a fuzzer's find: the unknown's markers were left in a directive's word";
  const std::string open = shell_error("sbatch <<EOT\nrun $(date\nEOT\n");
  EXPECT_TRUE(contains(open, "line 2") && contains(open, "$(")) << open;
}

// bash manual, "Command Execution Environment": a child shell (bash -c, a heredoc given to bash, sbatch or srun) gets
// the exported variables only (export, declare -x, set -a), and a command's prefix assignments. A review: TP=4 then
// bash -c '... $TP' imported tp 4 where bash passes an empty value. Each line is what bash 5.2 runs.
TEST(ShellScopes, AChildShellGetsTheExportedVariablesOnly) {
  EXPECT_EQ(last_command("TP=4\nbash -c 'run $TP'\n"), (W{"run", "$TP?"}));
  EXPECT_EQ(last_command("TP=4\nsbatch <<'EOF'\nrun $TP\nEOF\n"), (W{"run", "$TP?"})) << "quoted heredoc";
  EXPECT_EQ(last_command("export TP=4\nbash -c 'run $TP'\n"), (W{"run", "4"}));
  EXPECT_EQ(last_command("TP=4\nexport TP\nTP=8\nbash -c 'run $TP'\n"), (W{"run", "8"})) << "stays exported";
  EXPECT_EQ(last_command("declare -x TP=4\nbash -c 'run $TP'\n"), (W{"run", "4"}));
  EXPECT_EQ(last_command("set -ea\nTP=4\nset +a\nPP=2\nbash -c 'run $TP $PP'\n"), (W{"run", "4", "$PP?"}));
  EXPECT_EQ(last_command("set -o allexport\nTP=4\nbash -c 'run $TP'\n"), (W{"run", "4"}));
  EXPECT_EQ(last_command("export TP=4\nexport -n TP\nbash -c 'run $TP'\n"), (W{"run", "$TP?"}));
  EXPECT_EQ(last_command("export TP=4\nunset TP\nTP=5\nbash -c 'run $TP'\n"), (W{"run", "$TP?"}));
  EXPECT_EQ(last_command("TP=4\n( export TP )\nbash -c 'run $TP'\n"), (W{"run", "$TP?"})) << "a subshell's export";
  EXPECT_EQ(last_command("TP=4 bash -c 'run $TP'\n"), (W{"run", "4"})) << "a prefix assignment";
  EXPECT_EQ(last_command("TP=4\nbash -c \"run $TP\"\n"), (W{"run", "4"})) << "expanded by the script";
  EXPECT_EQ(last_command("TP=4\n( run $TP )\n"), (W{"run", "4"})) << "a subshell is no child shell";
}

// bash manual, "ANSI-C Quoting": $'...' decodes backslash escapes (a review: TP=$'4' was refused as "$4").
TEST(ShellScopes, AnsiCQuotingIsDecoded) {
  EXPECT_EQ(last_command("TP=$'4'\nrun $TP $'a\\tb' $'\\x41\\102' \"$'x'\"\n"), (W{"run", "4", "a\tb", "AB", "$'x'"}))
      << "not inside double quotes";
}

// bash manual, "Bourne Shell Builtins": source (.) runs the file's commands in this shell, so any variable may hold
// another value after it. trainsim does not read the file: what the script set before it is unknown after it, and a
// flag that uses it is refused; what the script sets after it is read. A tester's trial: TP=2, then `source
// ./other_tp.sh` setting TP=4, imported tp 2 with only a note.
TEST(ShellScopes, AnUnreadSourceLeavesWhatWasSetBeforeItUnknown) {
  EXPECT_EQ(last_command("TP=2\nsource ./env.sh\nrun $TP\n"), (W{"run", "$TP?"}));
  EXPECT_EQ(last_command("TP=2\n. /etc/env.sh\nPP=4\nrun $PP\n"), (W{"run", "4"})) << "set after it: known";
  EXPECT_EQ(last_command("source ./env.sh\nTP=8\nrun $TP\n"), (W{"run", "8"})) << "the usual order";
  ShellInvocation env;
  env.env = {{"TP", "4"}};
  const auto given = read_shell("source /opt/venv/bin/activate\nrun $TP\n", "t.sh", {}, env);
  EXPECT_EQ(words_of(given.commands.back()), (W{"run", "4"})) << "--env is the user's value (a review)";
  const auto im = import_megatron_text(
      "#!/bin/bash\nTP=2\nsource ./other_tp.sh\n"
      "torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \\\n"
      "    --tensor-model-parallel-size $TP --pipeline-model-parallel-size 1 \\\n" +
          kModel + "\n",
      "source_other.sh");
  ASSERT_EQ(im.unresolved.size(), 1u);
  EXPECT_EQ(im.unresolved[0].path, "parallel.tp");
  EXPECT_TRUE(contains(im.unresolved[0].what, "source ./other_tp.sh at line 3")) << im.unresolved[0].what;
}

// bash manual, "Bourne Shell Builtins": readonly and declare -r make a variable's value final. Each case is what
// bash 5.2 does with a script file: export, declare, local and unset of it, and a command's prefix assignment to it,
// are refused and the script goes on with the value; a plain assignment to it also drops the rest of the command it
// is in (the line, a compound command, a subshell), and bash reads on. trainsim had read `readonly TP=2; TP=4` as 4.
TEST(ShellScopes, AReadonlyVariableKeepsItsValueAsBashDoes) {
  EXPECT_EQ(last_command("readonly TP=2\nexport TP=4\ndeclare TP=8 PP=2\nunset TP\nrun $TP $PP\n"),
            (W{"run", "2", "2"}));
  EXPECT_EQ(last_command("declare -r TP=2\nTP=4 run $TP\nrun2 $TP\n"), (W{"run2", "2"}));
  EXPECT_EQ(last_command("TP=2\n(readonly TP; )\nTP=4\nrun $TP\n"), (W{"run", "4"})) << "readonly in a subshell";
  EXPECT_EQ(last_command("readonly TP=2\n(TP=4; run0 $TP)\nrun $TP\n"), (W{"run", "2"}))
      << "the assignment stops the subshell only";
  const auto s = read_shell(
      "readonly TP=2\nrun1 $TP\nTP=4\nrun2 $TP\nTP=5; run3\nrun4\nif true; then\n  TP=6\n  run5\nfi\nrun6 $TP\n",
      "t.sh");
  std::vector<std::string> heads;
  for (const auto& c : s.commands)
    heads.push_back(words_of(c).front() + (c.words.size() > 1 ? " " + c.words[1].text : ""));
  EXPECT_EQ(heads, (W{"run1 2", "run2 2", "run4", "run6 2"})) << "bash 5.2 runs these four";
  EXPECT_EQ(s.exit_line, 0);
  EXPECT_TRUE(any_contains(s.notes, "line 3: TP is readonly")) << s.notes.front();
  // Arithmetic assigns too: (( )), let and $(( )) are refused alike, and the rest of the line dropped; text after a
  // compound's `fi` on its last line is dropped with it; a child shell (a new bash) has no readonly variable, and its
  // own lines go on after one of its assignments is refused (a review of the first version: tp 4 for each of the
  // first three, the last two refused as "no Megatron-LM flags").
  for (const char* assign : {"(( TP = 4 ))", "let TP=4", "X=$(( TP = 4 ))"})
    EXPECT_EQ(last_command("readonly TP=2\n" + std::string(assign) + "; run0\nrun $TP\n"), (W{"run", "2"})) << assign;
  EXPECT_EQ(last_command("readonly TP=2\nif true; then TP=8\nfi; T2=$TP\nrun ${T2:-1}\n"), (W{"run", "1"}));
  EXPECT_EQ(last_command("readonly TP=2\nexport TP\nbash -c 'TP=4; run $TP'\n"), (W{"run", "4"}));
  EXPECT_EQ(last_command("bash <<'EOF'\nreadonly TP=2\nTP=4\nrun $TP\nEOF\n"), (W{"run", "2"}));
  const auto im = import_megatron_text(
      "#!/bin/bash\nreadonly TP=2\nTP=4\n"
      "torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \\\n"
      "    --tensor-model-parallel-size $TP --pipeline-model-parallel-size 1 \\\n" +
          kModel + "\n",
      "readonly.sh");
  EXPECT_EQ(im.draft.integer("parallel.tp"), 2);
}

// bash manual, "Escape Character": a backslash-newline is removed before the words are split, so a word goes on at
// the next line's first character: `8\` then `--d 2` at a line's start is the word "8--d", as bash 5.2 prints; inside
// single quotes it stays. trainsim had ended the word there (read "8", "--d").
TEST(ShellScopes, ALineContinuationInsideAWordJoinsItsParts) {
  EXPECT_EQ(last_command("TP=4\nrun a\\\nb $TP\\\n$TP \"x\\\ny\" 'p\\\nq' --c 8\\\n--d 2\n"),
            (W{"run", "ab", "44", "xy", "p\\\nq", "--c", "8--d", "2"}));
  EXPECT_EQ(last_command("run --c 8 \\\n  --d 2\n"), (W{"run", "--c", "8", "--d", "2"})) << "the usual layout";
  const auto s = read_shell("run a\\\nb\nrun2 $((1+\\\n1))\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 2u);
  EXPECT_EQ(s.commands.back().line, 3);
  EXPECT_EQ(words_of(s.commands.back()), (W{"run2", "2"}));
}

// bash manual, "Comments": a word beginning with # makes the rest of its line a comment, a trailing backslash
// included; the newline then ends the command. A tester's trial: `# --use-distributed-optimizer \` inside a torchrun
// command, and the --tensor-model-parallel-size 8 below it was read as torchrun's.
TEST(ShellScopes, ACommentInsideAContinuedCommandEndsIt) {
  const auto s = read_shell("torchrun a.py --x 1 \\\n    # --y \\\n    --tp 8\nrun\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 3u);
  EXPECT_EQ(words_of(s.commands[0]), (W{"torchrun", "a.py", "--x", "1"}));
  EXPECT_EQ(words_of(s.commands[1]), (W{"--tp", "8"}));
  EXPECT_EQ(s.commands[1].after_comment, 2);
  EXPECT_EQ(s.commands[2].after_comment, 0);
  EXPECT_TRUE(any_contains(s.notes, "line 3: the comment on line 2 ends the command before it"));

  const auto plain = read_shell("torchrun a.py \\\n  --x 1 \\\n  # --y\n  --tp 8\n", "t.sh");
  ASSERT_EQ(plain.commands.size(), 2u) << "a comment line reached by a continuation, without its own backslash";
  EXPECT_EQ(plain.commands[1].after_comment, 3);
  const auto same_line = read_shell("torchrun a.py --x 1 # --y \\\n--tp 8\n", "t.sh");
  ASSERT_EQ(same_line.commands.size(), 2u);
  EXPECT_EQ(same_line.commands[1].after_comment, 1);

  // Not cut: a comment ending a command as comments do, after && (the list goes on), inside an array.
  const auto trailing = read_shell("python prep.py \\\n  --x 1 # why\nrun\n", "t.sh");
  ASSERT_EQ(trailing.commands.size(), 2u);
  EXPECT_EQ(trailing.commands[1].after_comment, 0);
  EXPECT_TRUE(trailing.notes.empty());
  EXPECT_EQ(last_command("true && \\\n  # why \\\n  run 1\n"), (W{"run", "1"}));
  EXPECT_EQ(last_command("A=(--x 1 \\\n  # --y \\\n  --tp 8)\nrun \"${A[@]}\"\n"), (W{"run", "--x", "1", "--tp", "8"}));

  // The import: torchrun never gets --tensor-model-parallel-size 8 (Megatron-LM's default 1), and says why.
  const auto im = import_megatron_text("torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \\\n" + kModel +
                                           " \\\n    # --use-distributed-optimizer \\\n"
                                           "    --tensor-model-parallel-size 8\n",
                                       "cont.sh");
  EXPECT_EQ(im.draft.integer("parallel.tp"), 1);
  bool said = false;
  for (const auto& f : im.ignored)
    said = said || (contains(f.where, "cont.sh:5") && contains(f.what,
                                                               "--tensor-model-parallel-size 8: not an "
                                                               "argument of the command above"));
  EXPECT_TRUE(said);
  // Nor does it get a line of flags after a line that lost its backslash (a review).
  const auto lost = import_megatron_text("torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \\\n" + kModel +
                                             "\n    --pipeline-model-parallel-size 2\n",
                                         "lost.sh");
  EXPECT_EQ(lost.draft.integer("parallel.pp"), 1);
  said = false;
  for (const auto& f : lost.ignored)
    said = said || contains(f.what, "the line before ends without a backslash");
  EXPECT_TRUE(said);
  // A file of flags alone is still read as the argument list it is.
  const auto list = import_megatron_text(
      "--num-layers 2 --hidden-size 256 --num-attention-heads 4 \\\n# --foo \\\n--tensor-model-parallel-size 2\n",
      "args.txt");
  EXPECT_EQ(list.draft.integer("parallel.tp"), 2);
}

// bash manual, "Shell Arithmetic": "Constants with a leading 0 are interpreted as octal numbers. A leading '0x' or
// '0X' denotes hexadecimal. Otherwise, numbers take the form [base#]n"; a variable's value is evaluated as an
// expression, so NODES=010 is 8 too. A tester's trial: --nnodes $((NODES)) with NODES=010 read 10 nodes.
TEST(ShellScopes, ArithmeticReadsIntegerConstantsAsBashDoes) {
  EXPECT_EQ(last_command("run $((010)) $((0x1F)) $((0X1f)) $((2#101)) $((64#_)) $((36#z)) $((36#Z)) $((64#Z)) "
                         "$((10#08)) $((0)) $((00)) $((0x))\n"),
            (W{"run", "8", "31", "31", "5", "63", "35", "35", "61", "8", "0", "0", "0"}));
  EXPECT_EQ(last_command("NODES=010\nE=\nrun $((NODES)) $NODES $((NODES * 2)) $((E + 1))\n"),
            (W{"run", "8", "010", "16", "1"}))
      << "as an operand only: the word $NODES stays 010, and a null value is 0";
  EXPECT_EQ(last_command("N=08\nS=\"2+3\"\nrun $((10#$N)) $((10#${N} + 1)) $((S * 2)) $(($S * 2))\n"),
            (W{"run", "8", "9", "10", "$(($S * 2))?"}))
      << "$S is text before it is evaluated (2+3 * 2 is 8), which trainsim leaves unknown";
  for (const std::string bad : {"$((08))", "$((37#Z))", "$((1#1))", "$((65#1))", "$((2#))", "$((2#2))", "$((0#1))"})
    EXPECT_TRUE(contains(shell_error("X=1\nY=" + bad + "\n"), "line 2: " + bad)) << bad;
  EXPECT_TRUE(contains(shell_error("X=$((09))\n"), "value too great for base (bash reads a number with a leading 0"));
  EXPECT_TRUE(contains(shell_error("N=08\nX=$((N + 1))\n"), "N=\"08\": \"08\": value too great for base"));
  // An operand bash does not evaluate reads no variable (bash 5.2: 4 4 1, no error).
  EXPECT_EQ(last_command("N=08\nrun $(( 1 ? 4 : N )) $(( 0 ? N++ : 4 )) $(( 1 || N ))\n"), (W{"run", "4", "4", "1"}));
  // [ ] reads decimal integers; [[ ]] arithmetic.
  EXPECT_EQ(last_command("if [ 010 -eq 10 ]; then A=1; else A=2; fi\n"
                         "if [[ 010 -eq 8 ]]; then B=1; else B=2; fi\nrun $A $B\n"),
            (W{"run", "1", "1"}));
  EXPECT_EQ(last_command("run $(( 0 == 1 < 2 )) $(( 6 & 3 )) $(( 6 | 3 ^ 1 )) $(( 1 << 4 >> 2 )) $(( ~0 ))\n"),
            (W{"run", "0", "2", "6", "4", "-1"}))
      << "== below <, and the bit operators";
}

// bash manual, "Shell Arithmetic": id++ id-- ++id --id and = *= /= %= += -= <<= >>= &= ^= |= assign; && || and ?:
// evaluate only what decides. A tester's trial: --pipeline-model-parallel-size $((++PP)) with PP=1 read 1, not 2.
TEST(ShellScopes, ArithmeticAssignsAndIncrementsAsBashDoes) {
  EXPECT_EQ(last_command("PP=1\nrun $((++PP)) $PP $((PP++)) $PP $((--PP)) $((PP--)) $PP $((--5)) $((- -PP))\n"),
            (W{"run", "2", "2", "2", "3", "2", "2", "1", "5", "1"}));
  EXPECT_EQ(last_command("X=5\nrun $((X+=2)) $X $((X*=3)) $((X-=1)) $((X/=4)) $((X%=3)) $((X<<=2)) $((Y = X - 1)) $Y "
                         "$((A = B = 2, A + B))\n"),
            (W{"run", "7", "7", "21", "20", "5", "2", "8", "7", "7", "4"}));
  EXPECT_EQ(last_command("A=0\nrun $((0 && A++)) $A $((1 || A++)) $A $((1 ? A : A++)) $((0 ? A++ : A)) $A $((1 && "
                         "A++)) $A\n"),
            (W{"run", "0", "0", "1", "0", "0", "0", "0", "0", "1"}))
      << "only what decides is evaluated";
  EXPECT_EQ(last_command("A=0\nrun $((U ? A=1 : 0)) $A\n"), (W{"run", "$((U ? A=1 : 0))?", "$A?"}))
      << "a branch that may run leaves what it assigns unknown";
  EXPECT_EQ(last_command("run $((U++)) $U\n"), (W{"run", "$((U++))?", "$U?"}));
  EXPECT_EQ(last_command("run $((U || 1)) $((U && 0))\n"), (W{"run", "1", "0"}));
  // (( )) and let are arithmetic commands of this shell.
  EXPECT_EQ(last_command("TP=2\n((TP=8))\n(( TP += 1 ))\nlet \"PP = TP * 2\" PP++\nrun $TP $PP\n"),
            (W{"run", "9", "19"}));
  EXPECT_EQ(last_command("TP=8\nif (( TP > 4 )); then A=big; else A=small; fi\n(( TP > 9 )) || B=no\nrun $A $B\n"),
            (W{"run", "big", "no"}));
  EXPECT_TRUE(contains(shell_error("X=$((Y = 1/0))\n"), "division by zero"));
  EXPECT_TRUE(contains(shell_error("X=$((1 = 2))\n"), "line 1"));
  // What a loop not run would assign by arithmetic is unknown after it.
  EXPECT_EQ(last_command("N=1\nfor h in $(cat hosts); do echo $((N++)); done\nrun $N\n"), (W{"run", "$N?"}));
  EXPECT_EQ(last_command("N=1\nfor ((i = 0; i < 4; i++)); do (( N *= 2 )); done\nrun $N $i\n"),
            (W{"run", "$N?", "$i?"}));
  EXPECT_EQ(last_command("N=1\nif [ -f /x ]; then let N++; fi\nrun $N\n"), (W{"run", "$N?"}));
  EXPECT_TRUE(contains(shell_error("N=1\ncase $X in a) (( N++ ));; esac\n"), "line 2: a case statement that sets"));

  const auto im = import_megatron_text(
      "NODES=010\nPP=1\ntorchrun --nproc_per_node 8 --nnodes $((NODES)) "
      "pretrain_gpt.py \\\n    --tensor-model-parallel-size $((010)) \\\n"
      "    --pipeline-model-parallel-size $((++PP)) --micro-batch-size 1 \\\n" +
          kModel + "\n",
      "arith.sh");
  EXPECT_EQ(im.draft.integer("parallel.tp"), 8);
  EXPECT_EQ(im.draft.integer("parallel.pp"), 2);
  EXPECT_EQ(im.draft.integer("cluster.gpus"), 64) << "8 nodes of 8";
}

// A case statement inside a command substitution: its patterns' ")" do not close the substitution (it was refused at
// "unexpected ;;"); its output is unknown, as any command's, and the rest of the line is read. "case" as an argument is
// not a statement.
TEST(ShellScopes, ACaseStatementInsideACommandSubstitutionIsReadWhole) {
  const auto sub = read_shell(
      "TP=$(case \"$SIZE\" in 70b) echo 8;; (8b) echo 1;; *) echo 4;; esac)\nrun --tp $TP --pp 2 $(echo case) x\n",
      "t.sh");
  ASSERT_EQ(sub.commands.size(), 1u);
  EXPECT_EQ(words_of(sub.commands[0]),
            (W{"run", "--tp", "$(case \"$SIZE\" in 70b) echo 8;; (8b) echo 1;; *) echo 4;; esac)?", "--pp", "2",
               "$(echo case)?", "x"}));
}

// A command run in a subshell carries the variables it saw there in its environment: the script's variables at its
// end no longer hold them, and an export made before torchrun inside ( ... ) | tee reached no job (a review).
TEST(ShellScopes, ACommandInASubshellCarriesTheVariablesItSaw) {
  const auto s = read_shell("( export NCCL_NVLS_ENABLE=0; TP=4; torchrun x.py --tp $TP ) | tee log\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 2u);
  EXPECT_EQ(words_of(s.commands[0]), (W{"torchrun", "x.py", "--tp", "4"}));
  const auto& env = s.commands[0].env;
  EXPECT_NE(std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"NCCL_NVLS_ENABLE", "0"}), env.end());
  EXPECT_EQ(s.variables.count("NCCL_NVLS_ENABLE"), 0u) << "not the script's own";
}

// Slurm's precedence: sbatch's command line over the #SBATCH directives of the script it is given, srun's options over
// both (a tester's trial: `sbatch --nodes=4 <<EOT` with `#SBATCH --nodes=2` inside counted 2 nodes).
TEST(MegatronScript, SlurmCommandLineOptionsWinOverDirectives) {
  const std::string body =
      "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\nsrun %s python pretrain_gpt.py "
      "--tensor-model-parallel-size 8\nEOT\n";
  auto gpus = [&](const char* sbatch, const char* srun) {
    char text[400];
    std::snprintf(text, sizeof text, ("sbatch %s <<EOT\n" + body).c_str(), sbatch, srun);
    return import_megatron_text(text, "s.sh").draft.integer("cluster.gpus");
  };
  EXPECT_EQ(gpus("--nodes=4", ""), 32) << "sbatch's --nodes over the directive";
  EXPECT_EQ(gpus("", ""), 16) << "the directive alone";
  EXPECT_EQ(gpus("--nodes=4", "--nodes=1"), 8) << "srun's over both";
  EXPECT_EQ(gpus("-N 3", ""), 24);
}

}  // namespace
}  // namespace sim::importers
