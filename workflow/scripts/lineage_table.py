"""Tabulate the lineage of built checkpoints from their lineage.json files, for the audit.

One row per checkpoint: its parents (and soup weights), the initialisation it descends from,
the recipe, the data it saw (with checksums) and the rows it left out (too long for max_length,
by file and row), the code and config it was built with, the Slurm job and the wall time.
Written as TSV for tools and as a self-contained HTML page for people.

Run as:
    python workflow/scripts/lineage_table.py --model results/embedded/models/sftwF \
        --model results/embedded/models/soupF2 --out-tsv lineage.tsv --out-html lineage.html
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path

import pandas as pd

from lineage.checkpoints.directory import read_lineage
from lineage.errors import run_cli
from lineage.io import write_text

RECIPE_KEYS = ("lr", "schedule", "steps", "global_batch_rows", "max_length", "beta", "precision")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True, help="checkpoint directory (repeatable)")
    parser.add_argument("--out-tsv", required=True)
    parser.add_argument("--out-html", required=True)
    return parser.parse_args(argv)


def lineage_row(directory: Path) -> dict:
    """Flatten one lineage record into the table's columns."""
    record = read_lineage(directory)
    parents = [p["run"] for p in record.get("parents", [])]
    weights = record.get("weights") or record.get("recipe", {}).get("weights")
    if weights:
        parents = [f"{run} x{float(w):g}" for run, w in zip(parents, weights)]
    recipe = record.get("recipe", {})
    files = record.get("files", {})
    root = record.get("root", {})
    return {
        "run": record.get("run", directory.name),
        "kind": record.get("kind", "?"),
        "parents": ", ".join(parents) or "-",
        "root": f"{root.get('run', '?')}@{str(root.get('fingerprint', ''))[:12]}",
        "recipe": ", ".join(f"{k}={as_written(recipe[k])}" for k in RECIPE_KEYS if k in recipe) or "-",
        "data": ", ".join(
            f"{Path(d.get('path', '?')).name} ({d.get('rows', '?')} rows, {str(d.get('sha256', ''))[:12]})"
            for d in record.get("data", [])
        )
        or "-",
        "rows_left_out": left_out(record),
        "code_version": str(record.get("code_version", "?"))[:12],
        "config_hash": str(record.get("config_hash", ""))[:12],
        "slurm_job": record.get("slurm_job_id") or "-",
        "wall_time_s": record.get("wall_time_s"),
        "files": len(files),
        "path": str(directory),
    }


def as_written(value):
    """A number as people write it: a learning rate scaled by 100 and back is 5e-05, not 4.9999999999999996e-05."""
    return f"{value:.6g}" if isinstance(value, float) else value


def left_out(record: dict) -> str:
    """The training rows a run did not train on, with their reason and where they came from: lines its files
    could not read, SFT rows dropped by the screen or for length, DPO pairs dropped."""
    unreadable = [(d["path"], u) for d in record.get("data", []) for u in d.get("unreadable_rows", [])]
    stats = record.get("data_stats") or {}
    dropped = stats.get("dropped") or {}
    pairs = record.get("pairs_dropped") or {}
    total = sum(d.get("unreadable", 0) for d in record.get("data", [])) + sum(dropped.values()) + sum(pairs.values())
    if not total:
        return "-"
    named = [f"{path}:{u['row']} ({u['field']}: {u['reason']})" for path, u in unreadable]
    named += [f"{d['where']} x{d['rows']} ({d['reason']})" for d in stats.get("dropped_rows", [])]
    named += [f"{reason} x{n}" if n > 1 else reason for reason, n in pairs.items()]
    return f"{total} rows: " + ("; ".join(named) or ", ".join(f"{r} {n}" for r, n in dropped.items()))


def to_html(table: pd.DataFrame) -> str:
    """A small self-contained page (inline CSS) for the Snakemake report."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in table.itertuples(index=False)
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Lineage of the built checkpoints</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse;font-size:13px}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}th{{background:#f0f0f0}}</style>
</head><body><h1>Lineage of the built checkpoints</h1>
<p>One row per checkpoint, read from its <code>lineage.json</code>. Soups list their parents with weights;
every run traces to the root it was initialised from.</p>
<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></body></html>
"""


def main(args) -> None:
    table = pd.DataFrame([lineage_row(Path(m)) for m in args.model])
    write_text(args.out_tsv, table.to_csv(sep="\t", index=False))
    write_text(args.out_html, to_html(table))
    print(f"lineage table: {len(table)} checkpoints -> {args.out_tsv}, {args.out_html}")


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(parse_args())))
