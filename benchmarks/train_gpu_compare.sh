#!/usr/bin/env bash
# SFT throughput on ONE GPU, side by side: our trainer padded, our trainer packed (SDPA row mask;
# + compiled blocks; + chunked cross-entropy; FlexAttention block mask + compiled blocks; FlashAttention's
# varlen kernel over the row boundaries, 4k-64k packs, + compiled blocks), and TRL's
# SFTTrainer (padding-free, SDPA row mask) on the same dense ~1B Llama-shaped
# model (random init), the same rows in the same order (winner rows x40 + general mix, see
# train_gpu.sh), global batch 128 rows, max length 4096, AdamW (0.9, 0.95), cosine lr 1e-5 with one
# warm-up step, grad clip 1.0, bf16 compute over fp32 weights.
# Prints tokens/s/GPU, MFU (6 x params x tokens/s / 989e12), peak memory (medians over the steps
# after the first WARMUP), first and last loss and the largest relative loss difference per step
# against the padded run.
#
# Run as (repository root, a machine with a GPU; transformers 5.23 and trl importable):
#   bash benchmarks/train_gpu_compare.sh [OUT_DIR]
# STEPS, WARMUP, RUN_TIMEOUT (s per run) and RUNS (a subset of the run names below) may be set.
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -euo pipefail
OUT=${1:-/tmp/train-gpu-compare}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-3}
export PYTHONPATH=workflow/scripts${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
S=workflow/scripts
D=$OUT/data
M=$OUT/metrics
mkdir -p "$D" "$M"

source benchmarks/gpu_data.sh
make_gpu_data "$OUT"

python3 $S/init_model.py --family llama --size 1b --tokenizer $OUT/tokenizer --seed 1234 --run llama1b --out $OUT/llama1b

data="--data $D/winners_x40.jsonl --data $D/general_mix.jsonl"
common="--global-batch-rows 128 --max-length 4096 --lr 1e-5 --warmup-steps 1 --seed 1234 --steps $STEPS"
ours() {  # name, extra flags
  local name=$1; shift
  echo "== ours: $name"
  # KILL: the trainer takes SIGTERM as a request to stop after the step, which a stuck compile never ends
  timeout -s KILL ${RUN_TIMEOUT:-300} python3 $S/train_sft.py --init $OUT/llama1b $data $common --precision bf16 \
    --schedule cosine --adam-betas 0.9,0.95 --grad-clip 1.0 --metrics $M/$name.jsonl --out $OUT/runs/$name "$@" || true
  tail -1 $M/$name.jsonl 2>/dev/null | cut -c1-200 || true
}
packed="--micro-batch-rows 16 --packing"
RUNS=${RUNS:-a_padded b_packed_sdpa e_trl c_packed_sdpa_compiled f_packed_sdpa_chunked_ce d_packed_flex_compiled}
for run in $RUNS; do
  case $run in
    a_padded) ours $run --micro-batch-rows 16 ;;
    b_packed_sdpa) ours $run $packed --pack-tokens 4096 ;;
    c_packed_sdpa_compiled) ours $run $packed --pack-tokens 4096 --compile ;;
    f_packed_sdpa_chunked_ce) ours $run $packed --pack-tokens 4096 --ce-chunk-tokens 2048 ;;
    d_packed_flex_compiled) ours $run $packed --pack-tokens 16384 --packed-attention flex_attention --compile ;;
    g_packed_varlen) ours $run $packed --pack-tokens 4096 --packed-attention varlen ;;
    h_packed_varlen_16k) ours $run $packed --pack-tokens 16384 --packed-attention varlen ;;
    i_packed_varlen_16k_compiled) ours $run $packed --pack-tokens 16384 --packed-attention varlen --compile ;;
    k_packed_varlen_32k_compiled) ours $run $packed --pack-tokens 32768 --packed-attention varlen --compile ;;
    l_packed_varlen_64k_compiled) ours $run $packed --pack-tokens 65536 --packed-attention varlen --compile ;;
    j_packed_varlen_16k_compiled_chunked_ce) ours $run $packed --pack-tokens 16384 --packed-attention varlen --compile \
      --ce-chunk-tokens 4096 ;;
    e_trl)
      echo "== TRL SFTTrainer, padding-free"
      timeout -s KILL ${RUN_TIMEOUT:-300} python3 benchmarks/train_trl_sft.py --init $OUT/llama1b $data $common \
        --micro-batch-rows 16 --metrics $M/e_trl.jsonl 2>&1 | grep --line-buffered -E "^(data|row lengths|trl):|Error" \
        || true ;;
    *) echo "unknown run $run" >&2; exit 2 ;;
  esac
done

python3 - "$M" "$WARMUP" <<'PY'
import json, statistics, sys
from pathlib import Path
root, warmup = Path(sys.argv[1]), int(sys.argv[2])
runs = {p.stem: [json.loads(l) for l in p.read_text().splitlines() if l.strip()] for p in sorted(root.glob("*.jsonl"))}
ref = runs.get("a_padded")
print(f"\n| run | steps | loss first -> last | max rel. loss diff vs padded | tokens/s/GPU (median) | MFU | peak GiB |")
print("|---|---|---|---|---|---|---|")
for name, rows in runs.items():
    if not rows:
        continue
    timed = rows[warmup:] or rows
    tps = statistics.median(r["tok_per_s"] for r in timed)
    mfu = statistics.median(r["mfu"] for r in timed if r.get("mfu") is not None)
    mem = max(r.get("peak_mem_gib") or 0 for r in rows)
    diff = "n/a"
    if ref and len(ref) == len(rows):
        diff = f"{100 * max(abs(r['loss'] - q['loss']) / q['loss'] for r, q in zip(rows, ref)):.3f}%"
    print(f"| {name} | {len(rows)} | {rows[0]['loss']:.4f} -> {rows[-1]['loss']:.4f} | {diff} | {tps:,.0f} | "
          f"{100 * mfu:.1f}% | {mem:.1f} |")
trl = runs.get("e_trl")
if trl:
    trl_tps = statistics.median(r["tok_per_s"] for r in (trl[warmup:] or trl))
    for name, rows in runs.items():
        if name != "e_trl" and rows:
            print(f"{name}: {statistics.median(r['tok_per_s'] for r in (rows[warmup:] or rows)) / trl_tps:.2f}x TRL")
PY
