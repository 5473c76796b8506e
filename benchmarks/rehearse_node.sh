#!/usr/bin/env bash
# The card's node rehearsed on one GPU (tools/rehearse.py): rank 0 of each named run at the full scale's own
# settings (world 8, E = 8, compiled blocks under full checkpointing, the config's packs and head loss), and the
# world-1 stand-in the earlier figures came from (train_speed.sh rk_full_32k_inplace_chunked_64 at 26 layers),
# so both sit on the same machine.
#
# Run as (repository root, one H100 or H200; transformers 5.23 importable, MAMBA_SITE a directory holding
# mamba-ssm and causal-conv1d):
#   MAMBA_SITE=/tmp/site bash benchmarks/rehearse_node.sh OUT_DIR [RUN ...]
# RUNS default: sftw2 dpo1. STANDIN=0 leaves the stand-in out; EXTRA adds flags to every rehearsal.
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -uo pipefail
OUT=${1:?usage: rehearse_node.sh OUT_DIR [RUN ...]}
shift
mkdir -p "$OUT"
export PYTHONPATH=${MAMBA_SITE:+$MAMBA_SITE:}${PYTHONPATH:-} PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
for run in "${@:-sftw2 dpo1}"; do
  for name in $run; do
    echo "== rehearsal of $name (rank 0 of the full scale's job)"
    timeout -k 20 -s TERM "${RUN_TIMEOUT:-420}" python3 tools/rehearse.py "$name" --scale full --summary "$OUT/$name.json" ${EXTRA:-} 2>&1 \
      | tee "$OUT/$name.log" | grep -v '^\[transformers\]' | grep -v 'UserWarning\|warnings.warn'
  done
done
if [[ ${STANDIN:-1} == 1 ]]; then
  echo "== the world-1 stand-in: rk_full_32k_inplace_chunked_64, first 26 layers"
  EXTRA="--layers 26" RUNS=rk_full_32k_inplace_chunked_64 bash benchmarks/train_speed.sh nemotron "$OUT/standin"
fi
