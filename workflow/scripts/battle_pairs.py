"""Build (prompt, chosen, rejected) pairs for DPO and for the battle-margin evaluation.

A pair exists for every preferred answer whose losing answer is known (recorded, or recovered
from another battle with the same winner: the card's 135 recovered pairs). The holdout prompts'
pairs (29 in the card) are written separately for the margin evaluation, and left out of the
training pairs when --holdout-in-training is false.

Run as:
    python workflow/scripts/battle_pairs.py --preferred results/data/preferred.jsonl \
        --holdout results/data/holdout.jsonl --holdout-in-training true \
        --out results/data/pairs.jsonl --out-holdout results/data/holdout_pairs.jsonl
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import bool_arg, stage_main
from lineage.data.preferences import battle_pairs
from lineage.errors import run_cli
from lineage.io import load_jsonl, write_jsonl


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preferred", required=True, help="preferred answers, all prompts (JSONL)")
    parser.add_argument("--holdout", required=True, help="holdout prompts' preferred answers (JSONL)")
    parser.add_argument("--holdout-in-training", type=bool_arg, default=True, help="true|false (card: true)")
    parser.add_argument("--out", required=True, help="training pairs (JSONL)")
    parser.add_argument("--out-holdout", required=True, help="holdout pairs (JSONL)")


def run(args: argparse.Namespace) -> str:
    preferred = load_jsonl(args.preferred)
    holdout_prompts = {row["prompt_id"] for row in load_jsonl(args.holdout)}
    pairs, holdout_pairs = battle_pairs(preferred, holdout_prompts, args.holdout_in_training)
    write_jsonl(args.out, pairs)
    write_jsonl(args.out_holdout, holdout_pairs)
    without = sum(row["rejected"] is None for row in preferred)
    return (
        f"battle_pairs: {len(pairs)} training pairs, {len(holdout_pairs)} holdout pairs; "
        f"{without} preferred answers have no known loser"
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError,)))
