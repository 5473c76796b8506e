"""benchmarks/soup.py still runs end to end, on parents small enough for CI (no mergekit).

.venv/bin/python -m pytest tests/test_soup_benchmark.py -v
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_soup_benchmark_times_every_method_and_checks_the_outputs(tmp_path):
    report = tmp_path / "report.json"
    methods = ["read", "copy", "copy+sha256", "naive", "ours", "ours-content"]
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "soup.py"),
            "--hidden",
            "64",
            "--layers",
            "2",
            "--repeats",
            "1",
            "--cache",
            "warm",
            "--methods",
            ",".join(methods),
            "--shard-bytes",
            "2000000",
            "--workdir",
            str(tmp_path / "work"),
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads(report.read_text())
    assert [row["method"] for row in rows] == methods
    assert all(row["wall_s"] > 0 for row in rows)
    checks = {row["method"]: row["check"] for row in rows}
    assert checks["ours"] == checks["ours-content"] == checks["naive"] == "bit-exact"
    phases = {row["method"]: row["phases"] for row in rows if row["phases"]}
    assert set(phases) == {"ours", "ours-content"}
    assert "| ours-content |" in done.stdout and "wall vs copy" in done.stdout
    leftovers = [p for p in (tmp_path / "work").rglob("*") if p.name.startswith(tuple(f"{m}-" for m in methods))]
    assert not leftovers, f"method outputs are removed after each run: {leftovers}"
