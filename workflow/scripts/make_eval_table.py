"""Assemble the card's evaluation table from per-benchmark result JSONs.

Run as: python workflow/scripts/make_eval_table.py --result results/eval/*/*.json \
            --columns stage1,sftw2,sftwF,soup24,soupF2 --scale embedded \
            --out-tsv results/eval_table.tsv --out-md results/eval_table.md --out-png results/eval_table.png

Rows are the card's (MMLU A / B, GSM8K A / B, Instruction-following A / B and C, Gen degen,
Battle holdout margin acc), columns the runs in the given order (ablations may follow the
card's five). A cell with no result shows "—". With `--scale full` the card's published
values (`--card-values`, default resources/card_eval_table.tsv) appear beside ours with the
difference; at the embedded scale they are left out because a pico model is not comparable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lineage.evaluation.table import build, load_results, parse_card, plot, to_markdown, to_tsv  # noqa: E402
from lineage.io import atomic_path, write_text  # noqa: E402
from lineage.errors import run_cli  # noqa: E402

DEFAULT_CARD = Path(__file__).resolve().parents[2] / "resources" / "card_eval_table.tsv"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--result", nargs="+", action="extend", required=True, help="result JSONs (repeatable; each flag takes one or more)"
    )
    parser.add_argument("--columns", required=True, help="comma-separated run names, in column order")
    parser.add_argument("--scale", choices=["embedded", "full"], default="embedded")
    parser.add_argument("--card-values", default=str(DEFAULT_CARD), help="the card's table (TSV, verbatim)")
    parser.add_argument("--out-tsv", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-png", required=True)
    args = parser.parse_args(argv)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    if len(set(columns)) != len(columns):
        parser.error(f"--columns repeats a run: {columns}")
    with_card = args.scale == "full"
    card = parse_card(args.card_values) if with_card else None
    table = build(load_results(args.result), columns, card)
    write_text(args.out_tsv, to_tsv(table, columns, with_card))
    markdown = to_markdown(table, columns, with_card)
    write_text(args.out_md, markdown)
    with atomic_path(args.out_png) as tmp:
        plot(table, columns, with_card, tmp)
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
