"""Gen degen: mean seq-rep-4 of greedy generations on held-out prompts.

Run as: python workflow/scripts/eval_degen.py --model results/ckpt/soupF2 \
            --items resources/sample/eval/gen_prompts.jsonl --sizes 386 --part A \
            --out-json degen.json --out-records degen.records.jsonl

One entry point per benchmark so each Snakemake rule names its own script; the work is done by
eval_benchmark.py (see its --help for every option).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_benchmark  # noqa: E402


def main(argv=None) -> int:
    return eval_benchmark.main(["--benchmark", "degen", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
