#!/usr/bin/env bash
# Training speed at the real vocabularies, side by side on ONE GPU, each part in one process tree:
#   llama:    the Llama-3.2-1B shape (tied, vocabulary 128,256), the chat rows at max length 4,096, global batch
#             128 rows: our trainer (packed, varlen attention, compiled blocks) with the head loss unfused, fused
#             by liger-kernel, by cut-cross-entropy and compiled (also with --accumulate unsharded), against
#             TRL's SFTTrainer (padding-free; SDPA and FlexAttention, each with and without its Liger option),
#             all from the same random weights; at 128 rows and at the card's 512 (the names ending in _512);
#             m_/n_: flash-attn-4 in place of torch's FlashAttention 2; s_/t_: the in-place loss kernel
#             (--fused-loss inplace) with flash-attn-4 and with FlashAttention 2.
#   nemotron: Nemotron-H at the card Base's widths, its first seven layers (MEMEM*E: 3 Mamba-2, 3 MoE of 128
#             experts top-6, 1 attention), vocabulary 131,072, global batch 128 rows (512 where the name says):
#             transformers' PyTorch reference path (no Mamba kernels, padded, unfused loss) against the kernels
#             padded, and the kernels packed with seq_idx + varlen attention + fused loss, experts grouped_mm and
#             eager (profiled: where the step's GPU time goes), then compiled blocks, the compiled loss and one
#             gather and reduction a step (--accumulate unsharded), up to the card's 512-row global batch;
#             o_/p_: the full scale's activation checkpointing, with and without compiled blocks and loss; r_: the
#             attention layer on flash-attn-4; s_: the in-place loss kernel in place of the compiled loss.
#             rk_: one rank of the card's node at E = 8 (30b_a3b_rank8: the 52 layers, 16 experts a layer) with the
#             full scale's settings, at a rank's 64-row share of the 512-row step and at the whole step.
# Every run prints a summary line (tokens/s, MFU as lineage.training.metrics counts it, peak memory, loss)
# and the table at the end compares each run's loss curve with the part's first run.
#
# Run as (repository root, one GPU; transformers 5.23, and for the runs that need them liger-kernel,
# cut-cross-entropy, trl, mamba-ssm and causal-conv1d importable; MAMBA_SITE is a directory holding the
# two Mamba packages, put on PYTHONPATH only for the runs that use them):
#   MAMBA_SITE=/tmp/mamba bash benchmarks/train_speed.sh llama|nemotron [OUT_DIR]
# STEPS, RUNS (a subset of the part's run names), RUN_TIMEOUT (s per run), EXTRA (flags added to each of our
# runs, e.g. "--profile-steps 2 --profile-shapes", or "--layers 34" on a GPU of 80 GB: a rank's 52 layers need ~92 GiB)
# and SCRIPTS (see below) may be set.
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -euo pipefail
PART=${1:?usage: train_speed.sh llama|nemotron [OUT_DIR]}
OUT=${2:-/tmp/train-speed}/$PART
# SCRIPTS: the workflow/scripts tree whose trainer runs, BENCHMARKS the benchmarks/ tree that drives it (another
# commit's copies, to compare two versions in one call)
export PYTHONPATH=${SCRIPTS:-workflow/scripts}:benchmarks${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} TOKENIZERS_PARALLELISM=false
M=$OUT/metrics
mkdir -p "$M"
rm -f "$M"/*.jsonl
source benchmarks/gpu_data.sh
make_gpu_data "$OUT" >/dev/null
D=$OUT/data
data="--data $D/winners_x40.jsonl --data $D/general_mix.jsonl"
optim="--lr 1e-5 --warmup-steps 1 --schedule cosine --adam-betas 0.9,0.95 --grad-clip 1.0 --seed 1234 --precision bf16"

ours() {  # name, kernels (on|off), then sft_throughput.py flags
  local name=$1 kernels=$2; shift 2
  local path=$PYTHONPATH
  [[ $kernels == on && -n ${MAMBA_SITE:-} ]] && path=$MAMBA_SITE:$path
  echo "== $name"
  PYTHONPATH=$path timeout -k 20 -s TERM "${RUN_TIMEOUT:-150}" python3 "${BENCHMARKS:-benchmarks}/sft_throughput.py" \
    --tokenizer "$OUT/tokenizer" $data $optim --metrics "$M/$name.jsonl" "$@" ${EXTRA:-} 2>&1 | tee "$OUT/$name.log" \
    | grep -E "^(model|CUDA allocator|summary|memory|allocator|profile|\||GPU|Traceback|.*Error)" || echo "$name: failed (see $OUT/$name.log)"
}
rank_share() {  # name, pack tokens[, head loss]: one rank's 64-row share of the full scale's step (see rk_ below)
  ours "$1" on $nemo $packed --size 30b_a3b_rank8 --compile --activation-checkpointing --pack-tokens "$2" \
    --global-batch-rows 64 --steps 8 --timed-from 3 --fused-loss "${3:-liger}"
}
trl() {  # name, then train_trl_sft.py flags
  local name=$1; shift
  echo "== $name"
  timeout -k 20 -s KILL "${RUN_TIMEOUT:-150}" python3 benchmarks/train_trl_sft.py --init "$OUT/tokenizer" $data \
    --family llama --size 1b --vocab-size 128256 --global-batch-rows 128 --micro-batch-rows 16 --max-length 4096 \
    --lr 1e-5 --warmup-steps 1 --seed 1234 --steps "${STEPS:-10}" --metrics "$M/$name.jsonl" "$@" 2>&1 \
    | tee "$OUT/$name.log" | grep -E "^(trl:|Traceback|.*Error)" || echo "$name: failed (see $OUT/$name.log)"
}

case $PART in
  llama)
    llama="--family llama --size 1b --vocab-size 128256 --global-batch-rows 128 --micro-batch-rows 16 --max-length 4096
      --steps ${STEPS:-10} --packing --packed-attention varlen --compile"
    for run in ${RUNS:-a_ours_unfused i_ours_compiled_ce_unsharded b_ours_liger h_ours_compiled_ce c_ours_cce
        d_ours_liger_64k e_trl_sdpa f_trl_sdpa_liger g_trl_flex_liger}; do
      case $run in
        a_ours_unfused) ours $run off $llama --pack-tokens 32768 ;;
        b_ours_liger) ours $run off $llama --pack-tokens 32768 --fused-loss liger ;;
        c_ours_cce) ours $run off $llama --pack-tokens 32768 --fused-loss cce ;;
        d_ours_liger_64k) ours $run off $llama --pack-tokens 65536 --fused-loss liger ;;
        h_ours_compiled_ce) ours $run off $llama --pack-tokens 32768 --fused-loss compiled ;;
        i_ours_compiled_ce_unsharded) ours $run off $llama --pack-tokens 32768 --fused-loss compiled --accumulate unsharded ;;
        e_trl_sdpa) trl $run --attn-implementation sdpa ;;
        f_trl_sdpa_liger) trl $run --attn-implementation sdpa --liger ;;
        g_trl_flex_liger) trl $run --attn-implementation flex_attention --liger ;;
        # the card's global batch, 512 rows (~200k tokens): run these into an OUT_DIR of their own, so that the
        # loss table compares them with each other
        j_ours_compiled_ce_unsharded_512) ours $run off $llama --pack-tokens 32768 --fused-loss compiled \
          --accumulate unsharded --global-batch-rows 512 ;;
        # flash-attn-4 in place of torch's FlashAttention 2 for the varlen kernel (--packed-attention fa4)
        m_ours_fa4) ours $run off $llama --pack-tokens 32768 --fused-loss compiled --accumulate unsharded \
          --packed-attention fa4 ;;
        n_ours_fa4_512) ours $run off $llama --pack-tokens 32768 --fused-loss compiled --accumulate unsharded \
          --global-batch-rows 512 --packed-attention fa4 ;;
        # the loss's gradient written over the logits by one Triton kernel (--fused-loss inplace)
        s_ours_fa4_inplace_512) ours $run off $llama --pack-tokens 32768 --fused-loss inplace --accumulate unsharded \
          --global-batch-rows 512 --packed-attention fa4 ;;
        t_ours_inplace_512) ours $run off $llama --pack-tokens 32768 --fused-loss inplace --accumulate unsharded \
          --global-batch-rows 512 ;;
        k_trl_sdpa_512) trl $run --attn-implementation sdpa --global-batch-rows 512 ;;
        l_trl_sdpa_liger_512) trl $run --attn-implementation sdpa --liger --global-batch-rows 512 ;;
        # TRL's fastest: FlexAttention (its packed rows kept apart by a block mask) with Liger, larger micro-batches
        u_trl_flex_liger_512_16) trl $run --attn-implementation flex_attention --liger --global-batch-rows 512 ;;
        v_trl_flex_liger_512_64) trl $run --attn-implementation flex_attention --liger --global-batch-rows 512 \
          --micro-batch-rows 64 ;;
        w_trl_flex_liger_512_128) trl $run --attn-implementation flex_attention --liger --global-batch-rows 512 \
          --micro-batch-rows 128 ;;
        *) echo "unknown run $run" >&2; exit 2 ;;
      esac
    done ;;
  nemotron)
    nemo="--family nemotron_h --size 30b_a3b_reduced --vocab-size 131072 --global-batch-rows 128 --max-length 4096"
    packed="--micro-batch-rows 32 --packing --packed-attention varlen --pack-tokens 32768 --fused-loss liger"
    for run in ${RUNS:-a_reference_padded c_kernels_packed_fused e_kernels_packed_fused_compiled
        k_kernels_packed_compiled_ce_unsharded_512 d_kernels_packed_fused_eager b_kernels_padded}; do
      case $run in
        a_reference_padded) ours $run off $nemo --micro-batch-rows 4 --steps "${STEPS:-6}" --timed-from 2 ;;
        # padded rows give the Mamba kernels a new sequence length per micro-batch: each one is compiled anew
        b_kernels_padded) ours $run on $nemo --micro-batch-rows 4 --steps "${STEPS:-6}" --timed-from 2 ;;
        c_kernels_packed_fused) ours $run on $nemo $packed --steps 10 --profile-steps 2 ;;
        d_kernels_packed_fused_eager) ours $run on $nemo $packed --experts eager --steps 6 --profile-steps 2 \
          --timed-from 2 ;;
        # the blocks compiled (Mamba-2 mixers eager): norms, casts, routing and expert combine fused
        e_kernels_packed_fused_compiled) ours $run on $nemo $packed --compile --steps 10 --profile-steps 2 ;;
        # the card's global batch (512 rows, ~200k tokens): the optimizer step and FSDP's copies per 4x the tokens
        f_kernels_packed_fused_compiled_512) ours $run on $nemo $packed --compile --global-batch-rows 512 --steps 8 \
          --profile-steps 2 ;;
        g_kernels_packed_fused_512) ours $run on $nemo $packed --global-batch-rows 512 --steps 8 --profile-steps 2 ;;
        # one all-gather and one gradient reduction per step instead of per micro-batch (--accumulate unsharded)
        h_kernels_packed_fused_compiled_unsharded) ours $run on $nemo $packed --compile --accumulate unsharded \
          --steps 10 --profile-steps 2 ;;
        i_kernels_packed_fused_compiled_unsharded_512) ours $run on $nemo $packed --compile --accumulate unsharded \
          --global-batch-rows 512 --steps 6 ;;
        # the head's bf16 logits in one product, then a compiled cross-entropy on them (--fused-loss compiled)
        j_kernels_packed_compiled_ce) ours $run on $nemo $packed --compile --fused-loss compiled --steps 10 ;;
        # the full scale's memory setting (activation checkpointing) under compiled blocks and the compiled loss
        o_kernels_packed_compiled_ce_ac) ours $run on $nemo $packed --compile --fused-loss compiled \
          --activation-checkpointing --steps 10 ;;
        p_kernels_packed_fused_ac) ours $run on $nemo $packed --activation-checkpointing --steps 10 ;;
        # the full scale's own pack (train.speed.pack_tokens unset: max_length, 4,096 tokens), which plan.py plans
        x_kernels_packed_4096_compiled_ce_ac) ours $run on $nemo $packed --compile --fused-loss compiled \
          --activation-checkpointing --pack-tokens 4096 --steps 10 ;;
        y_kernels_packed_8192_compiled_ce_ac) ours $run on $nemo $packed --compile --fused-loss compiled \
          --activation-checkpointing --pack-tokens 8192 --steps 10 ;;
        z_kernels_packed_16384_compiled_ce_ac) ours $run on $nemo $packed --compile --fused-loss compiled \
          --activation-checkpointing --pack-tokens 16384 --steps 10 ;;
        # selective checkpointing: the products' and attention's outputs kept, the elementwise work recomputed
        sel_kernels_packed_16384_compiled_ce_sac) ours $run on $nemo $packed --compile --fused-loss compiled \
          --activation-checkpointing selective --pack-tokens 16384 --steps 10 ;;
        none_kernels_packed_16384_compiled_ce) ours $run on $nemo $packed --compile --fused-loss compiled \
          --pack-tokens 16384 --steps 10 ;;
        # the full scale's settings at its global batch (512 rows, ~240k tokens), 6 steps each (one schedule):
        # today's (16,384-token packs, compiled loss, full checkpointing), 32,768-token packs with a loss that
        # keeps no logits (liger, cut-cross-entropy), and no checkpointing (the ceiling of any policy)
        fs_full_16k_compiled_512) ours $run on $nemo $packed --compile --fused-loss compiled --activation-checkpointing \
          --pack-tokens 16384 --global-batch-rows 512 --steps 6 --timed-from 3 ;;
        fs_full_32k_liger_512) ours $run on $nemo $packed --compile --fused-loss liger --activation-checkpointing \
          --pack-tokens 32768 --global-batch-rows 512 --steps 6 --timed-from 3 ;;
        fs_full_32k_cce_512) ours $run on $nemo $packed --compile --fused-loss cce --activation-checkpointing \
          --pack-tokens 32768 --global-batch-rows 512 --steps 6 --timed-from 3 ;;
        fs_none_16k_compiled_512) ours $run on $nemo $packed --compile --fused-loss compiled --pack-tokens 16384 \
          --global-batch-rows 512 --steps 6 --timed-from 3 ;;
        k_kernels_packed_compiled_ce_unsharded_512) ours $run on $nemo $packed --compile --fused-loss compiled \
          --accumulate unsharded --global-batch-rows 512 --steps 6 ;;
        # one rank of the card's node at expert_parallel 8 (30b_a3b_rank8: all 52 layers, the 16 experts a rank
        # holds of each layer's 128): its share of the 512-row step (64 rows) and the whole step on one GPU
        rk_full_32k_liger_64) ours $run on $nemo $packed --size 30b_a3b_rank8 --compile --activation-checkpointing \
          --global-batch-rows 64 --steps 8 --timed-from 3 ;;
        rk_full_32k_liger_512) ours $run on $nemo $packed --size 30b_a3b_rank8 --compile --activation-checkpointing \
          --global-batch-rows 512 --steps 5 --timed-from 3 ;;
        # the 64-row share with the allocator's fixed segments (what training jobs used before growing ones)
        rk_full_32k_liger_64_fixed_segments) PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False ours $run on $nemo \
          $packed --size 30b_a3b_rank8 --compile --activation-checkpointing --global-batch-rows 64 --steps 8 --timed-from 3 ;;
        # the share with the head's loss on our chunked in-place kernel: no `.item()` at the head, so the backward
        # starts with the forward's queued work to hide its launches behind (liger and cce count on the host)
        rk_full_32k_inplace_chunked_64) rank_share $run 32768 inplace_chunked ;;
        # the same share at the smaller packs (the planner's per-pack MFU table; DPO's packs are 16,384)
        rk_full_4k_liger_64) rank_share $run 4096 ;;
        rk_full_8k_liger_64) rank_share $run 8192 ;;
        rk_full_16k_liger_64) rank_share $run 16384 ;;
        # the same with the full scale's head loss now (the planner's table at every pack)
        rk_full_4k_inplace_chunked_64) rank_share $run 4096 inplace_chunked ;;
        rk_full_8k_inplace_chunked_64) rank_share $run 8192 inplace_chunked ;;
        rk_full_16k_inplace_chunked_64) rank_share $run 16384 inplace_chunked ;;
        # its attention layer on flash-attn-4's kernels (--packed-attention fa4)
        r_kernels_packed_compiled_ce_unsharded_512_fa4) ours $run on $nemo $packed --compile --fused-loss compiled \
          --accumulate unsharded --global-batch-rows 512 --steps 6 --packed-attention fa4 ;;
        # the loss's gradient written over the logits by one Triton kernel (--fused-loss inplace)
        s_kernels_packed_inplace_ce_unsharded_512) ours $run on $nemo $packed --compile --fused-loss inplace \
          --accumulate unsharded --global-batch-rows 512 --steps 6 ;;
        *) echo "unknown run $run" >&2; exit 2 ;;
      esac
    done ;;
  *) echo "unknown part $PART (llama | nemotron)" >&2; exit 2 ;;
esac

python3 benchmarks/run_table.py "$M"
