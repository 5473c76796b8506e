"""The side-by-side table of a benchmark call: one row per run's metrics file (the trainers'
JSONL step lines), its loss curve against the first run's, its speed and MFU over the timed steps
(median, with their count and range), peak memory, then each run's speed as a multiple of the
slowest, and against the first run step by step (the same step of both: one pack against the same pack).

Run as:
    python3 benchmarks/run_table.py OUT_DIR/metrics
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import NamedTuple

TIMED_FROM = 3  # steps before this are allocator and compile warm-up


class Spread(NamedTuple):
    """A median over n values and their range."""

    median: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: list[float]) -> Spread | None:
        return cls(statistics.median(values), min(values), max(values), len(values)) if values else None

    def shown(self, scale: float = 1, unit: str = "", digits: int = 0) -> str:
        low, median, high = (f"{v * scale:,.{digits}f}{unit}" for v in (self.low, self.median, self.high))
        return f"{median} [{low}-{high}]"


def percent(figure: Spread | None) -> str:
    return figure.shown(100, "%", 1) if figure is not None else "-"


def timed_steps(rows: list[dict]) -> list[dict]:
    """The steps a figure is taken over: from TIMED_FROM on (fewer steps: all but the first, or all)."""
    return rows[TIMED_FROM:] or rows[1:] or rows


def spread(rows: list[dict], key: str) -> Spread | None:
    return Spread.of([r[key] for r in rows if r.get(key) is not None])


def paired_ratio(rows: list[dict], reference: list[dict]) -> Spread | None:
    """tokens/s of `rows` over `reference` at each timed step both ran (the same step: the same packs)."""
    theirs = {r["step"]: r["tok_per_s"] for r in timed_steps(reference) if "step" in r}
    return Spread.of([r["tok_per_s"] / theirs[r["step"]] for r in timed_steps(rows) if r.get("step") in theirs])


def table(runs: dict[str, list[dict]]) -> str:
    """The markdown table and the ratio lines of these runs (the first one is the reference)."""
    ref_name, ref = next(iter(runs.items()))
    lines = [
        f"| run | steps (timed) | loss first -> last | max rel. loss diff vs {ref_name} | tokens/s median [range] "
        "| MFU [range] | MFU without attention | peak GiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    speed = {}
    for name, rows in runs.items():
        timed = timed_steps(rows)
        tokens, mfu, matmuls = spread(timed, "tok_per_s"), spread(timed, "mfu"), spread(timed, "mfu_without_attention")
        speed[name] = tokens.median
        peak = max((r.get("peak_mem_gib") or 0) for r in rows)
        diffs = [abs(r["loss"] - q["loss"]) / q["loss"] for r, q in zip(rows, ref) if "loss" in r and "loss" in q]
        lines.append(
            f"| {name} | {len(rows)} ({tokens.n}) | {rows[0].get('loss', float('nan')):.4f} -> "
            f"{rows[-1].get('loss', float('nan')):.4f} | {100 * max(diffs, default=float('nan')):.3f}% | "
            f"{tokens.shown()} | {percent(mfu)} | {percent(matmuls)} | {peak:.1f} |"
        )
    base = min(speed, key=speed.get)
    lines.append("")
    lines.append(
        ", ".join(f"{name} {value / speed[base]:.2f}x" for name, value in speed.items()) + f" (vs {base}, the slowest)"
    )
    for name, rows in list(runs.items())[1:]:
        ratio = paired_ratio(rows, ref)
        if ratio is not None:
            lines.append(
                f"{name} / {ref_name}, step by step: {ratio.shown(1, 'x', 3)} over {ratio.n} steps both ran "
                "(median [range])"
            )
    return "\n".join(lines)


def main(directory: str) -> int:
    runs = {
        p.stem: [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        for p in sorted(Path(directory).glob("*.jsonl"))
    }
    runs = {name: rows for name, rows in runs.items() if rows}
    if not runs:
        sys.exit(f"no run left metrics in {directory}")
    print("\n" + table(runs))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics", type=Path, help="a folder of the trainers' metrics files (*.jsonl), one per run")
    sys.exit(main(parser.parse_args().metrics))
