"""The card's evaluation table: its rows, our runs as columns, and the card's published values.

Rows (from lineage/evaluation/registry.py) and their formatting follow the card: MMLU, GSM8K and instruction following in percent
with one decimal, "A / B" in one cell; Gen degen and the battle margin as fractions with three
decimals. `resources/card_eval_table.tsv` is the card's table transcribed verbatim; its
column headers are mapped to run names here.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineage.evaluation.registry import BENCHMARKS
from lineage.io import DataError

MISSING = "—"


@dataclass(frozen=True)
class Row:
    label: str  # our row label
    card_label: str  # the row's first cell in the card
    benchmark: str
    parts: tuple[str | None, ...]
    percent: bool


# The card's rows, in its order, from the benchmark registry.
ROWS = tuple(Row(r.label, r.card_label, b.name, r.parts, r.percent) for b in BENCHMARKS.values() for r in b.rows)
WHOLE_SET = {r.benchmark for r in ROWS if r.parts == (None,)}
CARD_COLUMNS = {
    "Stage-1 dpo4/124": "stage1",
    "sftw2": "sftw2",
    "sftwF (30 steps)": "sftwF",
    "soup24": "soup24",
    "soupF2 (this model)": "soupF2",
}

Key = tuple[str, str, str | None]  # (run, benchmark, part)


def load_results(paths: Iterable[str | os.PathLike]) -> dict[Key, dict[str, Any]]:
    """Result JSONs keyed by (run, benchmark, part); a second result for the same cell is an error."""
    results: dict[Key, dict[str, Any]] = {}
    origin: dict[Key, str] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise DataError(f"{path}: unreadable result JSON ({err})") from None
        for field in ("benchmark", "run", "score"):
            if data.get(field) is None:
                raise DataError(f"{path}: result has no {field!r}")
        part = data.get("part")
        if data["benchmark"] in WHOLE_SET and part == "A":
            part = None  # degen and margin are one item set; a rule may still call it part A
        key = (str(data["run"]), str(data["benchmark"]), part)
        if key in results:
            raise DataError(f"{path}: a second result for run {key[0]} {key[1]} part {key[2]} (first: {origin[key]})")
        results[key], origin[key] = data, str(path)
    return results


def parse_card(path: str | os.PathLike) -> dict[tuple[str, str], list[float | None]]:
    """(card row label, run) -> values per part, from the verbatim card table ('—' is missing)."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    if not rows:
        raise DataError(f"{path}: empty card table")
    header = rows[0]
    unknown = [h for h in header[1:] if h not in CARD_COLUMNS]
    if unknown:
        raise DataError(f"{path}: unknown column(s) {unknown}; expected {list(CARD_COLUMNS)}")
    card: dict[tuple[str, str], list[float | None]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise DataError(f"{path}:{line}: {len(row)} cells, header has {len(header)}")
        for column, cell in zip(header[1:], row[1:]):
            try:
                values = [None if v.strip() == MISSING else float(v) for v in cell.split(" / ")]
            except ValueError:
                raise DataError(f"{path}:{line}: column {column!r}: cannot read {cell!r}") from None
            card[(row[0], CARD_COLUMNS[column])] = values
    return card


def display_value(row: Row, result: Mapping[str, Any] | None) -> float | None:
    if result is None:
        return None
    return 100.0 * float(result["score"]) if row.percent else float(result["score"])


def fmt(row: Row, value: float | None, signed: bool = False) -> str:
    if value is None:
        return MISSING
    spec = ("+" if signed else "") + (".1f" if row.percent else ".3f")
    return format(round(value, 6) + 0.0, spec)  # + 0.0 turns a rounding -0.0 into 0.0


@dataclass
class Cell:
    ours: list[float | None]
    card: list[float | None] | None
    n: list[int | None]

    def diff(self) -> list[float | None]:
        if self.card is None:
            return [None] * len(self.ours)
        return [o - c if o is not None and c is not None else None for o, c in zip(self.ours, self.card)]


def build(
    results: Mapping[Key, Mapping[str, Any]],
    columns: Sequence[str],
    card: Mapping[tuple[str, str], list[float | None]] | None = None,
) -> dict[tuple[str, str], Cell]:
    """(row label, run) -> Cell; every result must belong to a listed column and a known row."""
    known = {(r.benchmark, p) for r in ROWS for p in r.parts}
    for run, benchmark, part in results:
        if run not in columns:
            raise DataError(f"result for run {run!r} ({benchmark} part {part}) but --columns lists {list(columns)}")
        if (benchmark, part) not in known:
            raise DataError(f"result {benchmark} part {part} of run {run} has no row in the card's table")
    table = {}
    for row in ROWS:
        for run in columns:
            found = [results.get((run, row.benchmark, p)) for p in row.parts]
            table[(row.label, run)] = Cell(
                ours=[display_value(row, r) for r in found],
                card=None if card is None else card.get((row.card_label, run)),
                n=[r.get("n") if r else None for r in found],
            )
    return table


def cell_text(row: Row, cell: Cell, with_card: bool) -> str:
    text = " / ".join(fmt(row, v) for v in cell.ours)
    if with_card and cell.card is not None and any(v is not None for v in cell.card):
        card = " / ".join(fmt(row, v) for v in cell.card)
        diffs = cell.diff()
        if any(d is not None for d in diffs):
            text += f" (card {card}; Δ {' / '.join(fmt(row, d, signed=True) for d in diffs)})"
        else:
            text += f" (card {card})"
    return text


def row_label(row: Row, table: Mapping[tuple[str, str], Cell], columns: Sequence[str]) -> str:
    """The label with the item counts when every evaluated column used the same ones."""
    counts = {tuple(table[(row.label, run)].n) for run in columns if any(table[(row.label, run)].n)}
    if len(counts) == 1:
        (n,) = counts
        return f"{row.label} (n {' / '.join(str(x) if x is not None else MISSING for x in n)})"
    return row.label


def to_tsv(table, columns: Sequence[str], with_card: bool) -> str:
    """Wide like the card's TSV; at full scale also `card:<run>` and `diff:<run>` columns."""
    header = ["metric", *columns]
    if with_card:
        header += [f"card:{c}" for c in columns] + [f"diff:{c}" for c in columns]
    lines = ["\t".join(header)]
    for row in ROWS:
        cells = [table[(row.label, c)] for c in columns]
        out = [row.label] + [" / ".join(fmt(row, v) for v in cell.ours) for cell in cells]
        if with_card:
            out += [" / ".join(fmt(row, v) for v in cell.card) if cell.card else MISSING for cell in cells]
            out += [
                " / ".join(fmt(row, d, signed=True) for d in cell.diff()) if cell.card else MISSING for cell in cells
            ]
        lines.append("\t".join(out))
    return "\n".join(lines) + "\n"


def to_markdown(table, columns: Sequence[str], with_card: bool) -> str:
    lines = ["| metric | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for row in ROWS:
        cells = [cell_text(row, table[(row.label, c)], with_card) for c in columns]
        lines.append(f"| {row_label(row, table, columns)} | " + " | ".join(cells) + " |")
    note = (
        "MMLU, GSM8K and instruction following in percent; Gen degen (lower is better) and battle margin as fractions."
    )
    if with_card:
        note += " In brackets: the card's published value and our difference (ours - card)."
    return "\n".join(lines) + "\n\n" + note + "\n"


def plot(table, columns: Sequence[str], with_card: bool, path: str | os.PathLike) -> None:
    """A grouped bar chart per metric (one panel per metric and part): runs on x, ours beside the card's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(row, i, p) for row in ROWS for i, p in enumerate(row.parts)]
    ncols = 3
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    width = 0.4 if with_card else 0.7
    for ax, (row, i, part) in zip(axes.flat, panels):
        xs = range(len(columns))
        ours = [table[(row.label, c)].ours[i] for c in columns]
        offset = -width / 2 if with_card else 0.0
        ax.bar(
            [x + offset for x in xs], [v if v is not None else 0 for v in ours], width, label="ours", color="#4C72B0"
        )
        for x, v in zip(xs, ours):
            ax.text(x + offset, v if v is not None else 0, fmt(row, v), ha="center", va="bottom", fontsize=7)
        if with_card:
            card = [(table[(row.label, c)].card or [None] * len(row.parts))[i] for c in columns]
            ax.bar(
                [x + width / 2 for x in xs],
                [v if v is not None else 0 for v in card],
                width,
                label="card",
                color="#DD8452",
            )
        title = row.label.replace("A / B", part) if len(row.parts) > 1 else row.label
        ax.set_title(title, fontsize=10)
        ax.set_xticks(list(xs), columns, rotation=30, fontsize=8)
        ax.set_ylabel("%" if row.percent else "score", fontsize=8)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
