#!/usr/bin/env bash
# The `gpu` scale's lineage on one GPU through Snakemake, as a user runs it, timed per rule; then what a user
# relies on afterwards: a rerun plans nothing, --forcerun sftw2 reruns exactly sftw2 and what descends from it,
# and a training job stopped by SIGTERM mid-run is resumed by the rerun.
#
# Run as (repository root of a checkout whose results/gpu is empty or from an earlier cut-off call):
#   bash benchmarks/gpu_lineage.sh build OUT_DIR      # from nothing (or on from where a cut-off call left it)
#   bash benchmarks/gpu_lineage.sh audit OUT_DIR      # on the built lineage: plan, forcerun, SIGTERM + resume
#   bash benchmarks/gpu_lineage.sh check OUT_DIR      # the published soupF2: load, then compare
#   bash benchmarks/gpu_lineage.sh load OUT_DIR       # from_pretrained on CPU and on CUDA, the same logits; with
#                                                     # FROM, that directory's logits on CUDA equal to them exactly
#   bash benchmarks/gpu_lineage.sh compare OUT_DIR    # its scores and greedy text against lm-eval's HF backend
# SNAKEMAKE (default `python3 -m snakemake`), LIMIT (seconds the build may run, default 540), PLANS_ONLY (1: the
# audit stops after its dry runs), TARGET (what build makes, default soupF2_eval), MODEL (what load and compare
# read, default the published soupF2) and FROM (what load finds MODEL equal to, e.g. the directory it was published
# from) are read. A first look at a trained model in one call (~9 min on an H100):
#   TARGET=stage1_sft bash benchmarks/gpu_lineage.sh build OUT && MODEL=results/gpu/models/stage1_sft bash ... check OUT
# build exits 0 once its target is there. The comparison (~3 min on an H100, most of it its warm-up) need not wait
# for the evaluations and the publishing: `published` builds soupF2, compares its directory with lm-eval beside the
# rest of the build, then loads the published repository and shows it gives that directory's logits exactly, all
# within LIMIT, each call going on where the last was cut (one warm machine):
#   LIMIT=570 bash benchmarks/gpu_lineage.sh published OUT     # again until it exits 0
# With ~15 minutes of GPU, the scale's shortest lineage (Stage 1 = stage1_sft, fewer steps; one call + 2 min):
#   SNAKEMAKE="python3 -m snakemake --configfile config.yaml benchmarks/overlays/gpu-stage1-sft.yaml" LIMIT=570 ...
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -uo pipefail
phase=${1:?usage: gpu_lineage.sh build|audit|check|load|compare|published OUT_DIR}
OUT=${2:?usage: gpu_lineage.sh build|audit|check|load|compare|published OUT_DIR}
mkdir -p "$OUT"
SNAKEMAKE=${SNAKEMAKE:-python3 -m snakemake}
TARGET=${TARGET:-soupF2_eval}
ARGS=(--config scale=gpu)

per_rule() {  # the wall time of every job, summed per rule (Snakemake's benchmark files)
  python3 - <<'PY'
import csv, collections
from pathlib import Path
totals = collections.defaultdict(lambda: [0, 0.0, 0.0])
for tsv in Path("results/gpu/benchmarks").rglob("*.tsv"):
    row = list(csv.DictReader(tsv.open(), delimiter="\t"))[-1]
    rule = tsv.parent.name if tsv.parent.name != "runs" else tsv.stem
    entry = totals[rule]
    entry[0] += 1
    entry[1] += float(row["s"])
    entry[2] = max(entry[2], float(row["max_rss"]) if row["max_rss"] != "NA" else 0.0)
print("| rule (runs: each run) | jobs | summed wall s | peak RSS MB |")
print("|---|---|---|---|")
for rule, (jobs, seconds, rss) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
    print(f"| {rule} | {jobs} | {seconds:.1f} | {rss:,.0f} |")
print(f"| all | {sum(v[0] for v in totals.values())} | {sum(v[1] for v in totals.values()):.1f} | |")
PY
}

