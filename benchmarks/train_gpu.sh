#!/usr/bin/env bash
# The trainer on GPUs: the embedded lineage's training runs (tiny Nemotron-H stand-in -> sftw2,
# sftw4, sftwF with the card's learning rates, schedules and step counts) and one SFT run of a
# dense ~1B Llama-shaped model (random init), FSDP2 over all visible GPUs on NCCL, bf16.
# Prints tokens/s/GPU, MFU and peak memory per GPU (medians over the timed steps).
#
# Run as (repository root, a machine with >= 1 GPU):
#   bash benchmarks/train_gpu.sh [OUT_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -euo pipefail
OUT=${1:-/tmp/train-gpu}
GPUS=${GPUS:-$(python3 -c 'import torch; print(torch.cuda.device_count())')}
export PYTHONPATH=workflow/scripts${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
S=workflow/scripts
D=$OUT/data
mkdir -p "$D" "$OUT/metrics"
launch() { python3 -m accelerate.commands.launch --config_file workflow/accelerate/fsdp2.yaml --num_processes "$GPUS" "$@"; }
recipe() { echo --schedule cosine --warmup-steps 1 --seed 1234 --adam-betas 0.9,0.95 --grad-clip 1.0 "$@"; }

source benchmarks/gpu_data.sh
make_gpu_data "$OUT"

echo "== embedded lineage on $GPUS GPU(s): stand-in, then sftw2, sftw4, sftwF"
python3 $S/init_model.py --family nemotron_h --size tiny --tokenizer $OUT/tokenizer --seed 1234 --run base --out $OUT/base
small="--global-batch-rows 16 --micro-batch-rows $((16 / GPUS / 2)) --max-length 512 --precision bf16"
launch $S/train_sft.py --run stage1 --init $OUT/base --data resources/sample/general_mix.jsonl $small \
  $(recipe --lr 2e-3 --steps 120 --warmup-steps 10) --metrics $OUT/metrics/stage1.jsonl --out $OUT/stage1 | tail -2
launch $S/train_sft.py --run sftw2 --init $OUT/stage1 --data $D/winners_x40.jsonl $small \
  $(recipe --lr 5e-6 --steps 24) --metrics $OUT/metrics/sftw2.jsonl --out $OUT/sftw2 | tail -1
launch $S/train_sft.py --run sftw4 --init $OUT/stage1 --data $D/winners_x40.jsonl --data $D/general_mix.jsonl $small \
  $(recipe --lr 1e-5 --steps 65) --metrics $OUT/metrics/sftw4.jsonl --out $OUT/sftw4 | tail -1
launch $S/train_sft.py --run sftwF --init $OUT/stage1 --data $D/winners.jsonl $small \
  $(recipe --lr 5e-6 --steps 30) --metrics $OUT/metrics/sftwF.jsonl --out $OUT/sftwF | tail -1

echo "== dense ~1B Llama, random init, SFT on the winner rows, max length 4096"
python3 $S/init_model.py --family llama --size 1b --tokenizer $OUT/tokenizer --seed 1234 --run llama1b --out $OUT/llama1b
launch $S/train_sft.py --run llama1b_sft --init $OUT/llama1b --data $D/winners_x40.jsonl \
  --global-batch-rows 128 --micro-batch-rows $((128 / GPUS / 4)) --max-length 4096 --precision bf16 \
  $(recipe --lr 1e-5 --steps 12) --metrics $OUT/metrics/llama1b.jsonl --out $OUT/llama1b_sft | tail -3

python3 - "$OUT/metrics" "$GPUS" <<'PY'
import json, statistics, sys
from pathlib import Path
root, gpus = Path(sys.argv[1]), int(sys.argv[2])
print(f"\n| run | steps | loss first -> last | tokens/s/GPU (median) | MFU (median) | peak GiB/GPU |")
print("|---|---|---|---|---|---|")
for path in sorted(root.glob("*.jsonl")):
    rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    timed = rows[2:] or rows  # the first steps include compilation and allocator warm-up
    tps = statistics.median(r["tok_per_s"] for r in timed) / gpus
    mfus = [r["mfu"] for r in timed if r.get("mfu") is not None]
    mfu = f"{100 * statistics.median(mfus):.1f}%" if mfus else "n/a"
    mem = max((r.get("peak_mem_gib") or 0) for r in rows)
    print(f"| {path.stem} | {len(rows)} | {rows[0]['loss']:.3f} -> {rows[-1]['loss']:.3f} | {tps:,.0f} | {mfu} | {mem:.1f} |")
PY
