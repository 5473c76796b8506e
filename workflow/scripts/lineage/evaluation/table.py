"""The card's evaluation table: its rows, our runs as columns, and the card's published values.

Rows (declared by the modules of lineage/evaluation/benchmarks) and their formatting follow the card: MMLU, GSM8K and instruction following in percent
with one decimal, "A / B" in one cell; Gen degen and the battle margin as fractions with three
decimals; then the battle margins themselves, which move where the accuracies sit at the floor.
`resources/card_eval_table.tsv` is the card's table transcribed verbatim; its column headers are
mapped to run names here.

Each cell carries its n and 95% interval, computed from the per-item records beside its result
(lineage/evaluation/stats.py); each column is compared, item by item, with its references (its
parents in the lineage and the published model): the paired difference, its interval and an
exact test, marked when within noise.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage.evaluation import stats
from lineage.evaluation.benchmark import verdict
from lineage.evaluation.benchmarks import BENCHMARKS
from lineage.io import DataError

MISSING = "—"


@dataclass(frozen=True)
class Row:
    label: str  # our row label
    card_label: str | None  # the row's first cell in the card (None: not a row of the card)
    benchmark: str
    parts: tuple[str | None, ...]
    percent: bool
    metric: str = "score"  # the result JSON's key
    value: Callable[[Mapping[str, Any]], float] = verdict  # one item's record's part: the metric is its mean

    @property
    def scale(self) -> float:
        return 100.0 if self.percent else 1.0


# The card's rows, in its order, from the benchmark registry.
ROWS = tuple(
    Row(r.label, r.card_label, b.name, r.parts, r.percent, r.metric, r.value)
    for b in BENCHMARKS.values()
    for r in b.rows
)
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
    return load_results_and_records(paths)[0]


def load_results_and_records(
    paths: Iterable[str | os.PathLike],
) -> tuple[dict[Key, dict[str, Any]], dict[Key, list[dict[str, Any]]]]:
    """The results (as load_results) and, keyed alike, the per-item records beside each result that has them."""
    results: dict[Key, dict[str, Any]] = {}
    records: dict[Key, list[dict[str, Any]]] = {}
    origin: dict[Key, str] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise DataError(f"{path}: unreadable result JSON ({err})") from None
        for key in ("benchmark", "run", "score"):
            if data.get(key) is None:
                raise DataError(f"{path}: result has no {key!r}")
        part = data.get("part")
        if data["benchmark"] in WHOLE_SET and part == "A":
            part = None  # degen and margin are one item set; a rule may still call it part A
        key = (str(data["run"]), str(data["benchmark"]), part)
        if key in results:
            raise DataError(f"{path}: a second result for run {key[0]} {key[1]} part {key[2]} (first: {origin[key]})")
        results[key], origin[key] = data, str(path)
        beside = records_path(path)
        if beside.is_file():
            try:
                records[key] = [json.loads(line) for line in beside.read_text().splitlines() if line.strip()]
            except json.JSONDecodeError as err:
                raise DataError(f"{beside}: unreadable record line ({err})") from None
    return results, records


def records_path(result: str | os.PathLike) -> Path:
    """<part>.records.jsonl beside <part>.json (what eval_model.py writes)."""
    path = Path(result)
    return path.with_name(path.name.removesuffix(".json") + ".records.jsonl")


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
    if result is None or result.get(row.metric) is None:
        return None
    return row.scale * float(result[row.metric])


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
    estimates: list[stats.Estimate | None] = field(default_factory=list)  # in display units
    # reference run -> the paired comparison per part (None where they share no item)
    paired: dict[str, list[stats.Paired | None]] = field(default_factory=dict)

    def diff(self) -> list[float | None]:
        if self.card is None:
            return [None] * len(self.ours)
        return [o - c if o is not None and c is not None else None for o, c in zip(self.ours, self.card)]


def item_values(row: Row, records: Sequence[Mapping[str, Any]] | None) -> dict[str, float] | None:
    """Item id -> the row's value for that item (0/1 for a verdict)."""
    if records is None:
        return None
    return {str(r["id"]): row.value(r) for r in records}


def compare(ours: Mapping[str, float] | None, reference: Mapping[str, float] | None) -> stats.Paired | None:
    """The paired comparison on the items both were evaluated on (None when there are none)."""
    if ours is None or reference is None:
        return None
    shared = sorted(set(ours) & set(reference))
    return stats.paired([ours[i] for i in shared], [reference[i] for i in shared]) if shared else None


