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

from lineage.cli import script_parser
from lineage.data.dedup import dedup_preferred
from lineage.errors import report, run_cli
from lineage.io import DataError, read_jsonl, write_jsonl


def build_parser() -> argparse.ArgumentParser:
    parser = script_parser(__doc__)
    parser.add_argument("--in", dest="inp", required=True, help="cleaned battles (JSONL)")
    parser.add_argument("--out", required=True, help="one preferred answer per prompt (JSONL)")
    parser.add_argument("--quarantine", required=True, help="superseded battles (JSONL)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        preferred, superseded = dedup_preferred(list(read_jsonl(args.inp)), file=args.inp)
    except (DataError, OSError, KeyError) as err:
        return report("dedup_battles", err, note=f" ({args.inp}; run read_battles.py first: it validates every field)")
    write_jsonl(args.out, preferred)
    write_jsonl(args.quarantine, superseded)
    own = sum(row["preferred_side"] == "own" for row in preferred)
    with_loser = sum(row["rejected"] is not None for row in preferred)
    print(
        f"dedup_battles: {len(preferred)} preferred answers ({own} own, {len(preferred) - own} other), "
        f"{len(superseded)} superseded, {with_loser} with a rejected answer"
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
