"""GSM8K: greedy worked answers, exact match of the final number (lm-eval's filters).

Run as: python workflow/scripts/eval_gsm8k.py --model results/ckpt/soupF2 \
            --items resources/sample/eval/gsm8k.jsonl --sizes 300,300 --part A \
            --out-json gsm8k.json --out-records gsm8k.records.jsonl

One entry point per benchmark so each Snakemake rule names its own script; the work is done by
eval_benchmark.py (see its --help for every option).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_benchmark  # noqa: E402


def main(argv=None) -> int:
    return eval_benchmark.main(["--benchmark", "gsm8k", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
