GPT_ARGS=" \
  --num-layers 2 \
  --tp ${TP:-"1"} "
ARR=(
  --a 1 # c
  "--b 2"
)
export L="python -m torch.distributed.run --nnodes $((1*2))"
srun bash -x -c "$L x.py $GPT_ARGS ${ARR[@]} \$RANK"
while [[ $# -gt 0 ]]; do case $1 in -x) shift;; esac; done
