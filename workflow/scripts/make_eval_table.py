"""Assemble the card's evaluation table from per-benchmark result JSONs.

Run as: python workflow/scripts/make_eval_table.py --result results/eval/*/*.json \
            --columns stage1,sftw2,sftwF,soup24,soupF2 --scale embedded \
            --out-tsv results/eval_table.tsv --out-md results/eval_table.md --out-png results/eval_table.png

Rows are the card's (MMLU A / B, GSM8K A / B, Instruction-following A / B and C, Gen degen,
Battle holdout margin acc), columns the runs in the given order (ablations may follow the
card's five). A cell with no result shows "—". With `--scale full` the card's published
values (`--card-values`, default resources/card_eval_table.tsv) appear beside ours with the
difference; at the embedded scale they are left out because a pico model is not comparable.

Each cell's 95% interval comes from the per-item records beside its result (<part>.records.jsonl);
`--reference sftw2=stage1` compares a column item by item with another run (its parents, the
published model), in the Markdown and in --out-paired (TSV).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lineage.errors import run_cli  # noqa: E402
from lineage.evaluation.table import (  # noqa: E402
    build,
    load_results_and_records,
    parse_card,
    plot,
    to_markdown,
    to_paired_tsv,
    to_tsv,
)
from lineage.io import atomic_path, write_text  # noqa: E402

DEFAULT_CARD = Path(__file__).resolve().parents[2] / "resources" / "card_eval_table.tsv"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--result",
        nargs="+",
        action="extend",
        required=True,
        help="result JSONs (repeatable; each flag takes one or more)",
    )
    parser.add_argument("--columns", required=True, help="comma-separated run names, in column order")
    parser.add_argument(
        "--scale",
        default="embedded",
        help="the scale the results come from; the card's values stand beside the full scale's only (its benchmarks "
        "are the card's; the other scales run sample items)",
    )
    parser.add_argument("--card-values", default=str(DEFAULT_CARD), help="the card's table (TSV, verbatim)")
    parser.add_argument("--out-tsv", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-png", required=True)
    parser.add_argument("--out-paired", default=None, help="the paired differences as TSV")
    parser.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="RUN=REF[,REF...]",
        help="compare RUN's cells item by item with these runs' (repeatable)",
    )
    args = parser.parse_args(argv)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    if len(set(columns)) != len(columns):
        parser.error(f"--columns repeats a run: {columns}")
    references = {}
    for text in args.reference:
        run, sep, refs = text.partition("=")
        if not sep or not run or not refs:
            parser.error(f"--reference {text!r}: expected RUN=REF[,REF...]")
        references[run] = [r for r in refs.split(",") if r and r != run]
    with_card = args.scale == "full"
    card = parse_card(args.card_values) if with_card else None
    results, records = load_results_and_records(args.result)
    table = build(results, columns, card, records, references)
    write_text(args.out_tsv, to_tsv(table, columns, with_card))
    if args.out_paired:
        write_text(args.out_paired, to_paired_tsv(table, columns))
    markdown = to_markdown(table, columns, with_card)
    write_text(args.out_md, markdown)
    with atomic_path(args.out_png) as tmp:
        plot(table, columns, with_card, tmp)
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