def build(
    results: Mapping[Key, Mapping[str, Any]],
    columns: Sequence[str],
    card: Mapping[tuple[str, str], list[float | None]] | None = None,
    records: Mapping[Key, Sequence[Mapping[str, Any]]] | None = None,
    references: Mapping[str, Sequence[str]] | None = None,
) -> dict[tuple[str, str], Cell]:
    """(row label, run) -> Cell; every result must belong to a listed column (or a column's reference)
    and a known row. `references`: run -> the runs it is compared with (its parents, the published model)."""
    records, references = records or {}, references or {}
    allowed = set(columns) | {ref for run in columns for ref in references.get(run, ())}
    known = {(r.benchmark, p) for r in ROWS for p in r.parts}
    for run, benchmark, part in results:
        if run not in allowed:
            raise DataError(f"result for run {run!r} ({benchmark} part {part}) but --columns lists {list(columns)}")
        if (benchmark, part) not in known:
            raise DataError(f"result {benchmark} part {part} of run {run} has no row in the card's table")
    table = {}
    for row in ROWS:
        for run in columns:
            found = [results.get((run, row.benchmark, p)) for p in row.parts]
            values = [item_values(row, records.get((run, row.benchmark, p))) for p in row.parts]
            paired = {}
            for ref in references.get(run, ()):
                theirs = [item_values(row, records.get((ref, row.benchmark, p))) for p in row.parts]
                comparisons = [compare(mine, other) for mine, other in zip(values, theirs)]
                comparisons = [c.scaled(row.scale) if c else None for c in comparisons]
                if any(comparisons):
                    paired[ref] = comparisons
            table[(row.label, run)] = Cell(
                ours=[display_value(row, r) for r in found],
                card=None if card is None or row.card_label is None else card.get((row.card_label, run)),
                n=[r.get("n") if r else None for r in found],
                estimates=[stats.estimate(list(v.values())).scaled(row.scale) if v else None for v in values],
                paired=paired,
            )
    return table


SAME_VALUES = "†"  # an interval of no width: every item has the same value (the note below the table says so)


def with_interval(row: Row, value: float | None, estimate: stats.Estimate | None) -> str:
    if value is None or estimate is None:
        return fmt(row, value)
    flat = SAME_VALUES if math.isclose(estimate.low, estimate.high, rel_tol=1e-9, abs_tol=1e-12) else ""
    return f"{fmt(row, value)} [{fmt(row, estimate.low)}, {fmt(row, estimate.high)}]{flat}"


def cell_text(row: Row, cell: Cell, with_card: bool) -> str:
    estimates = cell.estimates or [None] * len(cell.ours)
    text = " / ".join(with_interval(row, v, e) for v, e in zip(cell.ours, estimates))
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


def interval_text(row: Row, cell: Cell) -> str:
    return " / ".join(
        f"{fmt(row, e.low)}..{fmt(row, e.high)}" if e else MISSING for e in (cell.estimates or [None] * len(cell.ours))
    )


def to_tsv(table, columns: Sequence[str], with_card: bool) -> str:
    """Wide like the card's TSV, with `n:<run>` and `ci95:<run>` columns; at full scale also
    `card:<run>` and `diff:<run>` columns."""
    header = ["metric", *columns, *(f"n:{c}" for c in columns), *(f"ci95:{c}" for c in columns)]
    if with_card:
        header += [f"card:{c}" for c in columns] + [f"diff:{c}" for c in columns]
    lines = ["\t".join(header)]
    for row in ROWS:
        cells = [table[(row.label, c)] for c in columns]
        out = [row.label] + [" / ".join(fmt(row, v) for v in cell.ours) for cell in cells]
        out += [" / ".join(str(n) if n is not None else MISSING for n in cell.n) for cell in cells]
        out += [interval_text(row, cell) for cell in cells]
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
        "MMLU, GSM8K and instruction following in percent; Gen degen (lower is better) and battle margin as fractions;"
        " the margins as mean log-prob differences (preferred - other answer). In square brackets: the 95% interval"
        " (Wilson for accuracies, bootstrap for means)."
    )
    if SAME_VALUES in "".join(lines):
        note += (
            f" {SAME_VALUES} Every item has the same value, so the bootstrap resamples only that value: an interval of"
            " no width, which says nothing about the spread of new items."
        )
    if with_card:
        note += " In round brackets: the card's published value and our difference (ours - card)."
    text = "\n".join(lines) + "\n\n" + note + "\n"
    paired = paired_markdown(table, columns)
    return text + ("\n" + paired if paired else "")


def paired_rows(table, columns: Sequence[str]) -> list[dict[str, Any]]:
    """One line per (column, reference, row, part): the paired difference and its test."""
    out = []
    for run in columns:
        for row in ROWS:
            cell = table[(row.label, run)]
            for ref, comparisons in cell.paired.items():
                for part, result in zip(row.parts, comparisons):
                    if result is not None:
                        out.append({"column": run, "reference": ref, "row": row, "part": part, "paired": result})
    return out


