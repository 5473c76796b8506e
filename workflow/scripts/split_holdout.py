"""Split the preferred answers into training and holdout prompts: holdout = prompt_id % modulus == 0.

The split is by prompt, not by battle, so a prompt is never on both sides. The holdout pairs
are the card's battle-margin evaluation set (every fifth prompt, 29 pairs).

Run as:
    python workflow/scripts/split_holdout.py --in results/data/preferred.jsonl --modulus 5 \
        --out-train results/data/train.jsonl --out-holdout results/data/holdout.jsonl
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import positive_int, stage_main
from lineage.data.preferences import split_holdout
from lineage.errors import run_cli
from lineage.io import load_jsonl, write_jsonl


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--in", dest="inp", required=True, help="preferred answers (JSONL)")
    parser.add_argument("--modulus", type=positive_int, default=5, help="holdout = prompt_id %% modulus == 0")
    parser.add_argument("--out-train", required=True, help="training prompts (JSONL)")
    parser.add_argument("--out-holdout", required=True, help="holdout prompts (JSONL)")


def run(args: argparse.Namespace) -> str:
    rows = load_jsonl(args.inp)
    train, holdout = split_holdout(rows, args.modulus)
    write_jsonl(args.out_train, train)
    write_jsonl(args.out_holdout, holdout)
    return (
        f"split_holdout: {len(rows)} prompts -> {len(train)} train, {len(holdout)} holdout "
        f"(prompt_id % {args.modulus} == 0)"
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError,)))
