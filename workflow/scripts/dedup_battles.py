"""Reduce the decisive battles to one preferred answer per prompt, recording every other one.

The policy (most wins, then latest, then larger battle_id; loser recovered from a battle with
the same preferred text) is documented in lineage/data/dedup.py. Superseded battles go to the
quarantine file with the battle they were superseded by, so the audit can show them.

Run as:
    python workflow/scripts/dedup_battles.py --in results/data/battles_clean.jsonl \
        --out results/data/preferred.jsonl --quarantine results/data/quarantine_dedup.jsonl
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import stage_main
from lineage.data.dedup import dedup_preferred
from lineage.errors import run_cli
from lineage.io import DataError, read_jsonl, write_jsonl


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--in", dest="inp", required=True, help="cleaned battles (JSONL)")
    parser.add_argument("--out", required=True, help="one preferred answer per prompt (JSONL)")
    parser.add_argument("--quarantine", required=True, help="superseded battles (JSONL)")


def run(args: argparse.Namespace) -> str:
    try:
        preferred, superseded = dedup_preferred(list(read_jsonl(args.inp)), file=args.inp)
    except KeyError as err:
        raise DataError(
            f"{args.inp}: a row has no field {err}; run read_battles.py first: it validates every field"
        ) from None
    write_jsonl(args.out, preferred)
    write_jsonl(args.quarantine, superseded)
    own = sum(row["preferred_side"] == "own" for row in preferred)
    with_loser = sum(row["rejected"] is not None for row in preferred)
    return (
        f"dedup_battles: {len(preferred)} preferred answers ({own} own, {len(preferred) - own} other), "
        f"{len(superseded)} superseded, {with_loser} with a rejected answer"
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError,)))
