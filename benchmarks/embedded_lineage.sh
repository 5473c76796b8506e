#!/usr/bin/env bash
# Wall time of the published lineage from nothing at embedded scale (the evaluation budget):
# copies the workflow into a scratch directory and runs `snakemake --cores 2 soupF2_eval` there
# under /usr/bin/time, then prints the slowest rules from Snakemake's benchmark files.
#
# Run as (repository root, after ./setup.sh):
#   bash benchmarks/embedded_lineage.sh [SCRATCH_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/_help.sh"
set -euo pipefail
repo=$(pwd)
work=${1:-$(mktemp -d /tmp/embedded-lineage.XXXXXX)}
mkdir -p "$work"
cp -r Snakefile config.yaml rules workflow resources envs profiles "$work"/
cd "$work"
/usr/bin/time -f "wall %e s | user %U s | sys %S s | peak RSS %M KiB" \
  "$repo/.venv/bin/python" -m snakemake --cores 2 soupF2_eval --quiet progress
python3 - <<'PY'
import csv, collections
from pathlib import Path
totals = collections.defaultdict(lambda: [0, 0.0])
for tsv in Path("results/embedded/benchmarks").glob("*/*.tsv"):
    row = list(csv.DictReader(tsv.open(), delimiter="\t"))[-1]
    totals[tsv.parent.name][0] += 1
    totals[tsv.parent.name][1] += float(row["s"])
print("| rule | jobs | summed job wall s |")
print("|---|---|---|")
for rule, (jobs, seconds) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
    print(f"| {rule} | {jobs} | {seconds:.1f} |")
PY
