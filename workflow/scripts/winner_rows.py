"""Build the winner-SFT chat rows: every preferred answer (own and opponent wins), repeated.

Each preferred answer becomes the final assistant turn of its conversation, `--repeat` adjacent
copies (the trainer shuffles). With --holdout-in-training true (the default) the holdout
prompts are included, which is what the card's 140 x 40 = 5,600 rows imply; the data audit
flags that leak. --ties adds both answers of each tie battle (latest battle per prompt), the
card's ties-included variant (sftwT); tie rows are repeated like winner rows.

Run as:
    python workflow/scripts/winner_rows.py --train results/data/train.jsonl \
        --holdout results/data/holdout.jsonl --repeat 40 --holdout-in-training true \
        --out results/data/winners.jsonl [--ties results/data/battles_clean.jsonl]
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import bool_arg, positive_int, stage_main
from lineage.data.preferences import tie_rows, winner_rows
from lineage.errors import run_cli
from lineage.io import load_jsonl, write_jsonl


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--train", required=True, help="training prompts' preferred answers (JSONL)")
    parser.add_argument("--holdout", required=True, help="holdout prompts' preferred answers (JSONL)")
    parser.add_argument("--repeat", type=positive_int, default=40, help="copies of each row")
    parser.add_argument("--holdout-in-training", type=bool_arg, default=True, help="true|false (card: true)")
    parser.add_argument("--ties", default=None, help="cleaned battles; add both answers of each tie battle")
    parser.add_argument("--out", required=True, help="chat rows (JSONL)")


def run(args: argparse.Namespace) -> str:
    train, holdout = load_jsonl(args.train), load_jsonl(args.holdout)
    battles = load_jsonl(args.ties) if args.ties else []
    rows = winner_rows(train, holdout, args.repeat, args.holdout_in_training)
    excluded = set() if args.holdout_in_training else {row["prompt_id"] for row in holdout}
    ties = tie_rows(battles, args.repeat, excluded) if args.ties else []
    count = write_jsonl(args.out, rows + ties)
    prompts = len(train) + (len(holdout) if args.holdout_in_training else 0)
    return (
        f"winner_rows: {prompts} preferred answers x {args.repeat} = {len(rows)} rows"
        + (f" + {len(ties)} tie rows" if args.ties else "")
        + f" ({count} written; holdout prompts {'included' if args.holdout_in_training else 'excluded'})"
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError,)))
