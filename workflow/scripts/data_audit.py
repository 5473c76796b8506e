"""Audit the battle data stages: counts against the card, holdout leakage, cleaning, quarantine.

Writes the same audit three ways: JSON (for tests and tools), Markdown (for the repository)
and a self-contained HTML page (for Snakemake's report). It reports; it does not fail on a
count that differs from the card, because at the embedded scale some counts differ by design.

Run as:
    python workflow/scripts/data_audit.py --raw-export resources/sample/battles.jsonl \
        --battles results/data/battles.jsonl --clean-stats results/data/clean_stats.json \
        --preferred results/data/preferred.jsonl --holdout results/data/holdout.jsonl \
        --winners results/data/winners.jsonl --pairs results/data/pairs.jsonl \
        --holdout-pairs results/data/holdout_pairs.jsonl --general-mix results/data/general_mix.jsonl \
        --quarantine results/data/quarantine_read.jsonl --quarantine results/data/quarantine_dedup.jsonl \
        --holdout-in-training true --card-counts '{"battles": 236, "preferred": 140}' \
        --out-json results/audit/data_audit.json --out-md results/audit/data_audit.md \
        --out-html results/audit/data_audit.html
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import bool_arg, stage_main
from lineage.data.audit import build_audit, load_card_counts
from lineage.data.audit_report import render_html, render_markdown
from lineage.errors import run_cli
from lineage.io import write_json, write_text

INPUTS = {
    "raw_export": "the battle export as read (JSONL)",
    "battles": "validated battles from read_battles.py",
    "clean_stats": "citation-cleaning stats from clean_battles.py",
    "preferred": "preferred answers from dedup_battles.py",
    "holdout": "holdout prompts from split_holdout.py",
    "winners": "winner rows from winner_rows.py",
    "pairs": "training pairs from battle_pairs.py",
    "holdout_pairs": "holdout pairs from battle_pairs.py",
    "general_mix": "general-mix rows from sample_general_mix.py",
}


def arguments(parser: argparse.ArgumentParser) -> None:
    for name, text in INPUTS.items():
        parser.add_argument("--" + name.replace("_", "-"), dest=name, required=True, help=text)
    parser.add_argument("--quarantine", action="append", default=[], help="a stage's quarantine JSONL (repeatable)")
    parser.add_argument("--set-aside", default=None, help="rows set aside by rule (arena battles without our model)")
    parser.add_argument("--holdout-in-training", type=bool_arg, default=True, help="true|false")
    parser.add_argument("--card-counts", required=True, help="the card's counts: a JSON object or a JSON file")
    parser.add_argument("--out-json", required=True, help="the audit as JSON")
    parser.add_argument("--out-md", required=True, help="the audit as Markdown")
    parser.add_argument("--out-html", required=True, help="the audit as a self-contained HTML page")


def run(args: argparse.Namespace) -> str:
    paths = {name: getattr(args, name) for name in INPUTS}
    paths["quarantine"] = args.quarantine
    paths["set_aside"] = args.set_aside
    card = load_card_counts(args.card_counts)
    audit = build_audit(paths, card, args.holdout_in_training)
    write_json(args.out_json, audit)
    write_text(args.out_md, render_markdown(audit))
    write_text(args.out_html, render_html(audit))
    mismatched = [c["key"] for c in audit["counts"] if c["match"] == "NO"]
    failed = [c["check"] for c in audit["checks"] if not c["ok"]]
    return (
        f"data_audit: {sum(c['match'] == 'yes' for c in audit['counts'])} counts match the card"
        + (f", {len(mismatched)} differ ({', '.join(mismatched)})" if mismatched else "")
        + f"; holdout leakage: {audit['leakage']['status']}; {len(audit['quarantine'])} quarantined rows"
        + (f"; FAILED checks: {'; '.join(failed)}" if failed else "")
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError, KeyError, ValueError)))
