#!/bin/bash
# Llama 3 8B pre-training on 8 nodes of 8 GPUs: a launch line written for trainsim's import tests.
GPUS_PER_NODE=8
NNODES=8
TP=2

torchrun --nproc-per-node $GPUS_PER_NODE --nnodes $NNODES --node-rank ${NODE_RANK:-0} \
    --master-addr "${MASTER_ADDR:-localhost}" --master-port 6000 \
    pretrain_gpt.py \
    --use-mcore-models \
    --tensor-model-parallel-size ${TP} \
    --pipeline-model-parallel-size 1 \
    --sequence-parallel \
    --use-distributed-optimizer \
    --overlap-grad-reduce \
    --num-layers 32 \
    --hidden-size 4096 \
    --ffn-hidden-size 14336 \
    --num-attention-heads 32 \
    --group-query-attention --num-query-groups 8 \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 \
    --global-batch-size=512 \
    --swiglu \
    --normalization RMSNorm \
    --position-embedding-type rope \
    --untie-embeddings-and-output-weights \
    --disable-bias-linear \
    --bf16 \
    --lr 3e-4 --min-lr 3e-5 --lr-decay-style cosine \
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-8B \
    --data-path "$DATA_PATH" \
    --save /checkpoints/llama3-8b --save-interval 1000
