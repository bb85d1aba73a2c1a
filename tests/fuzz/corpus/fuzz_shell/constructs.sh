A=x
A=$A$A
if [[ "$A" == xx ]]; then B=$((2**10 / 3)); elif [ -f y ]; then echo; fi
sbatch <<EOF
#SBATCH --nodes=2
srun x ${B:-1} "${C[@]}" `pwd`
EOF
