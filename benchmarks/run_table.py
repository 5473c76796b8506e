"""The side-by-side table of a benchmark call: one row per run's metrics file (the trainers'
JSONL step lines), its loss curve against the first run's, its median speed, MFU and peak memory,
then each run's speed as a multiple of the slowest.

Run as:
    python3 benchmarks/run_table.py OUT_DIR/metrics
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

TIMED_FROM = 3  # steps before this are allocator and compile warm-up


def median_of(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def main(directory: str) -> int:
    runs = {
        p.stem: [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        for p in sorted(Path(directory).glob("*.jsonl"))
    }
    runs = {name: rows for name, rows in runs.items() if rows}
    if not runs:
        sys.exit(f"no run left metrics in {directory}")
    ref_name, ref = next(iter(runs.items()))
    print(
        f"\n| run | steps | loss first -> last | max rel. loss diff vs {ref_name} | tokens/s | MFU "
        "| MFU without attention | peak GiB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    speed = {}
    for name, rows in runs.items():
        timed = rows[TIMED_FROM:] or rows[1:] or rows
        speed[name] = statistics.median(r["tok_per_s"] for r in timed)
        mfu, matmuls = median_of(timed, "mfu"), median_of(timed, "mfu_without_attention")
        peak = max((r.get("peak_mem_gib") or 0) for r in rows)
        diffs = [abs(r["loss"] - q["loss"]) / q["loss"] for r, q in zip(rows, ref) if "loss" in r and "loss" in q]
        percent = lambda value: f"{100 * value:.1f}%" if value is not None else "-"  # noqa: E731
        print(
            f"| {name} | {len(rows)} | {rows[0].get('loss', float('nan')):.4f} -> "
            f"{rows[-1].get('loss', float('nan')):.4f} | {100 * max(diffs, default=float('nan')):.3f}% | "
            f"{speed[name]:,.0f} | {percent(mfu)} | {percent(matmuls)} | {peak:.1f} |"
        )
    base = min(speed, key=speed.get)
    print(
        "\n"
        + ", ".join(f"{name} {value / speed[base]:.2f}x" for name, value in speed.items())
        + f" (vs {base}, the slowest)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