failed_logs() {  # the end of each failed job's log
  grep -ho "log: logs/gpu/[^ ]*\.log" .snakemake/log/*.snakemake.log 2>/dev/null | sort -u | cut -d' ' -f2 |
    while read -r log; do
      if grep -qi "error\|traceback" "$log" 2>/dev/null; then echo "== $log"; grep -v '^\[transformers\]' "$log" | tail -15; fi
    done
}

FORWARD=$(cat <<'PY'
# python3 - DEVICE MODEL OUT [MODEL OUT ...]: each model's logits on one sentence, in one process (imports once)
import sys

device, jobs = sys.argv[1], list(zip(sys.argv[2::2], sys.argv[3::2]))
if device == "cpu":  # as on a machine without CUDA, where the Mamba kernels do not install (see load)
    sys.modules.update({"causal_conv1d": None, "mamba_ssm": None})
import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer

for path, out in jobs:
    ids = AutoTokenizer.from_pretrained(path)("The lineage is rebuilt stage by stage.", return_tensors="pt").input_ids
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device).eval()
    with torch.no_grad():
        logits = model(ids.to(device)).logits.float().cpu()
    save_file({"logits": logits}, out)
    count = sum(p.numel() for p in model.parameters())
    print(f"{device}: {path}: {type(model).__name__}, {count:,} parameters, logits {tuple(logits.shape)}")
    del model
PY
)

SAME_LOGITS=$(cat <<'PY'
import sys
from pathlib import Path

from safetensors.torch import load_file

first, second = (load_file(path)["logits"] for path in sys.argv[1:3])
gap = (first - second).abs().max().item()
same = bool((first.argmax(-1) == second.argmax(-1)).all())
names = " vs ".join(Path(path).stem.removeprefix("logits_") for path in sys.argv[1:3])
print(f"{names}: max |logit difference| {gap:.2e}, same argmax at every position: {same}")
if sys.argv[3:] == ["exact"] and gap != 0.0:
    sys.exit(f"{names}: the logits differ ({gap:.2e}): not the same model")
PY
)

case $phase in
build)
  started=$(date +%s)
  timeout -s INT "${LIMIT:-540}" $SNAKEMAKE --cores all --keep-going --rerun-incomplete "$TARGET" "${ARGS[@]}" \
    >"$OUT/build.log" 2>&1
  rc=$?
  echo "snakemake exit $rc after $(($(date +%s) - started)) s (this call)"
  grep -E "steps \([0-9]+%\) done|Error in rule|Nothing to be done|Complete log" "$OUT/build.log" | tail -8
  per_rule | tee "$OUT/per_rule.md"
  echo "== the steps that compiled, by training job (a later job should compile at its first step only)"
  for log in logs/gpu/runs/*.log; do
    grep -q "compiled +" "$log" || continue
    grep -o '^step [0-9]*/[0-9]*\|compiled +[0-9]* graphs\|elapsed [0-9:]*' "$log" | paste -sd' ' |
      grep -o 'step [0-9]*/[0-9]* compiled +[0-9]* graphs elapsed [0-9:]*' | paste -sd';' | sed "s|^|$(basename "$log" .log): |"
  done
  tar -czf "$OUT/logs.tgz" logs/gpu 2>/dev/null  # every job's own log, one file (a device call returns no deep folders)
  [[ $rc == 0 ]] || failed_logs
  ls results/gpu/published/soupF2 2>/dev/null && cat results/gpu/eval_table.md 2>/dev/null
  ;;
published)
  # what the published soupF2 must show, in the fewest device seconds, within LIMIT; a call cut by its limit is gone
  # on by the next one on the same machine (MARKS keeps what is done): soupF2 first, its comparison with lm-eval
  # beside the evaluations and the publishing, then the published repository loaded and equal to soupF2's directory
  marks=${MARKS:-/tmp/gpu_lineage}
  mkdir -p "$marks"
  soup=results/gpu/models/soupF2 published=results/gpu/published/soupF2
  deadline=$(($(date +%s) + ${LIMIT:-540}))
  budget() {  # sets $left, the seconds to the deadline; with none left the call ends (`timeout 0` means no limit)
    left=$((deadline - $(date +%s)))
    ((left > 5)) || { echo "LIMIT reached: call again to go on"; exit 1; }
  }
  budget
  [[ -f $soup/config.json ]] || TARGET=soupF2 LIMIT=$left bash "$0" build "$OUT/soup"
  [[ -f $soup/config.json ]] || exit 1
  budget
  if [[ ! -f $marks/compared ]]; then
    (MODEL=$soup timeout "$left" bash "$0" compare "$OUT/compare" >"$OUT/compare.log" 2>&1 && touch "$marks/compared") &
  fi
  [[ -f $published/config.json ]] || LIMIT=$left bash "$0" build "$OUT/rest"
  wait
  tail -22 "$OUT/compare.log" 2>/dev/null
  [[ -f $published/config.json && -f $marks/compared ]] || exit 1
  budget
  MODEL=$published FROM=$soup timeout "$left" bash "$0" load "$OUT/load"  # not a MODEL or FROM the caller set
  ;;
