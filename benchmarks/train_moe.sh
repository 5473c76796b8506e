#!/usr/bin/env bash
# SFT throughput of MoE models with the card Base's widths and experts at reduced depth, on 2 GPUs: FSDP2 full
# shard over 2 processes on NCCL, bf16 compute over fp32 master weights, the rows of train_gpu.sh's data steps
# (winner rows x40 + general mix), AdamW (0.9, 0.95), cosine lr 1e-5 with one warm-up step, grad clip 1.0.
#  1. Qwen3-MoE with the card's attention and routed experts, 4 layers (qwen3_moe/card_experts_4l, 7.8B parameters,
#     0.47B active), packed rows; the last PROFILE_STEPS steps under torch.profiler: GPU time per step by kernel
#     category and by op.
#  2. Nemotron-H, the card's first seven layers (nemotron_h/30b_a3b_reduced, 4.0B, 0.39B active), padded rows (packing
#     it needs the Mamba kernels: benchmarks/train_speed.sh nemotron), a few steps. Its Mamba-2 layers run transformers' PyTorch reference code unless
#     mamba-ssm and causal-conv1d import (PyPI ships only sources for them; the line "mamba kernels:" says which).
# Weights are random, drawn on the GPUs (benchmarks/sft_throughput.py): the step is train_sft.py's own.
# Prints per run tokens/s/GPU, MFU on active parameters (989 TFLOP/s per GPU), peak GiB/GPU and loss first -> last
# (medians over steps 3 up to the first profiled one), then plan.py's estimate of the same runs.
#
# Run as (repository root, a machine with 2 GPUs; transformers 5.23 importable):
#   bash benchmarks/train_moe.sh [OUT_DIR]
# Under 8 minutes on 2 H200 even when both runs hit their time limits (QWEN_TIMEOUT 210 s, NEMOTRON_TIMEOUT 150 s).
# QWEN_STEPS, PROFILE_STEPS, PACK_TOKENS, PACKED_ATTENTION (train_sft.py's --packed-attention), NEMOTRON_STEPS and
# the time limits may be set; QWEN_SIZE=tiny NEMOTRON_SIZE=tiny make a CPU smoke run.
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -euo pipefail
OUT=${1:-/tmp/train-moe}
QWEN_SIZE=${QWEN_SIZE:-card_experts_4l}
NEMOTRON_SIZE=${NEMOTRON_SIZE:-30b_a3b_reduced}
PACK=${PACK_TOKENS:-8192}
export PYTHONPATH=workflow/scripts${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # NVLink multicast stays off
S=workflow/scripts
D=$OUT/data
M=$OUT/metrics
mkdir -p "$D" "$M"
rm -f "$M"/*.jsonl

source benchmarks/gpu_data.sh
make_gpu_data "$OUT"
python3 -c 'import importlib.util as u, torch, transformers as t
print("torch", torch.__version__, "transformers", t.__version__, "GPUs", torch.cuda.device_count(),
      "| mamba kernels:", {m: u.find_spec(m) is not None for m in ("mamba_ssm", "causal_conv1d")})'

common="--tokenizer $OUT/tokenizer --data $D/winners_x40.jsonl --data $D/general_mix.jsonl --max-length 4096
  --precision bf16 --lr 1e-5 --warmup-steps 1 --schedule cosine --adam-betas 0.9,0.95 --grad-clip 1.0 --seed 1234"
bench() {  # run name, time limit (s), then benchmark and trainer flags
  local name=$1 limit=$2; shift 2
  echo "== $name"
  # TERM: the launcher passes it on and the ranks stop after the step and report the steps done; the launcher
  # kills ranks still running 30 s later (a KILL of the launcher alone would leave them running in their sessions)
  timeout -k 45 -s TERM "$limit" python3 -m accelerate.commands.launch \
    --config_file workflow/accelerate/fsdp2.yaml --num_processes 2 \
    benchmarks/sft_throughput.py $common --metrics "$M/$name.jsonl" "$@" 2>&1 | tee "$OUT/$name.log" \
    || echo "$name: failed or stopped after $limit s"
}

bench qwen3_moe "${QWEN_TIMEOUT:-210}" --family qwen3_moe --size "$QWEN_SIZE" --steps "${QWEN_STEPS:-12}" \
  --profile-steps "${PROFILE_STEPS:-2}" --global-batch-rows 128 --micro-batch-rows 16 --packing --pack-tokens "$PACK" \
  --packed-attention "${PACKED_ATTENTION:-sdpa}"
bench nemotron_h "${NEMOTRON_TIMEOUT:-150}" --family nemotron_h --size "$NEMOTRON_SIZE" --steps "${NEMOTRON_STEPS:-6}" \
  --global-batch-rows 64 --micro-batch-rows 8

echo "== plan.py for the same shapes (fused-kernel memory model; step time at its assumed MFU)"
python3 tools/plan.py --family qwen3_moe --size "$QWEN_SIZE" --vocab 2048 --gpus 2 --gpu-gib 139 \
  --global-batch-rows 8 --micro-batch-rows 1 --tokens-per-row "$PACK"
python3 tools/plan.py --family nemotron_h --size "$NEMOTRON_SIZE" --vocab 2048 --gpus 2 --gpu-gib 139 \
  --global-batch-rows 64 --micro-batch-rows 8 --tokens-per-row 1152
echo "== results"
for run in qwen3_moe nemotron_h; do  # a run stopped mid-step by its time limit printed no summary: read its metrics
  grep -h "^summary" "$OUT/$run.log" || python3 - "$M/$run.jsonl" "$run" <<'PY' || echo "$run: no steps recorded"
import json, sys
sys.path.insert(0, "benchmarks")
from sft_throughput import summary
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print(summary(rows, 3, len(rows), 2, sys.argv[2] + " (stopped, every step counted)"))
PY
done
