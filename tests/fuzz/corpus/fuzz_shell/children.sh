#!/bin/bash
# Child shells, exports, heredocs expanded by the script, source and ANSI-C quoting (shell_exports.hpp,
# Expander::heredoc_body).
set -a
NNODES=${SLURM_NNODES:-2}
set +a
TP=$'4'
export PP=2
declare -x MBS=1
source ./env.sh
X=3
A=(a "b c")
sbatch <<EOF
#!/bin/bash
TP=2
run --seed $(date +%s) --world $((NNODES * 8)) ${X:+"--tp $X"} "${A[*]}" \${TP} $PP \
  --mbs $MBS
EOF
bash -c 'torchrun --tp $TP --pp $PP'
sbatch <<'EOF'
run $PP $TP
EOF
export -n PP
unset MBS
srun bash <<EOF
run ${PP:-1} ${MBS:-1} $'\x41'
EOF
