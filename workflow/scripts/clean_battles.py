"""Strip citation artefacts (markers, source links, trailing Sources sections) from every answer.

Both sides are cleaned, so preferred answers, rejected answers and tie answers all reach
training without retrieval markers the model could learn to invent. The policy and the
styles handled are documented in lineage/data/citations.py; the stats feed the data audit.

Run as:
    python workflow/scripts/clean_battles.py --in results/data/battles.jsonl \
        --out results/data/battles_clean.jsonl --stats results/data/clean_stats.json
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import stage_main
from lineage.data.citations import clean_battles
from lineage.errors import run_cli
from lineage.io import load_jsonl, write_json, write_jsonl


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--in", dest="inp", required=True, help="validated battles (JSONL)")
    parser.add_argument("--out", required=True, help="battles with cleaned answers (JSONL)")
    parser.add_argument("--stats", required=True, help="removal counts per marker style (JSON)")
    parser.add_argument("--quarantine", default=None, help="battles whose needed answer was only citations (JSONL)")


def run(args: argparse.Namespace) -> str:
    rows = load_jsonl(args.inp)
    cleaned, stats, quarantine = clean_battles(rows, file=args.inp)
    write_jsonl(args.out, cleaned)
    write_json(args.stats, stats)
    if args.quarantine:
        write_jsonl(args.quarantine, quarantine)
    markers = ", ".join(f"{style} {n}" for style, n in stats["markers"].items() if n)
    return (
        f"clean_battles: {stats['answers_changed']} of {stats['answers']} answers changed in {stats['battles']} "
        f"battles; {stats['sections_dropped']} sources sections dropped ({markers or 'no markers'}); "
        f"{len(quarantine)} battles quarantined (a needed answer was only citations)"
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError,)))
