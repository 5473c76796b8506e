"""Battle margin: preferred vs losing answer by summed log-prob on the holdout pairs.

Run as: python workflow/scripts/eval_margin.py --model results/ckpt/soupF2 \
            --items results/data/holdout_pairs.jsonl \
            --out-json margin.json --out-records margin.records.jsonl

One entry point per benchmark so each Snakemake rule names its own script; the work is done by
eval_benchmark.py (see its --help for every option).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_benchmark  # noqa: E402


def main(argv=None) -> int:
    return eval_benchmark.main(["--benchmark", "margin", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