def paired_markdown(table, columns: Sequence[str]) -> str:
    lines = [
        "| column | vs | metric | difference [95% interval] | shared n | changed | test | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in paired_rows(table, columns):
        row, result = entry["row"], entry["paired"]
        metric = row.label.replace("A / B", entry["part"]) if len(row.parts) > 1 else row.label
        mark = "within noise" if result.within_noise else "**differs**"
        lines.append(
            f"| {entry['column']} | {entry['reference']} | {metric} | {fmt(row, result.diff, signed=True)} "
            f"[{fmt(row, result.low, signed=True)}, {fmt(row, result.high, signed=True)}] | {result.n} | "
            f"{result.discordant} | {result.test_text} | {mark} |"
        )
    if len(lines) == 2:
        return ""
    return (
        "Paired differences on the shared items (column - reference; the references are each column's parents "
        "in the lineage and the published model). Tests: McNemar's exact test for accuracies (changed = items whose "
        "verdict flipped), a sign-flip permutation test for means, exact up to "
        f"{stats.EXACT_FLIPS} changed items, else (k + 1) / (n + 1) of {stats.PERMUTATIONS:,} seeded draws; "
        f"within noise = p >= {stats.ALPHA}.\n\n" + "\n".join(lines) + "\n"
    )


def to_paired_tsv(table, columns: Sequence[str]) -> str:
    header = [
        "column",
        "reference",
        "metric",
        "part",
        "diff",
        "ci95_low",
        "ci95_high",
        "shared_n",
        "changed",
        "test",
        "p",
        "draws",
        "within_noise",
    ]
    lines = ["\t".join(header)]
    for entry in paired_rows(table, columns):
        row, result = entry["row"], entry["paired"]
        lines.append(
            "\t".join(
                [
                    entry["column"],
                    entry["reference"],
                    row.label,
                    entry["part"] or "",
                    fmt(row, result.diff),
                    fmt(row, result.low),
                    fmt(row, result.high),
                    str(result.n),
                    str(result.discordant),
                    result.test,
                    f"{result.p:.4g}",
                    str(result.draws),
                    str(result.within_noise).lower(),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def plot(table, columns: Sequence[str], with_card: bool, path: str | os.PathLike) -> None:
    """Small multiples, one panel per metric and part: the runs down the side (readable with every
    ablation column), each value with its 95% interval and n; the card's value beside it at full scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(row, i, p) for row in ROWS for i, p in enumerate(row.parts)]
    ncols = 3
    nrows = -(-len(panels) // ncols)
    height = max(2.6, 0.75 + 0.24 * len(columns))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, height * nrows), squeeze=False)
    ys = list(range(len(columns)))[::-1]  # the first column on top
    for ax, (row, i, part) in zip(axes.flat, panels):
        cells = [table[(row.label, c)] for c in columns]
        for y, cell in zip(ys, cells):
            value = cell.ours[i]
            estimate = (cell.estimates or [None] * len(cell.ours))[i]
            if value is None:
                continue
            if estimate is not None:
                below, above = max(0.0, value - estimate.low), max(0.0, estimate.high - value)  # float noise
                ax.errorbar(
                    value,
                    y,
                    xerr=[[below], [above]],
                    fmt="o",
                    color="#4C72B0",
                    ecolor="#4C72B0",
                    elinewidth=1.2,
                    capsize=2,
                    markersize=4,
                )
            else:
                ax.plot(value, y, "o", color="#4C72B0", markersize=4)
            if with_card and cell.card and cell.card[i] is not None:
                ax.plot(cell.card[i], y, "D", color="#DD8452", markersize=4, label="card")
        counts = sorted({cell.n[i] for cell in cells if cell.n[i] is not None})
        title = row.label.replace("A / B", part) if len(row.parts) > 1 else row.label
        n_text = (
            f"n {counts[0]}"
            if len(counts) == 1
            else ("n " + "-".join(map(str, (counts[0], counts[-1]))) if counts else "")
        )
        ax.set_title(f"{title} ({n_text})" if n_text else title, fontsize=9)
        ax.set_yticks(ys, columns, fontsize=7)
        ax.set_ylim(-0.7, len(columns) - 0.3)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel("%" if row.percent else "value", fontsize=8)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        axes.flat[0].legend(handles[:1], labels[:1], fontsize=7)
    fig.suptitle("ours: value and 95% interval" + ("; card: diamond" if with_card else ""), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
