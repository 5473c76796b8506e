#!/usr/bin/env bash
# DPO training speed at the real vocabularies, side by side on ONE GPU, each run in its own process:
#   llama:    the Llama-3.2-1B shape (tied, vocabulary 128,256), the sample battles' pairs at max length 4,096,
#             64 pairs a step, all runs from the same random weights: our trainer (reference log-probs scored
#             beforehand; pairs packed, varlen attention, compiled blocks, the head on completion positions
#             only, per-position log-probs by the in-place kernel or compiled, one gather a step) against
#             TRL's DPOTrainer with its reference log-probs precomputed (precompute_ref_log_probs), SDPA and
#             FlexAttention, with and without its Liger option, at micro-batches of 8, 16 and 32 pairs.
#   nemotron: Nemotron-H at the card Base's widths, its first seven layers (MEMEM*E), vocabulary 131,072,
#             the Mamba-2 kernels on: the trainer before (pairs padded, a live frozen reference, full-vocabulary
#             log-softmax) and after (as the llama runs, compiled loss and in-place loss), at 64 pairs a step
#             and at 256; e_: one rank of the card's node (30b_a3b_rank8) with the full scale's DPO settings,
#             and with the in-place loss at packs of 16,384-32,768.
# Each of our runs prints its reference pass (seconds, tokens/s, MFU of a forward) and a summary line (tokens/s,
# MFU on active parameters as lineage.training.metrics counts it: the policy's forward and backward, peak memory,
# loss); each TRL run its reference pass and the same figures. The table at the end compares the loss curves.
#
# Run as (repository root, one GPU; transformers 5.23, trl and liger-kernel importable; MAMBA_SITE a directory
# holding mamba-ssm and causal-conv1d, put on PYTHONPATH for the nemotron part):
#   MAMBA_SITE=/tmp/mamba bash benchmarks/dpo_speed.sh llama|nemotron [OUT_DIR]
# STEPS, RUNS (a subset of the part's run names), RUN_TIMEOUT (s per run) and EXTRA (flags added to each of our
# runs, e.g. "--layers 34" where a rank's 52 layers do not fit the GPU) may be set.
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -euo pipefail
PART=${1:?usage: dpo_speed.sh llama|nemotron [OUT_DIR]}
OUT=${2:-/tmp/dpo-speed}/$PART
export PYTHONPATH=workflow/scripts:benchmarks${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} TOKENIZERS_PARALLELISM=false
M=$OUT/metrics
mkdir -p "$M"
rm -f "$M"/*.jsonl
source benchmarks/gpu_data.sh
make_gpu_data "$OUT" >/dev/null
D=$OUT/data
python3 workflow/scripts/battle_pairs.py --preferred "$D/preferred.jsonl" --holdout "$D/holdout.jsonl" \
  --holdout-in-training true --out "$D/pairs.jsonl" --out-holdout "$D/holdout_pairs.jsonl" >/dev/null
optim="--lr 1e-6 --warmup-steps 1 --schedule cosine --adam-betas 0.9,0.95 --grad-clip 1.0 --seed 1234 --beta 0.1"

ours() {  # name, then dpo_throughput.py flags
  local name=$1; shift
  echo "== $name"
  timeout -k 20 -s TERM "${RUN_TIMEOUT:-200}" python3 benchmarks/dpo_throughput.py --tokenizer "$OUT/tokenizer" \
    --data "$D/pairs.jsonl" $optim --precision bf16 --max-length 4096 --metrics "$M/$name.jsonl" "$@" ${EXTRA:-} 2>&1 \
    | tee "$OUT/$name.log" | grep -E "^(model|CUDA allocator|reference pass|summary|allocator|data|Traceback|.*Error)" \
    || echo "$name: failed (see $OUT/$name.log)"
}
trl() {  # name, then train_trl_dpo.py flags
  local name=$1; shift
  echo "== $name"
  timeout -k 20 -s KILL "${RUN_TIMEOUT:-200}" python3 benchmarks/train_trl_dpo.py --tokenizer "$OUT/tokenizer" \
    --data "$D/pairs.jsonl" $optim --max-length 4096 --metrics "$M/$name.jsonl" "$@" 2>&1 \
    | tee "$OUT/$name.log" | grep -E "^(trl:|Traceback|.*Error)" || echo "$name: failed (see $OUT/$name.log)"
}
fast="--packing --packed-attention varlen --pack-tokens 32768 --compile --accumulate unsharded"
rank_share() {  # name, pack tokens, loss: one rank of the card's node at E = 8 (e_ runs below), a rank's 64 pairs of 512
  ours "$1" --family nemotron_h --size 30b_a3b_rank8 --vocab-size 131072 --packing --packed-attention varlen \
    --pack-tokens "$2" --compile --fused-loss "$3" --activation-checkpointing --global-batch-rows 64 --steps 8
}

case $PART in
  llama)
    llama="--family llama --size 1b --vocab-size 128256 --global-batch-rows 64 --steps ${STEPS:-10}"
    for run in ${RUNS:-a_ours_inplace b_ours_compiled c_trl_sdpa_8 d_trl_sdpa_liger_16 e_trl_sdpa_liger_32
        f_trl_flex_liger_16 g_trl_sdpa_16}; do
      case $run in
        a_ours_inplace) ours $run $llama $fast --fused-loss inplace ;;
        b_ours_compiled) ours $run $llama $fast --fused-loss compiled ;;
        c_trl_sdpa_8) trl $run $llama --micro-batch-rows 8 --attn-implementation sdpa ;;
        d_trl_sdpa_liger_16) trl $run $llama --micro-batch-rows 16 --attn-implementation sdpa --liger ;;
        e_trl_sdpa_liger_32) trl $run $llama --micro-batch-rows 32 --attn-implementation sdpa --liger ;;
        f_trl_flex_liger_16) trl $run $llama --micro-batch-rows 16 --attn-implementation flex_attention --liger ;;
        g_trl_sdpa_16) trl $run $llama --micro-batch-rows 16 --attn-implementation sdpa ;;
        h_trl_sdpa_liger_64) trl $run $llama --micro-batch-rows 64 --attn-implementation sdpa --liger ;;
        *) echo "unknown run $run" >&2; exit 2 ;;
      esac
    done ;;
  nemotron)
    export PYTHONPATH=${MAMBA_SITE:?set MAMBA_SITE to the Mamba-2 kernels}:$PYTHONPATH
    nemo="--family nemotron_h --size 30b_a3b_reduced --vocab-size 131072"
    for run in ${RUNS:-a_before_live_reference b_after_compiled c_after_inplace d_after_compiled_256}; do
      case $run in
        # the trainer before: padded pairs (4 a micro-batch), a frozen copy of the model, full-vocabulary logits
        a_before_live_reference) ours $run $nemo --reference live --global-batch-rows 64 --micro-batch-rows 4 \
          --steps "${STEPS:-6}" --timed-from 2 ;;
        b_after_compiled) ours $run $nemo $fast --fused-loss compiled --global-batch-rows 64 --steps "${STEPS:-8}" ;;
        c_after_inplace) ours $run $nemo $fast --fused-loss inplace --global-batch-rows 64 --steps "${STEPS:-8}" ;;
        d_after_compiled_256) ours $run $nemo $fast --fused-loss compiled --global-batch-rows 256 --steps 6 ;;
        # one rank of the card's node at E = 8 (30b_a3b_rank8) with the full scale's DPO settings: packs of 16,384,
        # the compiled loss, full checkpointing, weights gathered per micro-batch; a rank's 64 pairs of 512
        e_rank_full_16k_64) rank_share $run 16384 compiled ;;
        # the same rank with the in-place loss (one bf16 buffer of the positions' logits, then their gradient,
        # where the compiled loss keeps two), which lets larger packs fit: the planner puts 24,576-token packs at
        # 77.1 GiB on an 80 GiB GPU of the card's node, 32,768 at 81.8 (over; measured here for the trend)
        e_rank_full_16k_inplace_64) rank_share $run 16384 inplace ;;
        e_rank_full_24k_inplace_64) rank_share $run 24576 inplace ;;
        e_rank_full_32k_inplace_64) rank_share $run 32768 inplace ;;
        # no logits kept (the backward reruns each chunk's head product): SFT's packs within the budget
        e_rank_full_16k_inplace_chunked_64) rank_share $run 16384 inplace_chunked ;;
        e_rank_full_32k_inplace_chunked_64) rank_share $run 32768 inplace_chunked ;;
        *) echo "unknown run $run" >&2; exit 2 ;;
      esac
    done ;;
  *) echo "unknown part $PART (llama | nemotron)" >&2; exit 2 ;;
esac

python3 benchmarks/run_table.py "$M"