audit)
  echo "== a rerun plans:"
  $SNAKEMAKE -n "$TARGET" "${ARGS[@]}" --quiet rules 2>&1 | tail -4
  echo "== --forcerun sftw2 plans:"
  $SNAKEMAKE -n "$TARGET" "${ARGS[@]}" --forcerun sftw2 --quiet rules 2>&1 | grep -v "^digests" | tail -25
  [[ ${PLANS_ONLY:-0} == 1 ]] && exit 0  # the plans alone, where the device time left allows no more
  started=$(date +%s)
  $SNAKEMAKE --cores all "$TARGET" "${ARGS[@]}" --forcerun sftw2 >"$OUT/forcerun.log" 2>&1
  echo "forcerun exit $? after $(($(date +%s) - started)) s; jobs run: $(grep -c '^rule \|^localrule ' "$OUT/forcerun.log")"
  grep -E "^(local)?rule " "$OUT/forcerun.log" | sort | uniq -c
  echo "== SIGTERM to sftw4's launcher mid-run, then the rerun"
  rm -f logs/gpu/runs/sftw4.log  # the built run's log has its step 20 too: wait for this run's
  $SNAKEMAKE --cores all sftw4 "${ARGS[@]}" --forcerun sftw4 >"$OUT/sigterm.log" 2>&1 &
  run=$!
  for _ in $(seq 240); do
    grep -q "^step 0020/" logs/gpu/runs/sftw4.log 2>/dev/null && break  # mid-run: the stop saves this step's state
    sleep 1
  done
  # anchored: an unanchored pattern also matches the shell running this script's command line
  pkill -TERM -f "^python workflow/scripts/launch_ranks.py .*--run sftw4" &&
    echo "SIGTERM sent after $(grep -o '^step [0-9]*/' logs/gpu/runs/sftw4.log | tail -1)"
  wait $run
  echo "first run exit $?; its log ends:"
  grep -v '^\[transformers\]' logs/gpu/runs/sftw4.log | tail -4
  $SNAKEMAKE --cores all sftw4 "${ARGS[@]}" >"$OUT/resume.log" 2>&1
  echo "rerun exit $?; resumed:"
  grep -E "resumed from|saved results" logs/gpu/runs/sftw4.log
  ;;
load | check)
  model=${MODEL:-results/gpu/published/soupF2}
  echo "== from_pretrained on CPU and on CUDA: $model${FROM:+; against $FROM on CUDA}"
  # the CPU side runs where the Mamba kernels do not import, as on a machine without CUDA (they need it to
  # install): transformers calls an installed kernel whatever the tensors' device, and the kernel refuses CPU ones.
  # FROM (the directory MODEL was published from; its weights may be rewritten into the published layout) must give
  # MODEL's logits exactly, so a comparison run on the directory holds for the published model
  python3 - cpu "$model" "$OUT/logits_cpu.safetensors" <<<"$FORWARD" &&
    python3 - cuda "$model" "$OUT/logits_cuda.safetensors" ${FROM:+"$FROM" "$OUT/logits_from.safetensors"} <<<"$FORWARD" &&
    python3 - "$OUT"/logits_{cpu,cuda}.safetensors <<<"$SAME_LOGITS" &&
    { [[ -z ${FROM:-} ]] || python3 - "$OUT"/logits_{from,cuda}.safetensors exact <<<"$SAME_LOGITS"; }
  ;;&
compare | check)
  model=${MODEL:-results/gpu/published/soupF2}
  echo "== our evaluation against lm-eval's HF backend on $model (float32, TF32 off)"
  python3 benchmarks/eval_vs_lm_eval.py --model "$model" --device cuda --dtype float32 --items 200 \
    --batch-size 32 --max-new-tokens 64 --json "$OUT/eval_vs_lm_eval.json" 2>&1 | grep -v '^\[transformers\]' | tail -25
  ;;
esac
